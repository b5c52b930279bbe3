package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "getbit", Arity: 3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
		Summary: "Returns a bit value by offset.",
		Run:     runGetBit,
	})
}

// runGetBit: GETBIT key offset. 0 past the end of the string or for a
// missing key. The offset is checked before the key, as in Redis. The
// store reads the one bit (OpBitGet); a value stored as an integer
// (BinTypeError), or an offset beyond what the store's bit operations
// address (ParameterError), is read whole instead.
func runGetBit(c *sdk.Ctx) {
	off, ok := parseBitOffset(c.Arg(2), false, 0)
	if !ok {
		c.Error(errBitOffset)
		return
	}
	c.N[0] = off
	c.Record(c.Arg(1)).Guard(codec.TypeString).BitGet(codec.BinValue, off, 1)
	c.Exec(getBitDone)
}

func getBitDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if v := r.Value(0); v.Kind == codec.KindBytes && len(v.Bytes) > 0 {
			c.Reply().Int(int64(v.Bytes[0] >> 7))
			return
		}
		c.Reply().Int(0) // no value bin
	case codec.NotFound, codec.OpNotApplicable: // no key; past the end
		c.Reply().Int(0)
	case codec.BinTypeError, codec.ParameterError:
		readStr(c, c.Arg(1), getBitWhole)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}

func getBitWhole(c *sdk.Ctx) {
	r := c.Result(0)
	exists, ok := strRead(c, r)
	if !ok {
		return
	}
	var tmp [24]byte
	off := c.N[0]
	var s []byte
	if exists {
		s = strBytes(r.Value(0), tmp[:])
	}
	if off>>3 >= int64(len(s)) {
		c.Reply().Int(0)
		return
	}
	c.Reply().Int(int64(s[off>>3]>>(7-off&7)) & 1)
}
