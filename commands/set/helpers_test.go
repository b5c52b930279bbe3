package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Shared helpers (Each, Script, InterceptStore, ...) live in cmdtest; these
// are the set-specific ones.

// putMember adds member to set key directly in the store, as another
// client would.
func putMember(t *testing.T, st store.Store, key, member string) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Put(codec.BinType, codec.Str(codec.TypeSet)).
		MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte(member)), codec.Int(1)})
	if r := cmdtest.Exec(t, st, call); r.Code != codec.OK {
		t.Fatalf("putMember: code %d", r.Code)
	}
}

// Test-only stand-ins for commands of other modules, so scripts here can
// make keys of another type and observe TTLs and existence.
func init() {
	sdk.Register(cmdtest.WriterStandIns()...)
	sdk.Register(cmdtest.ObserverStandIns()...)
}
