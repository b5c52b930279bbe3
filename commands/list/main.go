// Command list is respike's module of Redis list commands: LPUSH, RPUSH,
// LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET, LINSERT, LREM,
// LTRIM, LPOS, LMOVE, RPOPLPUSH, LMPOP, and the blocking BLPOP, BRPOP,
// BLMOVE, BRPOPLPUSH and BLMPOP (blocking.go).
//
// Data model: one key is one record with bin "t" = "list" and bin "v" = an
// unordered Aerospike list of the elements (blobs), head first.
//
// Atomicity: pushes, pops, LLEN, LRANGE and LINDEX with indexes of one sign,
// LSET, LTRIM with indexes of one sign and LREM with a count of 0 are one
// atomic operate each, guarded by the type tag (WRONGTYPE is decided
// atomically with the write); a write that empties the list deletes the
// record in the same operate, and writes leave the TTL as it is. LINSERT,
// LREM with a count, LTRIM with indexes of both signs and LMOVE on one key
// read, then write under the generation they read, and start again when
// another client wrote in between (within kit.RetryFor). LMOVE and RPOPLPUSH
// between two keys push to the destination first and pop the source second
// (see lmove.go): an element may briefly be in both lists, never in
// neither.
package main

import (
	"encoding/binary"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("list", "1.0.0") }

// tagList is the type tag of every list record, built once because
// codec.Str allocates.
var tagList = codec.Str(codec.TypeList)

const bin = codec.BinValue

// maxIndex bounds the indexes sent to the store. No list in a record of
// at most a few MiB comes near 2^30 items, so any index beyond ±2^30
// means the same as ±2^30; clamping keeps index arithmetic and the counts
// sent to the store far from overflow.
const maxIndex = 1 << 30

func clampIndex(i int64) int64 { return max(-maxIndex, min(i, maxIndex)) }

// errIndex is Redis's answer to an index that is not an integer.
const errIndex = kit.NotInt

// parseRange parses LRANGE's and LTRIM's start and stop (arguments 2 and
// 3), clamped; when it reports false it has replied.
func parseRange(c *sdk.Ctx) (start, stop int64, ok bool) {
	start, ok1 := kit.ParseInt(c.Arg(2))
	stop, ok2 := kit.ParseInt(c.Arg(3))
	if !ok1 || !ok2 {
		c.Error(errIndex)
		return 0, 0, false
	}
	return clampIndex(start), clampIndex(stop), true
}

// rangeCount is the count of an index range from start to stop of one
// sign: -1 (to the tail) when stop is the tail or beyond, 0 when the range
// is empty.
func rangeCount(start, stop int64) int64 {
	if stop >= maxIndex || (stop == -1 && start < 0) {
		return -1
	}
	return max(stop-start+1, 0)
}

// replyItem writes one element: bytes as they are; an integer or float
// (written by another Aerospike application) in its string form.
func replyItem(c *sdk.Ctx, v *codec.Value) { kit.ReplyStr(c, v) }

// replyItems writes elements as an array, in order or reversed. Blobs,
// nearly always all of them, are written in one pass over a buffer grown
// once: in wasm a call per element (LRANGE of 600) costs more than the
// bytes.
func replyItems(c *sdk.Ctx, items []codec.Value, reverse bool) {
	w := c.Reply()
	w.Array(len(items))
	size := 0
	for i := range items {
		if items[i].Kind != codec.KindBytes {
			size = -1
			break
		}
		size += len(items[i].Bytes) + 16
	}
	if size < 0 {
		for k := range items {
			i := k
			if reverse {
				i = len(items) - 1 - k
			}
			replyItem(c, &items[i])
		}
		return
	}
	buf := w.Buf
	if cap(buf)-len(buf) < size {
		buf = append(buf[:len(buf):len(buf)], make([]byte, size)...)[:len(buf)]
	}
	for k := range items {
		i := k
		if reverse {
			i = len(items) - 1 - k
		}
		b := items[i].Bytes
		n := len(b)
		if n < 10 {
			l := len(buf)
			buf = buf[:l+n+6]
			out := buf[l : l+n+6 : l+n+6]
			// One 32-bit store for "$n\r\n", one 16-bit store for the
			// trailing "\r\n": in wasm each byte store is its own
			// bounds-checked instruction.
			binary.LittleEndian.PutUint32(out, '$'|uint32('0'+n)<<8|'\r'<<16|'\n'<<24)
			copy(out[4:], b)
			binary.LittleEndian.PutUint16(out[4+n:], '\r'|'\n'<<8)
			continue
		}
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, '\r', '\n')
		buf = append(buf, b...)
		buf = append(buf, '\r', '\n')
	}
	w.Buf = buf
}

// failed answers a typed list call that did not succeed: WRONGTYPE when the
// guard filtered the record out or the bin is not a list, the store's
// error otherwise.
func failed(c *sdk.Ctx, r *codec.Result) { kit.GuardFailed(c, r) }

// retry counts an attempt in c.N[slot] and reports whether another is
// allowed (kit.Again: within kit.RetryFor, with no count limit, so a
// popular list never fails because it is popular); when not, it has
// replied.
func retry(c *sdk.Ctx, slot int) bool {
	c.N[slot]++
	if !kit.Again(c) {
		c.Error(kit.Contention)
		return false
	}
	return true
}

// readMatches reads the indexes of the items equal to argument 3 (LINSERT's
// pivot, LREM's element) with the generation they were read under.
func readMatches(c *sdk.Ctx, next sdk.Step) {
	c.Record(c.Arg(1)).Guard(codec.TypeList).ListGetByValue(bin, codec.ReturnIndex, codec.Bytes(c.Arg(3)))
	c.Exec(next)
}

// matches returns what readMatches read; for a missing key it answers 0,
// for a failure the error, and reports false.
func matches(c *sdk.Ctx) (at []codec.Value, gen uint32, ok bool) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		return r.Value(0).List, r.Generation, true
	case codec.NotFound:
		c.Reply().Int(0)
	default:
		failed(c, r)
	}
	return nil, 0, false
}

// side parses LEFT or RIGHT; ok is false for anything else.
func side(b []byte) (right, ok bool) {
	switch {
	case kit.Fold(b, "left"):
		return false, true
	case kit.Fold(b, "right"):
		return true, true
	}
	return false, false
}
