package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "blpop", Arity: -3, Flags: []string{"write", "noscript", "blocking"},
		FirstKey: 1, LastKey: -2, Step: 1, Group: "list", Since: "2.0.0",
		Summary: "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
		Run:     func(c *sdk.Ctx) { runBPop(c, false) },
	}, sdk.Command{
		Name: "brpop", Arity: -3, Flags: []string{"write", "noscript", "blocking"},
		FirstKey: 1, LastKey: -2, Step: 1, Group: "list", Since: "2.0.0",
		Summary: "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
		Run:     func(c *sdk.Ctx) { runBPop(c, true) },
	}, sdk.Command{
		Name: "blmpop", Arity: -5, Flags: []string{"write", "blocking", "movablekeys"},
		Group: "list", Since: "7.0.0",
		Summary: "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
		Run:     runBLMPop,
	}, sdk.Command{
		Name: "blmove", Arity: 6, Flags: []string{"write", "denyoom", "noscript", "blocking"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "6.2.0",
		Summary: "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.",
		Run:     runBLMove,
	}, sdk.Command{
		Name: "brpoplpush", Arity: 4, Flags: []string{"write", "denyoom", "noscript", "blocking"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "2.2.0",
		Summary: "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.",
		Run:     runBRPopLPush,
	})
}

// BLPOP, BRPOP and BLMPOP are pops (pop.go), BLMOVE and BRPOPLPUSH moves
// (lmove.go), with a timeout: the same first try, and where the
// non-blocking form would answer null (popNone, moveNone) they write the
// null reply a timeout answers and block (Ctx.Block) on every key they
// name, or on the source only for a move: only a push to the source can
// let a move go on. The host runs the command again from the start when
// one of the keys is written, so a woken BLMOVE moves as LMOVE does.
//
// Errors come in redis-server 7.0's order: BLPOP, BRPOP and BRPOPLPUSH
// check the timeout first; BLMOVE checks its sides, then the timeout;
// BLMPOP checks numkeys, the side and COUNT, then the timeout. A key of
// another type met before a non-empty list answers WRONGTYPE rather than
// blocking, as in Redis (the pops try keys in order, each try guarded by
// the type).
//
// Ctx.N as in pop.go and lmove.go, plus:
const (
	bFirst   = 6             // the argument index of the first key of a blocking pop
	bTimeout = kit.BlockSlot // the timeout (kit.ParseBlockTimeout)
)

func runBPop(c *sdk.Ctx, right bool) {
	last := c.NArg() - 1
	if !kit.ParseBlockTimeout(c, last) {
		return
	}
	c.N[pKey], c.N[pLast], c.N[pCount], c.N[bFirst] = 1, int64(last-1), 1, 1
	c.N[pFlags] = shapeKeyedOne
	if right {
		c.N[pFlags] |= popRight
	}
	popStart(c)
}

func runBLMPop(c *sdk.Ctx) {
	if !parseMPop(c, 2) || !kit.ParseBlockTimeout(c, 1) {
		return
	}
	c.N[bFirst] = c.N[pKey]
	popStart(c)
}

func runBLMove(c *sdk.Ctx) {
	if parseSides(c) && kit.ParseBlockTimeout(c, 5) {
		moveStart(c)
	}
}

func runBRPopLPush(c *sdk.Ctx) {
	if !kit.ParseBlockTimeout(c, 3) {
		return
	}
	c.N[mFrom], c.N[mTo], c.N[mSrc] = 1, 0, 1
	moveStart(c)
}

// popBlock parks a blocking pop that found nothing: the null array a
// timeout answers, then a block on every key the command names.
func popBlock(c *sdk.Ctx) {
	c.Reply().NullArray()
	c.Block(c.Args()[c.N[bFirst]:c.N[pLast]+1], kit.BlockTimeout(c))
}

// moveBlock parks a blocking move whose source is empty: the null array a
// timeout answers (redis-server 7.0 answers a timed-out BLMOVE "*-1" in
// RESP2, not the "$-1" of LMOVE), then a block on the source. The host
// sends the same reply at once inside MULTI, where Redis answers "$-1":
// docs/compatibility.md.
func moveBlock(c *sdk.Ctx) {
	c.Reply().NullArray()
	c.Block(c.Args()[c.N[mSrc]:c.N[mSrc]+1], kit.BlockTimeout(c))
}
