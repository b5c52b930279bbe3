package kit

import (
	"math"

	sdk "github.com/respike/respike/guest-sdk"
)

// MaxScanIndex caps the index and count an HSCAN/SSCAN-style command sends
// to the store: no map is that large, and it keeps the numbers far from any
// overflow in the backend.
const MaxScanIndex = 1 << 40

// Option errors of an HSCAN/SSCAN-style command, kept as numbers so a
// command can carry one in Ctx.N until the key is known to exist (Redis
// checks the key before the options).
const (
	ScanOptOK = iota
	ScanOptSyntax
	ScanOptNotInt
)

// ScanOpts are the options of an HSCAN/SSCAN-style command.
type ScanOpts struct {
	Count    int64 // COUNT, 10 when absent
	Match    int64 // index of the MATCH pattern argument, 0 for none or "*"
	NoValues bool  // NOVALUES given (only where allowed)
	Err      int64 // ScanOptOK or the first option error
}

// ParseScanOpts parses MATCH, COUNT and (when novalues is allowed) NOVALUES
// from argument from on, as Redis's scanGenericCommand does, stopping at
// the first error.
func ParseScanOpts(c *sdk.Ctx, from int, novalues bool) ScanOpts {
	o := ScanOpts{Count: 10}
	for i := from; i < c.NArg(); {
		more := c.NArg() - i
		opt := c.Arg(i)
		switch {
		case Fold(opt, "count") && more >= 2:
			n, ok := ParseInt(c.Arg(i + 1))
			if !ok {
				o.Err = ScanOptNotInt
				return o
			}
			if n < 1 {
				o.Err = ScanOptSyntax
				return o
			}
			o.Count = n
			i += 2
		case Fold(opt, "match") && more >= 2:
			p := c.Arg(i + 1)
			if len(p) == 1 && p[0] == '*' {
				o.Match = 0 // matches everything
			} else {
				o.Match = int64(i + 1)
			}
			i += 2
		case novalues && Fold(opt, "novalues"):
			o.NoValues = true
			i++
		default:
			o.Err = ScanOptSyntax
			return o
		}
	}
	return o
}

// ScanOptError is the error text for a ScanOpts.Err, "" for ScanOptOK.
func ScanOptError(code int64) string {
	switch code {
	case ScanOptSyntax:
		return Syntax
	case ScanOptNotInt:
		return NotInt
	}
	return ""
}

// ParseCursor parses an HSCAN/SSCAN cursor as Redis's
// parseScanCursorOrReply does, with strtoul: no leading space, an optional
// sign (a negative value wraps), and everything up to the first NUL
// consumed; the empty string is 0.
func ParseCursor(b []byte) (uint64, bool) {
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

// NextCursor is the cursor after a page of count items from cursor in a map
// of size items: 0 once the page reaches the end.
func NextCursor(cursor, count uint64, size int64) uint64 {
	if size <= 0 || cursor >= uint64(size) || count >= uint64(size)-cursor {
		return 0
	}
	return cursor + count
}

// EmptyScan writes the reply of a scan over a missing key: cursor 0, no
// items.
func EmptyScan(c *sdk.Ctx) {
	w := c.Reply()
	w.Array(2)
	w.BulkString("0")
	w.Array(0)
}
