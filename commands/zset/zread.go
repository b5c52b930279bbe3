package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	ro := []string{"readonly", "fast"}
	cmd := func(name string, arity int, since, summary string, run sdk.Step) sdk.Command {
		return sdk.Command{
			Name: name, Arity: arity, Flags: ro, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "sorted_set", Since: since, Summary: summary, Run: run,
		}
	}
	sdk.Register(
		cmd("zcard", 2, "1.2.0", "Returns the number of members in a sorted set.", runZCard),
		cmd("zscore", 3, "1.2.0", "Returns the score of a member in a sorted set.", runZScore),
		cmd("zmscore", -3, "6.2.0", "Returns the score of one or more members in a sorted set.", runZMScore),
		cmd("zrank", 3, "2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.", runZRank),
		cmd("zrevrank", 3, "2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.", runZRank),
	)
}

// The reads of one key: each is one operate, guarded by the type tag.

func runZCard(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).MapSize(codec.BinValue)
	c.Exec(countDone)
}

// countDone answers the integer the call's first op returned; 0 for a
// missing key or when Ctx.N[7] says the range was empty (the call only
// checked the type).
func countDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if c.N[7] == 1 {
			c.Reply().Int(0)
			return
		}
		c.Reply().Int(kit.IntOf(r.Value(0)))
	case codec.NotFound:
		c.Reply().Int(0)
	default:
		failed(c, r)
	}
}

func runZScore(c *sdk.Ctx) {
	keys := c.Values(1)
	keys[0] = codec.Bytes(c.Arg(2))
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).MapGetByKeys(codec.BinValue, codec.ReturnValue, keys)
	c.Exec(memberDone)
}

// memberDone answers the one-member read: nil for a missing key or member,
// else its rank (Ctx.N[6] = 1) or its score.
func memberDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Null()
		return
	default:
		failed(c, r)
		return
	}
	l := r.Value(0).List
	switch {
	case len(l) == 0:
		c.Reply().Null()
	case c.N[6] == 1:
		c.Reply().Int(l[0].Int)
	default:
		replyScore(c, codec.ScoreOf(&l[0]))
	}
}

func runZMScore(c *sdk.Ctx) {
	keys := c.Values(c.NArg() - 2)
	for i := range keys {
		keys[i] = codec.Bytes(c.Arg(2 + i))
	}
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).MapGetByKeys(codec.BinValue, codec.ReturnKeyValue, keys)
	c.Exec(zmscoreDone)
}

// zmscoreDone answers each member's score in argument order; the store
// answers the found ones in map order.
func zmscoreDone(c *sdk.Ctx) {
	kv, ok := kit.ReadItems(c, c.Result(0))
	if !ok {
		return
	}
	w := c.Reply()
	w.Array(c.NArg() - 2)
	for i := 2; i < c.NArg(); i++ {
		found := false
		for j := 0; j+1 < len(kv); j += 2 {
			if string(kv[j].Bytes) == string(c.Arg(i)) {
				replyScore(c, codec.ScoreOf(&kv[j+1]))
				found = true
				break
			}
		}
		if !found {
			w.Null()
		}
	}
}

// ZRANK and ZREVRANK ask the store for the member's rank, counted from the
// lowest or the highest score.
func runZRank(c *sdk.Ctx) {
	ret := codec.ReturnRank
	if kit.Fold(c.Arg(0), "zrevrank") {
		ret = codec.ReturnReverseRank
	}
	c.N[6] = 1
	keys := c.Values(1)
	keys[0] = codec.Bytes(c.Arg(2))
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).MapGetByKeys(codec.BinValue, ret, keys)
	c.Exec(memberDone)
}
