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
//  1. read the source's end item;
//  2. push the item to the destination (creating it; WRONGTYPE here
//     changes nothing);
//  3. pop the source's end, on condition that it is still an equal item
//     (codec.OpExpectListItem).
//
// Between 2 and 3 the item is in both lists. If the source's end is no
// longer an equal item at 3 (another client took it), the move takes its
// push back, on condition that the destination's end is still an equal
// item, and starts again from 1. If it cannot take the push back because
// the destination changed too, it answers an error and the item stays in
// both lists. After kit.RetryFor it answers kit.Contention, having
// changed nothing.
//
// The conditions compare items, not generations: a list emptied (so
// deleted) and pushed to again is a new record that starts again at
// generation 1, so a generation read at 1 can match a different list and a
// pop guarded by it would take another client's element.
//
// On one key (rotation) the move reads the end item, then pops it and
// pushes it back at the other end in one operate on condition that the end
// is still an equal item, starting again otherwise; from and to the same
// end it only reads.
//
// Ctx.N slots of a move; BLMOVE and BRPOPLPUSH reuse them and call
// moveStart on their first try, blocking when moveNone would answer.
const (
	mFrom  = 0 // 1 when popping from the right of the source
	mTo    = 1 // 1 when pushing to the right of the destination
	mTries = 2 // attempts
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
	c.N[mFrom], c.N[mTo], c.N[mSrc] = kit.B2I(from), kit.B2I(to), 1
	return true
}

func runRPopLPush(c *sdk.Ctx) {
	c.N[mFrom], c.N[mTo], c.N[mSrc] = 1, 0, 1
	moveStart(c)
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
	if bytes.Equal(src(c), dst(c)) {
		rotate(c)
		return
	}
	call := c.Record(dst(c)).Guard(codec.TypeList).Put(codec.BinType, tagList)
	pushItem(c, call)
	c.Exec(movePushed)
}

// pushItem adds the moved item at the destination's end to call.
func pushItem(c *sdk.Ctx, call *codec.Call) {
	items := c.Values(1)
	items[0] = codec.Bytes(c.B)
	if c.N[mTo] != 0 {
		call.ListAppend(bin, items)
	} else {
		call.ListInsert(bin, 0, items)
	}
}

// takeEnd adds to call: remove the end item of the list (the right end
// when right is 1) on condition that it is still the moved item.
func takeEnd(c *sdk.Ctx, call *codec.Call, right int64) *codec.Call {
	return call.Exists(codec.ExistsUpdateOnly).ExpectListItem(bin, end(right), codec.Bytes(c.B)).
		ListRemoveByIndex(bin, codec.ReturnNone, end(right), 1)
}

// rotate moves the end item of one list to its other end, in one operate
// on condition that the end is still that item.
func rotate(c *sdk.Ctx) {
	if c.N[mFrom] == c.N[mTo] {
		c.Reply().Bulk(c.B) // popped and pushed back where it was
		return
	}
	pushItem(c, takeEnd(c, c.Record(src(c)).Guard(codec.TypeList), c.N[mFrom]))
	c.Exec(rotated)
}

func rotated(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(c.B)
	case codec.FilteredOut, codec.NotFound:
		// The end changed (or the key is no longer a list, which the
		// next read answers with WRONGTYPE).
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
	takeEnd(c, c.Record(src(c)).Guard(codec.TypeList).DeleteIfEmpty(bin), c.N[mFrom])
	c.Exec(movePopped)
}

func movePopped(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(c.B)
	case codec.FilteredOut, codec.NotFound:
		// Another client took the source's end (or made the key
		// something else): take our push back, then start again.
		takeEnd(c, c.Record(dst(c)).Guard(codec.TypeList).DeleteIfEmpty(bin), c.N[mTo])
		c.Exec(moveUndone)
	default:
		// The source cannot be popped (the store failed): the item
		// stays in both lists.
		failed(c, r)
	}
}

// errMoveUndo answers a move whose source lost the item to another client
// after the push, when the destination's end no longer holds the item to
// take back.
const errMoveUndo = "ERR respike: LMOVE lost a race for the source after pushing; the element was pushed to the destination and not taken back"

func moveUndone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if retry(c, mTries) {
			moveStart(c)
		}
	case codec.FilteredOut, codec.NotFound:
		c.Error(errMoveUndo)
	default:
		failed(c, r)
	}
}
