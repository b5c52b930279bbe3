package main

import (
	"math"
	"math/big"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hincrby", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.",
		Run:     runHIncrBy,
	}, sdk.Command{
		Name: "hincrbyfloat", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.6.0",
		Summary: "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.",
		Run:     runHIncrByFloat,
	})
}

const (
	errOverflow   = "ERR increment or decrement would overflow"
	errHashNotInt = "ERR hash value is not an integer"
	errHashNotFlt = "ERR hash value is not a float"
	errNaNInf     = "ERR value is NaN or Infinity"
	errProduceInf = "ERR increment would produce NaN or Infinity"
)

// HINCRBY is one atomic map increment: integer values are stored as
// integers, and both stores refuse an increment that would overflow
// (codec.Overflow) without writing. A field holding anything else makes the
// increment fail; the field is then read to tell "not an integer" from a
// store failure, and a canonical integer that happens to be stored as bytes
// (written by something other than this module) is incremented by
// read-modify-write under the generation. Ctx.N[0] holds the delta, N[1]
// the attempts.

func runHIncrBy(c *sdk.Ctx) {
	delta, ok := kit.ParseInt(c.Arg(3))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	c.N[0] = delta
	hincrAtomic(c)
}

func hincrAtomic(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		Put(codec.BinType, tagHash).
		MapIncrement(codec.BinValue, codec.MapOrderKey, codec.Bytes(c.Arg(2)), codec.Int(c.N[0]))
	c.Exec(hincrAtomicDone)
}

func hincrAtomicDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if v := r.Value(1); v.Kind == codec.KindInt {
			c.Reply().Int(v.Int)
			return
		}
		kit.StoreError(c, r)
	case codec.Overflow:
		c.Error(errOverflow)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	case codec.BackendUnavail, codec.Timeout:
		kit.StoreError(c, r)
	default:
		// Most likely the field holds a non-integer; find out.
		c.N[2] = int64(r.Code)
		hincrRead(c)
	}
}

// hincrRead reads the field and the record's generation.
func hincrRead(c *sdk.Ctx) {
	readField(c, hincrSlow)
}

func hincrSlow(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		// Deleted since: the atomic path will create it.
		hincrRetry(c, hincrAtomic)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	vals := r.Value(0).List
	if len(vals) == 0 {
		hincrRetry(c, hincrAtomic)
		return
	}
	v := vals[0]
	if v.Kind == codec.KindInt {
		// Not the value's fault after all: the failure was the store's.
		kit.StoreError(c, &codec.Result{Code: codec.Code(c.N[2])})
		return
	}
	var tmp [24]byte
	s := kit.AppendStr(tmp[:0], v)
	old, ok := kit.ParseInt(s)
	if !ok {
		c.Error(errHashNotInt)
		return
	}
	delta := c.N[0]
	if (delta > 0 && old > math.MaxInt64-delta) || (delta < 0 && old < math.MinInt64-delta) {
		c.Error(errOverflow)
		return
	}
	c.N[3] = old + delta
	kv := c.Values(2)
	kv[0] = codec.Bytes(c.Arg(2))
	kv[1] = codec.Int(c.N[3])
	c.Record(c.Arg(1)).Guard(codec.TypeHash).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).
		MapPut(codec.BinValue, putFlags, kv)
	c.Exec(hincrSlowDone)
}

func hincrSlowDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(c.N[3])
	case codec.GenerationError, codec.NotFound:
		hincrRetry(c, hincrAtomic)
	default:
		kit.GuardFailed(c, r)
	}
}

// hincrRetry runs step again unless kit.RetryFor has passed.
func hincrRetry(c *sdk.Ctx, step sdk.Step) {
	if !kit.Again(c) {
		c.Error(kit.Contention)
		return
	}
	step(c)
}

// HINCRBYFLOAT computes as Redis does on x86-64, in 80-bit long double (see
// ldouble.go), so replies match Redis byte for byte. It is a
// read-modify-write: read the field and the record's generation, compute,
// then write under that generation (or create-only when the key was
// missing), retrying when another client wrote in between. The result is
// kept in Ctx.B; a write that lost the race reads again, within kit.RetryFor.

func runHIncrByFloat(c *sdk.Ctx) {
	var incr big.Float
	inf, ok := parseLongDouble(&incr, c.Arg(3))
	if !ok {
		c.Error(kit.NotFloat)
		return
	}
	if inf {
		c.Error(errNaNInf)
		return
	}
	hincrFloatRead(c)
}

func hincrFloatRead(c *sdk.Ctx) {
	readField(c, hincrFloatCompute)
}

func hincrFloatCompute(c *sdk.Ctx) {
	r := c.Result(0)
	exists := false
	switch r.Code {
	case codec.OK:
		exists = true
	case codec.NotFound:
	default:
		kit.GuardFailed(c, r)
		return
	}
	var base, incr big.Float
	base.SetPrec(ldPrec)
	if exists {
		if vals := r.Value(0).List; len(vals) > 0 {
			var tmp [32]byte
			inf, ok := parseLongDouble(&base, kit.AppendStr(tmp[:0], vals[0]))
			if !ok {
				c.Error(errHashNotFlt)
				return
			}
			if inf {
				c.Error(errProduceInf)
				return
			}
		}
	}
	parseLongDouble(&incr, c.Arg(3)) // checked in runHIncrByFloat
	sum := new(big.Float).SetPrec(ldPrec).SetMode(big.ToNearestEven).Add(&base, &incr)
	if ldOverflows(sum) {
		c.Error(errProduceInf)
		return
	}
	c.B = appendLongDouble(c.B[:0], sum)
	kv := c.Values(2)
	kv[0] = codec.Bytes(c.Arg(2))
	kv[1] = kit.StrValue(c.B)
	call := c.Record(c.Arg(1)).Guard(codec.TypeHash)
	if exists {
		call.Generation(r.Generation).Exists(codec.ExistsUpdateOnly)
	} else {
		call.Exists(codec.ExistsCreateOnly)
	}
	call.Put(codec.BinType, tagHash).MapPut(codec.BinValue, putFlags, kv)
	c.Exec(hincrFloatDone)
}

func hincrFloatDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(c.B)
	case codec.GenerationError, codec.Exists, codec.NotFound:
		hincrRetry(c, hincrFloatRead)
	default:
		kit.GuardFailed(c, r)
	}
}
