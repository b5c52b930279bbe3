package storetest

import (
	"github.com/respike/respike/guest-sdk/codec"
)

// Bit cases run before TruncateAll, which must stay last.
func init() {
	last := cases[len(cases)-1]
	cases = append(append(cases[:len(cases)-1:len(cases)-1], bitCases...), last)
}

var bitCases = []testCase{
	{"BitGrow", testBitGrow},
	{"BitGetSet", testBitGetSet},
	{"BitCount", testBitCount},
	{"BitPastTheEnd", testBitPastTheEnd},
	{"BitOnNonBlob", testBitOnNonBlob},
	{"BitAbsentBin", testBitAbsentBin},
	{"BitSetBitAtomic", testBitSetBitAtomic},
	{"BitInvalid", testBitInvalid},
}

func testBitGrow(e *env) {
	// A grow creates the record and a blob of zero bytes.
	r := e.ok(e.rec("k").BitGrow(codec.BinValue, 3).Get(codec.BinValue))
	e.eq("grow returns nil", r.Values[0], codec.Nil)
	e.eq("created", r.Values[1], b("\x00\x00\x00"))
	// It never shrinks: a smaller size leaves the blob as it is.
	e.ok(e.rec("k").Put(codec.BinValue, b("abc")))
	e.ok(e.rec("k").BitGrow(codec.BinValue, 2))
	e.eq("not shrunk", e.get("k", codec.BinValue), b("abc"))
	e.ok(e.rec("k").BitGrow(codec.BinValue, 3))
	e.eq("same size", e.get("k", codec.BinValue), b("abc"))
	e.ok(e.rec("k").BitGrow(codec.BinValue, 5))
	e.eq("grown", e.get("k", codec.BinValue), b("abc\x00\x00"))
	// An empty blob grows too.
	e.ok(e.rec("e").Put(codec.BinValue, b("")))
	e.ok(e.rec("e").BitGrow(codec.BinValue, 1))
	e.eq("empty grown", e.get("e", codec.BinValue), b("\x00"))
}

func testBitGetSet(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, b("\x01\x02")))
	r := e.ok(e.rec("k").BitGet(codec.BinValue, 7, 1).BitGet(codec.BinValue, 6, 1).BitGet(codec.BinValue, 4, 12).BitGet(codec.BinValue, 0, 16))
	e.eq("bit 7", r.Values[0], b("\x80"))
	e.eq("bit 6", r.Values[1], b("\x00"))
	e.eq("12 bits from 4, left-aligned", r.Values[2], b("\x10\x20"))
	e.eq("all", r.Values[3], b("\x01\x02"))
	// A set writes the first Count bits of the value, left-aligned.
	r = e.ok(e.rec("k").BitSet(codec.BinValue, 2, 12, []byte("\xff\xff")).Get(codec.BinValue))
	e.eq("set returns nil", r.Values[0], codec.Nil)
	e.eq("12 bits set from 2", r.Values[1], b("\x3f\xfe"))
	e.ok(e.rec("k").BitSet(codec.BinValue, 14, 1, []byte("\x00")))
	e.eq("bit 14 cleared", e.get("k", codec.BinValue), b("\x3f\xfc"))
	// Reads in the same call see the call's earlier writes: SETBIT's
	// grow, get, set.
	r = e.ok(e.rec("s").BitGrow(codec.BinValue, 2).BitGet(codec.BinValue, 9, 1).
		BitSet(codec.BinValue, 9, 1, []byte("\x80")).BitGet(codec.BinValue, 9, 1).Get(codec.BinValue))
	e.eq("old bit", r.Values[1], b("\x00"))
	e.eq("new bit", r.Values[3], b("\x80"))
	e.eq("value", r.Values[4], b("\x00\x40"))
	// A value shorter than Count bits is refused.
	e.fails(e.rec("k").BitSet(codec.BinValue, 0, 9, []byte("\x00")), codec.ParameterError)
	e.eq("unchanged", e.get("k", codec.BinValue), b("\x3f\xfc"))
}

func testBitCount(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, b("foobar")))
	r := e.ok(e.rec("k").BitCount(codec.BinValue, 0, 48).BitCount(codec.BinValue, 0, 8).
		BitCount(codec.BinValue, 8, 8).BitCount(codec.BinValue, 5, 26).BitCount(codec.BinValue, 47, 1))
	e.eq("whole", r.Values[0], i64(26))
	e.eq("first byte", r.Values[1], i64(4))
	e.eq("second byte", r.Values[2], i64(6))
	e.eq("bits 5..30", r.Values[3], i64(17))
	e.eq("last bit", r.Values[4], i64(0))
}

