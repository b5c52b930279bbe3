package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	rw := []string{"write"}
	cmd := func(name string, arity int, since, summary string, run sdk.Step) sdk.Command {
		return sdk.Command{
			Name: name, Arity: arity, Flags: rw, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "sorted_set", Since: since, Summary: summary, Run: run,
		}
	}
	zrem := cmd("zrem", -3, "1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", runZRem)
	zrem.Flags = []string{"write", "fast"}
	sdk.Register(zrem,
		cmd("zremrangebyrank", 4, "2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", runZRemRangeByRank),
	)
}

// ZREM and ZREMRANGEBYRANK are one operate each: the map removal by keys or
// rank range, counting what it removed, with the type guard
// and delete-if-empty, so the key never exists empty. A rank range whose
// ends have different signs depends on the size: the size is read first
// and the removal sent under the generation it came from, again if another
// client wrote in between.
//
// Ctx.N: [0] [1] rank start and end, [2] attempts, [3] the generation
// read, [7] 1 when the range is empty (the call only checks the type).

func runZRem(c *sdk.Ctx) {
	keys := c.Values(c.NArg() - 2)
	for i := range keys {
		keys[i] = codec.Bytes(c.Arg(2 + i))
	}
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).DeleteIfEmpty(codec.BinValue).
		MapRemoveByKeys(codec.BinValue, codec.ReturnCount, keys)
	c.Exec(countDone)
}

func runZRemRangeByRank(c *sdk.Ctx) {
	s, ok1 := kit.ParseInt(c.Arg(2))
	e, ok2 := kit.ParseInt(c.Arg(3))
	if !ok1 || !ok2 {
		c.Error(kit.NotInt)
		return
	}
	c.N[0], c.N[1] = s, e
	rank, count, _, empty, ok := rankSpan(s, e, false, -1)
	call := c.Record(c.Arg(1)).Guard(codec.TypeZSet)
	switch {
	case !ok:
		call.MapSize(codec.BinValue)
		c.Exec(zremRankSized)
		return
	case empty:
		c.N[7] = 1
		call.MapSize(codec.BinValue)
	default:
		call.DeleteIfEmpty(codec.BinValue).MapRemoveByRank(codec.BinValue, codec.ReturnCount, rank, count)
	}
	c.Exec(countDone)
}

// zremRankSized removes the rank range computed from the size read, under
// the generation it came from.
func zremRankSized(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	default:
		failed(c, r)
		return
	}
	rank, count, _, empty, _ := rankSpan(c.N[0], c.N[1], false, kit.IntOf(r.Value(0)))
	if empty {
		c.Reply().Int(0)
		return
	}
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).
		DeleteIfEmpty(codec.BinValue).MapRemoveByRank(codec.BinValue, codec.ReturnCount, rank, count)
	c.Exec(zremRankDone)
}

func zremRankDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(kit.IntOf(r.Value(0)))
	case codec.GenerationError, codec.NotFound:
		if kit.Retry(c) {
			c.Record(c.Arg(1)).Guard(codec.TypeZSet).MapSize(codec.BinValue)
			c.Exec(zremRankSized)
		}
	default:
		failed(c, r)
	}
}
