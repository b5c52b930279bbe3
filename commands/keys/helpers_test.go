package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// Shared helpers (Each, Script, PutString, InterceptStore, ...) live in
// cmdtest; these are the keys-specific ones.

// putStr stores a string record as the strings module does.
func putStr(t *testing.T, h *sdktest.Host, key, val string) {
	t.Helper()
	cmdtest.PutString(t, h.Store, key, codec.Bytes([]byte(val)))
}

// get returns the string value of key, or "(nil)".
func get(t *testing.T, h *sdktest.Host, key string) string {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Get(codec.BinValue)
	if r := cmdtest.Exec(t, h.Store, call); r.Code == codec.OK {
		return string(r.Values[0].Bytes)
	}
	return "(nil)"
}
