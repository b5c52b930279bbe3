package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "cas.hset", Arity: 5, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Sets a hash field to new if it holds expected; returns 1 if it did, 0 if not.",
		Run:     hcasRead,
	})
}

// hcasRead reads one field of the hash map (a list of 0 or 1 values).
func hcasRead(c *sdk.Ctx) {
	field := c.Values(1)
	field[0] = codec.Bytes(c.Arg(2))
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		MapGetByKeys(codec.BinValue, codec.ReturnValue, field)
	c.Exec(hcasCompare)
}

// hcasCompare writes new when the field holds expected, on condition that
// the record is still the one read.
func hcasCompare(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	case codec.FilteredOut, codec.BinTypeError:
		c.Error(errWrongType)
		return
	default:
		storeError(c, r)
		return
	}
	found := r.Value(0).List
	if len(found) != 1 || !sameString(found[0], c.Arg(3)) {
		c.Reply().Int(0)
		return
	}
	kv := c.Values(2)
	kv[0], kv[1] = codec.Bytes(c.Arg(2)), codec.Bytes(c.Arg(4)) // HSET stores blobs
	c.Record(c.Arg(1)).Guard(codec.TypeHash).Generation(r.Generation).
		Put(codec.BinType, tagHash).
		MapPut(codec.BinValue, codec.MapOrderKey, kv)
	c.Exec(hcasWritten)
}

// hcasWritten replies 1, or starts again after a lost race.
func hcasWritten(c *sdk.Ctx) {
	switch r := c.Result(0); r.Code {
	case codec.OK:
		c.Reply().Int(1)
	case codec.GenerationError:
		retry(c, hcasRead)
	case codec.FilteredOut, codec.BinTypeError:
		c.Error(errWrongType)
	default:
		storeError(c, r)
	}
}
