package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// Test-only stand-ins for commands of other modules, so scripts here can
// make keys of another type and observe TTLs and existence.
func init() {
	sdk.Register(cmdtest.WriterStandIns()...)
	sdk.Register(cmdtest.ObserverStandIns()...)
}

// items reads list key directly from the store ([] when missing).
func items(t *testing.T, h *sdktest.Host, key string) []string {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.ListGetByIndex(codec.BinValue, codec.ReturnValue, 0, -1)
	r := cmdtest.Exec(t, h.Store, call)
	if r.Code == codec.NotFound {
		return nil
	}
	if r.Code != codec.OK {
		t.Fatalf("items %s: code %d", key, r.Code)
	}
	var out []string
	for _, v := range r.Values[0].List {
		out = append(out, string(v.Bytes))
	}
	return out
}

// hasListWrite reports whether a request changes a list: a push, pop or
// removal.
func hasListWrite(req *codec.Request, code codec.OpCode) bool {
	for _, c := range req.Calls {
		for _, o := range c.Ops {
			if o.Code == code {
				return true
			}
		}
	}
	return false
}

// interfereOnce plays another client acting once, through the store it
// returns, just before the command's first request with a write op (on
// key, when key is not ""). Put the returned store back in h.Store to
// read what the race left.
func interfereOnce(h *sdktest.Host, op codec.OpCode, key string, act func(base store.Store)) store.Store {
	base := h.Store
	once := true
	h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
		if once && hasListWrite(req, op) && (key == "" || string(req.Calls[0].Key) == key) {
			once = false
			act(base)
		}
	}}
	return base
}
