package aerospike

import (
	"strconv"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"
	ParticleType "github.com/aerospike/aerospike-client-go/v8/types/particle_type"

	"github.com/respike/respike/guest-sdk/codec"
)

// codec.OpHLLRaise on Aerospike: one operate. With ok = "live (the
// exact expiry), of the guarded type, and v a dense HLL" and rise = "some
// register below its count" (BitGetInt of the register's fields):
//
//   - the filter is NOT(ok AND NOT rise): a dense HLL where nothing would
//     rise is filtered out, and FILTERED_OUT answers Int(0) with nothing
//     written. Aerospike bumps the generation (and rewrites the record)
//     on any write op, even one that changes no byte, so "write nothing"
//     can only be a filter; and the filter fails for nothing else;
//   - the one write is cond(ok, raised v, unknown): BitSetInt of the
//     registers' fields and of the cache's "not valid" bit. unknown fails
//     the op with OP_NOT_APPLICABLE: the record is not a live dense HLL of
//     the type, and a read tells which (diagnoseHLL).
//
// So a PFADD costs one round trip whether it raises a register or not.
// No part of ok or rise can fail to evaluate (a filter that fails to
// evaluate filters out, which would read as "nothing rose"): the bin's
// type is checked first, and the length before any bit is read, by
// comparing v with itself resized to 12,304 bytes (no expression tells a
// blob's length).
//
// Redis packs the 6-bit registers least significant bit first; Aerospike
// numbers bits from the most significant. A register within one byte is
// one field of Aerospike's; one that straddles two bytes is two: its low
// bits at the top of the first byte, its high bits at the bottom of the
// next.

// hllReg is one register of an OpHLLRaise and the count to raise it to.
type hllReg struct {
	i     int
	count uint8
}

// hllResultBin names the diagnosis read's answer.
const hllResultBin = "hll"

// Diagnosis states.
const (
	hllAbsent   = -3 // no bin
	hllNotBlob  = -2 // the bin is not a blob
	hllNotDense = -1 // a blob that is not a dense HLL
	hllNoRise   = 0  // dense; no register would rise
	hllRise     = 1  // dense; a register would rise (the two are not told apart)
)

// parseHLLRegs decodes and checks an OpHLLRaise Value, keeping the
// largest count of a register given twice.
func parseHLLRegs(v codec.Value) ([]hllReg, string) {
	if msg := codec.CheckHLLRaise(v); msg != "" {
		return nil, msg
	}
	regs := make([]hllReg, 0, len(v.Bytes)/3)
outer:
	for k := 0; k < len(v.Bytes); k += 3 {
		r := hllReg{i: int(v.Bytes[k])<<8 | int(v.Bytes[k+1]), count: v.Bytes[k+2]}
		for j := range regs {
			if regs[j].i == r.i {
				regs[j].count = max(regs[j].count, r.count)
				continue outer
			}
		}
		regs = append(regs, r)
	}
	return regs, ""
}

// hllField is where register i lies in Aerospike's bit numbering: lo is
// the field of its low n1 bits; hi, when n2 > 0, that of its high bits.
func hllField(i int) (lo int64, n1 int64, hi int64, n2 int64) {
	p := i * 6
	b := int64(16 + p/8)
	fb := int64(p & 7)
	if fb <= 2 {
		return b*8 + 2 - fb, 6, 0, 0
	}
	n1 = 8 - fb
	n2 = 6 - n1
	return b * 8, n1, (b+1)*8 + 8 - n2, n2
}

// hllGetExp is register i of the blob e.
func hllGetExp(i int, e *as.Expression) *as.Expression {
	lo, n1, hi, n2 := hllField(i)
	low := as.ExpBitGetInt(as.ExpIntVal(lo), as.ExpIntVal(n1), false, e)
	if n2 == 0 {
		return low
	}
	high := as.ExpBitGetInt(as.ExpIntVal(hi), as.ExpIntVal(n2), false, e)
	return as.ExpIntOr(as.ExpIntLShift(high, as.ExpIntVal(n1)), low)
}

// hllSetExp is the blob e with register i set to v.
func hllSetExp(i int, v uint8, e *as.Expression) *as.Expression {
	lo, n1, hi, n2 := hllField(i)
	if n2 > 0 {
		e = as.ExpBitSetInt(bitSetPolicy, as.ExpIntVal(hi), as.ExpIntVal(n2), as.ExpIntVal(int64(v>>n1)), e)
	}
	return as.ExpBitSetInt(bitSetPolicy, as.ExpIntVal(lo), as.ExpIntVal(n1), as.ExpIntVal(int64(v&(1<<n1-1))), e)
}

