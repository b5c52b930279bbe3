// Command set is respike's module of Redis set commands: SADD, SREM,
// SCARD, SISMEMBER, SMISMEMBER, SMEMBERS, SPOP, SRANDMEMBER, SMOVE, SINTER,
// SINTERCARD, SUNION, SDIFF, SINTERSTORE, SUNIONSTORE, SDIFFSTORE and SSCAN.
//
// Data model: one key is one record with bin "t" = "set" and bin "v" = a
// key-ordered map member → 1. Members are bytes; the value is a placeholder
// (the integer 1, the smallest value a map item can hold besides nil, which
// this module avoids so that no backend can mistake it for a removal).
//
// Atomicity: SADD, SREM, SCARD, SISMEMBER, SMISMEMBER, SMEMBERS and SSCAN
// are one atomic operate each, guarded by the type tag, so WRONGTYPE is
// decided atomically with the write. A write that empties the map deletes
// the record in the same operate, and writes leave the record's TTL as it
// is. SPOP and SRANDMEMBER read the size, draw random indexes, then remove
// (SPOP, under the generation the size came from) or read the drawn items,
// and draw again if another client wrote in between. SMOVE and the
// multi-key commands span several records and are not atomic across them:
// see smove.go and algebra.go for what a concurrent client can observe.
package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("set", "1.0.0") }

// tagSet is the type tag of every set record, built once because codec.Str
// allocates.
var tagSet = codec.Str(codec.TypeSet)

// present is the placeholder value of every member.
var present = codec.Int(1)

// addFlags write only members that are not there yet, skipping the others
// without failing the call, and create a key-ordered map.
const addFlags = codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial | codec.MapOrderKey

// members builds the map items of args[from:], each with the placeholder.
func members(c *sdk.Ctx, from int) []codec.Value {
	kv := c.Values(2 * (c.NArg() - from))
	for i := from; i < c.NArg(); i++ {
		kv[2*(i-from)] = codec.Bytes(c.Arg(i))
		kv[2*(i-from)+1] = present
	}
	return kv
}

// keys builds the map keys of args[from:].
func keys(c *sdk.Ctx, from int) []codec.Value {
	ks := c.Values(c.NArg() - from)
	for i := range ks {
		ks[i] = codec.Bytes(c.Arg(from + i))
	}
	return ks
}
