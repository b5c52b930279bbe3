// Command zset is respike's module of Redis sorted-set commands: ZADD,
// ZINCRBY, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, ZCOUNT, ZLEXCOUNT,
// ZRANGE, ZRANGESTORE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX, ZREVRANGEBYLEX, ZREM, ZREMRANGEBYRANK, ZREMRANGEBYSCORE,
// ZREMRANGEBYLEX, ZPOPMIN, ZPOPMAX, ZMPOP, ZRANDMEMBER, ZUNION, ZINTER,
// ZDIFF, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZINTERCARD and ZSCAN.
//
// Data model: one key is one record with bin "t" = "zset" and bin "v" = a
// key-value-ordered map member → score. Members are bytes; a score is
// always a float64, so that the store's rank order (by value, equal values
// by key) is Redis's order (by score, equal scores by member bytes): an
// Aerospike map ranks every integer below every float, so one integer
// score would break it. A score of -0 is stored as 0, as Redis 7.0 does
// for a small sorted set.
//
// Atomicity: every single-key command is one atomic operate on its record
// except ZADD with GT or LT, ZADD INCR with a condition or an infinite
// increment, and rank ranges whose ends have different signs, which are
// guarded by the record's generation (or size) and retried; see the
// commands' files. Writes carry the type guard, so WRONGTYPE is decided
// atomically with the write; a write that empties the map deletes the
// record in the same operate, and writes leave the record's TTL as it is.
// Range commands read or remove only the items they answer, with the
// store's rank, value-range and key-range operations.
package main

import (
	"math"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("zset", "1.0.0") }

// Error texts of the sorted-set commands (Redis 7.0).
const (
	errNaN      = "ERR resulting score is not a number (NaN)"
	errMinMax   = "ERR min or max is not a float"
	errLexRange = "ERR min or max not valid string range item"
)

// replyScore writes a score: a bulk string in RESP2, a double in RESP3.
func replyScore(c *sdk.Ctx, f float64) {
	var tmp [32]byte
	b := codec.AppendScore(tmp[:0], f)
	w := c.Reply()
	if w.RESP3() {
		w.Raw([]byte{','})
		w.Raw(b)
		w.Raw([]byte{'\r', '\n'})
		return
	}
	w.Bulk(b)
}

// replyStored writes a stored score (kit.MapScan and kit.Sample's value
// writer).
func replyStored(c *sdk.Ctx, v *codec.Value) { replyScore(c, codec.ScoreOf(v)) }

// openPairs opens a reply of n members, with their scores when withScores:
// RESP2 one flat array, RESP3 an array of [member, score] pairs.
func openPairs(c *sdk.Ctx, n int, withScores bool) {
	w := c.Reply()
	if withScores && !w.RESP3() {
		w.Array(2 * n)
		return
	}
	w.Array(n)
}

// replyItems answers key-value pairs kv (flattened), forward or reversed.
// It writes the RESP bytes itself, by index into a buffer grown ahead: in
// Go-compiled WebAssembly a call per bulk string and per score cost two
// thirds of a 100-member ZRANGE (measured with BenchmarkExecZSet), and
// every append is a capacity check and often a memmove call.
func replyItems(c *sdk.Ctx, kv []codec.Value, withScores, reverse bool) {
	n := len(kv) / 2
	openPairs(c, n, withScores)
	w := c.Reply()
	resp3 := w.RESP3()
	out := w.Buf[:cap(w.Buf)]
	p := len(w.Buf)
	var tmp [32]byte
	for j := range n {
		i := j
		if reverse {
			i = n - 1 - j
		}
		m := kv[2*i].Bytes
		var d []byte
		if withScores {
			d = codec.AppendScore(tmp[:0], codec.ScoreOf(&kv[2*i+1]))
		}
		// At most: *2\r\n, $ 20 digits \r\n, m, \r\n, $ 2 digits \r\n, d, \r\n.
		if need := p + len(m) + len(d) + 40; need > len(out) {
			grown := make([]byte, 2*len(out)+need)
			copy(grown, out[:p])
			out = grown
		}
		if withScores && resp3 {
			out[p], out[p+1], out[p+2], out[p+3] = '*', '2', '\r', '\n'
			p += 4
		}
		out[p] = '$'
		p = putLen(out, p+1, len(m))
		p += copy(out[p:], m)
		out[p], out[p+1] = '\r', '\n'
		p += 2
		if !withScores {
			continue
		}
		if resp3 {
			out[p] = ','
			p++
		} else {
			out[p] = '$'
			p = putLen(out, p+1, len(d))
		}
		p += copy(out[p:], d)
		out[p], out[p+1] = '\r', '\n'
		p += 2
	}
	w.Buf = out[:p]
}

// putLen writes n (a length) and CRLF at out[p:], which has room, and
// returns the position after them.
func putLen(out []byte, p, n int) int {
	switch {
	case n < 10:
		out[p] = byte('0' + n)
		p++
	case n < 100:
		out[p], out[p+1] = byte('0'+n/10), byte('0'+n%10)
		p += 2
	default:
		var tmp [20]byte
		p += copy(out[p:], strconv.AppendUint(tmp[:0], uint64(n), 10))
	}
	out[p], out[p+1] = '\r', '\n'
	return p + 2
}

