// Package kit holds the few helpers respike's built-in command modules share:
// Redis's error texts, the reply for store failures, Redis's strict integer
// parsing, the string form of stored values, and glob matching.
package kit

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// Redis error texts shared by several commands.
const (
	WrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	NotInt    = "ERR value is not an integer or out of range"
	Syntax    = "ERR syntax error"
	NotFloat  = "ERR value is not a valid float"
	// Contention answers a read-modify-write that kept losing the race for
	// a key for RetryFor.
	Contention = "ERR respike: the key kept changing during a read-modify-write; try again"
)

// Retries was the count limit of read-modify-write loops. The built-in
// modules now retry within RetryFor instead (see Again): a count limit made
// popular keys fail. Kept for modules written against it.
const Retries = 10

// MaxBuild caps the size of a value a module builds in its own memory
// (SETRANGE, APPEND on a numeric value). Aerospike refuses records over
// 8 MiB anyway, and building hundreds of MiB would exhaust the instance.
const MaxBuild = 16 << 20

// StoreError writes the reply for a call that ended with a code the command
// has no meaning for (backend failures, oversized records, guest bugs).
func StoreError(c *sdk.Ctx, r *codec.Result) { c.Error(StoreErrorText(r.Code, r.Msg)) }

// StoreErrorText is the error text for a failed call: it names the code so an
// operator can look it up, and says what the client can do. It is
// codec.StoreErrorText, which the host answers for a final answer's store
// error too: one function, so the two never differ.
func StoreErrorText(code codec.Code, msg string) string { return codec.StoreErrorText(code, msg) }

// ParseInt parses b as Redis's string2ll does: optional '-', no '+', no
// leading zeros (except "0" itself), no spaces, no "-0", within int64.
func ParseInt(b []byte) (int64, bool) {
	if len(b) <= 18 {
		return shortInt(b)
	}
	if len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	p := b
	if neg {
		p = b[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, ch := range p {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v *= 10
		if v > 1<<64-1-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// shortInt is ParseInt of at most 18 bytes, which cannot overflow: every
// byte goes through one branch-free loop body (a digit test that sets a
// flag, a multiply-add), where the general loop tests each byte and the
// bounds with branches: a guest pays per basic block executed, each
// branch a trip through its function's dispatch loop (docs/performance.md,
// "GEO and HLL, ninth pass").
func shortInt(b []byte) (int64, bool) {
	n := len(b)
	if n == 0 {
		return 0, false
	}
	neg := b2u(b[0] == '-')
	p := b[neg:]
	if len(p) == 0 || p[0] == '0' && n != 1 { // "-", a leading zero, "-0"
		return 0, false
	}
	var v, bad uint64
	for _, ch := range p {
		d := uint64(ch) - '0'
		bad |= b2u(d > 9)
		v = v*10 + d
	}
	v &= bad - 1     // 0 for an error
	m := -int64(neg) // all ones for a negative number
	return (int64(v) ^ m) - m, bad == 0
}

// B2I is 1 for true, 0 for false; Go compiles it to a select, no branch,
// in WebAssembly, where each branch costs a trip through the function's
// dispatch loop.
func B2I(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// b2u is B2I for the unsigned arithmetic of the branch-free parsers.
func b2u(b bool) uint64 { return uint64(B2I(b)) }

// StrValue makes the value of a string record: a canonical integer becomes
// an integer, so INCR works on it with one atomic add, anything else bytes.
// Both read back as the exact bytes given.
func StrValue(b []byte) codec.Value {
	if n, ok := ParseInt(b); ok {
		return codec.Int(n)
	}
	return codec.Bytes(b)
}

// AppendStr appends the Redis string form of a stored value to dst: bytes as
// they are, an integer in decimal. A missing bin is the empty string.
func AppendStr(dst []byte, v codec.Value) []byte {
	switch v.Kind {
	case codec.KindInt:
		return strconv.AppendInt(dst, v.Int, 10)
	case codec.KindFloat:
		return strconv.AppendFloat(dst, v.Float, 'g', -1, 64)
	}
	return append(dst, v.Bytes...)
}

// StrLen is the length of the Redis string form of a stored value.
func StrLen(v codec.Value) int {
	if v.Kind == codec.KindInt {
		var tmp [24]byte
		return len(strconv.AppendInt(tmp[:0], v.Int, 10))
	}
	if v.Kind == codec.KindFloat {
		var tmp [32]byte
		return len(AppendStr(tmp[:0], v))
	}
	return len(v.Bytes)
}

// ReplyStr writes a stored string value as a bulk string.
func ReplyStr(c *sdk.Ctx, v *codec.Value) {
	w := c.Reply()
	switch v.Kind {
	case codec.KindInt:
		w.BulkInt(v.Int)
	case codec.KindFloat:
		var tmp [32]byte
		w.Bulk(AppendStr(tmp[:0], *v))
	default:
		w.Bulk(v.Bytes)
	}
}

// Fold reports whether b equals the lower-case ASCII word s, ignoring case,
// as Redis's strcasecmp of an option name does.
func Fold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		ch := b[i]
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}

// NowMs is the command's start time in Unix milliseconds (sdk.Ctx.Now),
// the base of relative expiries and of TTL arithmetic.
func NowMs(c *sdk.Ctx) int64 { return c.Now() / 1e6 }

// SecondsUntil is the whole number of seconds from nowMs to whenMs, rounded
// up so that a key never expires earlier than asked (records keep whole
// seconds); 0 when whenMs is not in the future.
func SecondsUntil(whenMs, nowMs int64) int64 {
	d := whenMs - nowMs
	if d <= 0 {
		return 0
	}
	return d/1000 + min(d%1000, 1)
}

// Dedup marks which of keys a batch write should touch so that one request
// never writes a record twice: keep[i] is true for the first occurrence of
// each key, or for the last one when last is set (MSET: the last value
// wins). It returns nil when the keys are all distinct.
func Dedup(keys [][]byte, last bool) []bool {
	var keep []bool
	mark := func(i int) {
		if keep == nil {
			keep = make([]bool, len(keys))
			for j := range keep {
				keep[j] = true
			}
		}
		keep[i] = false
	}
	if len(keys) <= 16 {
		for i := range keys {
			for j := i + 1; j < len(keys); j++ {
				if string(keys[i]) == string(keys[j]) {
					if last {
						mark(i)
					} else {
						mark(j)
					}
				}
			}
		}
		return keep
	}
	seen := make(map[string]int, len(keys))
	for i, k := range keys {
		if prev, dup := seen[string(k)]; dup {
			if last {
				mark(prev)
				seen[string(k)] = i
			} else {
				mark(i)
			}
			continue
		}
		seen[string(k)] = i
	}
	return keep
}

// IntDone is the last step of a command that answers the integer its
// call's first op returned (HLEN, SCARD, SISMEMBER, LLEN): 0 for a missing
// key, the guard's error (GuardFailed) for a failed call.
//
// Where the store waits, IntRecipe says the same (sdk.Ctx.ExecFinal).
func IntDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(IntOf(r.Value(0)))
	case codec.NotFound:
		c.Reply().Int(0)
	default:
		GuardFailed(c, r)
	}
}

// IntRecipe is IntDone as a recipe: a command that ends with
// c.ExecFinal(kit.IntRecipe, kit.IntDone) is answered by the host where
// the store waits, without entering the module again.
var IntRecipe = codec.NewRecipe(0).
	Int(codec.OK, 0).
	Reply(codec.NotFound, ":0\r\n").
	Error(codec.FilteredOut, WrongType).
	Error(codec.BinTypeError, WrongType)
