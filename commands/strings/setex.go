package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "setex", Arity: 4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.",
		Run:     func(c *sdk.Ctx) { runSetEx(c, optEX, "setex") },
	}, sdk.Command{
		Name: "psetex", Arity: 4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.",
		Run:     func(c *sdk.Ctx) { runSetEx(c, optPX, "psetex") },
	})
}

// runSetEx: SETEX key seconds value, PSETEX key milliseconds value; one
// replacing write, with the exact expiry.
func runSetEx(c *sdk.Ctx, unit int64, cmd string) {
	at, why := expireAt(c, unit, c.Arg(2))
	if why != expOK {
		c.Error(expireError(why, cmd))
		return
	}
	c.Record(c.Arg(1)).Exists(codec.ExistsReplace).ExpireAt(at).
		Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.Arg(3)))
	c.Exec(setDone)
}
