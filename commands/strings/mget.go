package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "mget", Arity: -2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Atomically returns the string values of one or more keys.",
		Run:     runMGet,
	})
}

// runMGet reads every key in one batch. Each read is atomic on its key; the
// batch is not a snapshot across keys (Redis's MGET is).
func runMGet(c *sdk.Ctx) {
	for i := 1; i < c.NArg(); i++ {
		c.Record(c.Arg(i)).Guard(codec.TypeString).Get(codec.BinValue)
	}
	c.Exec(mgetDone)
}

// mgetDone answers one element per key: the value, or nil for a missing key
// or another type. A store failure on any key fails the whole command.
func mgetDone(c *sdk.Ctx) {
	rs := c.Results()
	for i := range rs {
		switch rs[i].Code {
		case codec.OK, codec.NotFound, codec.FilteredOut:
		default:
			kit.StoreError(c, &rs[i])
			return
		}
	}
	c.Reply().Array(len(rs))
	for i := range rs {
		if rs[i].Code == codec.OK {
			kit.ReplyStr(c, &rs[i].Values[0])
		} else {
			c.Reply().Null()
		}
	}
}
