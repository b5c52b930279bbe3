package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hdel", Arity: -3, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.",
		Run:     runHDel,
	})
}

// runHDel removes the fields in one operate and deletes the record when the
// map is left empty. The count is the size before minus the size after,
// which stays right when a field is named twice.
func runHDel(c *sdk.Ctx) {
	keys := c.Values(c.NArg() - 2)
	for i := range keys {
		keys[i] = codec.Bytes(c.Arg(i + 2))
	}
	c.Record(c.Arg(1)).Guard(codec.TypeHash).DeleteIfEmpty(codec.BinValue).
		MapSize(codec.BinValue).
		MapRemoveByKeys(codec.BinValue, codec.ReturnNone, keys).
		MapSize(codec.BinValue)
	c.Exec(hdelDone)
}

func hdelDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(kit.IntOf(r.Value(0)) - kit.IntOf(r.Value(2)))
	case codec.NotFound:
		// A missing key: the write found nothing and created nothing.
		c.Reply().Int(0)
	default:
		kit.GuardFailed(c, r)
	}
}
