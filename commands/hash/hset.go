package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hset", Arity: -4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Creates or modifies the value of a field in a hash.",
		Run:     func(c *sdk.Ctx) { runHSet(c, "hset") },
	}, sdk.Command{
		Name: "hmset", Arity: -4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Sets the values of multiple fields.",
		Run:     func(c *sdk.Ctx) { runHSet(c, "hmset") },
	}, sdk.Command{
		Name: "hsetnx", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Sets the value of a field in a hash only when the field doesn't exist.",
		Run:     runHSetNX,
	})
}

// runHSet writes field/value pairs in one operate: the map size before the
// put, the put (which answers the size after), so the difference is the
// number of new fields. A field given twice keeps its last value, as in
// Redis (both stores keep the last of equal keys in one put).
func runHSet(c *sdk.Ctx, name string) {
	if c.NArg()%2 != 0 {
		c.Error(wrongArgs(name))
		return
	}
	if name == "hmset" {
		c.N[0] = 1
	}
	kv := c.Values(c.NArg() - 2)
	for i := 2; i < c.NArg(); i += 2 {
		kv[i-2] = codec.Bytes(c.Arg(i))
		kv[i-1] = kit.StrValue(c.Arg(i + 1))
	}
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		MapSize(codec.BinValue).
		Put(codec.BinType, tagHash).
		MapPut(codec.BinValue, putFlags, kv)
	c.Exec(hsetDone)
}

// hsetDone answers the number of fields added (HSET, HSETNX) or OK (HMSET).
func hsetDone(c *sdk.Ctx) {
	r := c.Result(0)
	if !r.OK() {
		kit.GuardFailed(c, r)
		return
	}
	if c.N[0] == 1 {
		c.Reply().OK()
		return
	}
	c.Reply().Int(kit.IntOf(r.Value(2)) - kit.IntOf(r.Value(0)))
}

// runHSetNX writes the field only if it is new, at column level: the map
// put skips an existing field without failing, and the size difference says
// whether it wrote.
func runHSetNX(c *sdk.Ctx) {
	kv := c.Values(2)
	kv[0] = codec.Bytes(c.Arg(2))
	kv[1] = kit.StrValue(c.Arg(3))
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		MapSize(codec.BinValue).
		Put(codec.BinType, tagHash).
		MapPut(codec.BinValue, createFlags, kv)
	c.Exec(hsetDone)
}
