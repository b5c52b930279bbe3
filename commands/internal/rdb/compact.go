package rdb

import (
	"encoding/binary"
	"math"
	"sort"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
)

// parseInt is Redis's string2ll (and lpStringToInt64): the canonical
// decimal form of an int64 only.
func parseInt(s []byte) (int64, bool) { return kit.ParseInt(s) }

// numbers hands out the decimal forms of integers from shared chunks: one
// allocation per 4 KiB rather than one per number of a decoded listpack or
// intset (the garbage collector of a module instance is slow).
type numbers struct{ chunk []byte }

func (n *numbers) decimal(v int64) []byte {
	if cap(n.chunk)-len(n.chunk) < 20 { // the longest int64
		n.chunk = make([]byte, 0, 4096)
	}
	start := len(n.chunk)
	n.chunk = strconv.AppendInt(n.chunk, v, 10)
	return n.chunk[start:len(n.chunk):len(n.chunk)]
}

// Intsets (src/intset.c): the encoding of small sets of integers. A 4-byte
// width (2, 4 or 8), a 4-byte count, then the members ascending, each
// little endian in that width, the smallest width that holds them all.

// intsetEncode builds the intset of vals, which it sorts.
func intsetEncode(vals []int64) []byte {
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	width := 2
	for _, v := range vals {
		switch {
		case v < math.MinInt32 || v > math.MaxInt32:
			width = 8
		case (v < math.MinInt16 || v > math.MaxInt16) && width < 4:
			width = 4
		}
	}
	out := make([]byte, 8, 8+width*len(vals))
	binary.LittleEndian.PutUint32(out[0:4], uint32(width))
	binary.LittleEndian.PutUint32(out[4:8], uint32(len(vals)))
	for _, v := range vals {
		switch width {
		case 2:
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		case 4:
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		default:
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	}
	return out
}

// intsetDecode returns an intset's members in decimal, checking it as
// intsetValidateIntegrity does in deep mode: a known width, the exact
// length, members strictly ascending (so no duplicates).
func intsetDecode(b []byte, nums *numbers) ([][]byte, bool) {
	if len(b) < 8 {
		return nil, false
	}
	width := int(binary.LittleEndian.Uint32(b[0:4]))
	if width != 2 && width != 4 && width != 8 {
		return nil, false
	}
	n := uint64(binary.LittleEndian.Uint32(b[4:8]))
	if uint64(len(b)-8) != n*uint64(width) {
		return nil, false
	}
	out := make([][]byte, 0, n)
	var prev int64
	for i := 0; i < int(n); i++ {
		p := b[8+i*width:]
		var v int64
		switch width {
		case 2:
			v = int64(int16(binary.LittleEndian.Uint16(p)))
		case 4:
			v = int64(int32(binary.LittleEndian.Uint32(p)))
		default:
			v = int64(binary.LittleEndian.Uint64(p))
		}
		if i > 0 && v <= prev {
			return nil, false
		}
		prev = v
		out = append(out, nums.decimal(v))
	}
	return out, true
}

// ziplistEntries decodes a ziplist (src/ziplist.c, the compact encoding
// before Redis 7.0): a 4-byte length, a 4-byte tail offset, a 2-byte count
// (65535: unknown), entries of prevlen, encoding and data, and 0xFF. It is
// checked as ziplistValidateIntegrity does in deep mode.
func ziplistEntries(zl []byte, nums *numbers) ([][]byte, bool) {
	if len(zl) < 11 || binary.LittleEndian.Uint32(zl[0:4]) != uint32(len(zl)) || zl[len(zl)-1] != 0xFF {
		return nil, false
	}
	tail := int(binary.LittleEndian.Uint32(zl[4:8]))
	count := int(binary.LittleEndian.Uint16(zl[8:10]))
	end := len(zl) - 1
	p, prevLen, lastStart := 10, 0, 10
	var out [][]byte
	for p < end {
		lastStart = p
		// prevlen: one byte below 254, else 0xFE and 4 bytes.
		var pl, plHdr int
		if zl[p] < 254 {
			pl, plHdr = int(zl[p]), 1
		} else if zl[p] == 254 {
			if p+5 > end {
				return nil, false
			}
			pl, plHdr = int(binary.LittleEndian.Uint32(zl[p+1:p+5])), 5
		} else {
			return nil, false
		}
		if pl != prevLen {
			return nil, false
		}
		q := p + plHdr
		if q >= end {
			return nil, false
		}
		b := zl[q]
		var hdr, dlen int
		var val []byte
		switch b >> 6 {
		case 0:
			hdr, dlen = 1, int(b&0x3F)
		case 1:
			if q+2 > end {
				return nil, false
			}
			hdr, dlen = 2, int(b&0x3F)<<8|int(zl[q+1])
		case 2:
			if b != 0x80 || q+5 > end {
				return nil, false
			}
			hdr, dlen = 5, int(binary.BigEndian.Uint32(zl[q+1:q+5]))
			if dlen < 0 {
				return nil, false
			}
		default:
			hdr = 1
			var v int64
			var n int
			switch {
			case b == 0xC0:
				n = 2
			case b == 0xD0:
				n = 4
			case b == 0xE0:
				n = 8
			case b == 0xF0:
				n = 3
			case b == 0xFE:
				n = 1
			case b >= 0xF1 && b <= 0xFD:
				v = int64(b&0x0F) - 1
			default:
				return nil, false
			}
			if q+1+n > end {
				return nil, false
			}
			d := zl[q+1 : q+1+n]
			switch n {
			case 1:
				v = int64(int8(d[0]))
			case 2:
				v = int64(int16(binary.LittleEndian.Uint16(d)))
			case 3:
				v = int64(int32(uint32(d[0])<<8|uint32(d[1])<<16|uint32(d[2])<<24) >> 8)
			case 4:
				v = int64(int32(binary.LittleEndian.Uint32(d)))
			case 8:
				v = int64(binary.LittleEndian.Uint64(d))
			}
			dlen = n
			val = nums.decimal(v)
		}
		if dlen > end-q-hdr {
			return nil, false
		}
		if val == nil {
			val = zl[q+hdr : q+hdr+dlen]
		}
		out = append(out, val)
		prevLen = plHdr + hdr + dlen
		p = q + hdr + dlen
	}
	if p != end || (len(out) > 0 && tail != lastStart) || (len(out) == 0 && tail != 10) {
		return nil, false
	}
	if count != 65535 && count != len(out) {
		return nil, false
	}
	return out, true
}

// zipmapEntries decodes a zipmap (src/zipmap.c, hashes before Redis 2.6):
// a count byte, then per pair a key length, the key, a value length, a
// free-bytes count, the value and the free bytes, then 0xFF. Lengths are
// one byte below 254, else 254 and 4 bytes little endian.
func zipmapEntries(zm []byte) ([][]byte, bool) {
	if len(zm) < 2 || zm[len(zm)-1] != 0xFF {
		return nil, false
	}
	end := len(zm) - 1
	p := 1
	length := func() (int, bool) {
		if p >= end {
			return 0, false
		}
		if zm[p] < 254 {
			p++
			return int(zm[p-1]), true
		}
		if zm[p] != 254 || p+5 > end {
			return 0, false
		}
		n := int(binary.LittleEndian.Uint32(zm[p+1 : p+5]))
		p += 5
		return n, n >= 0
	}
	var out [][]byte
	for p < end {
		kl, ok := length()
		if !ok || kl > end-p {
			return nil, false
		}
		key := zm[p : p+kl]
		p += kl
		vl, ok := length()
		if !ok || p >= end {
			return nil, false
		}
		free := int(zm[p])
		p++
		if vl > end-p || free > end-p-vl {
			return nil, false
		}
		out = append(out, key, zm[p:p+vl])
		p += vl + free
	}
	if p != end {
		return nil, false
	}
	if n := int(zm[0]); n < 254 && n != len(out)/2 {
		return nil, false
	}
	return out, true
}
