package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// Partial paths of a dense HLL (issue 20): a dense HLL is 12 KB, and
// PFADD of a few elements or PFCOUNT with a valid cached cardinality need
// only its header and a few registers. PFADD raises the elements'
// registers in the store (codec.OpHLLRaise: one atomic op, nothing
// written when no register rises); PFCOUNT reads just the header (OpBitGet)
// of a value of a dense HLL's length (OpExpectBlobSize). Both leave exactly the bytes the whole-value path
// would leave. Anything else (a missing key, a sparse HLL, a value stored
// as an integer, a type error) falls back to the whole-value path.
//
// The dense length check of Redis's isHLLObjectOrReply: OpHLLRaise checks
// the exact length; PFCOUNT's header read is conditioned on it
// (OpExpectBlobSize), so a dense HLL made shorter or longer (APPEND) takes
// the whole-value path, which refuses it as Redis does.

// maxPartial bounds the elements of a PFADD that takes the partial path,
// and so the size of the op (and of its expression on Aerospike).
const maxPartial = 32

// bitHdr is the bit offset of a dense HLL's header.
const bitHdr = 0

// readDenseHeader adds to call the read of the header of a value that is
// exactly a dense HLL long (result 1; result 0 is the condition's): any
// other length fails the call with FilteredOut.
func readDenseHeader(call *codec.Call) *codec.Call {
	return call.Prepared(denseHeaderOps)
}

// denseHeaderOps are readDenseHeader's two ops, encoded once
// (codec.Prepared): a PFCOUNT's whole request besides its key.
var denseHeaderOps = codec.Prepare(
	codec.Op{Code: codec.OpExpectBlobSize, Bin: codec.BinValue, Index: denseSize},
	codec.Op{Code: codec.OpBitGet, Bin: codec.BinValue, Index: bitHdr, Count: hdrSize * 8})

// denseHeader returns the header read by readDenseHeader when the call
// succeeded on a dense HLL, else nil.
func denseHeader(r *codec.Result) []byte {
	if r.Code != codec.OK {
		return nil
	}
	h := r.BytesAt(1) // no Value copied (codec.Result.IntAt)
	if len(h) != hdrSize || string(h[:4]) != "HYLL" || h[4] != encDense {
		return nil
	}
	return h
}

// pfaddPartial is PFADD of 1..maxPartial elements: one call that raises
// the elements' registers of a dense HLL in place (codec.OpHLLRaise),
// setting the cache's "not valid" bit when one rose and writing nothing
// when none did. No 12 KB value crosses into the module, and 50 clients
// adding to one key do not race a read against a guarded write. A key
// that is missing, sparse, not a string or not an HLL is left to the
// whole-value path, which answers it as Redis does.
func pfaddPartial(c *sdk.Ctx) {
	regs := c.B[:0]
	for _, ele := range c.Args()[2:] {
		i, count := patLen(ele)
		regs = append(regs, byte(i>>8), byte(i), count)
	}
	c.B = regs
	c.Record(c.Arg(1)).Guard(codec.TypeString).Exists(codec.ExistsUpdateOnly).TTLKeep().
		HLLRaise(codec.BinValue, regs)
	c.Exec(pfaddRaised)
}

func pfaddRaised(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(r.IntAt(0)) // no Value copied
	case codec.NotFound, codec.BinNotFound, codec.BinTypeError, codec.OpNotApplicable, codec.FilteredOut:
		pfaddWhole(c)
	default:
		kit.StoreError(c, r)
	}
}

// pfcountHeader is PFCOUNT's first step for one key: the header of a dense
// HLL of the right length, whose valid cached cardinality is the answer.
// Otherwise (a sparse HLL, a cache not valid, anything else) the whole
// value is read.
func pfcountHeader(c *sdk.Ctx) {
	if h := denseHeader(c.Result(0)); h != nil {
		if card, ok := cachedCard(h); ok {
			c.Reply().Int(int64(card))
			return
		}
	}
	readHLL(c, c.Arg(1))
	c.Exec(pfcountOne)
}
