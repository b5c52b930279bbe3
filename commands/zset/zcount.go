package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	cmd := func(name string, flags []string, since, summary string, lex, remove bool) sdk.Command {
		return sdk.Command{
			Name: name, Arity: 4, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "sorted_set", Since: since, Summary: summary,
			Run: func(c *sdk.Ctx) { runRangeCount(c, lex, remove) },
		}
	}
	ro, rw := []string{"readonly", "fast"}, []string{"write"}
	sdk.Register(
		cmd("zcount", ro, "2.0.0", "Returns the count of members in a sorted set that have scores within a range.", false, false),
		cmd("zlexcount", ro, "2.8.9", "Returns the number of members in a sorted set within a lexicographical range.", true, false),
		cmd("zremrangebyscore", rw, "1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", false, true),
		cmd("zremrangebylex", rw, "2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", true, true),
	)
}

// ZCOUNT, ZLEXCOUNT, ZREMRANGEBYSCORE and ZREMRANGEBYLEX are one operate
// each: a count, or a removal, of a value range (scores as [lo, hi) floats,
// an exclusive bound being the next float) or a key range, with the type
// guard; a removal deletes the key it empties in the same operate. The
// range is parsed before the key is looked at, as Redis does; a range that
// cannot match only checks the type (Ctx.N[7] = 1).
func runRangeCount(c *sdk.Ctx, lex, remove bool) {
	var lo, hi codec.Value
	var empty bool
	if lex {
		lr, ok := parseLexRange(c.Arg(2), c.Arg(3))
		if !ok {
			c.Error(errLexRange)
			return
		}
		lo, hi, empty = lr.lo, lr.hi, lr.empty
	} else {
		sr, ok := parseScoreRange(c.Arg(2), c.Arg(3))
		if !ok {
			c.Error(errMinMax)
			return
		}
		lo, hi, empty = sr.lo, sr.hi, sr.empty
	}
	call := c.Record(c.Arg(1)).Guard(codec.TypeZSet)
	switch {
	case empty:
		c.N[7] = 1
		call.MapSize(codec.BinValue)
	case remove && lex:
		call.DeleteIfEmpty(codec.BinValue).MapRemoveByKeyRange(codec.BinValue, codec.ReturnCount, lo, hi)
	case remove:
		call.DeleteIfEmpty(codec.BinValue).MapRemoveByValueRange(codec.BinValue, codec.ReturnCount, lo, hi)
	case lex:
		call.MapGetByKeyRange(codec.BinValue, codec.ReturnCount, lo, hi)
	default:
		call.MapGetByValueRange(codec.BinValue, codec.ReturnCount, lo, hi)
	}
	c.Exec(countDone)
}
