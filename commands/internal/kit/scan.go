package kit

import (
	"math"

	sdk "github.com/respike/respike/guest-sdk"
)

// MaxScanIndex caps the count an HSCAN/SSCAN-style command sends to the
// store: no map is that large, and it keeps the numbers far from any
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

// Cursors of HSCAN/SSCAN/ZSCAN name a position in key space, not an
// index, so that removing an item before the cursor cannot shift an
// unread one behind it. A map's keys (members, fields) are blobs ordered
// bytewise, and a key's position is its first 8 bytes, zero-padded, read
// as a big-endian integer: a non-decreasing function of the key, so the
// keys at one position are a contiguous run of the map. Cursor c > 0
// starts at the smallest key at position c (CursorStart); 0 starts at the
// beginning and ends the scan. A page always ends after the whole run of
// its last key's position, and the next cursor is that position plus one
// (CursorAfter), so every page makes progress and no key present from
// start to end is ever passed over.

// keyPos is the position of key: its first 8 bytes, zero-padded, as a
// big-endian integer.
func keyPos(key []byte) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(key) {
			p |= uint64(key[i])
		}
	}
	return p
}

// SamePos reports whether keys a and b are at the same cursor position
// (share their first 8 bytes, zero-padded).
func SamePos(a, b []byte) bool { return keyPos(a) == keyPos(b) }

// CursorAfter is the cursor that resumes after every key at key's
// position: 0 when no key can follow (the position is the last).
func CursorAfter(key []byte) uint64 {
	p := keyPos(key)
	if p == math.MaxUint64 {
		return 0
	}
	return p + 1
}

// CursorStart appends to dst the smallest key at cursor position c: the 8
// big-endian bytes of c without trailing zero bytes (empty for 0). Every
// key at position c or after is >= it, every key before is < it.
func CursorStart(dst []byte, c uint64) []byte {
	n := 8
	for n > 0 && byte(c>>(64-8*n)) == 0 {
		n--
	}
	for i := range n {
		dst = append(dst, byte(c>>(56-8*i)))
	}
	return dst
}

// EmptyScan writes the reply of a scan over a missing key: cursor 0, no
// items.
func EmptyScan(c *sdk.Ctx) {
	w := c.Reply()
	w.Array(2)
	w.BulkString("0")
	w.Array(0)
}
