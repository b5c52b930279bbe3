package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "setbit", Arity: 4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.2.0",
		Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
		Run:     runSetBit,
	})
}

// runSetBit: SETBIT key offset 0|1. Answers the bit's previous value. The
// string grows with zero bytes to reach the offset (a missing key becomes
// offset/8+1 zero bytes, even for SETBIT k n 0, as in Redis). A
// read-modify-write guarded by the generation (bitRMW), which keeps the
// TTL; nothing is written when the bit already has the value and the
// string need not grow.
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
	m := &bitRMW{key: c.Arg(1)}
	m.edit = func(c *sdk.Ctx, b []byte, exists bool) ([]byte, bool, bool) {
		byteAt, mask := off>>3, byte(1)<<(7-off&7)
		grew := int64(len(b)) <= byteAt
		b = grow(b, byteAt+1)
		old := b[byteAt]&mask != 0
		c.N[0] = 0
		if old {
			c.N[0] = 1
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
	m.reply = func(c *sdk.Ctx) { c.Reply().Int(c.N[0]) }
	m.run(c)
}
