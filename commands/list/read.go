package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "llen", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Returns the length of a list.",
		Run:     runLLen,
	}, sdk.Command{
		Name: "lindex", Arity: 3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Returns an element from a list by its index.",
		Run:     runLIndex,
	}, sdk.Command{
		Name: "lrange", Arity: 4, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Returns a range of elements from a list.",
		Run:     runLRange,
	})
}

func runLLen(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeList).ListSize(bin)
	c.ExecFinal(kit.IntRecipe, kit.IntDone)
}

// runLIndex reads a range of one item: an index out of range selects
// nothing, which answers nil.
func runLIndex(c *sdk.Ctx) {
	i, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		// Redis checks the key before the index.
		badIndex(c)
		return
	}
	c.Record(c.Arg(1)).Guard(codec.TypeList).ListGetByIndex(bin, codec.ReturnValue, clampIndex(i), 1)
	c.Exec(lindexDone)
}

func lindexDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if items := r.Value(0).List; len(items) > 0 {
			replyItem(c, &items[0])
			return
		}
		c.Reply().Null()
	case codec.NotFound:
		c.Reply().Null()
	default:
		failed(c, r)
	}
}

// LRANGE with start and stop of one sign is one index range: Redis's
// clamping (a negative index below the head counts from 0, a stop past
// the tail stops at the tail) is what the store does with a range partly
// out of bounds. With a start >= 0 and a stop < 0, or the reverse, the
// range depends on the length: the read asks for the length with the
// items from start to the tail (start >= 0) or the last -start items
// (start < 0), atomically, and drops the items past stop. It moves at
// most -stop-1 or -start items too many. The one-sign read asks for the
// items as RESP bulk strings (codec.ReturnBulks), which the reply copies
// whole.
//
// Ctx.N: [0] start, [1] stop, [2] 1 when the length was asked for.
func runLRange(c *sdk.Ctx) {
	start, stop, ok := parseRange(c)
	if !ok {
		return
	}
	c.N[0], c.N[1] = start, stop
	call := c.Record(c.Arg(1)).Guard(codec.TypeList)
	switch {
	case (start >= 0) == (stop >= 0):
		// The store answers the items as RESP bulk strings, so the reply
		// is one copy however many there are.
		call.ListGetByIndex(bin, codec.ReturnBulks, start, rangeCount(start, stop))
	case start >= 0:
		c.N[2] = 1
		call.ListGetByIndex(bin, codec.ReturnValue, start, -1).ListSize(bin)
	default:
		c.N[2] = 1
		call.ListGetByIndex(bin, codec.ReturnValue, start, -start).ListSize(bin)
	}
	c.Exec(lrangeDone)
}

func lrangeDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Array(0)
		return
	default:
		failed(c, r)
		return
	}
	if c.N[2] == 0 {
		v := r.Value(0)
		if len(v.List) != 2 {
			c.Reply().Array(0) // no list bin
			return
		}
		w := c.Reply()
		w.Array(int(v.List[0].Int))
		w.Raw(v.List[1].Bytes)
		return
	}
	// Indexes of both signs: the items run from start to the tail; keep
	// those up to stop.
	items := r.Value(0).List
	n := kit.IntOf(r.Value(1))
	start, stop := c.N[0], c.N[1]
	if start < 0 {
		start = max(start+n, 0)
	}
	if stop < 0 {
		stop += n
	}
	stop = min(stop, n-1)
	keep := max(stop-start+1, 0)
	replyItems(c, items[:min(int64(len(items)), keep)], false)
}

// badIndex answers LINDEX and LSET with an index that is not an integer
// as Redis does: it looks the key up first, so a missing key answers as
// missing (nil, or "no such key") and another type WRONGTYPE.
func badIndex(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeList).ListSize(bin)
	c.Exec(badIndexDone)
}

func badIndexDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Error(errIndex)
	case codec.NotFound:
		if kit.Fold(c.Arg(0), "lset") {
			c.Error(errNoKey)
		} else {
			c.Reply().Null()
		}
	default:
		failed(c, r)
	}
}
