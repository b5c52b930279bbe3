package rdb

import "sync"

// LZF, as Redis's copy of liblzf 3.6 (src/lzf_c.c, src/lzf_d.c) with its
// settings (lzfP.h: HLOG 16, VERY_FAST, not ULTRA_FAST, CHECK_INPUT), so
// that a compressed string is byte for byte what redis-server writes for
// the same input. Redis does not clear its stack-allocated hash table
// between calls, so a stale slot could in principle give it another valid
// compression; a clear table is what a fresh process has, and is
// deterministic (test/e2e's randomized comparison has shown no difference).

const (
	lzfHLog   = 16
	lzfHSize  = 1 << lzfHLog
	lzfMaxLit = 1 << 5
	lzfMaxOff = 1 << 13
	lzfMaxRef = (1 << 8) + (1 << 3)
)

// lzfTable is the compressor's hash table, one for the process, reused
// between calls (a module instance runs one command at a time; the lock is
// for native callers): a slot holds the call's generation in its high half
// and a position plus one in its low half, so a slot of an earlier call
// reads as empty without clearing 512 KiB per string. A sync.Pool would
// drop it at every garbage collection.
var lzfTable struct {
	sync.Mutex
	slots []uint64
	gen   uint64
}

func lzfIdx(h uint32) uint32 { return ((h >> (3*8 - lzfHLog)) - h*5) & (lzfHSize - 1) }

// lzfCompress compresses in into at most outLen bytes and returns them, or
// nil when the result would not fit (lzf_compress returning 0).
func lzfCompress(in []byte, outLen int) []byte {
	inLen := len(in)
	if inLen < 2 || outLen <= 0 {
		return nil
	}
	tab := &lzfTable
	tab.Lock()
	defer tab.Unlock()
	if tab.slots == nil {
		tab.slots = make([]uint64, lzfHSize)
	}
	tab.gen++
	if tab.gen == 1<<32 {
		clear(tab.slots)
		tab.gen = 1
	}
	gen := tab.gen << 32
	htab := tab.slots
	// A slot holds gen | position+1; one of another call is empty (a NULL
	// slot in C): ref -1.
	out := make([]byte, outLen)
	ip, op := 0, 0
	lit := 0
	op++ // start run
	hval := uint32(in[0])<<8 | uint32(in[1])
	for ip < inLen-2 {
		hval = hval<<8 | uint32(in[ip+2])
		slot := lzfIdx(hval)
		ref := -1
		if v := htab[slot]; v&^(1<<32-1) == gen {
			ref = int(v&(1<<32-1)) - 1
		}
		htab[slot] = gen | uint64(ip+1)
		if ref > 0 && ip-ref-1 < lzfMaxOff && in[ref+2] == in[ip+2] &&
			in[ref] == in[ip] && in[ref+1] == in[ip+1] {
			off := ip - ref - 1
			ln := 2
			maxlen := inLen - ip - ln
			if maxlen > lzfMaxRef {
				maxlen = lzfMaxRef
			}
			if op+3+1 >= outLen { // first a faster conservative test
				nl := 0
				if lit == 0 {
					nl = 1
				}
				if op-nl+3+1 >= outLen { // second the exact but rare test
					return nil
				}
			}
			out[op-lit-1] = byte(lit - 1) // stop run
			if lit == 0 {
				op-- // undo run if length is zero
			}
			ln = lzfMatch(in, ref, ip, maxlen)
			ln -= 2 // ln is now #octets - 1
			ip++
			if ln < 7 {
				out[op] = byte(off>>8 + ln<<5)
				op++
			} else {
				out[op] = byte(off>>8 + 7<<5)
				out[op+1] = byte(ln - 7)
				op += 2
			}
			out[op] = byte(off)
			op++
			lit = 0
			op++ // start run
			ip += ln + 1
			if ip >= inLen-2 {
				break
			}
			ip -= 2
			hval = uint32(in[ip])<<8 | uint32(in[ip+1])
			hval = hval<<8 | uint32(in[ip+2])
			htab[lzfIdx(hval)] = gen | uint64(ip+1)
			ip++
			hval = hval<<8 | uint32(in[ip+2])
			htab[lzfIdx(hval)] = gen | uint64(ip+1)
			ip++
		} else {
			if op >= outLen {
				return nil
			}
			lit++
			out[op] = in[ip]
			op++
			ip++
			if lit == lzfMaxLit {
				out[op-lit-1] = byte(lit - 1)
				lit = 0
				op++
			}
		}
	}
	if op+3 > outLen { // at most 3 bytes can be missing here
		return nil
	}
	for ip < inLen {
		lit++
		out[op] = in[ip]
		op++
		ip++
		if lit == lzfMaxLit {
			out[op-lit-1] = byte(lit - 1)
			lit = 0
			op++
		}
	}
	out[op-lit-1] = byte(lit - 1) // end run
	if lit == 0 {
		op--
	}
	return out[:op]
}

// lzfMatch is the length of the match of in[ip:] at in[ref:], found as
// lzf_c.c does: 16 bytes unrolled when maxlen > 16 (which may run past
// maxlen by up to 2 bytes, within the input), then byte by byte up to
// maxlen.
func lzfMatch(in []byte, ref, ip, maxlen int) int {
	ln := 2
	if maxlen > 16 {
		for k := 0; k < 16; k++ {
			ln++
			if in[ref+ln] != in[ip+ln] {
				return ln
			}
		}
	}
	for {
		ln++
		if ln >= maxlen || in[ref+ln] != in[ip+ln] {
			return ln
		}
	}
}

// lzfDecompress expands in into exactly outLen bytes; ok is false for
// input that is not valid LZF or does not expand to outLen bytes.
func lzfDecompress(in []byte, outLen int) ([]byte, bool) {
	out := make([]byte, 0, outLen)
	ip := 0
	for ip < len(in) {
		ctrl := int(in[ip])
		ip++
		if ctrl < 1<<5 { // literal run
			ctrl++
			if len(out)+ctrl > outLen || ip+ctrl > len(in) {
				return nil, false
			}
			out = append(out, in[ip:ip+ctrl]...)
			ip += ctrl
			continue
		}
		ln := ctrl >> 5 // back reference
		ref := len(out) - (ctrl&0x1f)<<8 - 1
		if ip >= len(in) {
			return nil, false
		}
		if ln == 7 {
			ln += int(in[ip])
			ip++
			if ip >= len(in) {
				return nil, false
			}
		}
		ref -= int(in[ip])
		ip++
		if len(out)+ln+2 > outLen || ref < 0 {
			return nil, false
		}
		for n := ln + 2; n > 0; n-- { // byte by byte: the areas may overlap
			out = append(out, out[ref])
			ref++
		}
	}
	if len(out) != outLen {
		return nil, false
	}
	return out, true
}
