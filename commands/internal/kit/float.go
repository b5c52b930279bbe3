package kit

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
)

// ParseDouble parses a float argument (a score, a coordinate, a radius) as Redis's string2d does (strtod, the whole
// argument, no leading space, no NaN, no overflow or underflow to zero).
func ParseDouble(b []byte) (float64, bool) {
	if f, ok := plainDecimal(b); ok {
		return f, true
	}
	if len(b) == 0 || IsSpace(b[0]) {
		return 0, false
	}
	f, ok := Strtod(b)
	if ok && f == 0 && underflows(b) {
		return 0, false // strtod's ERANGE with a zero result
	}
	return f, ok
}

// underflows reports whether a number that parsed as 0 has a non-zero
// digit before its exponent: it underflowed.
func underflows(b []byte) bool {
	hex := false
	for _, ch := range b {
		switch {
		case ch == 'x' || ch == 'X':
			hex = true
		case ch >= '1' && ch <= '9':
			return true
		case hex && ((ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F')):
			return true
		case ch == 'p' || ch == 'P' || (!hex && (ch == 'e' || ch == 'E')):
			return false
		}
	}
	return false
}

// IsSpace is C's isspace in the C locale.
func IsSpace(ch byte) bool {
	return ch == ' ' || (ch >= '\t' && ch <= '\r')
}

// Strtod parses all of b as C's strtod would (decimal or hexadecimal, inf,
// infinity), refusing NaN and results that overflow or underflow to zero.
func Strtod(b []byte) (float64, bool) {
	if n, ok := ParseInt(b); ok && n >= -1<<53 && n <= 1<<53 {
		// Exact as a float, and much cheaper than ParseFloat in
		// WebAssembly.
		return float64(n), true
	}
	if f, ok := shortDecimal(b); ok {
		return f, true
	}
	s := string(b)
	body := s
	if len(body) > 0 && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	for i := 0; i < len(s); i++ {
		// Go's parser takes underscores between digits, C's does not.
		if s[i] == '_' {
			return 0, false
		}
	}
	if len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') {
		hasP := false
		for i := 2; i < len(body); i++ {
			if body[i] == 'p' || body[i] == 'P' {
				hasP = true
			}
		}
		if !hasP {
			s += "p0" // C allows a hexadecimal float without an exponent
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// pow10 holds the powers of ten a float holds exactly.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal parses a plain decimal of at most 15 digits with a point
// ([+-]digits.digits, no exponent), such as a coordinate: its digits make
// an integer below 2^53 and its point a power of ten up to 10^15, both
// exact as floats, so their quotient is the correctly rounded value, as
// strtod's and ParseFloat's (Clinger's fast path, which ParseFloat takes
// too, after work that costs more than the parse in WebAssembly). Anything
// else reports false.
func shortDecimal(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg, i = b[0] == '-', 1
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(b); i++ {
		ch := b[i]
		switch {
		case ch >= '0' && ch <= '9':
			m = m*10 + uint64(ch-'0')
			digits++
			if point {
				frac++
			}
		case ch == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if !point || digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// plainDecimal is ParseDouble's fast path, for the arguments clients
// send most (coordinates, radii, scores): a sign, at most 15 digits and at
// most one point ([+-]digits[.digits], no exponent), whose value it
// computes as shortDecimal does, exactly. Every byte goes through one
// branch-free loop body (a guest pays per basic block executed), and an
// integer is not tried first as a separate parse. Anything else reports
// false, for ParseDouble's general path. Its results are ParseDouble's:
// no space, no underflow (a zero is all zero digits), "-0" is -0.
func plainDecimal(b []byte) (float64, bool) {
	n := len(b)
	if n == 0 || n > 17 {
		return 0, false
	}
	neg := b2u(b[0] == '-')
	sign := neg | b2u(b[0] == '+')
	if body := b[sign:]; len(body) >= 8 && len(body) <= 16 {
		m, frac, ok := decimalWords(body)
		if !ok {
			return 0, false
		}
		f := float64(m) / pow10[frac]
		return f * (1 - 2*float64(neg)), true
	}
	var m, digits, frac, points, bad uint64
	for _, ch := range b[sign:] {
		d := uint64(ch) - '0'
		dig := b2u(d <= 9)
		pt := b2u(ch == '.')
		bad |= 1 ^ (dig | pt)
		m = m*(1+9*dig) + d*dig
		digits += dig
		frac += dig & points // points is 0 or 1 while bad is 0
		points += pt
	}
	if bad|points>>1 != 0 || digits-1 >= 15 { // digits-1 wraps for none
		return 0, false
	}
	f := float64(m) / pow10[frac&15]
	return f * (1 - 2*float64(neg)), true
}

// pow10u holds the powers of ten below 2^64 that decimalWords divides by.
// It has 32 entries so that an index masked with 31 needs no bounds
// check; those past 10^16 are never read.
var pow10u = [32]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16}

// Eight bytes of one value each, for the byte-parallel tests of
// decimalWords.
const (
	ones8   = 0x0101010101010101
	zeros8  = 0x3030303030303030 // '0' × 8
	points8 = 0x2e2e2e2e2e2e2e2e // '.' × 8
	lows8   = 0x7f7f7f7f7f7f7f7f
	highs8  = 0x8080808080808080
	hinib8  = 0xf0f0f0f0f0f0f0f0
	sixes8  = 0x0606060606060606
)

// decimalWords is plainDecimal for an unsigned body of 8 to 16 bytes (a
// coordinate such as 13.361389, most scores): its digits as an integer
// and the count of digits after the point, or false when it is not
// digits with at most one point and at most 15 digits. It reads the
// body as two 64-bit words and works on their eight bytes at once: the
// point found by a zero-byte test, turned into a '0', every byte checked
// to be a digit, the sixteen digits (zero-padded in front) made an
// integer with three multiplications per word; the point's '0' is then
// taken out arithmetically. plainDecimal's loop cost ~110 instructions a
// byte in WebAssembly, where this is one pass without a loop.
func decimalWords(body []byte) (m uint64, frac int, ok bool) {
	l := len(body)
	lo := binary.LittleEndian.Uint64(body)
	// Bytes 8..l-1 in the low bytes of hi, '0's above them (a shift by
	// 64 or more is 0 in Go: l = 8 takes none, l = 16 fills none).
	hi := binary.LittleEndian.Uint64(body[l-8:])>>(8*(16-l)) | zeros8<<(8*(l-8))
	// The point: the bytes equal to '.' (exactly, without carries
	// between bytes), as 0x01 at each.
	plo, phi := eqBytes(lo, points8), eqBytes(hi, points8)
	points := bits.OnesCount64(plo) + bits.OnesCount64(phi)
	lo, hi = lo+2*plo, hi+2*phi // '.' + 2 = '0'
	if !digits8(lo) || !digits8(hi) || points > 1 || l-points > 15 {
		return 0, 0, false
	}
	// The l bytes, '0'-padded in front to sixteen: the 128-bit hi:lo
	// shifted up by 16-l bytes.
	sh := uint(8 * (16 - l))
	top := lo<<sh | zeros8>>(64-sh)
	bot := hi<<sh | lo>>(64-sh)
	v := eight(top)*1e8 + eight(bot)
	if points == 0 {
		return v, 0, true
	}
	// D1.D2 read as D1 0 D2: v = D1·10^(f+1) + D2, where the digits are
	// D1·10^f + D2.
	q := bits.TrailingZeros64(plo) >> 3
	if plo == 0 {
		q = 8 + bits.TrailingZeros64(phi)>>3
	}
	frac = l - 1 - q
	d1 := v / pow10u[frac+1]
	return v - 9*d1*pow10u[frac], frac, true
}

// DecimalPair parses two arguments as ParseDouble would when both are
// what clients send as coordinates: an optional sign and a body of 8 to
// 16 bytes of at most 15 digits and at most one point (13.361389,
// -122.419415). It is decimalWords and plainDecimal's arithmetic for both
// in one function, without a call: in WebAssembly each of the three calls
// a coordinate took (ParseDouble, plainDecimal, decimalWords) cost more
// than its arithmetic. ok is false when either argument has another
// form; the caller then parses both with ParseDouble. The values are
// ParseDouble's, bit for bit: the digits make an integer below 2^53 and
// the point a power of ten up to 10^15, both exact, so their quotient is
// the correctly rounded value (Clinger's fast path).
func DecimalPair(a, b []byte) (x, y float64, ok bool) {
	s := a
	for k := 0; ; k++ {
		if len(s) == 0 {
			return 0, 0, false
		}
		neg := b2u(s[0] == '-')
		body := s[neg|b2u(s[0] == '+'):]
		l := len(body)
		if l < 8 || l > 16 {
			return 0, 0, false
		}
		// decimalWords, inline (see there). (Its tests folded into one
		// branch without && and || cost ~20 instructions more.)
		lo := binary.LittleEndian.Uint64(body)
		hi := binary.LittleEndian.Uint64(body[l-8:])>>(8*(16-l)) | zeros8<<(8*(l-8))
		plo, phi := eqBytes(lo, points8), eqBytes(hi, points8)
		points := bits.OnesCount64(plo) + bits.OnesCount64(phi)
		lo, hi = lo+2*plo, hi+2*phi
		if !digits8(lo) || !digits8(hi) || points > 1 || l-points > 15 {
			return 0, 0, false
		}
		sh := uint(8 * (16 - l))
		top := lo<<sh | zeros8>>(64-sh)
		bot := hi<<sh | lo>>(64-sh)
		m := eight(top)*1e8 + eight(bot)
		frac := 0
		if points != 0 {
			q := bits.TrailingZeros64(plo) >> 3
			if plo == 0 {
				q = 8 + bits.TrailingZeros64(phi)>>3
			}
			frac = (l - 1 - q) & 15 // at most 15: the masks drop bounds checks
			m -= 9 * (m / pow10u[(frac+1)&31]) * pow10u[frac]
		}
		f := float64(m) / pow10[frac&15] * (1 - 2*float64(neg))
		if k != 0 {
			return x, f, true
		}
		x, s = f, b
	}
}

// eqBytes has 0x01 at each byte of w equal to that byte of c, 0 elsewhere.
func eqBytes(w, c uint64) uint64 {
	x := w ^ c
	return ^((x & lows8) + lows8 | x) & highs8 >> 7
}

// digits8 reports whether the eight bytes of w are all ASCII digits.
func digits8(w uint64) bool {
	return w&hinib8 == zeros8 && (w+sixes8)&hinib8 == zeros8
}

// eight is the integer of the eight ASCII digits of w, the first in its
// low byte (simdjson's parse_eight_digits_unrolled).
func eight(w uint64) uint64 {
	w = (w & 0x0f0f0f0f0f0f0f0f) * 2561 >> 8
	w = (w & 0x00ff00ff00ff00ff) * 6553601 >> 16
	return (w & 0x0000ffff0000ffff) * 42949672960001 >> 32
}

// TrimLongDouble finishes Redis's ld2string in LD_STR_HUMAN mode on
// dst[start:], a number printed with "%.17Lf": it removes trailing zeros
// and a trailing point, and turns "-0" into "0".
func TrimLongDouble(dst []byte, start int) []byte {
	for dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	if string(dst[start:]) == "-0" {
		dst = append(dst[:start], '0')
	}
	return dst
}
