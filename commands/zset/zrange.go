package main

import (
	"math"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	ro := []string{"readonly"}
	cmd := func(name string, arity int, since, summary string, kind, rev int64) sdk.Command {
		return sdk.Command{
			Name: name, Arity: arity, Flags: ro, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "sorted_set", Since: since, Summary: summary,
			Run: func(c *sdk.Ctx) { zrangeStart(c, 1, kind, rev) },
		}
	}
	sdk.Register(
		cmd("zrange", -4, "1.2.0", "Returns members in a sorted set within a range of indexes.", kindAuto, -1),
		cmd("zrevrange", -4, "1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.", kindRank, 1),
		cmd("zrangebyscore", -4, "1.0.5", "Returns members in a sorted set within a range of scores.", kindScore, 0),
		cmd("zrevrangebyscore", -4, "2.2.0", "Returns members in a sorted set within a range of scores in reverse order.", kindScore, 1),
		cmd("zrangebylex", -4, "2.8.9", "Returns members in a sorted set within a lexicographical range.", kindLex, 0),
		cmd("zrevrangebylex", -4, "2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.", kindLex, 1),
		sdk.Command{
			Name: "zrangestore", Arity: -5, Flags: []string{"write", "denyoom"},
			FirstKey: 1, LastKey: 2, Step: 1, Group: "sorted_set", Since: "6.2.0",
			Summary: "Stores a range of members from sorted set in a key.",
			Run:     func(c *sdk.Ctx) { zrangeStart(c, 2, kindAuto, -1) },
		},
	)
}

// The range commands share Redis's zrangeGenericCommand: one parser, one
// read, one reply. The read is one operate that returns only the items
// answered:
//
//   - by rank: a rank range; reversed ranks are negative ranks (counted
//     from the highest). A range whose ends have different signs depends
//     on the size: the size is read first and the range read with it,
//     again if the size changed in between (the answer is exact for the
//     size it was read with).
//   - by score: a value range [lo, hi) of floats (an exclusive bound is the
//     next float); with LIMIT, the page itself: count items from offset
//     ranks above the first score at least lo (or, reversed, below the
//     first score at least hi), cut where the range ends.
//   - by lex: a key range, or with LIMIT the page from a key-relative
//     index, likewise.
//
// By lex follows key order, which is Redis's order only when all scores
// are equal (Redis documents mixed scores as unspecified).
//
// ZRANGESTORE then writes the destination as kit.DestStore does, replacing
// whatever it held and clearing its TTL, or deleting it when the range is
// empty, and starting over if the source changed meanwhile.
//
// Ctx.N: [0] the kind, [1] the rf* flags, [2] LIMIT offset (rank ranges:
// kit.Retry's attempts), [3] LIMIT count (-1: none), [4] [5] rank start and
// end, or the bits of a score range's lo and hi, [6] the size the rank
// range was computed for (-1: not read yet).

const (
	kindAuto = iota
	kindRank
	kindScore
	kindLex
)

const (
	rfRev = 1 << iota
	rfWithScores
	rfStore
	rfEmpty  // nothing can match: the read only checks the type
	rfHiOpen // by score: the range runs to +inf included
	rfReply  // the read returns the reply's elements (reply return type)
)

// maxSpan bounds offsets, ranks and counts sent to the store: no map is
// that large, it keeps their sums far from overflowing, and counts stay
// below Aerospike's own "to the end" (UINT32_MAX).
const maxSpan = 1 << 31

