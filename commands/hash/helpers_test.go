package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// Shared helpers (Each, Script, InterceptStore, ...) live in cmdtest; these
// are the hash-specific ones.

// stored returns the value stored under field of hash key.
func stored(t *testing.T, h *sdktest.Host, key, field string) codec.Value {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.MapGetByKeys(codec.BinValue, codec.ReturnValue, []codec.Value{codec.Bytes([]byte(field))})
	r := cmdtest.Exec(t, h.Store, call)
	if r.Code != codec.OK || len(r.Values[0].List) != 1 {
		t.Fatalf("stored %q %q: code %d, %v", key, field, r.Code, r.Values)
	}
	v := r.Values[0].List[0]
	v.Bytes = append([]byte(nil), v.Bytes...)
	return v
}

// putField stores v under field of hash key, bypassing the commands (to
// reach states such as a canonical integer stored as bytes).
func putField(t *testing.T, st store.Store, key, field string, v codec.Value) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Put(codec.BinType, codec.Str(codec.TypeHash)).
		MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte(field)), v})
	if r := cmdtest.Exec(t, st, call); r.Code != codec.OK {
		t.Fatalf("putField: code %d", r.Code)
	}
}

// Test-only stand-ins for commands of other modules, so scripts here can
// make keys of another type and observe TTLs and existence.
func init() {
	sdk.Register(cmdtest.WriterStandIns()...)
	sdk.Register(cmdtest.ObserverStandIns()...)
}