// hllDenseExp is true when the blob bin is a dense HLL: a blob of
// 12,304 bytes (v resized to that length is v) starting with "HYLL" and
// encoding 0. It never fails to evaluate.
func hllDenseExp(bin string) *as.Expression {
	v := as.ExpBlobBin(bin)
	return as.ExpAnd(
		blobSizeExp(bin, codec.HLLDenseSize),
		as.ExpEq(as.ExpBitGet(as.ExpIntVal(0), as.ExpIntVal(40), v), as.ExpBlobVal([]byte("HYLL\x00"))),
	)
}

// blobSizeExp is true when the bin is a blob of exactly size bytes: the
// client has no blob-length expression, but a blob resized to its own
// length is itself. The type test comes first (and short-circuits), so the
// resize never sees a non-blob; it never fails to evaluate.
func blobSizeExp(bin string, size int64) *as.Expression {
	v := as.ExpBlobBin(bin)
	return as.ExpAnd(
		binIs(bin, ParticleType.BLOB),
		as.ExpEq(as.ExpBitResize(bitGrowPolicy, as.ExpIntVal(size), as.BitResizeFlagsDefault, v), v),
	)
}

// notExpired is the not-expired condition at nowMs (liveCache's, unpacked,
// to be part of a larger expression).
func notExpired(nowMs int64) *as.Expression {
	return as.ExpCond(
		binIs(codec.BinExpire, ParticleType.INTEGER),
		as.ExpGreater(as.ExpIntBin(codec.BinExpire), as.ExpIntVal(nowMs)),
		as.ExpBoolVal(true),
	)
}

// hllRiseExp is true when a register of regs is below its count in e.
func hllRiseExp(regs []hllReg, e *as.Expression) *as.Expression {
	conds := make([]*as.Expression, len(regs))
	for k, r := range regs {
		conds[k] = as.ExpLess(hllGetExp(r.i, e), as.ExpIntVal(int64(r.count)))
	}
	if len(conds) == 1 {
		return conds[0]
	}
	return as.ExpOr(conds...)
}

// translateHLLRaise adds OpHLLRaise to the plan: its filter (which
// replaces the guard and the expiry filter, see the top of this file) and
// its one write.
func translateHLLRaise(call *codec.Call, i int, op *codec.Op, p *plan, nowMs int64) {
	if op.Bin == "" {
		p.fail(codec.InvalidOperation, "OpHLLRaise needs a bin")
		return
	}
	if len(call.Ops) != 1 || call.Policy.Exists != codec.ExistsUpdateOnly {
		p.fail(codec.InvalidOperation, "OpHLLRaise must be the only op of an update-only call")
		return
	}
	regs, msg := parseHLLRegs(op.Value)
	if msg != "" {
		p.fail(codec.InvalidOperation, "%s", msg)
		return
	}
	v := as.ExpBlobBin(op.Bin)
	ok := []*as.Expression{notExpired(nowMs)}
	if g := call.Policy.Guard; g != "" {
		ok = append(ok, guardExp(g))
	}
	ok = append(ok, hllDenseExp(op.Bin))
	okExp := as.ExpAnd(ok...)
	rise := hllRiseExp(regs, v)
	p.hllFilter = as.ExpNot(as.ExpAnd(okExp, as.ExpNot(rise)))
	p.hll = as.ExpCond(
		as.ExpNot(as.ExpBinExists(op.Bin)), as.ExpIntVal(hllAbsent),
		as.ExpNot(binIs(op.Bin, ParticleType.BLOB)), as.ExpIntVal(hllNotBlob),
		hllDenseExp(op.Bin), as.ExpCond(rise, as.ExpIntVal(hllRise), as.ExpIntVal(hllNoRise)),
		as.ExpIntVal(hllNotDense),
	)

	// Past the filter, an ok record has a register to raise. Each is
	// raised only if below its count (read from the bin as it was: the
	// registers are distinct), on the blob the earlier ones left.
	var w *as.Expression
	if len(regs) == 1 {
		w = hllSetExp(regs[0].i, regs[0].count, v)
	} else {
		defs := make([]*as.Expression, 0, len(regs)+1)
		prev := v
		for k, r := range regs {
			name := "b" + strconv.Itoa(k)
			defs = append(defs, as.ExpDef(name, as.ExpCond(
				as.ExpLess(hllGetExp(r.i, v), as.ExpIntVal(int64(r.count))),
				hllSetExp(r.i, r.count, prev),
				prev,
			)))
			prev = as.ExpVar(name)
		}
		w = as.ExpLet(append(defs, prev)...)
	}
	w = as.ExpBitSetInt(bitSetPolicy, as.ExpIntVal(15*8), as.ExpIntVal(1), as.ExpIntVal(1), w)
	w = as.ExpCond(okExp, w, as.ExpUnknown())
	p.add(as.ExpWriteOp(op.Bin, w, as.ExpWriteFlagDefault), slot{bin: op.Bin, op: i, dec: decRaised, entry: true})
}

