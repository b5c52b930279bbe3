package main

import (
	"math"
	"math/bits"
)

// Redis 7.0's HyperLogLog (hyperloglog.c), byte for byte: the same hash,
// the same sparse and dense encodings, the same edits of the sparse form
// (so that a sparse HLL grows through exactly Redis's opcode sequences),
// the same promotion to dense and the same estimator. The representation
// is a string:
//
//	+------+---+-----+----------+
//	| HYLL | E | N/U | Cardin.  |
//	+------+---+-----+----------+
//
// "HYLL", the encoding byte E (0 dense, 1 sparse), three unused zero bytes
// and the cached cardinality, 8 bytes little endian whose top bit set
// means "not valid": 16 bytes of header, then the registers. Dense: 16384
// registers of 6 bits, least significant bits first. Sparse: opcodes ZERO
// (00xxxxxx, 1..64 zero registers), XZERO (01xxxxxx yyyyyyyy, 1..16384
// zero registers) and VAL (1vvvvvxx, 1..4 registers of value 1..32).

const (
	hllP         = 14
	hllQ         = 64 - hllP
	hllRegisters = 1 << hllP
	hllPMask     = hllRegisters - 1
	hllBits      = 6
	hllRegMax    = 1<<hllBits - 1
	hdrSize      = 16
	denseSize    = hdrSize + (hllRegisters*hllBits+7)/8

	encDense  = 0
	encSparse = 1

	// sparseMaxBytes is Redis's default hll-sparse-max-bytes: a sparse
	// HLL that would grow beyond it becomes dense.
	sparseMaxBytes = 3000

	sparseValMaxValue = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384

	alphaInf = 0.721347520444481703680 // 0.5/ln(2)
	hashSeed = 0xadc83b19
)

// Sparse opcodes.
func isZero(b byte) bool  { return b&0xc0 == 0 }
func isXZero(b byte) bool { return b&0xc0 == 0x40 }
func isVal(b byte) bool   { return b&0x80 != 0 }
func zeroLen(b byte) int  { return int(b&0x3f) + 1 }
func xzeroLen(b0, b1 byte) int {
	return (int(b0&0x3f)<<8 | int(b1)) + 1
}
func valValue(b byte) int { return int(b>>2&0x1f) + 1 }
func valLen(b byte) int   { return int(b&0x3) + 1 }
func valOp(val, n int) byte {
	return byte((val-1)<<2|(n-1)) | 0x80
}
func zeroOp(n int) byte { return byte(n - 1) }
func xzeroOp(n int) (byte, byte) {
	l := n - 1
	return byte(l>>8) | 0x40, byte(l & 0xff)
}

