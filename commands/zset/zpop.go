package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "zpopmin", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "sorted_set", Since: "5.0.0",
		Summary: "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.",
		Run:     func(c *sdk.Ctx) { runZPop(c, popMin) },
	}, sdk.Command{
		Name: "zpopmax", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "sorted_set", Since: "5.0.0",
		Summary: "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.",
		Run:     func(c *sdk.Ctx) { runZPop(c, popMax) },
	}, sdk.Command{
		Name: "zmpop", Arity: -4, Flags: []string{"write", "movablekeys"},
		FirstKey: 0, LastKey: 0, Step: 0, Group: "sorted_set", Since: "7.0.0",
		Summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.",
		Run:     runZMPop,
	})
}

// ZPOPMIN, ZPOPMAX and ZMPOP pop with one operate on the key: a removal of
// the lowest or highest ranks, answering the items removed, with
// delete-if-empty. ZMPOP first reads the size of every key it names (one
// batch) to find the first that exists, as Redis walks them, then pops
// from it; when that key is gone by then, it looks again.
//
// The blocking forms (BZPOPMIN, BZPOPMAX, BZMPOP) are meant to reuse this:
// parse (keys, count, where, and the reply form popKeyed or popKeyedOne),
// call zpopKeys, and park instead of answering where zpopEmpty is reached,
// the one place that answers "nothing to pop".
//
// Ctx.N: [0] the argument index of the first key, [1] how many keys,
// [2] attempts, [3] the count, [4] popMin or popMax, [5] the reply form,
// [6] the index of the key popped from.

const (
	popMin = iota
	popMax
)

// Reply forms.
const (
	popOne      = iota // ZPOPMIN key: a flat [member, score], or empty
	popCount           // ZPOPMIN key count: RESP2 flat, RESP3 pairs
	popKeyed           // ZMPOP, BZMPOP: [key, [[member, score] ...]], or a null array
	popKeyedOne        // BZPOPMIN, BZPOPMAX: [key, member, score], or a null array
)

func runZPop(c *sdk.Ctx, where int64) {
	if c.NArg() > 3 {
		c.Error(kit.Syntax)
		return
	}
	count, form := int64(1), int64(popOne)
	if c.NArg() == 3 {
		n, ok := kit.ParseInt(c.Arg(2))
		if !ok || n < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		count, form = n, popCount
	}
	c.N[0], c.N[1], c.N[3], c.N[4], c.N[5] = 1, 1, count, where, form
	zpopFrom(c, 0)
}

func runZMPop(c *sdk.Ctx) {
	if zmpopParse(c, 1) {
		zpopKeys(c)
	}
}

// zmpopParse reads ZMPOP's arguments from numkeys at argument at (BZMPOP's
// are one further on) into Ctx.N, or answers Redis's error and reports
// false.
func zmpopParse(c *sdk.Ctx, at int) bool {
	numkeys, ok := kit.ParseInt(c.Arg(at))
	if !ok || numkeys < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return false
	}
	whereIdx := int64(at) + 1 + numkeys
	if numkeys > int64(c.NArg()) || whereIdx >= int64(c.NArg()) {
		c.Error(kit.Syntax)
		return false
	}
	var where int64
	switch a := c.Arg(int(whereIdx)); {
	case kit.Fold(a, "min"):
		where = popMin
	case kit.Fold(a, "max"):
		where = popMax
	default:
		c.Error(kit.Syntax)
		return false
	}
	count := int64(-1)
	for j := int(whereIdx) + 1; j < c.NArg(); j++ {
		if count == -1 && kit.Fold(c.Arg(j), "count") && j+1 < c.NArg() {
			j++
			n, ok := kit.ParseInt(c.Arg(j))
			if !ok || n < 1 {
				c.Error("ERR count should be greater than 0")
				return false
			}
			count = n
			continue
		}
		c.Error(kit.Syntax)
		return false
	}
	if count == -1 {
		count = 1
	}
	c.N[0], c.N[1], c.N[3], c.N[4], c.N[5] = int64(at)+1, numkeys, count, where, popKeyed
	return true
}

// zpopKeys finds the first of the keys that exists (a batch of size
// reads), then pops from it. With one key it pops at once.
func zpopKeys(c *sdk.Ctx) {
	if c.N[1] == 1 {
		zpopFrom(c, 0)
		return
	}
	for i := range int(c.N[1]) {
		c.Record(c.Arg(int(c.N[0]) + i)).Guard(codec.TypeZSet).MapSize(codec.BinValue)
	}
	c.Exec(zpopFound)
}

func zpopFound(c *sdk.Ctx) {
	for i := range int(c.N[1]) {
		r := c.Result(i)
		switch r.Code {
		case codec.NotFound:
			continue
		case codec.OK:
			zpopFrom(c, i)
		default:
			failed(c, r)
		}
		return
	}
	zpopEmpty(c)
}

// zpopFrom pops from key i of the keys.
func zpopFrom(c *sdk.Ctx, i int) {
	c.N[6] = int64(i)
	call := c.Record(c.Arg(int(c.N[0]) + i)).Guard(codec.TypeZSet)
	count := min(c.N[3], maxSpan)
	if count == 0 {
		call.MapSize(codec.BinValue) // ZPOPMIN key 0 still checks the type
		c.Exec(zpopDone)
		return
	}
	call.Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(codec.BinValue)
	if c.N[4] == popMin {
		call.MapRemoveByRank(codec.BinValue, codec.ReturnKeyValue, 0, count)
	} else {
		call.MapRemoveByRank(codec.BinValue, codec.ReturnKeyValue, -count, count)
	}
	c.Exec(zpopDone)
}

// zpopEmpty answers when no key had items.
func zpopEmpty(c *sdk.Ctx) {
	if kit.Blocking(c) {
		zpopBlock(c)
		return
	}
	if c.N[5] == popKeyed || c.N[5] == popKeyedOne {
		c.Reply().NullArray()
		return
	}
	c.Reply().Array(0)
}

func zpopDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		if c.N[1] > 1 {
			// The key found was emptied meanwhile: look again.
			if kit.Retry(c) {
				zpopKeys(c)
			}
			return
		}
		zpopEmpty(c)
		return
	default:
		failed(c, r)
		return
	}
	kv := r.Value(0).List
	if c.N[3] == 0 || len(kv) == 0 {
		zpopEmpty(c)
		return
	}
	reverse := c.N[4] == popMax
	w := c.Reply()
	switch c.N[5] {
	case popOne:
		// Flat in RESP3 too: one member and its score.
		w.Array(2)
		w.Bulk(kv[0].Bytes)
		replyScore(c, codec.ScoreOf(&kv[1]))
	case popCount:
		replyItems(c, kv, true, reverse)
	case popKeyedOne:
		w.Array(3)
		w.Bulk(c.Arg(int(c.N[0] + c.N[6])))
		w.Bulk(kv[0].Bytes)
		replyScore(c, codec.ScoreOf(&kv[1]))
	case popKeyed:
		w.Array(2)
		w.Bulk(c.Arg(int(c.N[0] + c.N[6])))
		n := len(kv) / 2
		w.Array(n)
		for j := range n {
			i := j
			if reverse {
				i = n - 1 - j
			}
			w.Array(2)
			w.Bulk(kv[2*i].Bytes)
			replyScore(c, codec.ScoreOf(&kv[2*i+1]))
		}
	}
}