func testBitPastTheEnd(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, b("\xff\x00")))
	e.fails(e.rec("k").BitGet(codec.BinValue, 16, 1), codec.OpNotApplicable)
	e.fails(e.rec("k").BitGet(codec.BinValue, 10, 8), codec.OpNotApplicable)
	e.fails(e.rec("k").BitCount(codec.BinValue, 0, 17), codec.OpNotApplicable)
	// Aerospike refuses bit offsets beyond 2^30 as parameters (seen on
	// CE 8.1.2).
	e.fails(e.rec("k").BitCount(codec.BinValue, 1<<32, 1), codec.ParameterError)
	e.fails(e.rec("k").BitGet(codec.BinValue, 1<<30+1, 1), codec.ParameterError)
	e.fails(e.rec("k").BitGet(codec.BinValue, 1<<30, 1), codec.OpNotApplicable)
	// A set past the end fails the whole call: the grow before it is undone.
	e.fails(e.rec("k").BitGrow(codec.BinValue, 3).BitSet(codec.BinValue, 24, 1, []byte("\x80")), codec.OpNotApplicable)
	e.eq("unchanged", e.get("k", codec.BinValue), b("\xff\x00"))
	e.ok(e.rec("e").Put(codec.BinValue, b("")))
	e.fails(e.rec("e").BitGet(codec.BinValue, 0, 1), codec.OpNotApplicable)
}

func testBitOnNonBlob(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, i64(12)).Put("s", codec.Str("abc")))
	e.hash("h", b("f"), b("v"))
	for _, bin := range []string{codec.BinValue, "s"} {
		e.fails(e.rec("k").BitGet(bin, 0, 1), codec.BinTypeError)
		e.fails(e.rec("k").BitCount(bin, 0, 1), codec.BinTypeError)
		e.fails(e.rec("k").BitGrow(bin, 3), codec.BinTypeError)
		e.fails(e.rec("k").BitSet(bin, 0, 1, []byte("\x80")), codec.BinTypeError)
	}
	e.fails(e.rec("h").BitGrow(codec.BinValue, 3), codec.BinTypeError)
	e.fails(e.rec("h").BitGet(codec.BinValue, 0, 1), codec.BinTypeError)
	e.eq("int unchanged", e.get("k", codec.BinValue), i64(12))
	e.eq("string unchanged", e.get("k", "s"), codec.Str("abc"))
}

func testBitAbsentBin(e *env) {
	e.ok(e.rec("k").Put(codec.BinType, codec.Str(codec.TypeString)))
	r := e.ok(e.rec("k").BitGet(codec.BinValue, 0, 1).BitCount(codec.BinValue, 0, 8))
	e.eq("get of an absent bin", r.Values[0], codec.Nil)
	e.eq("count of an absent bin", r.Values[1], codec.Nil)
	e.fails(e.rec("k").BitSet(codec.BinValue, 0, 1, []byte("\x80")), codec.BinNotFound)
	e.fails(e.rec("missing").BitGet(codec.BinValue, 0, 1), codec.NotFound)
	e.fails(e.rec("missing").BitSet(codec.BinValue, 0, 1, []byte("\x80")), codec.BinNotFound)
	e.missing("missing")
}

// testBitSetBitAtomic is SETBIT's call: grow, read the old bit, set it,
// tag the record, all under the type guard, keeping the TTL.
func testBitSetBitAtomic(e *env) {
	setbit := func(name string, off int64, v byte) *codec.Call {
		c := e.rec(name).BitGrow(codec.BinValue, off/8+1).BitGet(codec.BinValue, off, 1).
			BitSet(codec.BinValue, off, 1, []byte{v << 7}).Put(codec.BinType, codec.Str(codec.TypeString))
		c.Policy.Guard = codec.TypeString
		return c
	}
	r := e.ok(setbit("k", 100, 1))
	e.eq("old bit", r.Values[1], b("\x00"))
	e.eq("value", e.get("k", codec.BinValue), b("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x08"))
	r = e.ok(setbit("k", 100, 0))
	e.eq("old bit set", r.Values[1], b("\x80"))
	e.eq("cleared", e.get("k", codec.BinValue), b("\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	e.hash("h", b("f"), b("v"))
	e.fails(setbit("h", 1, 1), codec.FilteredOut)
	c := e.rec("t").Put(codec.BinValue, b("a"))
	c.Policy.TTL, c.Policy.Seconds = codec.TTLSeconds, 1000
	e.ok(c)
	r = e.ok(setbit("t", 7, 0))
	e.ttlNear("TTL kept", r.TTL, 1000)
	e.eq("a with its low bit cleared", e.get("t", codec.BinValue), b("`"))
}

func testBitInvalid(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, b("ab")))
	e.fails(e.rec("k").BitGet(codec.BinValue, 0, 0), codec.InvalidOperation)
	e.fails(e.rec("k").BitGet(codec.BinValue, -1, 1), codec.InvalidOperation)
	e.fails(e.rec("k").BitCount(codec.BinValue, 0, 0), codec.InvalidOperation)
	e.fails(e.rec("k").BitGrow(codec.BinValue, 0), codec.InvalidOperation)
	e.fails(e.rec("k").Op(codec.Op{Code: codec.OpBitSet, Bin: codec.BinValue, Count: 1, Value: i64(1)}), codec.InvalidOperation)
}
