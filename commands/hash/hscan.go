package main

import (
	"math"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hscan", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.8.0",
		Summary: "Iterates over fields and values of a hash.",
		Run:     runHScan,
	})
}

// HSCAN pages through the key-ordered map: the cursor is the index of the
// next item, COUNT (default 10) the page size, and the cursor returned is 0
// after the last page. MATCH filters a page after it is read, as in Redis,
// so a page may come back short or empty before the end.
//
// Guarantees under concurrent writes differ from Redis's: a field added
// before the cursor shifts later items up, so an item may be returned
// twice (Redis allows that too); a field removed before the cursor shifts
// later items down, so one item present for the whole scan may be skipped
// (Redis never skips). Redis answers a small hash in one page whatever the
// COUNT; respike always pages by COUNT. NOVALUES (Redis 7.4) is supported.
//
// Ctx.N: [0] cursor (uint64 bits), [1] count, [2] MATCH argument index or
// 0, [3] NOVALUES, [4] an option error to report once the key is known to
// exist (Redis checks the key before the options).

const (
	scanOptOK = iota
	scanOptSyntax
	scanOptNotInt
)

// maxScanIndex caps the index and count sent to the store: no map is that
// large, and it keeps the numbers far from any overflow in the backend.
const maxScanIndex = 1 << 40

func runHScan(c *sdk.Ctx) {
	cursor, ok := parseCursor(c.Arg(2))
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	c.N[0] = int64(cursor)
	c.N[1] = 10
	c.N[4] = parseScanOpts(c, 3, true)
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		MapSize(codec.BinValue).
		MapGetByIndex(codec.BinValue, codec.ReturnKeyValue, int64(min(cursor, maxScanIndex)), min(c.N[1], maxScanIndex))
	c.Exec(hscanDone)
}

// parseScanOpts parses MATCH, COUNT and (when novalues is allowed) NOVALUES
// from argument from on, as Redis's scanGenericCommand does, and returns
// the first error.
func parseScanOpts(c *sdk.Ctx, from int, novalues bool) int64 {
	for i := from; i < c.NArg(); {
		more := c.NArg() - i
		opt := c.Arg(i)
		switch {
		case kit.Fold(opt, "count") && more >= 2:
			n, ok := kit.ParseInt(c.Arg(i + 1))
			if !ok {
				return scanOptNotInt
			}
			if n < 1 {
				return scanOptSyntax
			}
			c.N[1] = n
			i += 2
		case kit.Fold(opt, "match") && more >= 2:
			p := c.Arg(i + 1)
			if len(p) == 1 && p[0] == '*' {
				c.N[2] = 0 // matches everything
			} else {
				c.N[2] = int64(i + 1)
			}
			i += 2
		case novalues && kit.Fold(opt, "novalues"):
			c.N[3] = 1
			i++
		default:
			return scanOptSyntax
		}
	}
	return scanOptOK
}

// parseCursor parses a cursor as Redis's parseScanCursorOrReply does, with
// strtoul: no leading space, an optional sign (a negative value wraps), and
// everything up to the first NUL consumed; the empty string is 0.
func parseCursor(b []byte) (uint64, bool) {
	for i, ch := range b {
		if ch == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) == 0 {
		return 0, true
	}
	neg := false
	s := b
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false // ERANGE
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}

func hscanDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		emptyScan(c)
		return
	default:
		failed(c, r)
		return
	}
	if !scanOptError(c) {
		return
	}
	items := r.Value(1).List
	next := nextCursor(uint64(c.N[0]), uint64(c.N[1]), intOf(r.Value(0)))
	var pattern []byte
	if c.N[2] != 0 {
		pattern = c.Arg(int(c.N[2]))
	}
	n := 0
	for i := 0; i+1 < len(items); i += 2 {
		if pattern == nil || kit.Match(pattern, items[i].Bytes) {
			n++
		}
	}
	w := c.Reply()
	w.Array(2)
	var tmp [20]byte
	w.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	if c.N[3] != 0 {
		w.Array(n)
	} else {
		w.Array(2 * n)
	}
	for i := 0; i+1 < len(items); i += 2 {
		if pattern == nil || kit.Match(pattern, items[i].Bytes) {
			w.Bulk(items[i].Bytes)
			if c.N[3] == 0 {
				kit.ReplyStr(c, items[i+1])
			}
		}
	}
}

// scanOptError reports a deferred option error; false when it replied.
func scanOptError(c *sdk.Ctx) bool {
	switch c.N[4] {
	case scanOptSyntax:
		c.Error(kit.Syntax)
		return false
	case scanOptNotInt:
		c.Error(kit.NotInt)
		return false
	}
	return true
}

// nextCursor is the cursor after a page of count items from cursor in a map
// of size items: 0 once the page reaches the end.
func nextCursor(cursor, count uint64, size int64) uint64 {
	if size <= 0 || cursor >= uint64(size) || count >= uint64(size)-cursor {
		return 0
	}
	return cursor + count
}

// emptyScan is the reply for a missing key: cursor 0, no items.
func emptyScan(c *sdk.Ctx) {
	w := c.Reply()
	w.Array(2)
	w.BulkString("0")
	w.Array(0)
}
