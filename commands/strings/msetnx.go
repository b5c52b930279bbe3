package main

import (
	"bytes"
	"slices"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "msetnx", Arity: -3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.0",
		Summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.",
		Run:     runMSetNX,
	})
}

// runMSetNX: MSETNX key value [key value ...]. Records cannot be created
// atomically together, so the keys are created one at a time, create-only,
// in a canonical order (sorted, each key once with its last value):
//
//  1. one batch checks that every key is absent (any present: 0);
//  2. the keys are created one by one in sorted order; the first one that
//     exists stops the command;
//  3. the keys this command created are then deleted again, each delete
//     guarded by the generation this command wrote (a later write by
//     someone else is kept), and the reply is 0.
//
// The sorted order makes two MSETNX calls over common keys meet on the
// first key they share, whatever order their arguments give: one takes it,
// the other fails there having created only keys the first one does not
// want, so exactly one of two crossed calls succeeds, as in Redis (with a
// batch create, each could take one key, fail on the other, and both answer
// 0). Other clients may briefly see a partial write; it costs one store
// round trip per key.
func runMSetNX(c *sdk.Ctx) {
	if c.NArg()%2 == 0 {
		c.Error("ERR wrong number of arguments for 'msetnx' command")
		return
	}
	for i := 1; i < c.NArg(); i += 2 {
		c.Record(c.Arg(i)).Header()
	}
	c.Exec(msetnxChecked)
}

// msetnxOp is an MSETNX past its check: the argument index of each key to
// create, in creation order, and the generations of those created so far.
type msetnxOp struct {
	order []int
	gens  []uint32
}

func msetnxChecked(c *sdk.Ctx) {
	rs := c.Results()
	for i := range rs {
		switch rs[i].Code {
		case codec.NotFound:
		case codec.OK:
			c.Reply().Int(0)
			return
		default:
			kit.StoreError(c, &rs[i])
			return
		}
	}
	keep := pairKeys(c, true)
	op := &msetnxOp{}
	for i := 1; i < c.NArg(); i += 2 {
		if keep == nil || keep[i/2] {
			op.order = append(op.order, i)
		}
	}
	slices.SortFunc(op.order, func(a, b int) int { return bytes.Compare(c.Arg(a), c.Arg(b)) })
	msetnxCreate(c, op)
}

// msetnxCreate creates the next key of op.order.
func msetnxCreate(c *sdk.Ctx, op *msetnxOp) {
	i := op.order[len(op.gens)]
	c.Record(c.Arg(i)).Exists(codec.ExistsCreateOnly).TTLNever().
		Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.Arg(i+1)))
	c.Exec(func(c *sdk.Ctx) { msetnxCreated(c, op) })
}

func msetnxCreated(c *sdk.Ctx, op *msetnxOp) {
	r := c.Result(0)
	if r.Code != codec.OK {
		msetnxUndo(c, op, r.Code)
		return
	}
	op.gens = append(op.gens, r.Generation)
	if len(op.gens) < len(op.order) {
		msetnxCreate(c, op)
		return
	}
	c.Reply().Int(1)
}

// msetnxUndo deletes the keys op created, then answers for the code that
// stopped it: 0 for a key that exists, else the store's error. Undo
// failures are ignored: a generation mismatch means another client has
// written the key since, and its value must stay.
func msetnxUndo(c *sdk.Ctx, op *msetnxOp, code codec.Code) {
	answer := func(c *sdk.Ctx) {
		if code != codec.Exists {
			c.Error(kit.StoreErrorText(code, ""))
			return
		}
		c.Reply().Int(0)
	}
	if len(op.gens) == 0 {
		answer(c)
		return
	}
	for k, gen := range op.gens {
		c.Record(c.Arg(op.order[k])).Generation(gen).Delete()
	}
	c.Exec(answer)
}
