package aerospike

import (
	"math"
	"math/big"
	"sync"
	"sync/atomic"

	as "github.com/aerospike/aerospike-client-go/v8"
	ParticleType "github.com/aerospike/aerospike-client-go/v8/types/particle_type"

	"github.com/respike/respike/guest-sdk/codec"
)

// guardExp is the WRONGTYPE guard: the record's type bin equals t, or the
// record has no type bin. Aerospike never applies a filter to a record that
// the write creates, so an absent record always passes.
func guardExp(t string) *as.Expression {
	return as.ExpOr(
		as.ExpEq(as.ExpStringBin(codec.BinType), as.ExpStringVal(t)),
		as.ExpNot(as.ExpBinExists(codec.BinType)),
	)
}

// packed returns e with its wire bytes computed once, so that a shared
// expression costs one copy per command instead of a tree walk.
func packed(e *as.Expression) *as.Expression {
	s, err := e.Base64()
	if err != nil {
		return e
	}
	p, err := as.ExpFromBase64(s)
	if err != nil {
		return e
	}
	return p
}

// guardCache holds packed guard expressions per type tag. Modules use a
// handful of tags; the cache stops growing at maxGuards.
type guardCache struct{ c readMostly[*as.Expression] }

const maxGuards = 256

func (c *guardCache) get(t string) *as.Expression {
	if e, ok := c.c.get(t); ok {
		return e
	}
	e := packed(guardExp(t))
	c.c.add(t, e, maxGuards)
	return e
}

// readMostly is a map that is read on every call and written a handful of
// times in a process's life: readers load an immutable map with one atomic
// read (no lock: a read-write mutex's reader count is a cache line that
// every core writes, 2% of the store's CPU under gathered GETs), and a
// writer copies the map.
type readMostly[V any] struct {
	m  atomic.Pointer[map[string]V]
	mu sync.Mutex // serialises writers
}

func (c *readMostly[V]) get(k string) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// getBytes is get with the key as bytes (no string made for the lookup).
func (c *readMostly[V]) getBytes(k []byte) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[string(k)]
		return v, ok
	}
	var zero V
	return zero, false
}

