package storetest

import (
	"strconv"

	"github.com/respike/respike/guest-sdk/codec"
)

// OpHLLRaise cases (PFADD's in-place edit of a dense HyperLogLog), run
// before TruncateAll, which must stay last.
func init() {
	last := cases[len(cases)-1]
	cases = append(append(cases[:len(cases)-1:len(cases)-1], hllCases...), last)
}

var hllCases = []testCase{
	{"HLLRaise", testHLLRaise},
	{"HLLRaiseNothing", testHLLRaiseNothing},
	{"HLLRaiseSeveral", testHLLRaiseSeveral},
	{"HLLRaiseMany", testHLLRaiseMany},
	{"HLLRaiseNotDense", testHLLRaiseNotDense},
	{"HLLRaiseInvalid", testHLLRaiseInvalid},
	{"HLLRaiseExpired", testHLLRaiseExpired},
	{"ExpectBlobSize", testExpectBlobSize},
}

// refHLL is a dense HLL for the cases, with its cached cardinality valid
// (5) and the registers given (index → value); its packing is written
// bit by bit, apart from the stores' code: register i's bit j is bit
// (16*8 + 6*i + j) counted from the least significant bit of byte 0.
func refHLL(regs map[int]uint8) []byte {
	h := make([]byte, codec.HLLDenseSize)
	copy(h, "HYLL")
	h[8] = 5
	for i, v := range regs {
		for j := range 6 {
			pos := 16*8 + 6*i + j
			mask := byte(1) << (pos % 8)
			if v>>j&1 != 0 {
				h[pos/8] |= mask
			} else {
				h[pos/8] &^= mask
			}
		}
	}
	return h
}

// invalid is h with its cached cardinality marked not valid.
func invalid(h []byte) []byte {
	h = append([]byte(nil), h...)
	h[15] |= 0x80
	return h
}

// raise is OpHLLRaise's call as PFADD makes it: registers and counts,
// update-only, under the string guard, keeping the TTL.
func (e *env) raise(name string, regs ...int) *codec.Call {
	var v []byte
	for k := 0; k+1 < len(regs); k += 2 {
		v = append(v, byte(regs[k]>>8), byte(regs[k]), byte(regs[k+1]))
	}
	c := e.rec(name).HLLRaise(codec.BinValue, v)
	c.Policy.Exists, c.Policy.Guard = codec.ExistsUpdateOnly, codec.TypeString
	return c
}

// putHLL stores h as a string record.
func (e *env) putHLL(name string, h []byte) codec.Result {
	e.t.Helper()
	return e.ok(e.rec(name).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(h)))
}

func testHLLRaise(e *env) {
	// Registers within one byte (0: bits 0-5 of the first byte; 3: bits
	// 2-7), across two (1: 2 + 4 bits; 2: 4 + 2), and the last one.
	start := map[int]uint8{0: 1, 1: 2, 2: 3, 3: 4, 16383: 5, 4: 63}
	w := e.putHLL("h", refHLL(start))
	for _, tc := range []struct{ reg, count int }{{0, 7}, {1, 45}, {2, 33}, {3, 63}, {16383, 6}, {5, 1}} {
		r := e.ok(e.raise("h", tc.reg, tc.count))
		e.eq("raised", r.Values[0], i64(1))
		if r.Generation != w.Generation+1 {
			e.t.Errorf("register %d raised: generation %d, want %d", tc.reg, r.Generation, w.Generation+1)
		}
		w = r
		start[tc.reg] = uint8(tc.count)
		e.eq("value after raising register "+strconv.Itoa(tc.reg), e.get("h", codec.BinValue), codec.Bytes(invalid(refHLL(start))))
	}
	e.eq("type bin kept", e.get("h", codec.BinType), codec.Str(codec.TypeString))
}