// murmur64A is MurmurHash64A as Redis has it (little-endian reads). The
// words are read with one load each (load64), and the last 1 to 7 bytes of
// a key of at least 8 as the top of the key's last word, without the
// byte-by-byte switch: a PFADD hashes each element, and every branch and
// byte load costs in WebAssembly.
func murmur64A(key []byte, seed uint32) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(key))*m
	n := len(key) &^ 7
	for i := 0; i < n; i += 8 {
		k := load64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	if t := len(key) & 7; t != 0 {
		var k uint64
		if n > 0 {
			k = load64(key[len(key)-8:]) >> (64 - 8*t)
		} else {
			for j := t - 1; j >= 0; j-- {
				k = k<<8 | uint64(key[j])
			}
		}
		h ^= k
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// patLen is hllPatLen: the register an element goes to and the length of
// the run of zeros (plus one) its hash has above the index bits, counted
// by one instruction (i64.ctz) where Redis loops over the bits.
func patLen(ele []byte) (index int, count uint8) {
	hash := murmur64A(ele, hashSeed)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ
	return index, uint8(bits.TrailingZeros64(hash)) + 1
}

// denseGet and denseSet read and write register i of dense registers.
func denseGet(regs []byte, i int) uint8 {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	b0 := uint(regs[b])
	var b1 uint
	if b+1 < len(regs) {
		b1 = uint(regs[b+1])
	}
	return uint8((b0>>fb | b1<<(8-fb)) & hllRegMax)
}

func denseSet(regs []byte, i int, val uint8) {
	b := i * hllBits / 8
	fb := uint(i * hllBits & 7)
	v := uint(val)
	regs[b] &= ^byte(hllRegMax << fb)
	regs[b] |= byte(v << fb)
	if b+1 < len(regs) {
		// Redis writes one byte past the last register (the string's
		// terminator) to no effect; here there is no such byte.
		regs[b+1] &= ^byte(hllRegMax >> (8 - fb))
		regs[b+1] |= byte(v >> (8 - fb))
	}
}

// unpackDense reads all the dense registers into out, four registers from
// each three bytes (as Redis's hllDenseRegHisto reads them).
func unpackDense(regs []byte, out *[hllRegisters]uint8) {
	regs = regs[:hllRegisters*hllBits/8]
	for i, j := 0, 0; j < hllRegisters; i, j = i+3, j+4 {
		b0, b1, b2 := regs[i], regs[i+1], regs[i+2]
		out[j] = b0 & 63
		out[j+1] = (b0>>6 | b1<<2) & 63
		out[j+2] = (b1>>4 | b2<<4) & 63
		out[j+3] = b2 >> 2 & 63
	}
}

// newSparse is createHLLObject: an empty sparse HLL.
func newSparse() []byte {
	h := make([]byte, hdrSize, hdrSize+(hllRegisters+sparseXZeroMaxLen-1)/sparseXZeroMaxLen*2)
	copy(h, "HYLL")
	h[4] = encSparse
	for aux := hllRegisters; aux > 0; {
		n := min(aux, sparseXZeroMaxLen)
		b0, b1 := xzeroOp(n)
		h = append(h, b0, b1)
		aux -= n
	}
	return h
}

// valid is isHLLObjectOrReply's test of a string value.
func valid(h []byte) bool {
	if len(h) < hdrSize || string(h[:4]) != "HYLL" || h[4] > encSparse {
		return false
	}
	return h[4] != encDense || len(h) == denseSize
}

// invalidate marks the cached cardinality as not valid.
func invalidate(h []byte) { h[15] |= 1 << 7 }

// toDense is hllSparseToDense: h in the dense encoding (h itself when it
// is dense), the header (magic, cached cardinality) kept; false for a
// corrupt sparse form.
func toDense(h []byte) ([]byte, bool) {
	if h[4] == encDense {
		return h, true
	}
	d := make([]byte, denseSize)
	copy(d, h[:hdrSize])
	d[4] = encDense
	regs := d[hdrSize:]
	idx := 0
	for p := hdrSize; p < len(h); {
		switch op := h[p]; {
		case isZero(op):
			idx += zeroLen(op)
			p++
		case isXZero(op):
			if p+1 >= len(h) {
				return nil, false
			}
			idx += xzeroLen(op, h[p+1])
			p += 2
		default:
			n, v := valLen(op), valValue(op)
			if n+idx > hllRegisters {
				return d, idx == hllRegisters // overflow: Redis stops here
			}
			for ; n > 0; n-- {
				denseSet(regs, idx, uint8(v))
				idx++
			}
			p++
		}
	}
	return d, idx == hllRegisters
}

// sparseSet is hllSparseSet: set register index to count if count is
// larger, editing the sparse form in place as Redis does and promoting it
// to dense when a value does not fit the sparse form or it would grow
// beyond sparseMaxBytes. It returns the new representation and 1 when a
// register changed, 0 when not, -1 for a corrupt HLL.
func sparseSet(o []byte, index int, count uint8) ([]byte, int) {
	if count > sparseValMaxValue {
		return promote(o, index, count)
	}
	sparse := hdrSize
	p, end := sparse, len(o)
	first, prev, span := 0, -1, 0
	for p < end {
		oplen := 1
		switch {
		case isZero(o[p]):
			span = zeroLen(o[p])
		case isVal(o[p]):
			span = valLen(o[p])
		default:
			if p+1 >= end {
				return o, -1
			}
			span = xzeroLen(o[p], o[p+1])
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return o, -1
	}
	var runlen int
	isZ, isXZ, isV := false, false, false
	switch {
	case isZero(o[p]):
		isZ, runlen = true, zeroLen(o[p])
	case isXZero(o[p]):
		if p+1 >= end {
			return o, -1
		}
		isXZ, runlen = true, xzeroLen(o[p], o[p+1])
	default:
		isV, runlen = true, valLen(o[p])
	}
	switch {
	case isV && valValue(o[p]) >= int(count):
		return o, 0 // case A: no update
	case isV && runlen == 1, isZ && runlen == 1:
		o[p] = valOp(int(count), 1) // cases B and C
	default:
		// Case D: split the opcode into up to three.
		var seq [5]byte
		n := 0
		last := first + span - 1
		if isZ || isXZ {
			if index != first {
				n += putZeros(seq[n:], index-first)
			}
			seq[n] = valOp(int(count), 1)
			n++
			if index != last {
				n += putZeros(seq[n:], last-index)
			}
		} else {
			cur := valValue(o[p])
			if index != first {
				seq[n] = valOp(cur, index-first)
				n++
			}
			seq[n] = valOp(int(count), 1)
			n++
			if index != last {
				seq[n] = valOp(cur, last-index)
				n++
			}
		}
		oldlen := 1
		if isXZ {
			oldlen = 2
		}
		delta := n - oldlen
		if delta > 0 && len(o)+delta > sparseMaxBytes {
			return promote(o, index, count)
		}
		grown := make([]byte, 0, len(o)+delta)
		grown = append(grown, o[:p]...)
		grown = append(grown, seq[:n]...)
		grown = append(grown, o[p+oldlen:]...)
		o = grown
		end += delta
	}
	// Step 4: merge adjacent VAL opcodes of one value, scanning up to 5
	// opcodes from the one before the change.
	p = sparse
	if prev >= 0 {
		p = prev
	}
	for scan := 5; p < end && scan > 0; {
		scan--
		if isXZero(o[p]) {
			p += 2
			continue
		}
		if isZero(o[p]) {
			p++
			continue
		}
		if p+1 < end && isVal(o[p+1]) {
			v1, v2 := valValue(o[p]), valValue(o[p+1])
			if v1 == v2 {
				if n := valLen(o[p]) + valLen(o[p+1]); n <= sparseValMaxLen {
					o[p+1] = valOp(v1, n)
					o = append(o[:p], o[p+1:]...)
					end--
					continue
				}
			}
		}
		p++
	}
	invalidate(o)
	return o, 1
}

// putZeros writes a ZERO or XZERO opcode for n registers and returns its
// length.
func putZeros(dst []byte, n int) int {
	if n > sparseZeroMaxLen {
		dst[0], dst[1] = xzeroOp(n)
		return 2
	}
	dst[0] = zeroOp(n)
	return 1
}

// promote converts o to dense and sets the register there.
func promote(o []byte, index int, count uint8) ([]byte, int) {
	d, ok := toDense(o)
	if !ok {
		return o, -1
	}
	if denseGet(d[hdrSize:], index) < count {
		denseSet(d[hdrSize:], index, count)
	}
	return d, 1
}

// add is hllAdd: the new representation and 1 when a register changed, 0
// when not, -1 for a corrupt HLL.
func add(h []byte, ele []byte) ([]byte, int) {
	index, count := patLen(ele)
	switch h[4] {
	case encDense:
		regs := h[hdrSize:]
		if count > denseGet(regs, index) {
			denseSet(regs, index, count)
			return h, 1
		}
		return h, 0
	case encSparse:
		return sparseSet(h, index, count)
	}
	return h, -1
}

// histogram counts the registers of h by value; false for a sparse form
// that does not cover exactly the registers.
func histogram(h []byte, hist *[64]int) bool {
	if h[4] == encDense {
		regs := h[hdrSize : hdrSize+hllRegisters*hllBits/8]
		for i := 0; i < len(regs); i += 3 {
			b0, b1, b2 := regs[i], regs[i+1], regs[i+2]
			hist[b0&63]++
			hist[(b0>>6|b1<<2)&63]++
			hist[(b1>>4|b2<<4)&63]++
			hist[b2>>2&63]++
		}
		return true
	}
	idx := 0
	for p := hdrSize; p < len(h); {
		switch op := h[p]; {
		case isZero(op):
			n := zeroLen(op)
			idx += n
			hist[0] += n
			p++
		case isXZero(op):
			if p+1 >= len(h) {
				return false
			}
			n := xzeroLen(op, h[p+1])
			idx += n
			hist[0] += n
			p += 2
		default:
			n := valLen(op)
			idx += n
			hist[valValue(op)] += n
			p++
		}
	}
	return idx == hllRegisters
}

// estimate is hllCount's estimator over a register histogram: Otmar
// Ertl's "new" estimator with tau and sigma, as Redis 7.0 computes it.
func estimate(hist *[64]int) uint64 {
	const m = float64(hllRegisters)
	z := m * tau((m-float64(hist[hllQ+1]))/m)
	for j := hllQ; j >= 1; j-- {
		z += float64(hist[j])
		z *= 0.5
	}
	z += m * sigma(float64(hist[0])/m)
	return uint64(math.Round(alphaInf * m * m / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y := 1.0
	z := x
	for {
		x *= x
		zPrime := z
		z += float64(x * y)
		y += y
		if zPrime == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y := 1.0
	z := 1 - x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		d := 1 - x
		z -= float64(float64(d*d) * y)
		if zPrime == z {
			return z / 3
		}
	}
}

// cachedCard reads the cached cardinality; ok is false when it is not
// valid. One load (load64): a loop over the eight bytes was eight turns of
// a loop in WebAssembly, on every PFCOUNT.
func cachedCard(h []byte) (uint64, bool) {
	card := load64(h[8:16])
	return card, card>>63 == 0
}

// setCard writes the cached cardinality.
func setCard(h []byte, card uint64) {
	for i := range 8 {
		h[8+i] = byte(card >> (8 * i))
	}
}
