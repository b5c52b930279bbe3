package main

import (
	"math/bits"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "bitcount", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "2.6.0",
		Summary: "Counts the number of set bits (population counting) in a string.",
		Run:     runBitCount,
	})
}

// runBitCount: BITCOUNT key [start end [BYTE|BIT]]. As in Redis 7.0 the
// key is looked up before the arguments are parsed: a missing key answers
// 0 and another type WRONGTYPE whatever the arguments.
//
// A valid range of non-negative indexes, start <= end, is counted by the
// store (OpBitCount), without moving the value; when it reaches past the
// end of the value (OpNotApplicable: Redis clamps it), or the value is
// stored as an integer (BinTypeError), the value is read whole and counted
// here, as it is for the whole string and negative indexes: the store's
// bit operations cannot tell the value's length.
func runBitCount(c *sdk.Ctx) {
	if c.NArg() == 4 || c.NArg() == 5 {
		start, ok1 := kit.ParseInt(c.Arg(2))
		end, ok2 := kit.ParseInt(c.Arg(3))
		isBit, ok3 := false, true
		if c.NArg() == 5 {
			isBit, ok3 = parseRangeUnit(c.Arg(4))
		}
		limit := int64(maxBitBytes) // past the end of any value beyond
		if isBit {
			limit <<= 3
		}
		if ok1 && ok2 && ok3 && start >= 0 && start <= end && end < limit {
			first, last := start, end
			if !isBit {
				first, last = start<<3, end<<3+7
			}
			c.Record(c.Arg(1)).Guard(codec.TypeString).BitCount(codec.BinValue, first, last-first+1)
			c.Exec(bitCountRange)
			return
		}
	}
	readStr(c, c.Arg(1), bitCountDone)
}

// bitCountRange answers the store's count of an explicit range.
func bitCountRange(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(kit.IntOf(r.Value(0))) // 0 when there is no value bin
	case codec.NotFound:
		c.Reply().Int(0)
	case codec.OpNotApplicable, codec.BinTypeError, codec.ParameterError:
		readStr(c, c.Arg(1), bitCountDone)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}

func bitCountDone(c *sdk.Ctx) {
	r := c.Result(0)
	exists, ok := strRead(c, r)
	if !ok {
		return
	}
	if !exists {
		c.Reply().Int(0)
		return
	}
	var tmp [24]byte
	s := strBytes(r.Value(0), tmp[:])
	first, last := int64(0), int64(len(s))*8-1
	switch c.NArg() {
	case 2:
	case 4, 5:
		start, ok1 := kit.ParseInt(c.Arg(2))
		if !ok1 {
			c.Error(kit.NotInt)
			return
		}
		end, ok2 := kit.ParseInt(c.Arg(3))
		if !ok2 {
			c.Error(kit.NotInt)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.Reply().Int(0)
			return
		}
		isBit := false
		if c.NArg() == 5 {
			if isBit, ok = parseRangeUnit(c.Arg(4)); !ok {
				c.Error(kit.Syntax)
				return
			}
		}
		var empty bool
		if first, last, empty = bitRange(start, end, int64(len(s)), isBit); empty {
			c.Reply().Int(0)
			return
		}
	default:
		c.Error(kit.Syntax)
		return
	}
	c.Reply().Int(popCount(s, first, last))
}

// popCount counts the set bits of s from bit first to bit last, inclusive
// (bit 0 is the most significant bit of s[0]).
func popCount(s []byte, first, last int64) int64 {
	if first > last {
		return 0
	}
	fb, lb := first>>3, last>>3
	headMask := byte(0xff) >> (first & 7)  // bits of byte fb from first on
	tailMask := byte(0xff) << (7 - last&7) // bits of byte lb up to last
	if fb == lb {
		return int64(bits.OnesCount8(s[fb] & headMask & tailMask))
	}
	n := int64(bits.OnesCount8(s[fb]&headMask) + bits.OnesCount8(s[lb]&tailMask))
	mid := s[fb+1 : lb]
	for len(mid) >= 8 {
		n += int64(bits.OnesCount64(uint64(mid[0]) | uint64(mid[1])<<8 | uint64(mid[2])<<16 |
			uint64(mid[3])<<24 | uint64(mid[4])<<32 | uint64(mid[5])<<40 | uint64(mid[6])<<48 | uint64(mid[7])<<56))
		mid = mid[8:]
	}
	for _, x := range mid {
		n += int64(bits.OnesCount8(x))
	}
	return n
}
