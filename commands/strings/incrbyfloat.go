package main

import (
	"math/big"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "incrbyfloat", Arity: 3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
		Run:     incrFloatRead,
	})
}

// INCRBYFLOAT computes as Redis does on x86-64: in 80-bit long double
// (64-bit mantissa, exponent up to 16383), parsing with strtold's grammar
// and printing with "%.17Lf" minus trailing zeros. math/big at 64 bits of
// precision reproduces that, so replies match Redis byte for byte (10.6,
// not 10.59999999999999964). The value is stored as bytes (or as an integer
// when the result is one), by read-modify-write guarded by the generation.

// incrFloatRead reads the value; a write that lost the race reads again,
// without a count limit, within kit.RetryFor.
func incrFloatRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(incrFloatCompute)
}

func incrFloatCompute(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK, codec.NotFound:
	case codec.FilteredOut:
		c.Error(kit.WrongType)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	base := new(big.Float).SetPrec(64)
	baseInf := false
	if r.Code == codec.OK {
		v := r.Value(0)
		var ok bool
		switch v.Kind {
		case codec.KindInt:
			base.SetInt64(v.Int)
		case codec.KindBytes, codec.KindStr, codec.KindNil:
			if baseInf, ok = parseLongDouble(base, v.Bytes); !ok {
				c.Error(kit.NotFloat)
				return
			}
		default:
			c.Error(kit.NotFloat)
			return
		}
	}
	incr := new(big.Float).SetPrec(64)
	incrInf, ok := parseLongDouble(incr, c.Arg(2))
	if !ok {
		c.Error(kit.NotFloat)
		return
	}
	sum := new(big.Float).SetPrec(64).Add(base, incr)
	if baseInf || incrInf || sum.MantExp(nil) > ldMaxExp {
		c.Error("ERR increment would produce NaN or Infinity")
		return
	}
	c.B = appendLongDouble(c.B[:0], sum)
	if r.Code == codec.OK {
		c.Record(c.Arg(1)).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).TTLKeep().
			Put(codec.BinValue, kit.StrValue(c.B))
	} else {
		c.Record(c.Arg(1)).Exists(codec.ExistsCreateOnly).TTLNever().
			Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.B))
	}
	c.Exec(incrFloatWritten)
}

func incrFloatWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(c.B)
	case codec.GenerationError, codec.NotFound, codec.Exists:
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		incrFloatRead(c)
	default:
		kit.StoreError(c, r)
	}
}

// x87 long double limits, as exponents e of m × 2^e with 0.5 <= |m| < 1
// (big.Float.MantExp): the largest finite value is below 2^16384, the
// smallest denormal is 2^-16445.
const (
	ldMaxExp = 16384
	ldMinExp = -16444
	// maxLDChars is Redis's MAX_LONG_DOUBLE_CHARS: longer input is refused.
	maxLDChars = 5 * 1024
)

// parseLongDouble parses b as Redis's string2ld does (strtold, then: no
// leading space, every byte consumed, no overflow, no underflow to zero, no
// NaN) into f. inf reports an infinity,
// which strtold accepts.
func parseLongDouble(f *big.Float, b []byte) (inf, ok bool) {
	if len(b) == 0 || len(b) >= maxLDChars {
		return false, false
	}
	// strtold stops at a NUL byte, and Redis refuses what it did not consume.
	for _, ch := range b {
		if ch == 0 {
			return false, false
		}
	}
	i := 0
	neg := false
	if b[0] == '+' || b[0] == '-' {
		neg = b[0] == '-'
		i++
	}
	rest := b[i:]
	if kit.Fold(rest, "inf") || kit.Fold(rest, "infinity") {
		return true, true
	}
	// Syntax check: strtold must consume everything.
	hex := len(rest) > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X')
	isDigit := func(ch byte) bool { return ch >= '0' && ch <= '9' }
	digit := isDigit
	expCh := byte('e')
	if hex {
		i += 2
		digit = func(ch byte) bool {
			return isDigit(ch) || (ch|0x20 >= 'a' && ch|0x20 <= 'f')
		}
		expCh = 'p'
	}
	mantStart := i
	nd := 0
	for i < len(b) && digit(b[i]) {
		i++
		nd++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && digit(b[i]) {
			i++
			nd++
		}
	}
	if nd == 0 {
		return false, false
	}
	mantEnd := i
	var exp int64
	if i < len(b) && b[i]|0x20 == expCh {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false, false
		}
		for ; i < len(b) && isDigit(b[i]); i++ {
			if exp < 1e6 { // clamp: far beyond the range either way
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
	// Rebuild a clean literal for math/big with the clamped exponent.
	var buf [maxLDChars + 32]byte
	s := buf[:0]
	if neg {
		s = append(s, '-')
	}
	if hex {
		s = append(s, "0x"...)
	}
	s = append(s, b[mantStart:mantEnd]...)
	s = append(s, expCh)
	s = appendInt(s, exp)
	if _, _, err := f.Parse(string(s), 0); err != nil {
		return false, false
	}
	if f.Sign() == 0 {
		return false, true
	}
	e := f.MantExp(nil)
	if e > ldMaxExp || e < ldMinExp {
		return false, false // ERANGE: overflow, or underflow to zero
	}
	return false, true
}

func appendInt(dst []byte, n int64) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

// appendLongDouble formats f as Redis's ld2string in LD_STR_HUMAN mode:
// "%.17Lf", trailing zeros and a trailing point removed, "-0" as "0".
func appendLongDouble(dst []byte, f *big.Float) []byte {
	start := len(dst)
	return kit.TrimLongDouble(f.Append(dst, 'f', 17), start)
}
