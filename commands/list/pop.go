package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lpop", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.",
		Run:     func(c *sdk.Ctx) { runPop(c, false) },
	}, sdk.Command{
		Name: "rpop", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Returns and removes the last elements of a list. Deletes the list if the last element was popped.",
		Run:     func(c *sdk.Ctx) { runPop(c, true) },
	}, sdk.Command{
		Name: "lmpop", Arity: -4, Flags: []string{"write", "movablekeys"},
		Group: "list", Since: "7.0.0",
		Summary: "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.",
		Run:     runLMPop,
	})
}

// A pop tries keys in order and pops from the first that has elements:
// one key for LPOP and RPOP, several for LMPOP (and for the blocking forms,
// which call popStart on their first try and block when popNone would
// answer). Each try is one atomic operate: remove the count first or last
// items, delete the record if that empties it, keep the TTL.
//
// Ctx.N slots of a pop.
const (
	pKey   = 0 // the argument index of the key being tried
	pLast  = 1 // the argument index of the last key
	pCount = 2 // how many items to pop
	pFlags = 3 // popRight | one reply shape
)

// Pop flags: the side, then how the reply looks.
const (
	popRight   = 1 << iota
	shapeOne   // LPOP key: one bulk string, nil when none
	shapeCount // LPOP key count: an array, a null array when none
	shapeKeyed // LMPOP: [key, [items]], a null array when none
	// BLPOP, BRPOP: [key, item], a null array when none
	shapeKeyedOne
)

func runPop(c *sdk.Ctx, right bool) {
	c.N[pKey], c.N[pLast], c.N[pCount] = 1, 1, 1
	c.N[pFlags] = shapeOne
	if right {
		c.N[pFlags] |= popRight
	}
	switch {
	case c.NArg() == 3:
		n, ok := kit.ParseInt(c.Arg(2))
		if !ok || n < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		c.N[pFlags] ^= shapeOne | shapeCount
		c.N[pCount] = n
		if n == 0 {
			// Nothing to pop: Redis answers an empty array for a list,
			// after the existence and type checks.
			c.Record(c.Arg(1)).Guard(codec.TypeList).ListSize(bin)
			c.Exec(popZero)
			return
		}
	case c.NArg() > 3:
		if right {
			c.Error("ERR wrong number of arguments for 'rpop' command")
		} else {
			c.Error("ERR wrong number of arguments for 'lpop' command")
		}
		return
	}
	popStart(c)
}

func popZero(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Array(0)
	case codec.NotFound:
		c.Reply().NullArray()
	default:
		failed(c, r)
	}
}

// popStart pops from the key at argument c.N[pKey], the first try of a
// pop; the blocking forms call it on their first try.
func popStart(c *sdk.Ctx) {
	n := min(c.N[pCount], maxIndex)
	call := c.Record(c.Arg(int(c.N[pKey]))).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin)
	if c.N[pFlags]&popRight != 0 {
		call.ListRemoveByIndex(bin, codec.ReturnValue, -n, n)
	} else {
		call.ListRemoveByIndex(bin, codec.ReturnValue, 0, n)
	}
	c.Exec(popDone)
}

func popDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if items := r.Value(0).List; len(items) > 0 {
			popReply(c, items)
			return
		}
	case codec.NotFound:
	default:
		failed(c, r)
		return
	}
	// Nothing there: the next key, or no answer.
	if c.N[pKey] < c.N[pLast] {
		c.N[pKey]++
		popStart(c)
		return
	}
	popNone(c)
}

// popReply answers the popped items (in list order as the store returns
// them; a pop from the right answers the last first).
func popReply(c *sdk.Ctx, items []codec.Value) {
	right := c.N[pFlags]&popRight != 0
	switch {
	case c.N[pFlags]&shapeOne != 0:
		replyItem(c, &items[0])
	case c.N[pFlags]&shapeKeyed != 0:
		w := c.Reply()
		w.Array(2)
		w.Bulk(c.Arg(int(c.N[pKey])))
		replyItems(c, items, right)
	case c.N[pFlags]&shapeKeyedOne != 0:
		w := c.Reply()
		w.Array(2)
		w.Bulk(c.Arg(int(c.N[pKey])))
		replyItem(c, &items[0])
	default:
		replyItems(c, items, right)
	}
}

// popNone answers a pop that found no list; a blocking pop blocks.
func popNone(c *sdk.Ctx) {
	if c.N[bTimeout] != 0 {
		popBlock(c)
		return
	}
	if c.N[pFlags]&shapeOne != 0 {
		c.Reply().Null()
		return
	}
	c.Reply().NullArray()
}

// runLMPop parses LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] as
// Redis 7.0 does, then pops.
func runLMPop(c *sdk.Ctx) {
	if !parseMPop(c, 1) {
		return
	}
	popStart(c)
}

// parseMPop parses numkeys (at argument at), the keys, the side and COUNT
// into the pop slots; when it reports false it has replied. BLMPOP calls it
// with at = 2 (after the timeout).
func parseMPop(c *sdk.Ctx, at int) bool {
	numkeys, ok := kit.ParseInt(c.Arg(at))
	if !ok || numkeys <= 0 {
		c.Error("ERR numkeys should be greater than 0")
		return false
	}
	where := int64(at) + numkeys + 1
	if where >= int64(c.NArg()) {
		c.Error(kit.Syntax)
		return false
	}
	right, ok := side(c.Arg(int(where)))
	if !ok {
		c.Error(kit.Syntax)
		return false
	}
	count := int64(-1)
	for j := int(where) + 1; j < c.NArg(); j++ {
		if count == -1 && kit.Fold(c.Arg(j), "count") && j+1 < c.NArg() {
			j++
			n, ok := kit.ParseInt(c.Arg(j))
			if !ok || n <= 0 {
				c.Error("ERR count should be greater than 0")
				return false
			}
			count = n
			continue
		}
		c.Error(kit.Syntax)
		return false
	}
	c.N[pKey], c.N[pLast], c.N[pCount] = int64(at)+1, int64(at)+numkeys, max(count, 1)
	c.N[pFlags] = shapeKeyed
	if right {
		c.N[pFlags] |= popRight
	}
	return true
}
