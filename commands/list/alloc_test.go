package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// Baselines send the same store requests as LPUSH, RPUSH, LPOP and LRANGE
// and reply with a constant: what the test host and the store allocate.
func init() {
	sdk.Register(sdk.Command{Name: "baseline-lpush", Arity: 3, Run: func(c *sdk.Ctx) {
		items := c.Values(1)
		items[0] = codec.Bytes(c.Arg(2))
		c.Record(c.Arg(1)).Guard(codec.TypeList).Put(codec.BinType, tagList).ListInsert(bin, 0, items)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}}, sdk.Command{Name: "baseline-rpush", Arity: 3, Run: func(c *sdk.Ctx) {
		items := c.Values(1)
		items[0] = codec.Bytes(c.Arg(2))
		c.Record(c.Arg(1)).Guard(codec.TypeList).Put(codec.BinType, tagList).ListAppend(bin, items)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}}, sdk.Command{Name: "baseline-lpop", Arity: 2, Run: func(c *sdk.Ctx) {
		c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin).
			ListRemoveByIndex(bin, codec.ReturnValue, 0, 1)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}}, sdk.Command{Name: "baseline-lrange", Arity: 4, Run: func(c *sdk.Ctx) {
		c.Record(c.Arg(1)).Guard(codec.TypeList).ListGetByIndex(bin, codec.ReturnBulks, 0, 100)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Int(0) })
	}})
}

// TestHotPathAllocations checks that the commands redis-benchmark runs
// allocate nothing in the module beyond what the host and store allocate
// for the same request (guest allocation is 15-20× dearer in wasm).
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	h := sdktest.New()
	defer h.Store.Close()
	h.Inline = true
	for i := 0; i < 1000; i++ {
		h.Do("rpush", "l", "xxx")
	}
	for _, c := range []struct{ cmd, base [][]byte }{
		{cmdtest.RawArgs("lpush", "l", "xxx"), cmdtest.RawArgs("baseline-lpush", "l", "xxx")},
		{cmdtest.RawArgs("rpush", "l", "xxx"), cmdtest.RawArgs("baseline-rpush", "l", "xxx")},
		{cmdtest.RawArgs("lpop", "l"), cmdtest.RawArgs("baseline-lpop", "l")},
		{cmdtest.RawArgs("lrange", "l", "0", "99"), cmdtest.RawArgs("baseline-lrange", "l", "0", "99")},
	} {
		base := testing.AllocsPerRun(200, func() { h.DoRaw(c.base...) })
		got := testing.AllocsPerRun(200, func() { h.DoRaw(c.cmd...) })
		if got > base {
			t.Errorf("%s: %.1f allocations per run, baseline %.1f", c.cmd[0], got, base)
		}
	}
}