func testHLLRaiseNothing(e *env) {
	regs := map[int]uint8{0: 10, 1: 20, 2: 30, 9: 40}
	h := refHLL(regs)
	c := e.rec("h").Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(h))
	c.Policy.TTL, c.Policy.Seconds = codec.TTLSeconds, 1000
	w := e.ok(c)
	// Counts at or below the registers: nothing written, the cache stays
	// valid, the generation and the TTL stay (even with a TTL asked for);
	// the answer reports no generation or TTL.
	c = e.raise("h", 0, 10, 1, 3, 2, 30, 9, 0, 100, 0)
	c.Policy.TTL, c.Policy.Seconds = codec.TTLSeconds, 50
	r := e.ok(c)
	e.eq("nothing raised", r.Values[0], i64(0))
	if r.Generation != 0 || r.TTL != 0 {
		e.t.Errorf("raising nothing answered generation %d and TTL %d, want 0 and 0", r.Generation, r.TTL)
	}
	e.eq("unchanged", e.get("h", codec.BinValue), codec.Bytes(h))
	hd := e.ok(e.rec("h").Header())
	if hd.Generation != w.Generation {
		e.t.Errorf("stored generation after raising nothing = %d, want %d", hd.Generation, w.Generation)
	}
	e.ttlNear("stored TTL after raising nothing", hd.TTL, 1000)
}

func testHLLRaiseSeveral(e *env) {
	regs := map[int]uint8{0: 10, 1: 20, 7: 5}
	e.putHLL("h", refHLL(regs))
	// One rises, one does not, one rises twice (the larger count wins
	// whatever the order), one is new.
	r := e.ok(e.raise("h", 0, 3, 1, 21, 7, 9, 7, 6, 1, 22, 1, 2, 1000, 17))
	e.eq("raised", r.Values[0], i64(1))
	regs[1], regs[7], regs[1000] = 22, 9, 17
	e.eq("value", e.get("h", codec.BinValue), codec.Bytes(invalid(refHLL(regs))))
	// The cache bit, already set, stays set.
	r = e.ok(e.raise("h", 2, 1))
	e.eq("raised again", r.Values[0], i64(1))
	regs[2] = 1
	e.eq("value again", e.get("h", codec.BinValue), codec.Bytes(invalid(refHLL(regs))))
}

// testHLLRaiseMany raises 32 registers in one op, PFADD's most: every
// other one rises, the last register among them.
func testHLLRaiseMany(e *env) {
	regs := map[int]uint8{}
	var args []int
	for k := range 32 {
		i := 16383 - 37*k
		regs[i] = 10
		if k%2 == 0 {
			regs[i] = 50
		}
		args = append(args, i, 40)
	}
	e.putHLL("h", refHLL(regs))
	r := e.ok(e.raise("h", args...))
	e.eq("raised", r.Values[0], i64(1))
	for k := 1; k < 32; k += 2 {
		regs[16383-37*k] = 40
	}
	e.eq("value", e.get("h", codec.BinValue), codec.Bytes(invalid(refHLL(regs))))
	r = e.ok(e.raise("h", args...))
	e.eq("nothing left to raise", r.Values[0], i64(0))
}

func testHLLRaiseNotDense(e *env) {
	e.fails(e.raise("missing", 0, 1), codec.NotFound)
	e.missing("missing")
	// A record without the bin, a bin that is not a blob.
	e.ok(e.rec("nobin").Put(codec.BinType, codec.Str(codec.TypeString)))
	e.fails(e.raise("nobin", 0, 1), codec.BinNotFound)
	e.ok(e.rec("int").Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, i64(12)))
	e.fails(e.raise("int", 0, 1), codec.BinTypeError)
	// Blobs that are not dense HLLs: sparse, short, long, another magic,
	// empty, a magic alone.
	sparse := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x7f\xff")
	short := refHLL(nil)[:codec.HLLDenseSize-1]
	long := append(refHLL(nil), 0)
	other := refHLL(nil)
	other[0] = 'h'
	for name, v := range map[string][]byte{"sparse": sparse, "short": short, "long": long, "other": other, "empty": {}, "magic": []byte("HYL")} {
		e.putHLL(name, v)
		// Whether or not the register would rise (0 never does).
		e.fails(e.raise(name, 0, 1), codec.OpNotApplicable)
		e.fails(e.raise(name, 0, 0), codec.OpNotApplicable)
		e.eq(name+" unchanged", e.get(name, codec.BinValue), codec.Bytes(v))
	}
	// Another type: the guard, whether or not a register would rise.
	e.ok(e.rec("hash").Put(codec.BinType, codec.Str(codec.TypeHash)).Put(codec.BinValue, codec.Bytes(refHLL(nil))))
	e.fails(e.raise("hash", 0, 1), codec.FilteredOut)
	e.fails(e.raise("hash", 0, 0), codec.FilteredOut)
	e.eq("hash unchanged", e.get("hash", codec.BinValue), codec.Bytes(refHLL(nil)))
	e.fails(e.raise("int", 0, 0), codec.BinTypeError)
	e.fails(e.raise("nobin", 0, 0), codec.BinNotFound)
}

