package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "rename", Arity: 3, Flags: []string{"write"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Renames a key and overwrites the destination.",
		Run:     func(c *sdk.Ctx) { c.N[mvNX] = 0; renameStart(c) },
	}, sdk.Command{
		Name: "renamenx", Arity: 3, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Renames a key only when the target key name doesn't exist.",
		Run:     func(c *sdk.Ctx) { c.N[mvNX] = 1; renameStart(c) },
	})
}

// RENAME state in Ctx.N.
const (
	mvNX    = 0 // RENAMENX
	mvGen   = 1 // generation of the source as read
	mvTries = 2
)

// renameStart: RENAME/RENAMENX key newkey. Two records cannot change
// atomically together, so this is a copy then a delete:
// (1) read every bin, the generation and TTL of key;
// (2) write them to newkey (replacing it; create-only for RENAMENX), with
// the same TTL;
// (3) delete key guarded by the generation read in (1). If key changed in
// between, start over, so newkey ends with key's latest value.
// Another client may briefly see both keys, or (after a failure in (3))
// keep seeing both.
func renameStart(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get("")
	c.Exec(renameRead)
}

func renameRead(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Error("ERR no such key")
		return
	default:
		kit.StoreError(c, r)
		return
	}
	if string(c.Arg(1)) == string(c.Arg(2)) {
		if c.N[mvNX] != 0 {
			c.Reply().Int(0)
		} else {
			c.Reply().OK()
		}
		return
	}
	c.N[mvGen] = int64(r.Generation)
	exists := codec.ExistsReplace
	if c.N[mvNX] != 0 {
		exists = codec.ExistsCreateOnly
	}
	copyBins(c.Record(c.Arg(2)).Exists(exists), r)
	c.Exec(renameWritten)
}

func renameWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.Exists:
		c.Reply().Int(0)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	c.Record(c.Arg(1)).Generation(uint32(c.N[mvGen])).Delete()
	c.Exec(renameDeleted)
}

func renameDeleted(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if c.N[mvNX] != 0 {
			c.Reply().Int(1)
		} else {
			c.Reply().OK()
		}
	case codec.GenerationError:
		c.N[mvTries]++
		if c.N[mvTries] > kit.Retries {
			c.Error(kit.Contention)
			return
		}
		// RENAMENX already created newkey: overwrite it from now on.
		c.N[mvNX] = 0
		renameStart(c)
	case codec.NotFound:
		// Someone deleted key after the copy: the rename happened first.
		if c.N[mvNX] != 0 {
			c.Reply().Int(1)
		} else {
			c.Reply().OK()
		}
	default:
		kit.StoreError(c, r)
	}
}

// copyBins turns the all-bins read r into a write of the same record on
// call, with the same TTL. Map bins are written with map puts that carry
// the order their type needs (key order for hashes and sets, key-value
// order for sorted sets): a plain put would create an unordered map.
func copyBins(call *codec.Call, r *codec.Result) {
	if r.TTL > 0 {
		call.Expire(r.TTL)
	} else if r.TTL == 0 {
		call.Expire(1) // expiring this very second
	} else {
		call.TTLNever()
	}
	all := r.Value(0)
	order := codec.MapOrderKey
	for i := 0; i+1 < len(all.List); i += 2 {
		if string(all.List[i].Bytes) == codec.BinType && string(all.List[i+1].Bytes) == codec.TypeZSet {
			order = codec.MapOrderKeyValue
		}
	}
	for i := 0; i+1 < len(all.List); i += 2 {
		name, v := string(all.List[i].Bytes), all.List[i+1]
		if v.Kind == codec.KindMap {
			call.MapPut(name, order, v.List)
			continue
		}
		call.Put(name, v)
	}
}
