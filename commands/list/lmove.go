package main

import (
	"bytes"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lmove", Arity: 5, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "6.2.0",
		Summary: "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.",
		Run:     runLMove,
	}, sdk.Command{
		Name: "rpoplpush", Arity: 3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "list", Since: "1.2.0",
		Summary: "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.",
		Run:     runRPopLPush,
	})
}

// LMOVE source destination from to, and RPOPLPUSH (RIGHT LEFT).
//
// Two keys are two records, and Aerospike has no operate across records,
// so a move is several steps ordered so that the element is never lost,
// whatever step the proxy dies after:
//
//  1. read the source's end item and the source's generation;
//  2. push the item to the destination (creating it; WRONGTYPE here
//     changes nothing);
//  3. pop the source's end under the generation read in 1.
//
// Between 2 and 3 the item is in both lists. If the source changed between
// 1 and 3, the pop fails and the move reads the source's end again: if it
// is still an equal item, the move pops that one (under the new
// generation), which is the same move; otherwise it takes its push back
// (removes the destination's end item under the destination's generation,
// if it is still an equal item) and starts again from 1. If it cannot
// take the push back because the destination changed too, it answers an
// error and the item stays in both lists. After kit.RetryFor it
// answers kit.Contention likewise.
//
// On one key (rotation) the move reads the end item and its generation,
// then pops it and pushes it back at the other end in one operate under
// that generation, starting again if another client wrote in between;
// from and to the same end it only reads.
//
// Ctx.N slots of a move; BLMOVE and BRPOPLPUSH reuse them and call
// moveStart on their first try, blocking when moveNone would answer.
const (
	mFrom  = 0 // 1 when popping from the right of the source
	mTo    = 1 // 1 when pushing to the right of the destination
	mTries = 2 // attempts
	mGen   = 3 // generation of the record being changed (source or destination)
	mSrc   = 4 // argument index of the source (the destination follows)
)

func runLMove(c *sdk.Ctx) {
	if parseSides(c) {
		moveStart(c)
	}
}

// parseSides parses LMOVE's and BLMOVE's LEFT|RIGHT LEFT|RIGHT (arguments
// 3 and 4) into the move slots; when it reports false it has replied.
func parseSides(c *sdk.Ctx) bool {
	from, ok1 := side(c.Arg(3))
	to, ok2 := side(c.Arg(4))
	if !ok1 || !ok2 {
		c.Error(kit.Syntax)
		return false
	}
	c.N[mFrom], c.N[mTo], c.N[mSrc] = b2i(from), b2i(to), 1
	return true
}

func runRPopLPush(c *sdk.Ctx) {
	c.N[mFrom], c.N[mTo], c.N[mSrc] = 1, 0, 1
	moveStart(c)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func src(c *sdk.Ctx) []byte { return c.Arg(int(c.N[mSrc])) }
func dst(c *sdk.Ctx) []byte { return c.Arg(int(c.N[mSrc]) + 1) }

// end is the index of a list's first (0) or last (-1) item.
func end(right int64) int64 { return -right }

// moveStart reads the source's end item (step 1).
func moveStart(c *sdk.Ctx) {
	c.Record(src(c)).Guard(codec.TypeList).ListGetByIndex(bin, codec.ReturnValue, end(c.N[mFrom]), 1)
	c.Exec(moveRead)
}

// moveNone answers a move from a missing source; a blocking move blocks.
func moveNone(c *sdk.Ctx) {
	if c.N[bTimeout] != 0 {
		moveBlock(c)
		return
	}
	c.Reply().Null()
}

func moveRead(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		moveNone(c)
		return
	default:
		failed(c, r)
		return
	}
	items := r.Value(0).List
	if len(items) == 0 {
		moveNone(c)
		return
	}
	// The item is copied into B: the next request reuses the result.
	c.B = kit.AppendStr(c.B[:0], items[0])
	c.N[mGen] = int64(r.Generation)
	if bytes.Equal(src(c), dst(c)) {
		rotate(c)
		return
	}
	push := c.Values(1)
	push[0] = codec.Bytes(c.B)
	call := c.Record(dst(c)).Guard(codec.TypeList).Put(codec.BinType, tagList)
	if c.N[mTo] != 0 {
		call.ListAppend(bin, push)
	} else {
		call.ListInsert(bin, 0, push)
	}
	c.Exec(movePushed)
}

