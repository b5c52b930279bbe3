package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "bitpos", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.8.7",
		Summary: "Finds the first set (1) or clear (0) bit in a string.",
		Run:     runBitPos,
	})
}

// runBitPos: BITPOS key bit [start [end [BYTE|BIT]]]. The bit argument is
// checked first; then, as in Redis 7.0, the key is looked up before the
// range is parsed: a missing key answers 0 when looking for a clear bit
// and -1 for a set bit, whatever the range.
func runBitPos(c *sdk.Ctx) {
	bit, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	if bit != 0 && bit != 1 {
		c.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	c.N[0] = bit
	readStr(c, c.Arg(1), bitPosDone)
}

// bitPosDone finds the bit in the normalised range. Not found, a set bit
// is -1; a clear bit is the bit just past the range when no end was given
// (the string counts as padded with zeros to the right) and -1 when the
// end was given explicitly, as Redis answers.
func bitPosDone(c *sdk.Ctx) {
	r := c.Result(0)
	exists, ok := strRead(c, r)
	if !ok {
		return
	}
	bit := c.N[0]
	if !exists {
		c.Reply().Int(-bit) // 0 for a clear bit, -1 for a set one
		return
	}
	var tmp [24]byte
	s := strBytes(r.Value(0), tmp[:])
	n := int64(len(s))
	first, last := int64(0), n*8-1
	endGiven := false
	switch c.NArg() {
	case 3:
	case 4, 5, 6:
		start, ok := kit.ParseInt(c.Arg(3))
		if !ok {
			c.Error(kit.NotInt)
			return
		}
		isBit := false
		if c.NArg() == 6 {
			if isBit, ok = parseRangeUnit(c.Arg(5)); !ok {
				c.Error(kit.Syntax)
				return
			}
		}
		end := n - 1
		if isBit {
			end = n*8 - 1
		}
		if c.NArg() >= 5 {
			if end, ok = kit.ParseInt(c.Arg(4)); !ok {
				c.Error(kit.NotInt)
				return
			}
			endGiven = true
		}
		var empty bool
		if first, last, empty = bitRange(start, end, n, isBit); empty {
			c.Reply().Int(-1)
			return
		}
	default:
		c.Error(kit.Syntax)
		return
	}
	if first > last { // the empty string
		c.Reply().Int(-1)
		return
	}
	if pos := findBit(s, first, last, byte(bit)); pos >= 0 {
		c.Reply().Int(pos)
		return
	}
	if bit == 1 || endGiven {
		c.Reply().Int(-1)
		return
	}
	c.Reply().Int(last + 1)
}

// findBit is the position of the first bit equal to bit in s from bit
// first to bit last inclusive, or -1.
func findBit(s []byte, first, last int64, bit byte) int64 {
	skip := byte(0xff) // a byte with no bit sought
	if bit == 1 {
		skip = 0
	}
	for p := first; p <= last; {
		if p&7 == 0 && p+7 <= last && s[p>>3] == skip {
			p += 8
			continue
		}
		if (s[p>>3]>>(7-p&7))&1 == bit {
			return p
		}
		p++
	}
	return -1
}