// add stores v under k unless the map holds max entries already.
func (c *readMostly[V]) add(k string, v V, max int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil && len(*old) >= max {
		return
	}
	m := make(map[string]V, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[k] = v
	c.m.Store(&m)
}

func lenOf[V any](m *map[string]V) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// binIs is true when the bin holds a particle of type pt.
func binIs(bin string, pt int) *as.Expression {
	return as.ExpEq(as.ExpBinType(bin), as.ExpIntVal(int64(pt)))
}

// Delete-if-empty, in the same operate: two expression writes appended after
// the call's ops. When the collection bin is an empty map or list, the first
// deletes the type bin, the second the exact expiry bin (codec.BinExpire) and
// the third the collection bin; a record whose last bin goes is deleted by
// Aerospike, and the response then carries generation 0. Otherwise they
// evaluate to "unknown", which EVAL_NO_FAIL turns into a no-op. Other bins
// are left alone.
const delFlags = as.ExpWriteFlagAllowDelete | as.ExpWriteFlagEvalNoFail

func emptyCollection(bin string) *as.Expression {
	return as.ExpCond(
		binIs(bin, ParticleType.MAP),
		as.ExpCond(as.ExpEq(as.ExpMapSize(as.ExpMapBin(bin)), as.ExpIntVal(0)), as.ExpNilValue(), as.ExpUnknown()),
		binIs(bin, ParticleType.LIST),
		as.ExpCond(as.ExpEq(as.ExpListSize(as.ExpListBin(bin)), as.ExpIntVal(0)), as.ExpNilValue(), as.ExpUnknown()),
		as.ExpUnknown(),
	)
}

// deleteEmptyOps deletes the type bin, the exact expiry bin and then the
// collection bin (last: the others test it).
func deleteEmptyOps(bin string) [3]*as.Operation {
	e := packed(emptyCollection(bin))
	return [3]*as.Operation{
		as.ExpWriteOp(codec.BinType, e, delFlags),
		as.ExpWriteOp(codec.BinExpire, e, delFlags),
		as.ExpWriteOp(bin, e, delFlags),
	}
}

// Overflow detection.
//
// Aerospike's integer add and map increment wrap around silently. respike
// turns a would-be overflow into codec.Overflow without writing anything, in
// one round trip: each integer add whose base value comes from the record
// adds a bound on that value to the call's filter expression. The bound is
// exact for a missing bin or key and for an integer value; a map value the
// expression cannot read as an integer also fails the filter. A filtered-out
// call is then diagnosed by reading the record and replaying the adds in Go;
// if neither the guard nor an add is at fault, the call is sent again without
// the bounds but with the generation just read, so the value checked is the
// value written. Float adds are not bounded (the memory store does not check
// them either).

// addTarget is what an add applies to: a bin, or one key of a map bin.
type addTarget struct {
	bin   string
	isMap bool
	key   codec.Value
}

func (t addTarget) same(o addTarget) bool {
	return t.bin == o.bin && t.isMap == o.isMap && (!t.isMap || t.key.Equal(o.key))
}

// addTrack follows the integer adds on one target through a call.
type addTrack struct {
	target addTarget
	// known: the target's value is set by an earlier op of the call, so adds
	// are checked without the server.
	known bool
	value codec.Value // when known; Nil = absent, counts as 0
	// untracked: an earlier op changed the target in a way respike does not
	// model; later adds go unchecked.
	untracked bool
	// ints are the integer deltas applied to the record's value, in order
	// (when !known).
	ints []int64
}

// addValue adds delta to v as Aerospike would, reporting integer overflow.
// A Nil v counts as zero. ok is false when the kinds do not add (the server
// reports its own error then).
func addValue(v, delta codec.Value) (out codec.Value, overflow, ok bool) {
	switch {
	case v.Kind == codec.KindNil && (delta.Kind == codec.KindInt || delta.Kind == codec.KindFloat):
		return delta, false, true
	case v.Kind == codec.KindInt && delta.Kind == codec.KindInt:
		s := v.Int + delta.Int
		if (delta.Int > 0 && s < v.Int) || (delta.Int < 0 && s > v.Int) {
			return codec.Nil, true, true
		}
		return codec.Int(s), false, true
	case v.Kind == codec.KindFloat && delta.Kind == codec.KindFloat:
		return codec.Float(v.Float + delta.Float), false, true
	}
	return codec.Nil, false, false
}

// replay applies the track's deltas to base (the record's value) and reports
// whether any step overflows.
func (tr *addTrack) replay(base codec.Value) bool {
	v := base
	for _, d := range tr.ints {
		var of, ok bool
		if v, of, ok = addValue(v, codec.Int(d)); !ok {
			return false
		} else if of {
			return true
		}
	}
	return false
}

// intInterval returns the values of an integer base for which every prefix
// sum of deltas stays within int64: [lo, hi]; empty is true when none does.
func intInterval(deltas []int64) (lo, hi int64, empty bool) {
	if len(deltas) == 1 {
		d := deltas[0]
		lo, hi = math.MinInt64, math.MaxInt64
		if d > 0 {
			hi = math.MaxInt64 - d
		} else if d < 0 {
			lo = math.MinInt64 - d
		}
		return lo, hi, false
	}
	// Several adds: prefix sums may leave int64; use big integers.
	minB, maxB := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	l, h := new(big.Int).Set(minB), new(big.Int).Set(maxB)
	s := new(big.Int)
	t := new(big.Int)
	for _, d := range deltas {
		s.Add(s, big.NewInt(d))
		if t.Sub(minB, s); t.Cmp(l) > 0 {
			l.Set(t)
		}
		if t.Sub(maxB, s); t.Cmp(h) < 0 {
			h.Set(t)
		}
	}
	if l.Cmp(h) > 0 {
		return 0, 0, true
	}
	return l.Int64(), h.Int64(), false
}

// boundExp returns the filter that holds when the track's adds cannot
// overflow, or nil when there is nothing to check.
func (tr *addTrack) boundExp() *as.Expression {
	if tr.known || tr.untracked || len(tr.ints) == 0 {
		return nil
	}
	lo, hi, empty := intInterval(tr.ints)
	if !empty && lo == math.MinInt64 && hi == math.MaxInt64 {
		return nil // only zero deltas
	}
	zeroOK := !tr.replay(codec.Nil)

	var value *as.Expression
	if tr.target.isMap {
		value = as.ExpMapGetByKey(as.MapReturnType.VALUE, as.ExpTypeINT, keyExp(tr.target.key), as.ExpMapBin(tr.target.bin))
	} else {
		value = as.ExpIntBin(tr.target.bin)
	}
	var inRange *as.Expression
	switch {
	case empty:
		inRange = as.ExpBoolVal(false)
	case lo == math.MinInt64:
		inRange = as.ExpLessEq(value, as.ExpIntVal(hi))
	case hi == math.MaxInt64:
		inRange = as.ExpGreaterEq(value, as.ExpIntVal(lo))
	default:
		inRange = as.ExpAnd(as.ExpGreaterEq(value, as.ExpIntVal(lo)), as.ExpLessEq(value, as.ExpIntVal(hi)))
	}

	if tr.target.isMap {
		// A missing key counts as zero; a bin that is not a map fails the
		// increment on its own.
		count := as.ExpMapGetByKey(as.MapReturnType.COUNT, as.ExpTypeINT, keyExp(tr.target.key), as.ExpMapBin(tr.target.bin))
		return as.ExpCond(
			binIs(tr.target.bin, ParticleType.MAP),
			as.ExpCond(as.ExpEq(count, as.ExpIntVal(0)), as.ExpBoolVal(zeroOK), inRange),
			as.ExpBoolVal(true),
		)
	}
	// Plain bin: an integer must stay in range, a missing bin counts as
	// zero, any other type fails the add on its own.
	return as.ExpCond(
		binIs(tr.target.bin, ParticleType.INTEGER), inRange,
		as.ExpBinExists(tr.target.bin), as.ExpBoolVal(true),
		as.ExpBoolVal(zeroOK),
	)
}

// keyExp is a map key as an expression value.
func keyExp(k codec.Value) *as.Expression {
	switch k.Kind {
	case codec.KindInt:
		return as.ExpIntVal(k.Int)
	case codec.KindFloat:
		return as.ExpFloatVal(k.Float)
	case codec.KindStr:
		return as.ExpStringVal(string(k.Bytes))
	default:
		return as.ExpBlobVal(k.Bytes)
	}
}
