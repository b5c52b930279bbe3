package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "setbit", Arity: 4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
		Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
		Run:     runSetBit,
	})
}

// The one-bit values OpBitSet writes (left-aligned).
var bitOne, bitZero = []byte{0x80}, []byte{0}

// runSetBit: SETBIT key offset 0|1. Answers the bit's previous value. The
// string grows with zero bytes to reach the offset (a missing key becomes
// offset/8+1 zero bytes, even for SETBIT k n 0, as in Redis); the TTL is
// kept. Offset in Ctx.N[0], the bit in N[1].
//
// One atomic call does it on a value stored as bytes: grow the blob to
// the offset's byte, read the bit, write it, tag the record (a new one),
// under the string guard. A value stored as an integer (BinTypeError: the
// store's bit operations work on blobs only) takes a read-modify-write of
// its decimal bytes guarded by the generation (bitRMW).
func runSetBit(c *sdk.Ctx) {
	off, ok := parseBitOffset(c.Arg(2), false, 0)
	if !ok {
		c.Error(errBitOffset)
		return
	}
	on, ok := kit.ParseInt(c.Arg(3))
	if !ok || on&^1 != 0 {
		c.Error(errBitValue)
		return
	}
	if off>>3+1 > kit.MaxBuild {
		tooBig(c)
		return
	}
	c.N[0], c.N[1] = off, on
	v := bitZero
	if on == 1 {
		v = bitOne
	}
	c.Record(c.Arg(1)).Guard(codec.TypeString).TTLKeep().
		BitGrow(codec.BinValue, off>>3+1).
		BitGet(codec.BinValue, off, 1).
		BitSet(codec.BinValue, off, 1, v).
		Put(codec.BinType, tagString)
	c.Exec(setBitDone)
}

func setBitDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(int64(r.Value(1).Bytes[0] >> 7))
	case codec.BinTypeError:
		setBitRMW(c)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}

// setBitRMW sets the bit of a value stored as an integer. Nothing is
// written when the bit already has the value and the string need not
// grow.
func setBitRMW(c *sdk.Ctx) {
	off, on := c.N[0], c.N[1]
	m := &bitRMW{}
	m.edit = func(c *sdk.Ctx, b []byte, exists bool) ([]byte, bool, bool) {
		byteAt, mask := off>>3, byte(1)<<(7-off&7)
		grew := int64(len(b)) <= byteAt
		b = grow(b, byteAt+1)
		old := b[byteAt]&mask != 0
		c.N[2] = 0
		if old {
			c.N[2] = 1
		}
		if old == (on == 1) && !grew && exists {
			return b, false, true
		}
		if on == 1 {
			b[byteAt] |= mask
		} else {
			b[byteAt] &^= mask
		}
		return b, true, true
	}
	m.reply = func(c *sdk.Ctx) { c.Reply().Int(c.N[2]) }
	m.run(c)
}
