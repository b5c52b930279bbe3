package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// start is the fake clock's origin.
const start = int64(1_700_000_000) * int64(time.Second)

// clock sets the module's clock to start+offset for the rest of the test.
func clock(t *testing.T, offset time.Duration) {
	t.Helper()
	old := now
	now = func() int64 { return start + int64(offset) }
	t.Cleanup(func() { now = old })
}

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

// TestGCRA replays redis-cell's own test table (limit 5, 1 per second),
// with its durations rounded to whole seconds as CL.THROTTLE replies them.
func TestGCRA(t *testing.T) {
	cases := []struct {
		at       time.Duration
		quantity string
		want     string // limited, limit, remaining, retry_after, reset_after
	}{
		{0, "6", "[(integer) 1 (integer) 5 (integer) 5 (integer) -1 (integer) 0]"}, // larger than the bucket: never
		{0, "1", "[(integer) 0 (integer) 5 (integer) 4 (integer) -1 (integer) 1]"},
		{0, "1", "[(integer) 0 (integer) 5 (integer) 3 (integer) -1 (integer) 2]"},
		{0, "1", "[(integer) 0 (integer) 5 (integer) 2 (integer) -1 (integer) 3]"},
		{0, "1", "[(integer) 0 (integer) 5 (integer) 1 (integer) -1 (integer) 4]"},
		{0, "1", "[(integer) 0 (integer) 5 (integer) 0 (integer) -1 (integer) 5]"},
		{0, "1", "[(integer) 1 (integer) 5 (integer) 0 (integer) 1 (integer) 5]"},
		{3000 * time.Millisecond, "1", "[(integer) 0 (integer) 5 (integer) 2 (integer) -1 (integer) 3]"},
		{3100 * time.Millisecond, "1", "[(integer) 0 (integer) 5 (integer) 1 (integer) -1 (integer) 4]"}, // 3.9 s rounds up
		{4000 * time.Millisecond, "1", "[(integer) 0 (integer) 5 (integer) 1 (integer) -1 (integer) 4]"},
		{8000 * time.Millisecond, "1", "[(integer) 0 (integer) 5 (integer) 4 (integer) -1 (integer) 1]"},
		{9500 * time.Millisecond, "1", "[(integer) 0 (integer) 5 (integer) 4 (integer) -1 (integer) 1]"},
		{9500 * time.Millisecond, "0", "[(integer) 0 (integer) 5 (integer) 4 (integer) -1 (integer) 1]"}, // a peek
		{9500 * time.Millisecond, "2", "[(integer) 0 (integer) 5 (integer) 2 (integer) -1 (integer) 3]"},
		{9500 * time.Millisecond, "5", "[(integer) 1 (integer) 5 (integer) 2 (integer) 3 (integer) 3]"},
	}
	each(t, func(t *testing.T, h *sdktest.Host) {
		for i, tc := range cases {
			clock(t, tc.at)
			if got := h.Do("CL.THROTTLE", "foo", "4", "1", "1", tc.quantity); got != tc.want {
				t.Errorf("case %d (t=%v, quantity %s):\n got %s\nwant %s", i, tc.at, tc.quantity, got, tc.want)
			}
		}
	})
}

func TestDefaultQuantityAndRESP3(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		clock(t, 0)
		// 30 per minute with a burst of 15: one unit costs 2 s.
		if got := h.Do("cl.throttle", "user123", "15", "30", "60"); got != "[(integer) 0 (integer) 16 (integer) 15 (integer) -1 (integer) 2]" {
			t.Errorf("first: %s", got)
		}
		h.Proto = 3 // the reply is the same array of integers in RESP3
		if got := h.Do("cl.throttle", "user123", "15", "30", "60"); got != "[(integer) 0 (integer) 16 (integer) 14 (integer) -1 (integer) 4]" {
			t.Errorf("second, RESP3: %s", got)
		}
	})
}

