package main

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "capped.zadd", Arity: 5, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Sets member's score and keeps only the cap highest-scored members; returns how many members were evicted.",
		Run:     runZAdd,
	}, sdk.Command{
		Name: "capped.zrange", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Returns the members of a capped sorted set, lowest score first (REV: highest first), optionally WITHSCORES.",
		Run:     runZRange,
	})
}

// typeZ tags capped sorted sets. Their layout is that of a sorted set
// (member → float64 score in a key-value-ordered map), but the tag is their
// own, so that a plain ZADD cannot grow one past its cap.
const typeZ = "cappedzset"

var tagZ = codec.Str(typeZ)

const errNotFloat = "ERR value is not a valid float"

// runZAdd: CAPPED.ZADD key cap score member. One atomic call: put the
// member with its score, then remove every member but the cap highest.
func runZAdd(c *sdk.Ctx) {
	limit, ok := parseInt(c.Arg(2))
	if !ok {
		c.Error(errNotInt)
		return
	}
	if limit < 1 {
		c.Error(errCap)
		return
	}
	score, ok := parseScore(c.Arg(3))
	if !ok {
		c.Error(errNotFloat)
		return
	}
	kv := c.Values(2)
	kv[0], kv[1] = codec.Bytes(c.Arg(4)), codec.Float(score)

	// The map is key-value ordered, so ranks follow scores (ties by
	// member, as in a Redis sorted set). Ranks -limit.. are the limit
	// highest; ReturnInverted removes everything else, whatever the size.
	c.Record(c.Arg(1)).Guard(typeZ).
		Put(codec.BinType, tagZ).
		MapPut(codec.BinValue, codec.MapOrderKeyValue, kv).
		MapRemoveByRank(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, -limit, limit)
	c.Exec(added) // the same reply as CAPPED.ADD: op 2's count
}

// Bits of Ctx.N[0] for CAPPED.ZRANGE.
const (
	zWithScores = 1 << iota
	zRev
)

// runZRange: CAPPED.ZRANGE key [WITHSCORES] [REV]. Options are parsed as
// ZRANGE parses them: WITHSCORES may repeat, REV may not.
func runZRange(c *sdk.Ctx) {
	for i := 2; i < c.NArg(); i++ {
		switch a := c.Arg(i); {
		case fold(a, "withscores"):
			c.N[0] |= zWithScores
		case fold(a, "rev") && c.N[0]&zRev == 0:
			c.N[0] |= zRev
		default:
			c.Error(errSyntax)
			return
		}
	}
	ret := codec.ReturnKey
	if c.N[0]&zWithScores != 0 {
		ret = codec.ReturnKeyValue
	}
	c.Record(c.Arg(1)).Guard(typeZ).
		MapGetByRank(codec.BinValue, ret, 0, -1)
	c.Exec(zranged)
}

// zranged replies with the members read in rank order (lowest score
// first), reversed for REV.
func zranged(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Array(0)
		return
	case codec.FilteredOut, codec.BinTypeError:
		c.Error(errWrongType)
		return
	default:
		storeError(c, r)
		return
	}
	items := r.Value(0).List
	withScores := c.N[0]&zWithScores != 0
	step := 1
	if withScores {
		step = 2 // key, value pairs
	}
	n := len(items) / step
	w := c.Reply()
	switch {
	case withScores && !w.RESP3():
		w.Array(2 * n) // RESP2: member, score, ... with scores as bulk strings
	default:
		w.Array(n) // RESP3 WITHSCORES: [member, score] pairs, as ZRANGE
	}
	for j := 0; j < n; j++ {
		i := j
		if c.N[0]&zRev != 0 {
			i = n - 1 - j
		}
		member := items[i*step].Bytes
		if !withScores {
			w.Bulk(member)
			continue
		}
		if w.RESP3() {
			w.Array(2)
		}
		w.Bulk(member)
		w.Double(items[i*step+1].Float)
	}
}

// parseScore parses a score as Redis does (strtod, whole argument, no
// space, no NaN, no overflow, no underflow to zero). strconv accepts the
// same decimal and infinity forms; it also accepts '_' between digits,
// refused here, and takes hexadecimal only with a p exponent ("0x1p4",
// where strtod also takes "0x10").
func parseScore(b []byte) (float64, bool) {
	for _, ch := range b {
		if ch == '_' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != f {
		return 0, false
	}
	if f == 0 && !zeroMantissa(b) {
		return 0, false // underflow: strtod reports ERANGE, Redis refuses
	}
	return f, true
}

// zeroMantissa reports whether the digits of a number before its exponent
// are all zero.
func zeroMantissa(b []byte) bool {
	hex := false
	for _, ch := range b {
		switch {
		case ch == 'x' || ch == 'X':
			hex = true
		case !hex && (ch == 'e' || ch == 'E'), hex && (ch == 'p' || ch == 'P'):
			return true
		case '1' <= ch && ch <= '9', hex && 'a' <= ch|0x20 && ch|0x20 <= 'f':
			return false
		}
	}
	return true
}
