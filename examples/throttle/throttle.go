package main

import (
	"math"
	"strconv"
	"time"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		// redis-cell registers its command with arity -1 and checks the
		// argument count itself; so does this one, with its error text.
		Name: "cl.throttle", Arity: -1, Flags: []string{"write"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Rate-limits an action with GCRA: CL.THROTTLE key max_burst count_per_period period [quantity].",
		Run:     runThrottle,
	})
}

// now is the clock, in Unix nanoseconds. Tests replace it.
var now = func() int64 { return time.Now().UnixNano() }

const (
	typeTag = "throttle"

	// maxAttempts bounds the read → generation-checked write loop, as
	// redis-cell's MAX_CAS_ATTEMPTS (5 retries after the first attempt).
	maxAttempts = 6

	// maxTTL is the longest record TTL the store keeps (Aerospike refuses
	// more than ten years).
	maxTTL = 10 * 365 * 24 * 3600

	second = int64(time.Second)
)

// tag is the type-tag value. It is built once: codec.Str allocates, and
// the hot path should not.
var tag = codec.Str(typeTag)

// Error texts, as redis-cell writes them (its error code is "Cell").
const (
	errUsage    = "Cell error: Usage: cl.throttle <key> <max_burst> <count per period> <period> [<quantity>]"
	errZeroRate = "Cell error: Zero rates are not supported"
	errAttempts = "Cell error: Failed to update rate limit after 5 attempts"
	errNotInt   = "Cell error: Couldn't parse as integer: "
	errWrongTyp = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errTooLong  = "ERR respike: this throttle would need its key kept more than 10 years, the store's limit"
	errCorrupt  = "ERR respike: the throttle record holds no arrival time"
)

// The command's state between steps lives in Ctx.N, not in closures: a
// step is a plain function, so chaining steps allocates nothing.
const (
	nInterval   = iota // emission interval (ns): the time one unit of quantity costs
	nTolerance         // delay variation tolerance (ns): the bucket's size
	nIncrement         // interval × quantity (ns)
	nLimit             // max_burst + 1
	nAttempts          // read → write attempts so far
	nRemaining         // reply field 3, computed before the write
	nResetAfter        // reply field 5 (ns), computed before the write
)

// runThrottle parses the arguments into Ctx.N and reads the key's state.
func runThrottle(c *sdk.Ctx) {
	if c.NArg() != 5 && c.NArg() != 6 {
		c.Error(errUsage)
		return
	}
	// max_burst, count, period, quantity: parsed in order, so that the
	// first bad one is the one reported.
	p := [4]int64{3: 1}
	for i := 2; i < c.NArg(); i++ {
		n, ok := parseInt(c.Arg(i))
		if !ok {
			c.Error(errNotInt + string(c.Arg(i)))
			return
		}
		p[i-2] = n
	}
	burst, count, period, quantity := p[0], p[1], p[2], p[3]

	// redis-cell's arithmetic, including its wrap-around on absurd inputs.
	periodNs := period * second
	if count == 0 || periodNs == 0 {
		c.Error(errZeroRate)
		return
	}
	interval := saturate(float64(periodNs) / float64(count))
	if interval == 0 {
		c.Error(errZeroRate) // more than one unit per nanosecond
		return
	}
	c.N[nInterval] = interval
	c.N[nTolerance] = interval * (burst + 1)
	c.N[nIncrement] = interval * quantity
	c.N[nLimit] = burst + 1
	readState(c)
}

// readState is the first request of each attempt: the TAT and, in the
// result, the record's generation.
func readState(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(typeTag).Get(codec.BinValue)
	c.Exec(decide)
}

