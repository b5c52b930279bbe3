package rdb

import "encoding/binary"

// Listpacks (src/listpack.c), the compact encoding of small hashes and
// sorted sets and of quicklist nodes in Redis 7.0: a 4-byte total length,
// a 2-byte element count (65535: unknown), the entries, and 0xFF. An entry
// is its encoding and data, then the length of both ("backlen") written
// backwards in 7-bit groups.

const lpHeader = 6

// lpNew starts an empty listpack.
func lpNew() []byte { return append(make([]byte, lpHeader, 64), 0xFF) }

// lpAppend appends element s as lpAppend does: as an integer when s is the
// canonical decimal form of an int64 (lpStringToInt64), else as a string.
func lpAppend(lp, s []byte) []byte {
	lp = lp[:len(lp)-1] // drop the terminator
	start := len(lp)
	if v, ok := parseInt(s); ok {
		lp = lpAppendInt(lp, v)
	} else {
		switch n := len(s); {
		case n < 64:
			lp = append(lp, 0x80|byte(n))
		case n < 4096:
			lp = append(lp, 0xE0|byte(n>>8), byte(n))
		default:
			lp = append(lp, 0xF0, byte(n), byte(n>>8), byte(n>>16), byte(n>>24))
		}
		lp = append(lp, s...)
	}
	lp = lpBacklen(lp, uint64(len(lp)-start))
	lp = append(lp, 0xFF)
	binary.LittleEndian.PutUint32(lp[0:4], uint32(len(lp)))
	n := binary.LittleEndian.Uint16(lp[4:6])
	if n < 65535 {
		binary.LittleEndian.PutUint16(lp[4:6], n+1)
	}
	return lp
}

// lpAppendInt appends the encoding and data of integer v
// (lpEncodeIntegerGetType).
func lpAppendInt(lp []byte, v int64) []byte {
	switch {
	case v >= 0 && v <= 127:
		return append(lp, byte(v))
	case v >= -4096 && v <= 4095:
		u := uint64(v) & (1<<13 - 1)
		return append(lp, 0xC0|byte(u>>8), byte(u))
	case v >= -32768 && v <= 32767:
		u := uint64(v)
		return append(lp, 0xF1, byte(u), byte(u>>8))
	case v >= -8388608 && v <= 8388607:
		u := uint64(v)
		return append(lp, 0xF2, byte(u), byte(u>>8), byte(u>>16))
	case v >= -2147483648 && v <= 2147483647:
		u := uint64(v)
		return append(lp, 0xF3, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	default:
		lp = append(lp, 0xF4)
		return binary.LittleEndian.AppendUint64(lp, uint64(v))
	}
}

// lpBacklen appends the backlen of an entry of l bytes (lpEncodeBacklen).
func lpBacklen(lp []byte, l uint64) []byte {
	switch {
	case l <= 127:
		return append(lp, byte(l))
	case l < 16383:
		return append(lp, byte(l>>7), byte(l&127)|128)
	case l < 2097151:
		return append(lp, byte(l>>14), byte((l>>7)&127)|128, byte(l&127)|128)
	case l < 268435455:
		return append(lp, byte(l>>21), byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	default:
		return append(lp, byte(l>>28), byte((l>>21)&127)|128, byte((l>>14)&127)|128, byte((l>>7)&127)|128, byte(l&127)|128)
	}
}

// lpEntries decodes every entry of listpack lp as its string form
// (integers in decimal), checking the whole structure as Redis's deep
// integrity check does (lpValidateIntegrity): header length, entry
// encodings and backlens within bounds, the terminator last, and the
// element count when it is known.
func lpEntries(lp []byte, nums *numbers) ([][]byte, bool) {
	if len(lp) < lpHeader+1 || binary.LittleEndian.Uint32(lp[0:4]) != uint32(len(lp)) || lp[len(lp)-1] != 0xFF {
		return nil, false
	}
	count := int(binary.LittleEndian.Uint16(lp[4:6]))
	var out [][]byte
	p := lpHeader
	end := len(lp) - 1
	for p < end {
		b := lp[p]
		var hdr, dlen int // encoding bytes, data bytes
		var val []byte
		isInt := true
		var u uint64
		var bits uint
		switch {
		case b&0x80 == 0: // 7-bit uint
			hdr, u, bits = 1, uint64(b&0x7F), 64 // never negative
		case b&0xC0 == 0x80: // 6-bit string
			hdr, dlen, isInt = 1, int(b&0x3F), false
		case b&0xE0 == 0xC0: // 13-bit int
			if p+2 > end {
				return nil, false
			}
			hdr, u, bits = 2, uint64(b&0x1F)<<8|uint64(lp[p+1]), 13
		case b&0xF0 == 0xE0: // 12-bit string
			if p+2 > end {
				return nil, false
			}
			hdr, dlen, isInt = 2, int(b&0x0F)<<8|int(lp[p+1]), false
		case b == 0xF0: // 32-bit string
			if p+5 > end {
				return nil, false
			}
			hdr, dlen, isInt = 5, int(binary.LittleEndian.Uint32(lp[p+1:p+5])), false
			if dlen < 0 {
				return nil, false
			}
		case b >= 0xF1 && b <= 0xF4:
			n := int(b-0xF1) + 2 // 16, 24, 32 bits
			if b == 0xF4 {
				n = 8
			}
			if p+1+n > end {
				return nil, false
			}
			for i := n - 1; i >= 0; i-- {
				u = u<<8 | uint64(lp[p+1+i])
			}
			hdr, bits = 1+n, uint(8*n)
		default:
			return nil, false
		}
		var v int64
		if isInt {
			if bits < 64 && u >= 1<<(bits-1) {
				v = int64(u) - 1<<bits // two's complement of the field
			} else {
				v = int64(u)
			}
			val = nums.decimal(v)
		} else {
			if dlen > end-p-hdr {
				return nil, false
			}
			val = lp[p+hdr : p+hdr+dlen]
		}
		entry := hdr + dlen
		var tmp [5]byte
		bl := lpBacklen(tmp[:0], uint64(entry))
		if p+entry+len(bl) > end || string(lp[p+entry:p+entry+len(bl)]) != string(bl) {
			return nil, false
		}
		out = append(out, val)
		p += entry + len(bl)
	}
	if count != 65535 && count != len(out) {
		return nil, false
	}
	return out, true
}
