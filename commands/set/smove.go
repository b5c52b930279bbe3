package main

import (
	"github.com/respike/respike/commands/internal/kit"
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "smove", Arity: 4, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Moves a member from one set to another.",
		Run:     runSMove,
	})
}

// SMOVE spans two records, which Aerospike cannot change atomically
// together. It runs in three steps, each atomic on its record:
//
//  1. read both keys: the member's presence in the source and the types
//     (Redis's checks, in Redis's order);
//  2. remove the member from the source (deleting it if emptied);
//  3. add it to the destination.
//
// A concurrent client can observe the member in neither set between steps
// 2 and 3. If another client removes the member first, SMOVE answers 0 and
// adds nothing. If the destination was turned into another type between
// steps 1 and 3, the member is put back into the source and SMOVE answers
// WRONGTYPE. Ctx.N[0] holds the code of a failed destination write.

func runSMove(c *sdk.Ctx) {
	ks := c.Values(1)
	ks[0] = codec.Bytes(c.Arg(3))
	c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByKeys(codec.BinValue, codec.ReturnCount, ks)
	if !sameKey(c) {
		c.Record(c.Arg(2)).Guard(codec.TypeSet).MapSize(codec.BinValue)
	}
	c.Exec(smoveChecked)
}

func sameKey(c *sdk.Ctx) bool { return string(c.Arg(1)) == string(c.Arg(2)) }

func smoveChecked(c *sdk.Ctx) {
	src := c.Result(0)
	switch src.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	default:
		kit.GuardFailed(c, src)
		return
	}
	if !sameKey(c) {
		if dst := c.Result(1); dst.Code != codec.OK && dst.Code != codec.NotFound {
			kit.GuardFailed(c, dst)
			return
		}
	}
	if kit.IntOf(src.Value(0)) == 0 || sameKey(c) {
		c.Reply().Int(kit.IntOf(src.Value(0)))
		return
	}
	ks := c.Values(1)
	ks[0] = codec.Bytes(c.Arg(3))
	c.Record(c.Arg(1)).Guard(codec.TypeSet).DeleteIfEmpty(codec.BinValue).
		MapSize(codec.BinValue).
		MapRemoveByKeys(codec.BinValue, codec.ReturnNone, ks).
		MapSize(codec.BinValue)
	c.Exec(smoveRemoved)
}

func smoveRemoved(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	if kit.IntOf(r.Value(0))-kit.IntOf(r.Value(2)) == 0 {
		c.Reply().Int(0) // another client removed it first
		return
	}
	addMember(c, c.Arg(2))
	c.Exec(smoveAdded)
}

// addMember adds the member (argument 3) to the set at key.
func addMember(c *sdk.Ctx, key []byte) {
	kv := c.Values(2)
	kv[0], kv[1] = codec.Bytes(c.Arg(3)), present
	c.Record(key).Guard(codec.TypeSet).Put(codec.BinType, tagSet).MapPut(codec.BinValue, addFlags, kv)
}

func smoveAdded(c *sdk.Ctx) {
	r := c.Result(0)
	if r.OK() {
		c.Reply().Int(1)
		return
	}
	// Put the member back where it was, then report the failure.
	c.N[0] = int64(r.Code)
	addMember(c, c.Arg(1))
	c.Exec(smoveRestored)
}

func smoveRestored(c *sdk.Ctx) {
	code := codec.Code(c.N[0])
	if !c.Result(0).OK() {
		c.Error("ERR respike: SMOVE could not add the member to the destination (code " + strconv.Itoa(int(code)) +
			") nor put it back into the source; it was removed from the source")
		return
	}
	kit.GuardFailed(c, &codec.Result{Code: code})
}