// TestTTL checks that state expires when the TAT passes, rounded up to
// whole seconds, so that idle keys vanish.
func TestTTL(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		clock(t, 0)
		h.Do("CL.THROTTLE", "k", "9", "10", "1", "3") // 100 ms per unit: TAT +300 ms
		if got := h.Do("TEST.TTL", "k"); got != "(integer) 1" {
			t.Errorf("TTL after 300 ms of state: %s, want 1", got)
		}
		h.Do("CL.THROTTLE", "k", "99", "10", "1", "25") // TAT +2.8 s
		if got := h.Do("TEST.TTL", "k"); got != "(integer) 3" {
			t.Errorf("TTL after 2.8 s of state: %s, want 3", got)
		}
		// A refund that moves the TAT into the past deletes the key.
		h.Do("CL.THROTTLE", "k", "99", "10", "1", "-100")
		if got := h.Do("TEST.TTL", "k"); got != "(integer) -2" {
			t.Errorf("TTL after a full refund: %s, want -2 (no key)", got)
		}
		// A peek at a missing key stores nothing.
		if got := h.Do("CL.THROTTLE", "k", "1", "1", "1", "0"); got != "[(integer) 0 (integer) 2 (integer) 2 (integer) -1 (integer) 0]" {
			t.Errorf("peek: %s", got)
		}
		if got := h.Do("TEST.TTL", "k"); got != "(integer) -2" {
			t.Errorf("TTL after a peek: %s, want -2 (no key)", got)
		}
	})
}

func TestErrors(t *testing.T) {
	usage := "(error) Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
	each(t, func(t *testing.T, h *sdktest.Host) {
		clock(t, 0)
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"CL.THROTTLE"}, usage},
			{[]string{"CL.THROTTLE", "k", "1", "1"}, usage},
			{[]string{"CL.THROTTLE", "k", "1", "1", "1", "1", "1"}, usage},
			{[]string{"CL.THROTTLE", "k", "x", "1", "y"}, "(error) Cell error: Couldn't parse as integer: x"},
			{[]string{"CL.THROTTLE", "k", "1", "1", "1", " 1"}, "(error) Cell error: Couldn't parse as integer:  1"},
			{[]string{"CL.THROTTLE", "k", "1", "1", "9223372036854775808"}, "(error) Cell error: Couldn't parse as integer: 9223372036854775808"},
			{[]string{"CL.THROTTLE", "k", "1", "0", "1"}, "(error) Cell error: Zero rates are not supported"},
			{[]string{"CL.THROTTLE", "k", "1", "1", "0"}, "(error) Cell error: Zero rates are not supported"},
			{[]string{"CL.THROTTLE", "k", "1", "2000000000", "1"}, "(error) Cell error: Zero rates are not supported"},
			{[]string{"CL.THROTTLE", "k", "+1", "+1", "+1", "+1"}, "[(integer) 0 (integer) 2 (integer) 1 (integer) -1 (integer) 1]"},
			{[]string{"CL.THROTTLE", "k", "1", "1", "400000000"}, "(error) ERR respike: this throttle would need its key kept more than 10 years, the store's limit"},
		} {
			if got := h.Do(tc.args...); got != tc.want {
				t.Errorf("%q:\n got %s\nwant %s", tc.args, got, tc.want)
			}
		}
		put(t, h, "s", codec.TypeString)
		if got := h.Do("CL.THROTTLE", "s", "1", "1", "1"); got != "(error) WRONGTYPE Operation against a key holding the wrong kind of value" {
			t.Errorf("other type: %s", got)
		}
	})
}

