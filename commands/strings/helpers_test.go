package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// each runs f on a fresh host twice: resuming after every store request
// (the remote-store path) and running requests inline (the embedded one).
func each(t *testing.T, f func(t *testing.T, h *sdktest.Host)) {
	t.Helper()
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			h := sdktest.New()
			t.Cleanup(func() { h.Store.Close() })
			h.Inline = inline
			f(t, h)
		})
	}
}

// script runs lines of `command args... => reply` against h, comparing
// replies in sdktest.Format notation. Arguments are separated by spaces; a
// Go-quoted argument ("a b\x00") may hold any bytes. Blank lines and lines
// starting with # are skipped.
func script(t *testing.T, h *sdktest.Host, s string) {
	t.Helper()
	for n, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, want, ok := strings.Cut(line, " => ")
		if !ok {
			t.Fatalf("script line %d has no ' => ': %q", n+1, line)
		}
		args, err := splitArgs(cmd)
		if err != nil {
			t.Fatalf("script line %d: %v", n+1, err)
		}
		if got := h.Do(args...); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", cmd, got, want)
		}
	}
}

func splitArgs(s string) ([]string, error) {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			a, _ := strconv.Unquote(q)
			args = append(args, a)
			s = s[len(q):]
			continue
		}
		a, rest, _ := strings.Cut(s, " ")
		args = append(args, a)
		s = rest
	}
	return args, nil
}

// exec runs one store call directly, for setting up records of other types
// and inspecting how values are stored.
func exec(t *testing.T, h *sdktest.Host, call codec.Call) codec.Result {
	t.Helper()
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}
	var resp codec.Response
	h.Store.Exec(context.Background(), h.DB, &req, &resp)
	if resp.Code != codec.OK || len(resp.Results) != 1 {
		t.Fatalf("store request failed: %d %s", resp.Code, resp.Msg)
	}
	return resp.Results[0]
}

// putType creates key as a record of type typ (a hash-like map).
func putType(t *testing.T, h *sdktest.Host, key, typ string) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(typ)).
		MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte("f")), codec.Bytes([]byte("x"))})
	if r := exec(t, h, call); r.Code != codec.OK {
		t.Fatalf("putType: code %d", r.Code)
	}
}

// putRaw stores v as the value of string key, bypassing the commands (to
// reach states such as a canonical integer stored as bytes).
func putRaw(t *testing.T, h *sdktest.Host, key string, v codec.Value) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, v)
	if r := exec(t, h, call); r.Code != codec.OK {
		t.Fatalf("putRaw: code %d", r.Code)
	}
}

// stored returns the stored value of key's value bin.
func stored(t *testing.T, h *sdktest.Host, key string) codec.Value {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Get(codec.BinValue)
	r := exec(t, h, call)
	if r.Code != codec.OK {
		t.Fatalf("stored %q: code %d", key, r.Code)
	}
	v := r.Values[0]
	v.Bytes = append([]byte(nil), v.Bytes...)
	return v
}

// interceptStore runs before on every request, then the real store: tests
// use it to play another client writing between two steps of a command.
type interceptStore struct {
	store.Store
	before func(req *codec.Request)
	after  func(resp *codec.Response) // optional: rewrite the outcome
}

func (s *interceptStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	s.before(req)
	s.Store.Exec(ctx, db, req, resp)
	if s.after != nil {
		s.after(resp)
	}
}

// putRawStore is putRaw on a store.
func putRawStore(t *testing.T, st store.Store, key string, v codec.Value) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, v)
	var resp codec.Response
	st.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}, &resp)
	if resp.Code != codec.OK || resp.Results[0].Code != codec.OK {
		t.Fatalf("putRawStore failed")
	}
}

// Test-only stand-ins for the keys module's TTL, EXISTS (one key) and TYPE,
// so scripts here can observe expiry and existence.
func init() {
	header := func(next sdk.Step) sdk.Step {
		return func(c *sdk.Ctx) { c.Record(c.Arg(1)).Get(codec.BinType); c.Exec(next) }
	}
	sdk.Register(sdk.Command{Name: "ttl", Arity: 2, Run: header(func(c *sdk.Ctx) {
		switch r := c.Result(0); r.Code {
		case codec.NotFound:
			c.Reply().Int(-2)
		default:
			c.Reply().Int(r.TTL)
		}
	})}, sdk.Command{Name: "exists", Arity: 2, Run: header(func(c *sdk.Ctx) {
		if c.Result(0).Code == codec.OK {
			c.Reply().Int(1)
		} else {
			c.Reply().Int(0)
		}
	})}, sdk.Command{Name: "type", Arity: 2, Run: header(func(c *sdk.Ctx) {
		if r := c.Result(0); r.Code == codec.OK {
			c.Reply().Simple(string(r.Value(0).Bytes))
		} else {
			c.Reply().Simple("none")
		}
	})})
}
