package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "cas", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Sets key to new if it holds expected; returns 1 if it did, 0 if not.",
		Run:     casRead,
	})
}

// casRead reads the value and, in the result, the record's generation.
// It is the first step and, after a lost race, the first step again.
func casRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(casCompare)
}

// casCompare compares the value read with expected and, when they match,
// writes new on condition that the record is still the one read.
func casCompare(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	case codec.FilteredOut:
		c.Error(errWrongType)
		return
	default:
		storeError(c, r)
		return
	}
	if !sameString(r.Value(0), c.Arg(2)) {
		c.Reply().Int(0)
		return
	}
	// TTLKeep is the default: like SET ... KEEPTTL, not like SET.
	c.Record(c.Arg(1)).Guard(codec.TypeString).Generation(r.Generation).
		Put(codec.BinType, tagString).
		Put(codec.BinValue, stringValue(c.Arg(3)))
	c.Exec(casWritten)
}

// casWritten replies 1, or starts again when another client wrote the
// record between our read and our write.
func casWritten(c *sdk.Ctx) {
	switch r := c.Result(0); r.Code {
	case codec.OK:
		c.Reply().Int(1)
	case codec.GenerationError:
		retry(c, casRead)
	case codec.FilteredOut:
		c.Error(errWrongType)
	default:
		storeError(c, r)
	}
}
