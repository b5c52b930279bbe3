package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// each runs f on a fresh host resuming after every store request (the
// remote-store path) and on one running requests inline (the embedded one).
func each(t *testing.T, f func(t *testing.T, h *sdktest.Host)) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			h := sdktest.New()
			h.Inline = inline
			t.Cleanup(func() { h.Store.Close() })
			f(t, h)
		})
	}
}

func do(t *testing.T, h *sdktest.Host, want string, args ...string) {
	t.Helper()
	if got := h.Do(args...); got != want {
		t.Errorf("%q:\n got %s\nwant %s", args, got, want)
	}
}

func TestCAS(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		do(t, h, "(integer) 0", "CAS", "k", "", "v") // a missing key never matches
		if v := get(t, h, "k"); !v.IsNil() {
			t.Errorf("missing key was written: %+v", v)
		}
		write(t, h, "k", 100, codec.Str(codec.TypeString), codec.Bytes([]byte("old")))
		do(t, h, "(integer) 0", "CAS", "k", "OLD", "new")
		do(t, h, "(integer) 1", "CAS", "k", "old", "new")
		do(t, h, "(integer) 0", "CAS", "k", "old", "newer")
		do(t, h, "(integer) 1", "cas", "k", "new", "42")
		// 42 is stored as an integer, as SET stores it, so that INCR
		// stays one atomic add; it still compares as "42", not "042".
		if v := get(t, h, "k"); v.Kind != codec.KindInt || v.Int != 42 {
			t.Errorf("stored %+v, want the integer 42", v)
		}
		do(t, h, "(integer) 0", "CAS", "k", "042", "x")
		do(t, h, "(integer) 1", "CAS", "k", "42", "042")
		if v := get(t, h, "k"); v.Kind != codec.KindBytes || string(v.Bytes) != "042" {
			t.Errorf("stored %+v, want the bytes 042", v)
		}
		if ttl := ttl(t, h, "k"); ttl < 99 || ttl > 100 {
			t.Errorf("TTL %d after CAS, want the original 100 kept", ttl)
		}

		write(t, h, "h", 0, codec.Str(codec.TypeHash), codec.Map(codec.Bytes([]byte("f")), codec.Bytes([]byte("v"))))
		do(t, h, "(error) WRONGTYPE Operation against a key holding the wrong kind of value", "CAS", "h", "v", "w")
	})
}

func TestCASHSet(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		do(t, h, "(integer) 0", "CAS.HSET", "h", "f", "", "v")
		write(t, h, "h", 0, codec.Str(codec.TypeHash), codec.Map(
			codec.Bytes([]byte("f")), codec.Bytes([]byte("v1")),
			codec.Bytes([]byte("n")), codec.Int(7), // as HINCRBY leaves it
		))
		do(t, h, "(integer) 0", "CAS.HSET", "h", "missing", "v1", "x")
		do(t, h, "(integer) 0", "CAS.HSET", "h", "f", "v2", "x")
		do(t, h, "(integer) 1", "CAS.HSET", "h", "f", "v1", "v2")
		do(t, h, "(integer) 1", "CAS.HSET", "h", "n", "7", "8")
		want := codec.Map(
			codec.Bytes([]byte("f")), codec.Bytes([]byte("v2")),
			codec.Bytes([]byte("n")), codec.Bytes([]byte("8")),
		)
		if v := get(t, h, "h"); !v.Equal(want) {
			t.Errorf("hash is %+v, want %+v", v, want)
		}
		if ttl := ttl(t, h, "h"); ttl != -1 {
			t.Errorf("TTL %d, want -1 (never)", ttl)
		}
		write(t, h, "s", 0, codec.Str(codec.TypeString), codec.Bytes([]byte("v")))
		do(t, h, "(error) WRONGTYPE Operation against a key holding the wrong kind of value", "CAS.HSET", "s", "f", "v", "w")
	})
}