// zrangeStart parses the command (key at argument key; kind and rev fixed
// by the legacy commands, kindAuto and -1 for ZRANGE) and reads.
func zrangeStart(c *sdk.Ctx, key int, kind, rev int64) {
	var flags int64
	if key == 2 {
		flags |= rfStore
	}
	offset, limit := int64(0), int64(-1)
	for j := key + 3; j < c.NArg(); j++ {
		a := c.Arg(j)
		left := c.NArg() - j - 1
		switch {
		case key == 1 && kit.Fold(a, "withscores"):
			flags |= rfWithScores
		case kit.Fold(a, "limit") && left >= 2:
			o, ok1 := kit.ParseInt(c.Arg(j + 1))
			l, ok2 := kit.ParseInt(c.Arg(j + 2))
			if !ok1 || !ok2 {
				c.Error(kit.NotInt)
				return
			}
			offset, limit = o, l
			j += 2
		case rev < 0 && kit.Fold(a, "rev"):
			rev = 1
		case kind == kindAuto && kit.Fold(a, "bylex"):
			kind = kindLex
		case kind == kindAuto && kit.Fold(a, "byscore"):
			kind = kindScore
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	if rev == 1 {
		flags |= rfRev
	}
	if kind == kindAuto {
		kind = kindRank
	}
	if limit != -1 && kind == kindRank {
		c.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if flags&rfWithScores != 0 && kind == kindLex {
		c.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	minArg, maxArg := c.Arg(key+1), c.Arg(key+2)
	if rev == 1 && kind != kindRank {
		minArg, maxArg = maxArg, minArg
	}
	switch kind {
	case kindRank:
		s, ok1 := kit.ParseInt(minArg)
		e, ok2 := kit.ParseInt(maxArg)
		if !ok1 || !ok2 {
			c.Error(kit.NotInt)
			return
		}
		c.N[4], c.N[5] = s, e
	case kindScore:
		sr, ok := parseScoreRange(minArg, maxArg)
		if !ok {
			c.Error(errMinMax)
			return
		}
		if sr.empty {
			flags |= rfEmpty
		}
		// Kept parsed: float parsing is dear in WebAssembly.
		c.N[4] = int64(math.Float64bits(sr.lo.Float))
		if sr.hi.IsNil() {
			flags |= rfHiOpen
		} else {
			c.N[5] = int64(math.Float64bits(sr.hi.Float))
		}
	case kindLex:
		lr, ok := parseLexRange(minArg, maxArg)
		if !ok {
			c.Error(errLexRange)
			return
		}
		if lr.empty {
			flags |= rfEmpty
		}
	}
	if kind != kindRank && (offset < 0 || offset >= maxSpan || limit == 0) {
		flags |= rfEmpty // Redis skips past every item for a negative offset
	}
	if limit >= maxSpan {
		limit = -1
	}
	c.N[0], c.N[1], c.N[2], c.N[3], c.N[6] = kind, flags, offset, limit, -1
	zrangeRead(c)
}

// savedScoreRange is the BYSCORE range zrangeStart parsed.
func savedScoreRange(c *sdk.Ctx) scoreRange {
	sr := scoreRange{lo: codec.Float(math.Float64frombits(uint64(c.N[4])))}
	if c.N[1]&rfHiOpen == 0 {
		sr.hi = codec.Float(math.Float64frombits(uint64(c.N[5])))
	}
	return sr
}

// zrangeKey is the argument index of the source key.
func zrangeKey(c *sdk.Ctx) int {
	if c.N[1]&rfStore != 0 {
		return 2
	}
	return 1
}

// zrangeBounds returns the min and max arguments in range order.
func zrangeBounds(c *sdk.Ctx) (minArg, maxArg []byte) {
	k := zrangeKey(c)
	minArg, maxArg = c.Arg(k+1), c.Arg(k+2)
	if c.N[1]&rfRev != 0 && c.N[0] != kindRank {
		minArg, maxArg = maxArg, minArg
	}
	return minArg, maxArg
}

// rankSpan turns Redis's start and end indexes (in the direction asked)
// into a store rank range: rank (negative: from the highest), count (-1:
// to the end) and whether it is the complement (inverted). size < 0 means
// unknown: ok is false when the range depends on it.
func rankSpan(start, end int64, rev bool, size int64) (rank, count int64, inverted, empty, ok bool) {
	start, end = max(start, -maxSpan), max(end, -maxSpan)
	start, end = min(start, maxSpan), min(end, maxSpan)
	switch {
	case (start >= 0) == (end >= 0):
		if start > end {
			return 0, 0, false, true, true
		}
		if !rev {
			return start, end - start + 1, false, false, true
		}
		if start >= 0 {
			return -(end + 1), end - start + 1, false, false, true
		}
		return -end - 1, end - start + 1, false, false, true
	case start >= 0 && end == -1:
		if !rev {
			return start, -1, false, false, true
		}
		if start == 0 {
			return 0, -1, false, false, true
		}
		return -start, start, true, false, true
	}
	if size < 0 {
		return 0, 0, false, false, false
	}
	if start < 0 {
		start += size
	}
	if end < 0 {
		end += size
	}
	start = max(start, 0)
	if start > end || start >= size {
		return 0, 0, false, true, true
	}
	end = min(end, size-1)
	if !rev {
		return start, end - start + 1, false, false, true
	}
	return size - 1 - end, end - start + 1, false, false, true
}

// zrangeRead builds the read: op 0 the size, op 1 the items (key, score
// pairs) unless nothing can match.
func zrangeRead(c *sdk.Ctx) {
	kind, flags := c.N[0], c.N[1]
	rev := flags&rfRev != 0
	call := c.Record(c.Arg(zrangeKey(c))).Guard(codec.TypeZSet).MapSize(codec.BinValue)
	if flags&rfEmpty != 0 {
		c.Exec(zrangeDone)
		return
	}
	offset, limit := c.N[2], c.N[3]
	// The store lays the reply out (a reply return type) unless the items
	// are stored or cut here: one copy into the reply, where writing 100
	// members and scores in the guest cost most of a ZRANGE.
	ret := codec.ReturnKeyValue
	c.N[1] &^= rfReply
	if flags&rfStore == 0 && (kind == kindRank || (limit < 0 && offset == 0)) {
		c.N[1] |= rfReply
		switch {
		case flags&rfWithScores == 0:
			ret = codec.ReturnRESPKeys
		case c.Reply().RESP3():
			ret = codec.ReturnRESP3Scores
		default:
			ret = codec.ReturnRESPScores
		}
		if rev {
			ret |= codec.ReturnReversed
		}
	}
	switch kind {
	case kindRank:
		rank, count, inv, empty, ok := rankSpan(c.N[4], c.N[5], rev, c.N[6])
		switch {
		case !ok:
			c.Exec(zrangeSized) // the size first
			return
		case empty:
			c.N[1] |= rfEmpty
		case inv:
			call.MapGetByRank(codec.BinValue, ret|codec.ReturnInverted, rank, count)
		default:
			call.MapGetByRank(codec.BinValue, ret, rank, count)
		}
	case kindScore:
		sr := savedScoreRange(c)
		switch {
		case limit < 0:
			call.MapGetByValueRange(codec.BinValue, ret, sr.lo, sr.hi)
		case !rev:
			call.MapGetByValueRelRank(codec.BinValue, ret, sr.lo, offset, limit)
		case sr.hi.IsNil():
			call.MapGetByRank(codec.BinValue, ret, -offset-limit, limit)
		default:
			call.MapGetByValueRelRank(codec.BinValue, ret, sr.hi, -offset-limit, limit)
		}
	case kindLex:
		lr, _ := parseLexRange(zrangeBounds(c))
		switch {
		case limit < 0:
			call.MapGetByKeyRange(codec.BinValue, ret, lr.lo, lr.hi)
		case !rev:
			anchor := lr.lo
			if anchor.IsNil() {
				anchor = codec.Bytes([]byte{})
			}
			call.MapGetByKeyRelIndex(codec.BinValue, ret, anchor, offset, limit)
		case lr.hi.IsNil():
			call.MapGetByIndex(codec.BinValue, ret, -offset-limit, limit)
		default:
			call.MapGetByKeyRelIndex(codec.BinValue, ret, lr.hi, -offset-limit, limit)
		}
	}
	c.Exec(zrangeDone)
}

// zrangeSized reads the range again now that the size is known.
func zrangeSized(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		zrangeAnswer(c, nil)
		return
	default:
		failed(c, r)
		return
	}
	c.N[6] = kit.IntOf(r.Value(0))
	zrangeRead(c)
}

// zrangeDone cuts the items read to the range and answers or stores them.
func zrangeDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		zrangeAnswer(c, nil)
		return
	default:
		failed(c, r)
		return
	}
	kind, flags := c.N[0], c.N[1]
	if flags&rfEmpty != 0 {
		zrangeAnswer(c, nil)
		return
	}
	if kind == kindRank && c.N[6] >= 0 && kit.IntOf(r.Value(0)) != c.N[6] {
		// The size changed since the range was computed from it.
		if !kit.Retry(c) {
			return
		}
		c.N[6] = kit.IntOf(r.Value(0))
		zrangeRead(c)
		return
	}
	if flags&rfReply != 0 {
		v := r.Value(1)
		if len(v.List) != 2 {
			zrangeAnswer(c, nil) // no map bin
			return
		}
		openPairs(c, int(v.List[0].Int), flags&rfWithScores != 0)
		c.Reply().Raw(v.List[1].Bytes)
		return
	}
	kv := r.Value(1).List
	rev := flags&rfRev != 0
	if kind == kindRank {
		zrangeAnswer(c, kv)
		return
	}
	offset, limit := c.N[2], c.N[3]
	// Keep the items inside the range: a LIMIT page read from an anchor
	// may run past the range's other end.
	var sr scoreRange
	var lr lexRange
	if kind == kindScore {
		sr = savedScoreRange(c)
	} else {
		lr, _ = parseLexRange(zrangeBounds(c))
	}
	in := func(i int) bool {
		if kind == kindScore {
			return sr.contains(codec.ScoreOf(&kv[2*i+1]))
		}
		return lr.containsKey(kv[2*i].Bytes)
	}
	n := len(kv) / 2
	lo, hi := 0, n
	if limit >= 0 {
		if rev {
			for lo < hi && !in(lo) {
				lo++
			}
		} else {
			for hi > lo && !in(hi-1) {
				hi--
			}
		}
	} else if offset > 0 {
		// No LIMIT count: the whole range was read; skip offset items in
		// the direction asked.
		if rev {
			hi = max(lo, hi-int(min(offset, int64(n))))
		} else {
			lo = min(hi, int(min(offset, int64(n))))
		}
	}
	zrangeAnswer(c, kv[2*lo:2*hi])
}

// zrangeAnswer replies with the items (in rank or key order; reversed for
// REV) or stores them.
func zrangeAnswer(c *sdk.Ctx, kv []codec.Value) {
	flags := c.N[1]
	if flags&rfStore == 0 {
		replyItems(c, kv, flags&rfWithScores != 0, flags&rfRev != 0)
		return
	}
	// The source's read is the last result: its generation (0 when
	// missing) is what the store checks again after writing.
	src := c.Arg(2)
	st := &kit.DestStore{Dst: c.Arg(1), Srcs: [][]byte{src}, Gens: []uint32{c.Result(0).Generation},
		Restart: func(c *sdk.Ctx) { zrangeStart(c, 2, kindAuto, -1) }}
	kit.StoreZSet(c, st, kv, nil)
}
