package main

import (
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "scan", Arity: -2, Flags: []string{"readonly"},
		Group: "generic", Since: "1.0.0",
		Summary: "Iterates over the key names in the database.",
		Run:     runScan,
	})
}

// SCAN options in Ctx.N: the argument index of the MATCH pattern and of
// the TYPE name (0 when absent).
const (
	scanMatch = 0
	scanType  = 1
)

// runScan: SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. One page
// of the store's scan per call; MATCH and TYPE filter that page in the
// module, so a page may come back empty with a non-zero cursor, as in
// Redis. The cursor is the store's (opaque, stable across calls).
func runScan(c *sdk.Ctx) {
	cursor, ok := parseCursor(c.Arg(1))
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	count := int64(10)
	for i := 2; i < c.NArg(); i += 2 {
		opt, more := c.Arg(i), i+1 < c.NArg()
		switch {
		case kit.Fold(opt, "count") && more:
			n, ok := kit.ParseInt(c.Arg(i + 1))
			if !ok {
				c.Error(kit.NotInt)
				return
			}
			if n < 1 {
				c.Error(kit.Syntax)
				return
			}
			count = n
		case kit.Fold(opt, "match") && more:
			c.N[scanMatch] = int64(i + 1)
		case kit.Fold(opt, "type") && more:
			c.N[scanType] = int64(i + 1)
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	c.Scan(codec.ScanArgs{Cursor: cursor, Count: count, WithType: c.N[scanType] != 0}, scanDone)
}

// parseCursor parses a cursor as Redis does with strtoul: optional sign
// (a negative number wraps), decimal digits, no leading space, no junk, no
// overflow. An empty string is cursor 0.
func parseCursor(b []byte) (uint64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
		if len(b) == 0 {
			return 0, false // strtoul converts nothing; the sign is left over
		}
	}
	if len(b) == 0 {
		return 0, true
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// keep reports whether key i of the page passes MATCH and TYPE.
func keep(c *sdk.Ctx, p *codec.ScanPage, i int) bool {
	if m := c.N[scanMatch]; m != 0 {
		if !kit.Match(c.Arg(int(m)), p.Keys[i]) {
			return false
		}
	}
	if t := c.N[scanType]; t != 0 {
		typ := codec.TypeString // a record without a tag reads as a string (see TYPE)
		if i < len(p.Types) && len(p.Types[i]) > 0 {
			typ = string(p.Types[i])
		}
		// Redis compares with strcasecmp; an unknown type matches nothing.
		if !foldEqual(c.Arg(int(t)), typ) {
			return false
		}
	}
	return true
}

// foldEqual compares ASCII case-insensitively both ways (strcasecmp).
func foldEqual(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 'a' - 'A'
		}
		if y >= 'A' && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func scanDone(c *sdk.Ctx) {
	p := c.Page()
	n := 0
	for i := range p.Keys {
		if keep(c, p, i) {
			n++
		}
	}
	w := c.Reply()
	w.Array(2)
	var tmp [24]byte
	w.Bulk(strconv.AppendUint(tmp[:0], p.Cursor, 10))
	w.Array(n)
	for i := range p.Keys {
		if keep(c, p, i) {
			w.Bulk(p.Keys[i])
		}
	}
}
