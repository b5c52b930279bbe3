package rdb

import (
	"encoding/binary"
	"sync"
)

// Redis's CRC-64 (src/crc64.c): the Jones polynomial 0xad93d23594c935a9,
// reflected input and output, initial value 0, no final xor. Computed 8
// bytes at a time (slicing-by-8, as Redis's crcspeed): hash/crc64 does that
// only for its own polynomials and, for others, rebuilds its tables on
// every call of 2 KiB or more.
const jonesReflected = 0x95ac9329ac4bc9b5 // the polynomial bit-reversed

var (
	crcOnce   sync.Once
	crcTables [8][256]uint64
)

func crcInit() {
	for n := range 256 {
		c := uint64(n)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ jonesReflected
			} else {
				c >>= 1
			}
		}
		crcTables[0][n] = c
	}
	for k := 1; k < 8; k++ {
		for n := range 256 {
			c := crcTables[k-1][n]
			crcTables[k][n] = c>>8 ^ crcTables[0][c&0xff]
		}
	}
}

// CRC64 is Redis's crc64(crc, p): the checksum a DUMP payload carries in its
// trailer, continuing from crc (0 for a fresh checksum).
func CRC64(crc uint64, p []byte) uint64 {
	crcOnce.Do(crcInit)
	t := &crcTables
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint64(p)
		crc = t[7][crc&0xff] ^ t[6][crc>>8&0xff] ^ t[5][crc>>16&0xff] ^ t[4][crc>>24&0xff] ^
			t[3][crc>>32&0xff] ^ t[2][crc>>40&0xff] ^ t[1][crc>>48&0xff] ^ t[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = t[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