// TestContention makes another client update the key between the read and
// the generation-checked write: the command must start again with the new
// state, and give up after six attempts as redis-cell does.
func TestContention(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		clock(t, 0)
		r := race(h, func(ctx context.Context, next backend, db int, key []byte) {
			// Another client's CL.THROTTLE of one unit (1 s at 1/s).
			var resp codec.Response
			var req codec.Request
			req.Kind = codec.ReqRecords
			call := codec.Call{Key: key}
			call.Add(codec.BinValue, codec.Int(int64(time.Second)))
			req.Calls = []codec.Call{call}
			next.Exec(ctx, db, &req, &resp)
		})

		h.Do("CL.THROTTLE", "k", "4", "1", "1") // TAT = start+1s
		r.left = 1
		// Without the race this would be remaining 3, reset 2: the other
		// client's unit is counted too.
		if got := h.Do("CL.THROTTLE", "k", "4", "1", "1"); got != "[(integer) 0 (integer) 5 (integer) 2 (integer) -1 (integer) 3]" {
			t.Errorf("after one lost race: %s", got)
		}
		if r.raced != 1 {
			t.Errorf("raced %d times, want 1", r.raced)
		}

		r.left, r.raced = 100, 0
		if got := h.Do("CL.THROTTLE", "k", "99", "1", "1"); got != "(error) Cell error: Failed to update rate limit after 5 attempts" {
			t.Errorf("under constant contention: %s", got)
		}
		if r.raced != 6 {
			t.Errorf("attempted %d writes, want 6", r.raced)
		}
	})
}

// TestCreateRace: another client creates the key between our read (missing)
// and our create-only write.
func TestCreateRace(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		clock(t, 0)
		r := race(h, func(ctx context.Context, next backend, db int, key []byte) {
			var resp codec.Response
			req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: key}}}
			req.Calls[0].Put(codec.BinType, codec.Str(typeTag)).Put(codec.BinValue, codec.Int(start+int64(time.Second)))
			next.Exec(ctx, db, &req, &resp)
		})
		r.left = 1
		if got := h.Do("CL.THROTTLE", "new", "4", "1", "1"); got != "[(integer) 0 (integer) 5 (integer) 3 (integer) -1 (integer) 2]" {
			t.Errorf("after losing the creation race: %s", got)
		}
		if r.raced != 1 {
			t.Errorf("raced %d times, want 1", r.raced)
		}
	})
}

func TestManifest(t *testing.T) {
	m := sdktest.Manifest()
	if m.Module != "throttle" || len(m.Commands) < 1 {
		t.Fatalf("manifest: %+v", m)
	}
	for _, c := range m.Commands {
		if c.Name == "cl.throttle" {
			if c.Arity != -1 || c.FirstKey != 1 || c.LastKey != 1 || c.Step != 1 || len(c.Flags) != 1 || c.Flags[0] != "write" {
				t.Errorf("cl.throttle: %+v", c)
			}
			return
		}
	}
	t.Error("cl.throttle is not in the manifest")
}

// TEST.TTL key reports the record's TTL as Redis's TTL does (-2: no key,
// -1: no expiry). It is registered only in the test binary.
func init() {
	sdk.Register(sdk.Command{
		Name: "test.ttl", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1,
		Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Header()
			c.Exec(func(c *sdk.Ctx) {
				switch r := c.Result(0); r.Code {
				case codec.OK:
					c.Reply().Int(r.TTL)
				case codec.NotFound:
					c.Reply().Int(-2)
				default:
					c.Error(fmt.Sprintf("ERR code %d", r.Code))
				}
			})
		},
	})
}

// put writes a record of type tag directly to the host's store.
func put(t *testing.T, h *sdktest.Host, key, tag string) {
	t.Helper()
	var resp codec.Response
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(key)}}}
	req.Calls[0].Put(codec.BinType, codec.Str(tag)).Put(codec.BinValue, codec.Bytes([]byte("x")))
	h.Store.Exec(context.Background(), h.DB, &req, &resp)
	if resp.Code != codec.OK || resp.Results[0].Code != codec.OK {
		t.Fatalf("put %s: %+v", key, resp)
	}
}

// backend is the method set of the host's store (host/store.Store), so
// that a test can wrap it without importing host packages.
type backend interface {
	Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response)
	Inline() bool
	Close() error
}

// racer wraps a store: while left > 0, it runs a competing write just
// before each conditional write (generation-checked or create-only), as
// another client would between our read and our write.
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
	if r.left > 0 && req.Kind == codec.ReqRecords {
		if p := req.Calls[0].Policy; p.Generation != 0 || p.Exists == codec.ExistsCreateOnly {
			r.left--
			r.raced++
			r.compete(ctx, r.backend, db, req.Calls[0].Key)
		}
	}
	r.backend.Exec(ctx, db, req, resp)
}
