package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "bzpopmin", Arity: -3, Flags: []string{"write", "noscript", "blocking", "fast"},
		FirstKey: 1, LastKey: -2, Step: 1, Group: "sorted_set", Since: "5.0.0",
		Summary: "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
		Run:     func(c *sdk.Ctx) { runBZPop(c, popMin) },
	}, sdk.Command{
		Name: "bzpopmax", Arity: -3, Flags: []string{"write", "noscript", "blocking", "fast"},
		FirstKey: 1, LastKey: -2, Step: 1, Group: "sorted_set", Since: "5.0.0",
		Summary: "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.",
		Run:     func(c *sdk.Ctx) { runBZPop(c, popMax) },
	}, sdk.Command{
		Name: "bzmpop", Arity: -5, Flags: []string{"write", "blocking", "movablekeys"},
		FirstKey: 0, LastKey: 0, Step: 0, Group: "sorted_set", Since: "7.0.0",
		Summary: "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
		Run:     runBZMPop,
	})
}

// BZPOPMIN, BZPOPMAX and BZMPOP are ZPOPMIN, ZPOPMAX and ZMPOP (zpop.go)
// with a timeout: the same pop, and where the non-blocking form would answer
// "nothing to pop" (zpopEmpty) they write the null array a timeout answers
// and block on every key they name (Ctx.Block). The host runs the command
// again from the start when one of the keys is written.
//
// As in Redis, BZPOPMIN and BZPOPMAX check the timeout before anything
// else, BZMPOP after the rest of its arguments, and a key of another type
// met before a non-empty sorted set answers WRONGTYPE rather than blocking.
//
// Ctx.N as in zpop.go, plus [kit.BlockSlot]: the timeout.

func runBZPop(c *sdk.Ctx, where int64) {
	last := c.NArg() - 1
	if !kit.ParseBlockTimeout(c, last) {
		return
	}
	c.N[0], c.N[1], c.N[3], c.N[4], c.N[5] = 1, int64(last-1), 1, where, popKeyedOne
	zpopKeys(c)
}

func runBZMPop(c *sdk.Ctx) {
	// ZMPOP's syntax one argument further on, checked before the timeout
	// as redis-server 7.0 does.
	if zmpopParse(c, 2) && kit.ParseBlockTimeout(c, 1) {
		zpopKeys(c)
	}
}

// zpopBlock parks a blocking pop that found nothing: it writes the reply of
// a timeout and blocks on every key the command names.
func zpopBlock(c *sdk.Ctx) {
	c.Reply().NullArray()
	first := int(c.N[0])
	c.Block(c.Args()[first:first+int(c.N[1])], kit.BlockTimeout(c))
}
