package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// Shared helpers (Each, Script, PutString, InterceptStore, ...) live in
// cmdtest; these are the strings-specific ones.

// stored returns the stored value of key's value bin.
func stored(t *testing.T, h *sdktest.Host, key string) codec.Value {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Get(codec.BinValue)
	r := cmdtest.Exec(t, h.Store, call)
	if r.Code != codec.OK {
		t.Fatalf("stored %q: code %d", key, r.Code)
	}
	v := r.Values[0]
	v.Bytes = append([]byte(nil), v.Bytes...)
	return v
}

// Test-only stand-ins for the keys module's TTL, EXISTS (one key) and TYPE,
// so scripts here can observe expiry and existence.
func init() {
	sdk.Register(cmdtest.ObserverStandIns()...)
}