func testHLLRaiseInvalid(e *env) {
	e.putHLL("h", refHLL(nil))
	// Not alone in its call, not update-only.
	e.fails(e.raise("h", 0, 1).Get(codec.BinType), codec.InvalidOperation)
	c := e.raise("h", 0, 1)
	c.Policy.Exists = codec.ExistsUpdate
	e.fails(c, codec.InvalidOperation)
	// A malformed Value: not whole entries, a register or a count out of
	// range, not bytes.
	for _, v := range []codec.Value{b(""), b("\x00\x00\x01\x00"), b("\x40\x00\x01"), b("\x00\x00\x40"), i64(1)} {
		c := e.rec("h").Op(codec.Op{Code: codec.OpHLLRaise, Bin: codec.BinValue, Value: v})
		c.Policy.Exists = codec.ExistsUpdateOnly
		e.fails(c, codec.InvalidOperation)
	}
	e.eq("unchanged", e.get("h", codec.BinValue), codec.Bytes(refHLL(nil)))
}

func testHLLRaiseExpired(e *env) {
	e.ok(e.rec("h").ExpireAt(nowMs()-1000).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(refHLL(nil))))
	e.fails(e.raise("h", 0, 1), codec.NotFound)
	e.fails(e.raise("h", 0, 0), codec.NotFound)
}

// OpExpectBlobSize: PFCOUNT reads a dense HLL's header only if the value
// is exactly a dense HLL long (Redis refuses any other length).
func testExpectBlobSize(e *env) {
	h := refHLL(nil)
	e.ok(e.rec("h").Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(h)))
	r := e.ok(e.rec("h").ExpectBlobSize(codec.BinValue, codec.HLLDenseSize).BitGet(codec.BinValue, 0, 32))
	e.eq("header of the right length", r.Values[1], codec.Bytes([]byte("HYLL")))
	e.eq("the condition's value", r.Values[0], codec.Nil)
	e.fails(e.rec("h").ExpectBlobSize(codec.BinValue, codec.HLLDenseSize+1).BitGet(codec.BinValue, 0, 32), codec.FilteredOut)
	e.fails(e.rec("h").ExpectBlobSize(codec.BinValue, codec.HLLDenseSize-1).BitGet(codec.BinValue, 0, 32), codec.FilteredOut)
	// One byte longer (APPEND): refused, and nothing was written.
	e.ok(e.rec("h").Append(codec.BinValue, []byte("x")))
	e.fails(e.rec("h").ExpectBlobSize(codec.BinValue, codec.HLLDenseSize).Put(codec.BinValue, codec.Bytes(h)), codec.FilteredOut)
	e.eqInt("length after the refused write", int64(len(e.get("h", codec.BinValue).Bytes)), codec.HLLDenseSize+1)
	r = e.ok(e.rec("h").ExpectBlobSize(codec.BinValue, codec.HLLDenseSize+1).BitGet(codec.BinValue, 0, 8))
	e.eq("the longer length", r.Values[1], codec.Bytes([]byte("H")))
	// Not a blob, or no such bin: refused; an absent record passes.
	e.ok(e.rec("i").Put(codec.BinValue, codec.Int(7)))
	e.fails(e.rec("i").ExpectBlobSize(codec.BinValue, 8).Get(codec.BinValue), codec.FilteredOut)
	e.fails(e.rec("i").ExpectBlobSize("nobin", 0).Get(codec.BinValue), codec.FilteredOut)
	e.fails(e.rec("absent").ExpectBlobSize(codec.BinValue, 8).Get(codec.BinValue), codec.NotFound)
	e.fails(e.rec("h").ExpectBlobSize(codec.BinValue, -1).Get(codec.BinValue), codec.InvalidOperation)
}
