package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lrem", Arity: 4, Flags: []string{"write"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Removes elements from a list. Deletes the list if the last element was removed.",
		Run:     runLRem,
	})
}

// LREM with a count of 0 removes every equal item in one operate. With a
// count it reads the indexes of the equal items, then removes the first
// (count > 0) or last (count < 0) |count| of them by index, highest first
// so each removal leaves the lower indexes in place, under the generation
// it read, and starts again if another client wrote in between.
//
// Ctx.N: [0] count, [1] attempts.
func runLRem(c *sdk.Ctx) {
	n, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	c.N[0] = n
	if n == 0 {
		c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin).
			ListRemoveByValue(bin, codec.ReturnCount, codec.Bytes(c.Arg(3)))
		c.Exec(lremDone)
		return
	}
	lremRead(c)
}

func lremRead(c *sdk.Ctx) { readMatches(c, lremFound) }

func lremFound(c *sdk.Ctx) {
	at, gen, ok := matches(c)
	if !ok {
		return
	}
	if len(at) == 0 {
		c.Reply().Int(0)
		return
	}
	n := c.N[0]
	call := c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin).
		Generation(gen)
	// |n| without overflow for math.MinInt64.
	abs := uint64(n)
	if n < 0 {
		abs = -abs
	}
	// Removals by index check each item too: the generation says no one
	// wrote since the read, but a list deleted and created again starts
	// again at generation 1 and may have come back to the one read.
	elem := codec.Bytes(c.Arg(3))
	switch {
	case n > 0 && abs < uint64(len(at)):
		for i := n - 1; i >= 0; i-- {
			call.ExpectListItem(bin, at[i].Int, elem).ListRemoveByIndex(bin, codec.ReturnCount, at[i].Int, 1)
		}
	case n < 0 && abs < uint64(len(at)):
		for i := len(at) - 1; i >= len(at)-int(abs); i-- {
			call.ExpectListItem(bin, at[i].Int, elem).ListRemoveByIndex(bin, codec.ReturnCount, at[i].Int, 1)
		}
	default:
		// Every match: one removal by value.
		call.ListRemoveByValue(bin, codec.ReturnCount, codec.Bytes(c.Arg(3)))
	}
	c.Exec(lremDone)
}

func lremDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		var n int64
		for i := range r.Values {
			n += kit.IntOf(r.Values[i])
		}
		c.Reply().Int(n)
	case codec.NotFound:
		if c.N[0] == 0 {
			c.Reply().Int(0)
			return
		}
		if retry(c, 1) {
			lremRead(c)
		}
	case codec.GenerationError, codec.FilteredOut:
		// FilteredOut: an item moved, or the key is no longer a list
		// (the next read answers WRONGTYPE).
		if retry(c, 1) {
			lremRead(c)
		}
	default:
		failed(c, r)
	}
}
