package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// Partial reads and writes of a dense HLL (issue 20): a dense HLL is
// 12 KB, and PFADD of a few elements or PFCOUNT with a valid cached
// cardinality need only its header and a few register bytes. These paths
// read just those bytes with the store's bit operations (OpBitGet) and
// write back only the changed registers' bits and the cache's "not valid"
// bit (OpBitSet) under the generation read, leaving exactly the bytes the
// whole-value path would leave. Anything else (a missing key, a sparse
// HLL, which is shorter than the register bytes asked for, a value stored
// as an integer, a type error) falls back to the whole-value path.
//
// The dense length check of Redis's isHLLObjectOrReply is done by reading
// the last byte a dense HLL has (a shorter value fails the read); no store
// op tells a value's length, so a dense HLL made longer (APPEND) is not
// detected here (docs/compatibility.md).

// maxPartial bounds the elements of a PFADD that takes the partial path:
// two reads (header, last byte) and a read per element in one call.
const maxPartial = 32

// bitHdr and bitLast are the bit offsets of the header and of the last
// byte of a dense HLL.
const (
	bitHdr  = 0
	bitLast = (denseSize - 1) * 8
)

// readDenseHeader adds to call the reads of the header and of the last
// byte of a dense HLL (results 0 and 1).
func readDenseHeader(call *codec.Call) *codec.Call {
	return call.BitGet(codec.BinValue, bitHdr, hdrSize*8).BitGet(codec.BinValue, bitLast, 8)
}

// denseHeader returns the header read by readDenseHeader when the call
// succeeded on a dense HLL, else nil.
func denseHeader(r *codec.Result) []byte {
	if r.Code != codec.OK {
		return nil
	}
	h := r.Value(0).Bytes
	if len(h) != hdrSize || string(h[:4]) != "HYLL" || h[4] != encDense ||
		len(r.Value(1).Bytes) != 1 {
		return nil
	}
	return h
}

// regBytes is the first byte (in the value) and the number of bytes that
// hold dense register i.
func regBytes(i int) (first int64, n int64) {
	b := hdrSize + i*hllBits/8
	if b+1 < denseSize {
		return int64(b), 2
	}
	return int64(b), 1
}

// regValue reads register i from the bytes regBytes(i) names.
func regValue(w []byte, i int) uint8 {
	fb := uint(i * hllBits & 7)
	v := uint(w[0]) >> fb
	if len(w) > 1 {
		v |= uint(w[1]) << (8 - fb)
	}
	return uint8(v & hllRegMax)
}

// setReg adds to call the bit writes that set register i to v and nothing
// else. Redis packs registers from the least significant bit of a byte
// on, the store numbers bits from the most significant: the register's
// n1 bits in its first byte (LSB bits fb..fb+n1-1 of byte b) are the
// store's bits 8-fb-n1.. of that byte, and those in the next byte (LSB
// bits 0..n2-1) the store's last n2 bits of it.
func setReg(call *codec.Call, i int, v uint8) {
	p := i * hllBits
	b := int64(hdrSize + p/8)
	fb := p & 7
	n1 := min(8-fb, hllBits)
	low := (v & (1<<n1 - 1)) << (8 - n1)
	call.BitSet(codec.BinValue, b*8+int64(8-fb-n1), int64(n1), []byte{low})
	if n2 := hllBits - n1; n2 > 0 {
		high := (v >> n1) << (8 - n2)
		call.BitSet(codec.BinValue, (b+1)*8+int64(8-n2), int64(n2), []byte{high})
	}
}

// pfaddPartial is PFADD's first step for 1..maxPartial elements: it reads
// the header, the last byte and each element's register bytes of a dense
// HLL in one call. Each element's register and count are kept in c.B
// (3 bytes each) for the next step, which then need not hash again.
func pfaddPartial(c *sdk.Ctx) {
	call := readDenseHeader(c.Record(c.Arg(1)).Guard(codec.TypeString))
	b := c.B[:0]
	for _, ele := range c.Args()[2:] {
		i, count := patLen(ele)
		b = append(b, byte(i>>8), byte(i), count)
		first, n := regBytes(i)
		call.BitGet(codec.BinValue, first*8, n*8)
	}
	c.B = b
	c.Exec(pfaddPartialRead)
}

// pfaddPartialRead works out the registers that change; none: 0 and
// nothing written; some: their bits and the cache's "not valid" bit are
// written under the generation read.
func pfaddPartialRead(c *sdk.Ctx) {
	r := c.Result(0)
	h := denseHeader(r)
	if h == nil {
		pfaddWhole(c)
		return
	}
	var regs [maxPartial]int
	var vals [maxPartial]uint8
	n := 0
outer:
	for k := range c.NArg() - 2 {
		i, count := int(c.B[3*k])<<8|int(c.B[3*k+1]), c.B[3*k+2]
		if count <= regValue(r.Value(2+k).Bytes, i) {
			continue
		}
		for j := range n {
			if regs[j] == i { // the same register twice: the larger count
				vals[j] = max(vals[j], count)
				continue outer
			}
		}
		regs[n], vals[n] = i, count
		n++
	}
	if n == 0 {
		c.Reply().Int(0)
		return
	}
	call := c.Record(c.Arg(1)).Guard(codec.TypeString).Generation(r.Generation).
		Exists(codec.ExistsUpdateOnly).TTLKeep()
	if h[15]&(1<<7) == 0 {
		call.BitSet(codec.BinValue, 15*8, 1, []byte{1 << 7}) // HLL_INVALIDATE_CACHE
	}
	for j := range n {
		setReg(call, regs[j], vals[j])
	}
	c.Exec(pfaddPartialWritten)
}

func pfaddPartialWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(1)
	case codec.GenerationError, codec.NotFound, codec.FilteredOut, codec.OpNotApplicable, codec.BinTypeError:
		// Another client wrote (or shortened, retyped, deleted) the key
		// since the read: start over.
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		runPFAdd(c)
	default:
		kit.StoreError(c, r)
	}
}

// pfcountHeader is PFCOUNT's first step for one key: the header and last
// byte of a dense HLL, whose valid cached cardinality is the answer.
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