// failed answers a call that did not succeed and is not a missing key.
func failed(c *sdk.Ctx, r *codec.Result) { kit.GuardFailed(c, r) }

// scoreRange is a BYSCORE range as the store's value ranges take it: the
// scores in [lo, hi), hi Nil meaning up to +inf included.
type scoreRange struct {
	lo, hi codec.Value
	empty  bool
}

// parseBound parses one end of a score range as Redis's zslParseRange: an
// optional '(' for exclusive, then strtod of the rest, which must consume
// it all (up to a NUL, as C reads it); leading spaces are skipped and an
// empty number is 0. NaN is refused.
func parseBound(b []byte) (f float64, excl, ok bool) {
	for i, ch := range b {
		if ch == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > 0 && b[0] == '(' {
		excl = true
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, excl, true
	}
	i := 0
	for i < len(b) && kit.IsSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return 0, excl, false // strtod converted nothing: the spaces remain
	}
	f, ok = strtodRange(b[i:])
	return f, excl, ok
}

// strtodRange is strtod where overflow and underflow are accepted (to
// ±inf and 0), as zslParseRange does not check errno.
func strtodRange(b []byte) (float64, bool) {
	if f, ok := kit.Strtod(b); ok {
		return f, true
	}
	for _, ch := range b {
		if ch == '_' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !math.IsNaN(f) {
		return f, true // overflow: ±inf, which strtod returns too
	}
	return 0, false
}

// parseScoreRange parses min and max as Redis does and turns them into a
// half-open float range.
func parseScoreRange(minArg, maxArg []byte) (scoreRange, bool) {
	lo, loEx, ok1 := parseBound(minArg)
	hi, hiEx, ok2 := parseBound(maxArg)
	if !ok1 || !ok2 {
		return scoreRange{}, false
	}
	r := scoreRange{}
	if lo > hi || (lo == hi && (loEx || hiEx)) {
		r.empty = true
		return r, true
	}
	if loEx {
		lo = math.Nextafter(lo, math.Inf(1))
	}
	r.lo = codec.Float(lo)
	switch {
	case !hiEx && math.IsInf(hi, 1):
		r.hi = codec.Nil
	case hiEx:
		r.hi = codec.Float(hi)
	default:
		r.hi = codec.Float(math.Nextafter(hi, math.Inf(1)))
	}
	return r, true
}

// contains reports whether score f is inside the range.
func (r *scoreRange) contains(f float64) bool {
	if r.empty || f < r.lo.Float {
		return false
	}
	return r.hi.IsNil() || f < r.hi.Float
}

// lexRange is a BYLEX range as the store's key ranges take it: the members
// in [lo, hi), Nil meaning unbounded.
type lexRange struct {
	lo, hi codec.Value
	empty  bool
}

// parseLexItem parses one end of a lex range as Redis's
// zslParseLexRangeItem: "-", "+", "[member" or "(member". kind is '-',
// '+', '[' or '('.
func parseLexItem(b []byte) (kind byte, member []byte, ok bool) {
	if len(b) == 0 {
		return 0, nil, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) > 1 && b[1] != 0 {
			return 0, nil, false
		}
		return b[0], nil, true
	case '(', '[':
		return b[0], b[1:], true
	}
	return 0, nil, false
}

// parseLexRange parses min and max into a half-open key range. The
// smallest member above m is m followed by a zero byte.
func parseLexRange(minArg, maxArg []byte) (lexRange, bool) {
	lk, lm, ok1 := parseLexItem(minArg)
	hk, hm, ok2 := parseLexItem(maxArg)
	if !ok1 || !ok2 {
		return lexRange{}, false
	}
	var r lexRange
	switch lk {
	case '+':
		r.empty = true
		return r, true
	case '-':
		r.lo = codec.Nil
	case '[':
		r.lo = codec.Bytes(lm)
	case '(':
		r.lo = codec.Bytes(append(append([]byte(nil), lm...), 0))
	}
	switch hk {
	case '-':
		r.empty = true
		return r, true
	case '+':
		r.hi = codec.Nil
	case '[':
		r.hi = codec.Bytes(append(append([]byte(nil), hm...), 0))
	case '(':
		r.hi = codec.Bytes(hm)
	}
	if !r.lo.IsNil() && !r.hi.IsNil() && string(r.lo.Bytes) >= string(r.hi.Bytes) {
		r.empty = true
	}
	return r, true
}

// containsKey reports whether member m is inside the range.
func (r *lexRange) containsKey(m []byte) bool {
	if r.empty {
		return false
	}
	if !r.lo.IsNil() && string(m) < string(r.lo.Bytes) {
		return false
	}
	return r.hi.IsNil() || string(m) < string(r.hi.Bytes)
}