// rotate moves the end item of one list to its other end, in one operate
// under the generation the item was read with.
func rotate(c *sdk.Ctx) {
	if c.N[mFrom] == c.N[mTo] {
		c.Reply().Bulk(c.B) // popped and pushed back where it was
		return
	}
	push := c.Values(1)
	push[0] = codec.Bytes(c.B)
	call := c.Record(src(c)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).Generation(uint32(c.N[mGen])).
		ListRemoveByIndex(bin, codec.ReturnNone, end(c.N[mFrom]), 1)
	if c.N[mTo] != 0 {
		call.ListAppend(bin, push)
	} else {
		call.ListInsert(bin, 0, push)
	}
	c.Exec(rotated)
}

func rotated(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(c.B)
	case codec.GenerationError, codec.NotFound:
		if retry(c, mTries) {
			moveStart(c)
		}
	default:
		failed(c, r)
	}
}

// movePushed pops the source (step 3) once the destination has the item.
func movePushed(c *sdk.Ctx) {
	r := c.Result(0)
	if !r.OK() {
		failed(c, r) // nothing moved
		return
	}
	movePop(c)
}

func movePop(c *sdk.Ctx) {
	c.Record(src(c)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin).Generation(uint32(c.N[mGen])).
		ListRemoveByIndex(bin, codec.ReturnNone, end(c.N[mFrom]), 1)
	c.Exec(movePopped)
}

func movePopped(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(c.B)
	case codec.GenerationError, codec.NotFound:
		// The source changed since step 1: is its end still our item?
		if !moveRetry(c) {
			return
		}
		c.Record(src(c)).Guard(codec.TypeList).ListGetByIndex(bin, codec.ReturnValue, end(c.N[mFrom]), 1)
		c.Exec(moveRecheck)
	default:
		// The source cannot be popped (it is no longer a list, or the
		// store failed): the item stays in both lists.
		failed(c, r)
	}
}

// moveRetry counts an attempt; when kit.RetryFor has passed it answers
// that the item may be in both lists.
func moveRetry(c *sdk.Ctx) bool {
	c.N[mTries]++
	if !kit.Again(c) {
		c.Error(errMoveContention)
		return false
	}
	return true
}

// errMoveContention answers a move that lost the race for its keys
// for kit.RetryFor after pushing: the element is in the destination and
// may still be in the source.
const errMoveContention = "ERR respike: the source list kept changing during LMOVE; the element was pushed to the destination and may also still be in the source"

func moveRecheck(c *sdk.Ctx) {
	r := c.Result(0)
	if r.OK() {
		if items := r.Value(0).List; len(items) > 0 && string(kit.AppendStr(nil, items[0])) == string(c.B) {
			c.N[mGen] = int64(r.Generation)
			movePop(c)
			return
		}
	} else if r.Code != codec.NotFound {
		failed(c, r)
		return
	}
	// Someone else took it: take our push back, then start again.
	c.Record(dst(c)).Guard(codec.TypeList).ListGetByIndex(bin, codec.ReturnValue, end(c.N[mTo]), 1)
	c.Exec(moveUndoRead)
}

func moveUndoRead(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		// Someone emptied the destination, our push included.
		c.Error(errMoveUndo)
		return
	default:
		failed(c, r)
		return
	}
	items := r.Value(0).List
	if len(items) == 0 || string(kit.AppendStr(nil, items[0])) != string(c.B) {
		c.Error(errMoveUndo)
		return
	}
	c.Record(dst(c)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(bin).Generation(r.Generation).
		ListRemoveByIndex(bin, codec.ReturnNone, end(c.N[mTo]), 1)
	c.Exec(moveUndone)
}

// errMoveUndo answers a move whose source lost the item to another client
// after the push, when the destination's end no longer holds the item to
// take back.
const errMoveUndo = "ERR respike: LMOVE lost a race for the source after pushing; the element was pushed to the destination and not taken back"

func moveUndone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if moveRetry(c) {
			moveStart(c)
		}
	case codec.GenerationError, codec.NotFound:
		if !moveRetry(c) {
			return
		}
		c.Record(dst(c)).Guard(codec.TypeList).ListGetByIndex(bin, codec.ReturnValue, end(c.N[mTo]), 1)
		c.Exec(moveUndoRead)
	default:
		failed(c, r)
	}
}