// decide runs GCRA on the state read and either replies (limited, or
// nothing to store) or writes the new TAT guarded by the generation read.
func decide(c *sdk.Ctx) {
	r := c.Result(0)
	exists := false
	var stored int64
	switch r.Code {
	case codec.OK:
		v := r.Value(0)
		if v.Kind != codec.KindInt {
			c.Error(errCorrupt)
			return
		}
		exists, stored = true, v.Int
	case codec.NotFound:
	case codec.FilteredOut:
		c.Error(errWrongTyp)
		return
	default:
		storeError(c, r)
		return
	}
	gen := r.Generation

	t := now()
	// A TAT in the past is a key redis-cell would have seen expire.
	tat := max(stored, t)
	interval, tolerance, increment := c.N[nInterval], c.N[nTolerance], c.N[nIncrement]
	newTAT := tat + increment

	// Limited when the new TAT is more than the tolerance ahead of now.
	if diff := t - (newTAT - tolerance); diff < 0 {
		retryAfter := -second // a request larger than the bucket never fits
		if increment <= tolerance {
			retryAfter = -diff
		}
		reply(c, true, remaining(tolerance, tat-t, interval), retryAfter, tat-t)
		return
	}

	ttl := newTAT - t
	c.N[nRemaining] = remaining(tolerance, ttl, interval)
	c.N[nResetAfter] = ttl
	switch {
	case exists && newTAT == stored:
		// quantity 0 ("peek"): nothing changes.
		allowed(c)
		return
	case ttl <= 0 && !exists:
		allowed(c)
		return
	case ttl <= 0:
		// A refund moved the TAT into the past: the key is as good as
		// expired.
		c.Record(c.Arg(1)).Guard(typeTag).Generation(gen).Delete()
	default:
		secs := ceilSeconds(ttl)
		if secs > maxTTL {
			c.Error(errTooLong)
			return
		}
		call := c.Record(c.Arg(1)).Guard(typeTag).Expire(secs).
			Put(codec.BinType, tag).Put(codec.BinValue, codec.Int(newTAT))
		if exists {
			call.Generation(gen) // fails if anyone wrote since our read
		} else {
			call.Exists(codec.ExistsCreateOnly) // fails if anyone created it since
		}
	}
	c.Exec(afterWrite)
}

// afterWrite replies, or starts another attempt when someone else updated
// the key between our read and our write.
func afterWrite(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		allowed(c)
	case codec.GenerationError, codec.Exists:
		c.N[nAttempts]++
		if c.N[nAttempts] >= maxAttempts {
			c.Error(errAttempts)
			return
		}
		readState(c)
	case codec.FilteredOut:
		c.Error(errWrongTyp)
	default:
		storeError(c, r)
	}
}

// allowed replies for an allowed action, once its state is stored.
func allowed(c *sdk.Ctx) {
	reply(c, false, c.N[nRemaining], -second, c.N[nResetAfter])
}

// reply writes redis-cell's five integers; durations are in nanoseconds.
func reply(c *sdk.Ctx, limited bool, remaining, retryAfter, resetAfter int64) {
	w := c.Reply()
	w.Array(5)
	if limited {
		w.Int(1)
	} else {
		w.Int(0)
	}
	w.Int(c.N[nLimit])
	w.Int(remaining)
	w.Int(roundSeconds(retryAfter))
	w.Int(roundSeconds(resetAfter))
}

// remaining is how many more units fit now, as redis-cell computes it:
// the free part of the tolerance in whole intervals, at microsecond
// precision.
func remaining(tolerance, ttl, interval int64) int64 {
	next := tolerance - ttl
	if next <= -interval {
		return 0
	}
	return saturate(float64(next/1000) / float64(interval/1000))
}

// roundSeconds turns a duration into whole seconds as redis-cell replies
// them: truncated, plus one when a millisecond part remains.
func roundSeconds(ns int64) int64 {
	s := ns / second
	if ns%second/int64(time.Millisecond) > 0 {
		s++
	}
	return s
}

// ceilSeconds is a positive duration in whole seconds, rounded up: a
// record TTL that never ends before the TAT.
func ceilSeconds(ns int64) int64 { return (ns-1)/second + 1 }

// saturate converts as Rust's `as i64` does: saturating, NaN to 0. Go
// leaves out-of-range conversions undefined.
func saturate(f float64) int64 {
	switch {
	case f != f:
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// parseInt parses as Rust's i64::from_str, which redis-cell uses: an
// optional sign, decimal digits, nothing else, within int64.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		u = u*10 + uint64(ch-'0')
		if u > 1<<63 {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true // -(1<<63) wraps to MinInt64, as intended
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// storeError answers a store failure the command has no meaning for.
func storeError(c *sdk.Ctx, r *codec.Result) {
	c.Error("ERR respike: store error (code " + strconv.Itoa(int(r.Code)) + "): " + r.Msg)
}