// finishHLL answers an OpHLLRaise call that failed: filtered out is
// "nothing rose" (Int(0)); OP_NOT_APPLICABLE is a record that is not a
// live dense HLL of the type, told apart by a read.
func (x *execCtx) finishHLL(call *codec.Call, p *plan, key *as.Key, code codec.Code, res *codec.Result) (bool, error) {
	switch code {
	case codec.FilteredOut:
		resetResult(res, len(call.Ops))
		res.Values[0] = codec.Int(0)
		return true, nil
	case codec.OpNotApplicable:
		return true, x.diagnoseHLL(call, p, key, res)
	}
	return false, nil
}

// diagnoseHLL answers an OpHLLRaise call whose write found no live dense
// HLL of the type: the type guard, an expired record, a bin that is not
// a dense HLL. A dense HLL now (written since) runs the call again.
func (x *execCtx) diagnoseHLL(call *codec.Call, p *plan, key *as.Key, res *codec.Result) error {
	ops := []*as.Operation{
		as.GetBinOp(codec.BinType),
		as.GetBinOp(codec.BinExpire),
		as.ExpReadOp(hllResultBin, p.hll, as.ExpReadFlagEvalNoFail),
	}
	rp := x.writePolicy(&plan{getAll: -1}, nil, 0, false)
	for range maxExpiredRetries {
		rec, err := x.operate(rp, key, ops...)
		if err != nil {
			if resultCode(err) == types.KEY_NOT_FOUND_ERROR {
				failResult(res, codec.NotFound, "record not found")
				return nil
			}
			if c := classify(err); c != classRecord {
				return &errFatal{err: err, class: c}
			}
			code, msg := errResult(err)
			failResult(res, code, msg)
			return nil
		}
		if at, isInt := rec.Bins[codec.BinExpire].(int); isInt && int64(at) <= x.s.nowMs() {
			// Expired: absent to every call, and this one is update-only.
			failResult(res, codec.NotFound, "record not found (expired)")
			return nil
		}
		if g := call.Policy.Guard; g != "" {
			if t, ok := rec.Bins[codec.BinType]; ok && t != nil {
				if s, isStr := t.(string); !isStr || s != g {
					failResult(res, codec.FilteredOut, "filtered out by the type guard")
					return nil
				}
			}
		}
		if call.Policy.Generation != 0 && call.Policy.Generation != rec.Generation {
			failResult(res, codec.GenerationError, "generation mismatch")
			return nil
		}
		state, isInt := rec.Bins[hllResultBin].(int)
		if !isInt {
			state = hllNotDense // the expression failed: a blob too short
		}
		switch state {
		case hllAbsent:
			failResult(res, codec.BinNotFound, "bin not found")
			return nil
		case hllNotBlob:
			failResult(res, codec.BinTypeError, "bin type error: not a blob")
			return nil
		case hllNotDense:
			failResult(res, codec.OpNotApplicable, "not a dense HyperLogLog")
			return nil
		}
		// A dense HLL now: written since the call saw it.
		resetResult(res, len(call.Ops))
		rec, err = x.operate(x.writePolicy(p, p.filter, p.gen, false), key, p.ops...)
		if err != nil && resultCode(err) == types.OP_NOT_APPLICABLE {
			continue
		}
		return x.finish(call, p, key, rec, err, res, true)
	}
	failResult(res, codec.BackendError, "aerospike: the record kept changing while raising HyperLogLog registers")
	return nil
}
