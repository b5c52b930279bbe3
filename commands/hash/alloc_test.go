package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// Baselines send the same store requests as HGET, HSET and HINCRBY and
// reply with a constant: what the test host and the store allocate.
func init() {
	sdk.Register(sdk.Command{Name: "baseline-hget", Arity: 3, Run: func(c *sdk.Ctx) {
		keys := c.Values(1)
		keys[0] = codec.Bytes(c.Arg(2))
		c.Record(c.Arg(1)).Guard(codec.TypeHash).MapGetByKeys(codec.BinValue, codec.ReturnValue, keys)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Null() })
	}}, sdk.Command{Name: "baseline-hset", Arity: 4, Run: func(c *sdk.Ctx) {
		kv := c.Values(2)
		kv[0], kv[1] = codec.Bytes(c.Arg(2)), codec.Bytes(c.Arg(3))
		c.Record(c.Arg(1)).Guard(codec.TypeHash).MapSize(codec.BinValue).Put(codec.BinType, tagHash).
			MapPut(codec.BinValue, putFlags, kv)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}}, sdk.Command{Name: "baseline-hincrby", Arity: 4, Run: func(c *sdk.Ctx) {
		c.Record(c.Arg(1)).Guard(codec.TypeHash).Put(codec.BinType, tagHash).
			MapIncrement(codec.BinValue, codec.MapOrderKey, codec.Bytes(c.Arg(2)), codec.Int(1))
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}})
}

// TestHotPathAllocations checks that HGET, HSET and HINCRBY allocate
// nothing in the module beyond what the host and store allocate for the
// same request (guest allocation is 15-20× dearer in wasm).
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	h := sdktest.New()
	defer h.Store.Close()
	h.Inline = true
	h.Do("hset", "h", "f", "value", "n", "1")
	for _, c := range []struct{ cmd, base [][]byte }{
		{cmdtest.RawArgs("hget", "h", "f"), cmdtest.RawArgs("baseline-hget", "h", "f")},
		{cmdtest.RawArgs("hset", "h", "f", "value"), cmdtest.RawArgs("baseline-hset", "h", "f", "value")},
		{cmdtest.RawArgs("hincrby", "h", "n", "1"), cmdtest.RawArgs("baseline-hincrby", "h", "n", "1")},
	} {
		base := testing.AllocsPerRun(200, func() { h.DoRaw(c.base...) })
		got := testing.AllocsPerRun(200, func() { h.DoRaw(c.cmd...) })
		if got > base {
			t.Errorf("%s: %.1f allocations per run, baseline %.1f", c.cmd[0], got, base)
		}
	}
}
