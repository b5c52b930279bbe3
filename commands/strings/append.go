package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "append", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.",
		Run:     appendFast,
	})
}

// appendFast is one atomic call: append to the bytes bin (creating the
// record and its tag if needed), keep the TTL, and read the value back for
// the new length. No op returns a bin's length, so the reply costs a read
// of the whole value: APPEND on a value of n bytes moves n bytes from the
// store, and building a large value by many APPENDs is quadratic in
// transfer (not in store work). Values are bounded by the record size
// limit (8 MiB on Aerospike), which bounds the cost.
func appendFast(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).TTLKeep().
		Append(codec.BinValue, c.Arg(2)).
		Put(codec.BinType, tagString).
		Get(codec.BinValue)
	c.Exec(appendDone)
}

func appendDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(int64(kit.StrLen(r.Value(2))))
	case codec.BinTypeError:
		// The value is stored as an integer: read, concatenate, write back
		// guarded by the generation.
		c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
		c.Exec(appendRead)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}

func appendRead(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		appendRetry(c)
		return
	case codec.FilteredOut:
		c.Error(kit.WrongType)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	v := r.Value(0)
	if kit.StrLen(v)+len(c.Arg(2)) > kit.MaxBuild {
		c.Error(kit.StoreErrorText(codec.RecordTooBig, "respike builds values up to 16 MiB"))
		return
	}
	c.B = append(kit.AppendStr(c.B[:0], v), c.Arg(2)...)
	// The result may be a canonical integer again ("1" + "0"): store it as
	// one so INCR stays a single add.
	c.Record(c.Arg(1)).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).TTLKeep().
		Put(codec.BinValue, kit.StrValue(c.B))
	c.Exec(appendWritten)
}

func appendWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(int64(len(c.B)))
	case codec.GenerationError, codec.NotFound:
		appendRetry(c)
	default:
		kit.StoreError(c, r)
	}
}

func appendRetry(c *sdk.Ctx) {
	if !kit.Again(c) {
		c.Error(kit.Contention)
		return
	}
	appendFast(c)
}
