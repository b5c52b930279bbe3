package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "linsert", Arity: 5, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0",
		Summary: "Inserts an element before or after another element in a list.",
		Run:     runLInsert,
	})
}

// LINSERT reads where the pivot is (the indexes of the items equal to it),
// then inserts next to the first one under the generation it read, and
// starts again if another client wrote in between.
//
// Ctx.N: [0] 1 for AFTER, [1] attempts.
func runLInsert(c *sdk.Ctx) {
	switch {
	case kit.Fold(c.Arg(2), "before"):
	case kit.Fold(c.Arg(2), "after"):
		c.N[0] = 1
	default:
		c.Error(kit.Syntax)
		return
	}
	linsertRead(c)
}

func linsertRead(c *sdk.Ctx) { readMatches(c, linsertFound) }

func linsertFound(c *sdk.Ctx) {
	at, gen, ok := matches(c)
	if !ok {
		return
	}
	if len(at) == 0 {
		c.Reply().Int(-1)
		return
	}
	items := c.Values(1)
	items[0] = codec.Bytes(c.Arg(4))
	// The generation says no one wrote since the read; the pivot check
	// covers a list deleted and created again meanwhile, which starts
	// again at generation 1 and may have come back to the one read.
	c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).Generation(gen).
		ExpectListItem(bin, at[0].Int, codec.Bytes(c.Arg(3))).
		ListInsert(bin, at[0].Int+c.N[0], items)
	c.Exec(linsertDone)
}

func linsertDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(r.Value(1).Int)
	case codec.GenerationError, codec.NotFound, codec.FilteredOut:
		// FilteredOut: the pivot moved, or the key is no longer a list
		// (the next read answers WRONGTYPE).
		if retry(c, 1) {
			linsertRead(c)
		}
	default:
		failed(c, r)
	}
}