// TestRace makes another client write between the read and the
// generation-checked write: the command must read again and decide on
// the new value, and give up with an error under constant contention.
func TestRace(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		write(t, h, "k", 0, codec.Str(codec.TypeString), codec.Bytes([]byte("a")))
		r := race(h, func(ctx context.Context, next backend, db int, key []byte) {
			// The other client writes "b".
			req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: key}}}
			req.Calls[0].Put(codec.BinValue, codec.Bytes([]byte("b")))
			var resp codec.Response
			next.Exec(ctx, db, &req, &resp)
		})
		r.left = 1
		do(t, h, "(integer) 0", "CAS", "k", "a", "c") // lost to "b"
		if v := get(t, h, "k"); string(v.Bytes) != "b" || r.raced != 1 {
			t.Errorf("value %q after %d races, want b after 1", v.Bytes, r.raced)
		}
		r.left = 1
		do(t, h, "(integer) 1", "CAS", "k", "b", "c") // "b" again: still matches
		if v := get(t, h, "k"); string(v.Bytes) != "c" {
			t.Errorf("value %q, want c", v.Bytes)
		}

		write(t, h, "k", 0, codec.Str(codec.TypeString), codec.Bytes([]byte("b")))
		r.left, r.raced = 100, 0
		do(t, h, "(error) ERR respike: the key kept changing during a read-modify-write; try again", "CAS", "k", "b", "c")
		if r.raced != maxAttempts {
			t.Errorf("%d attempts, want %d", r.raced, maxAttempts)
		}
	})
}

func TestRaceHSet(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		write(t, h, "h", 0, codec.Str(codec.TypeHash), codec.Map(codec.Bytes([]byte("f")), codec.Bytes([]byte("a"))))
		r := race(h, func(ctx context.Context, next backend, db int, key []byte) {
			// The other client sets another field: the generation changes,
			// our field does not.
			req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: key}}}
			req.Calls[0].MapPut(codec.BinValue, 0, []codec.Value{codec.Bytes([]byte("g")), codec.Bytes([]byte("x"))})
			var resp codec.Response
			next.Exec(ctx, db, &req, &resp)
		})
		r.left = 1
		do(t, h, "(integer) 1", "CAS.HSET", "h", "f", "a", "b")
		if r.raced != 1 {
			t.Errorf("raced %d times, want 1", r.raced)
		}
		want := codec.Map(codec.Bytes([]byte("f")), codec.Bytes([]byte("b")), codec.Bytes([]byte("g")), codec.Bytes([]byte("x")))
		if v := get(t, h, "h"); !v.Equal(want) {
			t.Errorf("hash is %+v, want %+v", v, want)
		}
	})
}

// exec runs one call directly against the host's store.
func exec(t *testing.T, h *sdktest.Host, call codec.Call) codec.Result {
	t.Helper()
	var resp codec.Response
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}
	h.Store.Exec(context.Background(), h.DB, &req, &resp)
	if resp.Code != codec.OK {
		t.Fatalf("store: %+v", resp)
	}
	return resp.Results[0]
}

// write replaces a record with type tag tag and value v, expiring in ttl
// seconds (0: never), as the built-in modules would have written it.
func write(t *testing.T, h *sdktest.Host, key string, ttl int64, tag, v codec.Value) {
	t.Helper()
	call := codec.Call{Key: []byte(key)}
	call.Exists(codec.ExistsReplace).Put(codec.BinType, tag).Put(codec.BinValue, v)
	if ttl > 0 {
		call.Expire(ttl)
	} else {
		call.TTLNever()
	}
	if r := exec(t, h, call); r.Code != codec.OK {
		t.Fatalf("write %s: code %d", key, r.Code)
	}
}

// get reads the value bin (Nil for a missing key).
func get(t *testing.T, h *sdktest.Host, key string) codec.Value {
	t.Helper()
	call := codec.Call{Key: []byte(key)}
	r := exec(t, h, *call.Get(codec.BinValue))
	return r.Value(0)
}

// ttl reads the record's TTL in seconds (-1: never).
func ttl(t *testing.T, h *sdktest.Host, key string) int64 {
	t.Helper()
	call := codec.Call{Key: []byte(key)}
	return exec(t, h, *call.Header()).TTL
}

// backend is the method set of the host's store (host/store.Store), so
// that a test can wrap it without importing host packages.
type backend interface {
	Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response)
	Inline() bool
	Close() error
}

// racer wraps a store: while left > 0, it runs a competing write just
// before each generation-checked write, as another client would between
// our read and our write.
type racer struct {
	backend
	left, raced int
	compete     func(ctx context.Context, next backend, db int, key []byte)
}

func race(h *sdktest.Host, compete func(ctx context.Context, next backend, db int, key []byte)) *racer {
	r := &racer{backend: h.Store, compete: compete}
	h.Store = r
	return r
}

func (r *racer) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	if r.left > 0 && req.Kind == codec.ReqRecords && req.Calls[0].Policy.Generation != 0 {
		r.left--
		r.raced++
		r.compete(ctx, r.backend, db, req.Calls[0].Key)
	}
	r.backend.Exec(ctx, db, req, resp)
}
