package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "ltrim", Arity: 4, Flags: []string{"write"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Removes elements from both ends a list. Deletes the list if all elements were trimmed.",
		Run:     runLTrim,
	})
}

// LTRIM keeps an index range by removing every item outside it (an
// inverted removal by index range), deleting the record if nothing is
// kept. With start and stop of one sign that is one operate: Redis's
// clamping is what the store does with a range partly out of bounds, and
// an empty range removes everything. A start from the head and a stop from
// the tail (LTRIM k 1 -1) is one operate too: remove from stop+1 (counted
// from the tail) to the end, then the first start items. A start from the
// tail and a stop from the head depends on the length: LTRIM reads it, then
// removes under the generation it read, and starts again if another client
// wrote in between (a list re-created at that generation with another
// length in between would be trimmed by the old one).
//
// Ctx.N: [0] start, [1] stop, [2] attempts.
func runLTrim(c *sdk.Ctx) {
	start, stop, ok := parseRange(c)
	if !ok {
		return
	}
	c.N[0], c.N[1] = start, stop
	switch {
	case (start >= 0) == (stop >= 0):
		ltrimWrite(c, start, rangeCount(start, stop), 0)
	case start >= 0:
		call := c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin)
		if stop < -1 {
			call.ListRemoveByIndex(bin, codec.ReturnNone, stop+1, -1)
		}
		if start > 0 || stop == -1 {
			// (LTRIM k 0 -1 keeps everything: removing none still
			// answers WRONGTYPE for another type.)
			call.ListRemoveByIndex(bin, codec.ReturnNone, 0, start)
		}
		c.Exec(ltrimDone)
	default:
		ltrimRead(c)
	}
}

func ltrimRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeList).ListSize(bin)
	c.Exec(ltrimSized)
}

func ltrimSized(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().OK()
		return
	default:
		failed(c, r)
		return
	}
	n := kit.IntOf(r.Value(0))
	start, stop := c.N[0], c.N[1]
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	ltrimWrite(c, start, max(stop-start+1, 0), r.Generation)
}

// ltrimWrite keeps count items from start (absolute, or of one sign with
// the stop) under generation gen when it is not 0.
func ltrimWrite(c *sdk.Ctx, start, count int64, gen uint32) {
	c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin).Generation(gen).
		ListRemoveByIndex(bin, codec.ReturnNone|codec.ReturnInverted, start, count)
	c.Exec(ltrimDone)
}

func ltrimDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK, codec.NotFound:
		c.Reply().OK()
	case codec.GenerationError:
		if retry(c, 2) {
			ltrimRead(c)
		}
	default:
		failed(c, r)
	}
}
