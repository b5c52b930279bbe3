package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// Baselines send the same store requests as SADD and SISMEMBER and reply
// with a constant: what the test host and the store allocate.
func init() {
	sdk.Register(sdk.Command{Name: "baseline-sadd", Arity: 3, Run: func(c *sdk.Ctx) {
		kv := c.Values(2)
		kv[0], kv[1] = codec.Bytes(c.Arg(2)), present
		c.Record(c.Arg(1)).Guard(codec.TypeSet).MapSize(codec.BinValue).Put(codec.BinType, tagSet).
			MapPut(codec.BinValue, addFlags, kv)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}}, sdk.Command{Name: "baseline-sismember", Arity: 3, Run: func(c *sdk.Ctx) {
		ks := c.Values(1)
		ks[0] = codec.Bytes(c.Arg(2))
		c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByKeys(codec.BinValue, codec.ReturnCount, ks)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}})
}

// TestHotPathAllocations checks that SADD and SISMEMBER allocate nothing in
// the module beyond what the host and store allocate for the same request
// (guest allocation is 15-20× dearer in wasm).
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	h := sdktest.New()
	defer h.Store.Close()
	h.Inline = true
	h.Do("sadd", "s", "m")
	for _, c := range []struct{ cmd, base [][]byte }{
		{cmdtest.RawArgs("sadd", "s", "m"), cmdtest.RawArgs("baseline-sadd", "s", "m")},
		{cmdtest.RawArgs("sismember", "s", "m"), cmdtest.RawArgs("baseline-sismember", "s", "m")},
	} {
		base := testing.AllocsPerRun(200, func() { h.DoRaw(c.base...) })
		got := testing.AllocsPerRun(200, func() { h.DoRaw(c.cmd...) })
		if got > base {
			t.Errorf("%s: %.1f allocations per run, baseline %.1f", c.cmd[0], got, base)
		}
	}
}
