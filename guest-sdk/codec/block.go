package codec

import "encoding/binary"

// A blocking command's answer (ABI 5): StatusBlock, then
//
//	timeout  u64  nanoseconds; 0 = no limit
//	nkeys    u32  1 to MaxBlockKeys
//	keys     nkeys × (u32 length, bytes)
//	reply    the rest: the RESP reply the client receives if the timeout
//	         passes (or CLIENT UNBLOCK ... TIMEOUT, or the command blocks
//	         where it may not: inside MULTI)
//
// all little-endian. The keys are in the connection's database. The host
// wakes the client when one of them is written and runs the command again
// from the start, with the same arguments; the timeout counts from the
// first time the command blocked, whatever a re-run answers.

// MaxBlockKeys bounds the keys of one block answer.
const MaxBlockKeys = 1 << 16

// Block is a decoded block answer. Keys and Reply alias the decoded bytes.
type Block struct {
	Timeout int64 // nanoseconds (a time.Duration); 0: no limit. Not time.Duration: guest code does not link package time
	Keys    [][]byte
	Reply   []byte
}

// AppendBlock appends a block answer, status byte first, to dst.
func AppendBlock(dst []byte, timeout int64, keys [][]byte, reply []byte) []byte {
	dst = append(dst, StatusBlock)
	dst = put64(dst, uint64(max(timeout, 0)))
	dst = put32(dst, uint32(len(keys)))
	for _, k := range keys {
		dst = appendBytes(dst, k)
	}
	return append(dst, reply...)
}

// DecodeBlock decodes a block answer, status byte first, into b, reusing
// b.Keys. It refuses an answer with no key, more than MaxBlockKeys, a
// negative timeout or an empty reply: the module is not trusted.
func DecodeBlock(ans []byte, b *Block) error {
	if len(ans) < 13 || ans[0] != StatusBlock {
		return ErrCorrupt
	}
	t := int64(binary.LittleEndian.Uint64(ans[1:]))
	n := binary.LittleEndian.Uint32(ans[9:])
	if t < 0 || n == 0 || n > MaxBlockKeys {
		return ErrCorrupt
	}
	b.Timeout = t
	b.Keys = b.Keys[:0]
	p := ans[13:]
	for range n {
		if len(p) < 4 {
			return ErrCorrupt
		}
		l := binary.LittleEndian.Uint32(p)
		if uint64(l) > uint64(len(p)-4) {
			return ErrCorrupt
		}
		b.Keys = append(b.Keys, p[4:4+l:4+l])
		p = p[4+l:]
	}
	if len(p) == 0 {
		return ErrCorrupt
	}
	b.Reply = p
	return nil
}
