package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "bitop", Arity: -4, Flags: []string{"write", "denyoom"},
		FirstKey: 2, LastKey: -1, Step: 1, Group: "bitmap", Since: "2.6.0",
		Summary: "Performs bitwise operations on multiple strings, and stores the result.",
		Run:     runBitOp,
	})
}

// BITOP operations, kept in Ctx.N[0].
const (
	bitAnd = iota
	bitOr
	bitXor
	bitNot
)

// runBitOp: BITOP AND|OR|XOR|NOT destkey key [key ...]. One batch reads
// every source and the destination; the result (as long as the longest
// source, shorter ones padded with zero bytes, a missing key being the
// empty string) replaces the destination, of whatever type, and clears its
// TTL, or deletes it when empty, through kit.DestStore: guarded by the
// destination's generation, the sources checked unchanged afterwards.
// Answers the result's length.
func runBitOp(c *sdk.Ctx) {
	op := c.Arg(1)
	switch {
	case kit.Fold(op, "and"):
		c.N[0] = bitAnd
	case kit.Fold(op, "or"):
		c.N[0] = bitOr
	case kit.Fold(op, "xor"):
		c.N[0] = bitXor
	case kit.Fold(op, "not"):
		c.N[0] = bitNot
	default:
		c.Error(kit.Syntax)
		return
	}
	if c.N[0] == bitNot && c.NArg() != 4 {
		c.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	bitOpRead(c)
}

func bitOpRead(c *sdk.Ctx) {
	for i := 3; i < c.NArg(); i++ {
		c.Record(c.Arg(i)).Guard(codec.TypeString).Get(codec.BinValue)
	}
	c.Record(c.Arg(2)).Get("") // the destination (kit.DestStore)
	c.Exec(bitOpCombine)
}

func bitOpCombine(c *sdk.Ctx) {
	n := c.NArg() - 3
	var tmp [24]byte
	maxLen := 0
	for i := range n {
		r := c.Result(i)
		if _, ok := strRead(c, r); !ok {
			return
		}
		if r.Code == codec.OK {
			maxLen = max(maxLen, len(strBytes(r.Value(0), tmp[:])))
		}
	}
	if maxLen > kit.MaxBuild {
		tooBig(c)
		return
	}
	var res []byte
	if maxLen > 0 {
		res = make([]byte, maxLen)
		op := c.N[0]
		for i := range n {
			r := c.Result(i)
			var s []byte
			if r.Code == codec.OK {
				s = strBytes(r.Value(0), tmp[:])
			}
			switch {
			case op == bitNot:
				for j := range res {
					res[j] = ^s[j]
				}
			case i == 0:
				copy(res, s)
			case op == bitAnd:
				for j := range res {
					if j < len(s) {
						res[j] &= s[j]
					} else {
						res[j] = 0
					}
				}
			case op == bitOr:
				for j := range s {
					res[j] |= s[j]
				}
			default:
				for j := range s {
					res[j] ^= s[j]
				}
			}
		}
	}
	st := &kit.DestStore{Dst: c.Arg(2), Srcs: make([][]byte, n), Gens: make([]uint32, n), Size: int64(maxLen),
		Restart: bitOpRead}
	for i := range n {
		st.Srcs[i], st.Gens[i] = c.Arg(3+i), c.Result(i).Generation // 0 when missing
	}
	if maxLen > 0 {
		st.Fill = func(call *codec.Call) {
			call.Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(res))
		}
	}
	st.Write(c, c.Result(n))
}
