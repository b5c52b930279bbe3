package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "sadd", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Adds one or more members to a set. Creates the key if it doesn't exist.",
		Run:     runSAdd,
	}, sdk.Command{
		Name: "srem", Arity: -3, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Removes one or more members from a set. Deletes the set if the last member was removed.",
		Run:     runSRem,
	})
}

// runSAdd adds the members in one operate: a create-only, no-fail, partial
// map put writes just the new members, and it answers the size after, so
// the size difference is the number added (a member named twice counts
// once).
func runSAdd(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).
		MapSize(codec.BinValue).
		Put(codec.BinType, tagSet).
		MapPut(codec.BinValue, addFlags, members(c, 2))
	c.Exec(saddDone)
}

func saddDone(c *sdk.Ctx) {
	r := c.Result(0)
	if !r.OK() {
		kit.GuardFailed(c, r)
		return
	}
	c.Reply().Int(kit.IntOf(r.Value(2)) - kit.IntOf(r.Value(0)))
}

// runSRem removes the members in one operate and deletes the record when
// the set is left empty; the count is the size difference.
func runSRem(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).DeleteIfEmpty(codec.BinValue).
		MapSize(codec.BinValue).
		MapRemoveByKeys(codec.BinValue, codec.ReturnNone, keys(c, 2)).
		MapSize(codec.BinValue)
	c.Exec(sremDone)
}

func sremDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(kit.IntOf(r.Value(0)) - kit.IntOf(r.Value(2)))
	case codec.NotFound:
		c.Reply().Int(0)
	default:
		kit.GuardFailed(c, r)
	}
}
