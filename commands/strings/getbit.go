package main

import (
	sdk "github.com/respike/respike/guest-sdk"
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
// missing key. The offset is checked before the key, as in Redis. Reads
// the whole value: no store op reads one bit of a string stored as an
// integer, and a bitmap is bounded by the record size.
func runGetBit(c *sdk.Ctx) {
	off, ok := parseBitOffset(c.Arg(2), false, 0)
	if !ok {
		c.Error(errBitOffset)
		return
	}
	c.N[0] = off
	readStr(c, c.Arg(1), getBitDone)
}

func getBitDone(c *sdk.Ctx) {
	r := c.Result(0)
	exists, ok := strRead(c, r)
	if !ok {
		return
	}
	var tmp [24]byte
	off := c.N[0]
	if !exists {
		c.Reply().Int(0)
		return
	}
	s := strBytes(r.Value(0), tmp[:])
	if off>>3 >= int64(len(s)) {
		c.Reply().Int(0)
		return
	}
	c.Reply().Int(int64(s[off>>3]>>(7-off&7)) & 1)
}
