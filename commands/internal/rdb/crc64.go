package rdb

import "hash/crc64"

// jones is the table of Redis's CRC-64 (src/crc64.c): the Jones polynomial
// 0xad93d23594c935a9, reflected input and output, initial value 0, no final
// xor. hash/crc64 takes the polynomial bit-reversed.
var jones = crc64.MakeTable(0x95ac9329ac4bc9b5)

// CRC64 is Redis's crc64(crc, p): the checksum a DUMP payload carries in its
// trailer, continuing from crc (0 for a fresh checksum). hash/crc64 inverts
// the state on entry and exit; Redis's does not, so the state is inverted
// around the call.
func CRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jones, p)
}
