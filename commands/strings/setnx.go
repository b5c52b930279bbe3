package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "setnx", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Set the string value of a key only when the key doesn't exist.",
		Run:     runSetNX,
	})
}

// runSetNX is one create-only write.
func runSetNX(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Exists(codec.ExistsCreateOnly).TTLNever().
		Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.Arg(2)))
	c.Exec(setNXDone)
}

func setNXDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(1)
	case codec.Exists:
		c.Reply().Int(0)
	default:
		kit.StoreError(c, r)
	}
}
