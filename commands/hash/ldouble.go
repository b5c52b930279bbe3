package main

import (
	"math/big"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
)

// HINCRBYFLOAT works as Redis does on x86-64: in 80-bit long double (64-bit
// mantissa, exponent range up to 2^16383), parsing with strtold's grammar
// and printing with "%.17Lf" minus trailing zeros. math/big at 64 bits of
// precision, rounding to nearest even, reproduces that, so replies match
// Redis byte for byte (0.1+0.2 is "0.3", 1e400 is accepted). Denormals keep
// 64 bits here where the x87 keeps fewer; the difference is below anything
// "%.17Lf" prints.

const (
	ldPrec = 64
	// ldMaxExp and ldMinExp bound big.Float.MantExp (x = m × 2^e with
	// 0.5 <= |m| < 1) for a finite, non-zero long double: the largest is
	// below 2^16384, the smallest denormal 2^-16445.
	ldMaxExp = 16384
	ldMinExp = -16444
	// maxLDChars is Redis's MAX_LONG_DOUBLE_CHARS: longer input is refused.
	maxLDChars = 5 * 1024
	// expClamp bounds a decimal exponent: with at most maxLDChars digits,
	// anything beyond it overflows or underflows either way, and clamping
	// keeps the power of ten small.
	expClamp = 20000
)

// parseLongDouble parses b into f as Redis's string2ld does: strtold must
// consume every byte (so no NUL, no leading or trailing space), the value
// must not overflow or underflow to zero, and NaN is refused. inf reports
// an infinity, which strtold accepts and callers refuse with their own
// message.
func parseLongDouble(f *big.Float, b []byte) (inf, ok bool) {
	f.SetPrec(ldPrec).SetMode(big.ToNearestEven)
	if len(b) == 0 || len(b) >= maxLDChars {
		return false, false
	}
	i := 0
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		i++
	}
	if isInf(b[i:]) {
		return true, true
	}
	hex := len(b)-i > 2 && b[i] == '0' && (b[i+1]|0x20) == 'x' && hasHexMantissa(b[i+2:])
	if hex {
		i += 2
	}
	mantStart := i
	digits := 0
	for i < len(b) && isDigitIn(b[i], hex) {
		i++
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && isDigitIn(b[i], hex) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false, false
	}
	mantEnd := i
	var exp int64
	expCh := byte('e')
	if hex {
		expCh = 'p'
	}
	if i < len(b) && b[i]|0x20 == expCh {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return false, false
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if exp < 4*expClamp {
				exp = exp*10 + int64(b[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(b) {
		return false, false
	}
	limit := int64(expClamp)
	if hex {
		limit *= 4 // binary exponent
	}
	exp = max(-limit, min(limit, exp))

	// A clean literal for math/big: sign, mantissa, clamped exponent.
	lit := make([]byte, 0, mantEnd-mantStart+16)
	if neg {
		lit = append(lit, '-')
	}
	if hex {
		lit = append(lit, "0x"...)
	}
	lit = append(lit, b[mantStart:mantEnd]...)
	lit = append(lit, expCh)
	lit = strconv.AppendInt(lit, exp, 10)
	if _, _, err := f.Parse(string(lit), 0); err != nil {
		return false, false
	}
	if f.Sign() == 0 {
		return false, true // an exact zero, not an underflow
	}
	if e := f.MantExp(nil); e > ldMaxExp || e < ldMinExp {
		return false, false // ERANGE: overflow, or underflow to zero
	}
	return false, true
}

// isInf reports whether s is "inf" or "infinity", any case.
func isInf(s []byte) bool {
	word := func(w string) bool {
		if len(s) != len(w) {
			return false
		}
		for i := range len(s) {
			if s[i]|0x20 != w[i] {
				return false
			}
		}
		return true
	}
	return word("inf") || word("infinity")
}

// hasHexMantissa reports whether s starts with a hex mantissa ("1", ".8",
// "a.b"): only then does strtold read "0x" as a hex prefix.
func hasHexMantissa(s []byte) bool {
	if len(s) > 0 && s[0] == '.' {
		s = s[1:]
	}
	return len(s) > 0 && isDigitIn(s[0], true)
}

func isDigitIn(ch byte, hex bool) bool {
	if ch >= '0' && ch <= '9' {
		return true
	}
	return hex && ch|0x20 >= 'a' && ch|0x20 <= 'f'
}

// ldOverflows reports whether a sum rounded to 64 bits is beyond the long
// double range (the x87 would make it infinite).
func ldOverflows(f *big.Float) bool {
	return f.Sign() != 0 && f.MantExp(nil) > ldMaxExp
}

// appendLongDouble formats f as Redis's ld2string in LD_STR_HUMAN mode:
// "%.17Lf", trailing zeros and a trailing point removed, "-0" as "0".
func appendLongDouble(dst []byte, f *big.Float) []byte {
	start := len(dst)
	return kit.TrimLongDouble(f.Append(dst, 'f', 17), start)
}
