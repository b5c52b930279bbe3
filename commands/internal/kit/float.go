package kit

import (
	"math"
	"strconv"
)

// ParseDouble parses a float argument (a score, a coordinate, a radius) as Redis's string2d does (strtod, the whole
// argument, no leading space, no NaN, no overflow or underflow to zero).
func ParseDouble(b []byte) (float64, bool) {
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
