package main

import "unsafe"

// union is the registers of a union of HLLs (hllMerge's max registers:
// PFCOUNT of several keys, PFMERGE), eight per word: register 8k+j in byte j of word k. Eight
// registers fit in 48 bits of the dense form, so a dense HLL merges eight
// registers at a time with word arithmetic, where a register at a time
// costs several times more in WebAssembly.
type union [hllRegisters / 8]uint64

// lanesHi is the high bit of each byte lane.
const lanesHi = 0x8080808080808080

// spread turns eight 6-bit registers (48 bits, register 0 lowest) into
// eight byte lanes.
func spread(g uint64) uint64 {
	g = g&0xffffff | g>>24&0xffffff<<32
	g = g&0x00000fff00000fff | g>>12&0x00000fff00000fff<<16
	return g&0x003f003f003f003f | g>>6&0x003f003f003f003f<<8
}

// maxLanes is the lane-wise maximum of two words of registers (each lane
// at most 63): a lane of (a|0x80)-b keeps its high bit exactly when a >= b,
// and no lane borrows from the next.
func maxLanes(a, b uint64) uint64 {
	ge := ((a | lanesHi) - b) & lanesHi
	m := ge >> 7 * 0xff // 0xff in the lanes where a >= b
	return a&m | b&^m
}

// mergeDense merges the 12,288 bytes of dense registers into u: 32
// registers (24 bytes, three words) at a time.
func (u *union) mergeDense(regs []byte) {
	regs = regs[:hllRegisters*hllBits/8]
	for k := 0; k < len(u); k += 4 {
		g0, g1, g2, g3 := groups(regs[k*6 : k*6+24])
		w := u[k : k+4 : k+4]
		w[0] = maxLanes(w[0], spread(g0))
		w[1] = maxLanes(w[1], spread(g1))
		w[2] = maxLanes(w[2], spread(g2))
		w[3] = maxLanes(w[3], spread(g3))
	}
}

// setDense sets u to the 12,288 bytes of dense registers: the first HLL
// of a union, without clearing u first.
func (u *union) setDense(regs []byte) {
	regs = regs[:hllRegisters*hllBits/8]
	for k := 0; k < len(u); k += 4 {
		g0, g1, g2, g3 := groups(regs[k*6 : k*6+24])
		w := u[k : k+4 : k+4]
		w[0], w[1], w[2], w[3] = spread(g0), spread(g1), spread(g2), spread(g3)
	}
}

// groups splits 24 bytes of dense registers into four groups of eight
// registers (48 bits each).
func groups(b []byte) (g0, g1, g2, g3 uint64) {
	const m48 = 1<<48 - 1
	a, c, d := load64(b[0:8]), load64(b[8:16]), load64(b[16:24])
	return a & m48, (a>>48 | c<<16) & m48, (c>>32 | d<<32) & m48, d >> 16
}

// mergeSparse merges a sparse HLL's registers into u; false for a sparse
// form that does not cover exactly the registers.
func (u *union) mergeSparse(h []byte) bool {
	i := 0
	for p := hdrSize; p < len(h); {
		switch op := h[p]; {
		case isZero(op):
			i += zeroLen(op)
			p++
		case isXZero(op):
			if p+1 >= len(h) {
				return false
			}
			i += xzeroLen(op, h[p+1])
			p += 2
		default:
			n, v := valLen(op), uint64(valValue(op))
			if n+i > hllRegisters {
				return false
			}
			for ; n > 0; n-- {
				sh := uint(i&7) * 8
				if cur := u[i>>3] >> sh & 0xff; v > cur {
					u[i>>3] += (v - cur) << sh
				}
				i++
			}
			p++
		}
	}
	return i == hllRegisters
}

// merge merges an HLL of either encoding into u; false for a corrupt
// sparse form. first says that u holds nothing yet (it may hold anything:
// it is cleared or overwritten).
func (u *union) merge(h []byte, first bool) bool {
	if h[4] == encDense {
		if first {
			u.setDense(h[hdrSize:])
		} else {
			u.mergeDense(h[hdrSize:])
		}
		return true
	}
	if first {
		*u = union{}
	}
	return u.mergeSparse(h)
}

// histogram counts u's registers by value. Four partial histograms, one
// per lane pair, let consecutive increments hit different counters, which
// halves the time in WebAssembly.
func (u *union) histogram(hist *[64]int) {
	var h [4][64]uint32
	for _, w := range u {
		if w == 0 {
			h[0][0] += 8
			continue
		}
		h[0][w&63]++
		h[1][w>>8&63]++
		h[2][w>>16&63]++
		h[3][w>>24&63]++
		h[0][w>>32&63]++
		h[1][w>>40&63]++
		h[2][w>>48&63]++
		h[3][w>>56&63]++
	}
	for v := range hist {
		hist[v] += int(h[0][v] + h[1][v] + h[2][v] + h[3][v])
	}
}

// register is register i of u.
func (u *union) register(i int) uint8 { return uint8(u[i>>3] >> (uint(i&7) * 8)) }

// load64 reads 8 bytes little endian as one 64-bit load: WebAssembly and
// the hosts respike runs on are little endian and allow unaligned loads,
// and Go compiles binary.LittleEndian.Uint64 to eight byte loads in
// WebAssembly.
func load64(b []byte) uint64 {
	_ = b[7]
	return *(*uint64)(unsafe.Pointer(&b[0]))
}
