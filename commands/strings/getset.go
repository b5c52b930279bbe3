package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "getset", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns the previous string value of a key after setting it to a new value.",
		Run:     runGetSet,
	})
}

// runGetSet is SET key value GET: one guarded write that returns the old
// value and clears the TTL.
func runGetSet(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).TTLNever().
		Get(codec.BinType).Get(codec.BinValue).
		Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.Arg(2)))
	c.Exec(setGetDone)
}
