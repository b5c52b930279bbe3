package aerospike

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"
	ParticleType "github.com/aerospike/aerospike-client-go/v8/types/particle_type"

	"github.com/respike/respike/guest-sdk/codec"
)

// Exact expiry.
//
// Aerospike's own TTL is whole seconds and at most ten years. A write with
// codec.TTLAt keeps the exact time (Unix ms) in the bin codec.BinExpire
// ("x"), one more bin write of the same operate, and sets the record's TTL
// to the whole seconds left, rounded up (or "never" beyond ten years), so
// that Aerospike still reclaims the space. Every call carries the filter
// expression "x is not an integer, or x > now", now being the proxy's
// clock in ms, AND-ed with the call's own guards: a record whose exact
// expiry has passed but which Aerospike has not yet dropped (at most a
// second) fails it with FILTERED_OUT. The store then reads x: for a read
// the record is absent (NotFound); a write deletes it, guarded by the
// generation just read, and runs again on the absent record, so it starts
// from nothing as in Redis. Only that window costs a round trip more; the
// usual call pays for a few bytes of filter.

// liveCache holds the packed "not expired at now" filter of the current
// millisecond: the commands of one millisecond share it.
type liveCache struct {
	p atomic.Pointer[liveExp]
	// tmpl holds, per shared expression, the packed bytes of the AND of
	// the live filter with it, for patching in a millisecond (patchable).
	tmpl  sync.Map // *as.Expression → *patchable
	ntmpl atomic.Int64
}

type liveExp struct {
	ms int64
	e  *as.Expression
	// and holds, for this millisecond, e AND-ed with each shared
	// expression a call used (the cached guards and overflow filters:
	// few), packed once rather than built and packed per call.
	and sync.Map // *as.Expression → *as.Expression
}

// liveAt returns the filter that passes a record not expired at nowMs.
func (c *liveCache) get(nowMs int64) *as.Expression {
	if l := c.p.Load(); l != nil && l.ms == nowMs {
		return l.e
	}
	e := liveTmpl().at(nowMs)
	c.p.Store(&liveExp{ms: nowMs, e: e})
	return e
}

// liveExpAt builds the not-expired filter at nowMs as an expression tree.
func liveExpAt(nowMs int64) *as.Expression {
	return as.ExpCond(
		binIs(codec.BinExpire, ParticleType.INTEGER),
		as.ExpGreater(as.ExpIntBin(codec.BinExpire), as.ExpIntVal(nowMs)),
		as.ExpBoolVal(true),
	)
}

// The filters of a millisecond are made from packed bytes with the
// millisecond patched in, not built as trees and packed: a new millisecond
// came every few commands, and building its filter and the ANDs with the
// shared guards (tree, size walk, pack walk, base64 both ways) cost 5% of
// the daemon's CPU under an unpipelined GET load on Aerospike
// (docs/performance.md, "Unpipelined CPU per command").
//
// A patchable is an expression's packed bytes made with tmplMs, and where
// its 8 bytes are: any millisecond from 2^32 on (every date since 1970's
// 50th day) packs into the same 9 bytes (0xcf and the value, big-endian),
// so patching it in gives the bytes packing would. Smaller values (tests'
// clocks) and a template whose patch does not reproduce packing are built
// as trees.
type patchable struct {
	b   []byte // nil: build (exp)
	off int
	exp func(nowMs int64) *as.Expression
}

// tmplMs is the millisecond templates are packed with: a pattern found
// nowhere else in them, above 2^32.
const tmplMs = 0x5A17E57A5A17E57A

func newPatchable(exp func(nowMs int64) *as.Expression) *patchable {
	p := &patchable{exp: exp}
	b, ok := packedBytes(exp(tmplMs))
	if !ok {
		return p
	}
	var mark [8]byte
	binary.BigEndian.PutUint64(mark[:], tmplMs)
	off := bytes.Index(b, mark[:])
	if off < 0 || bytes.Index(b[off+1:], mark[:]) >= 0 {
		return p
	}
	p.b, p.off = b, off
	// Check the patch against packing for two real milliseconds.
	for _, ms := range []int64{1 << 32, time.Now().UnixMilli()} {
		want, ok := packedBytes(exp(ms))
		if !ok || !bytes.Equal(p.patch(ms), want) {
			p.b = nil
			return p
		}
	}
	return p
}

// patch returns the template's bytes with nowMs in them.
func (p *patchable) patch(nowMs int64) []byte {
	b := bytes.Clone(p.b)
	binary.BigEndian.PutUint64(b[p.off:], uint64(nowMs))
	return b
}

// at returns the packed expression at nowMs.
func (p *patchable) at(nowMs int64) *as.Expression {
	if p.b == nil || nowMs < 1<<32 {
		return packed(p.exp(nowMs))
	}
	e, err := as.ExpFromBase64(base64.StdEncoding.EncodeToString(p.patch(nowMs)))
	if err != nil {
		return packed(p.exp(nowMs))
	}
	return e
}

// packedBytes returns e's wire bytes.
func packedBytes(e *as.Expression) ([]byte, bool) {
	s, err := e.Base64()
	if err != nil {
		return nil, false
	}
	b, derr := base64.StdEncoding.DecodeString(s)
	return b, derr == nil
}

var (
	liveOnce sync.Once
	livePat  *patchable
)

// liveTmpl is the live filter's template, made once.
func liveTmpl() *patchable {
	liveOnce.Do(func() { livePat = newPatchable(liveExpAt) })
	return livePat
}

// and returns live AND-ed with shared, a packed expression of the
// translator's caches (plan.sharedExp), from the cache of the millisecond
// live was made for.
func (c *liveCache) and(live, shared *as.Expression) *as.Expression {
	l := c.p.Load()
	if l == nil || l.e != live {
		return as.ExpAnd(live, shared) // the millisecond moved on: not cached
	}
	if e, ok := l.and.Load(shared); ok {
		return e.(*as.Expression)
	}
	e := c.andTmpl(shared).at(l.ms)
	l.and.Store(shared, e)
	return e
}

// andTmpl returns the template of the live filter AND-ed with shared.
func (c *liveCache) andTmpl(shared *as.Expression) *patchable {
	if p, ok := c.tmpl.Load(shared); ok {
		return p.(*patchable)
	}
	exp := func(nowMs int64) *as.Expression { return as.ExpAnd(liveExpAt(nowMs), shared) }
	// The shared expressions are the translator's cached guards and
	// overflow filters: few. Past maxTmpl, templates are neither kept nor
	// made (making one packs three times): the AND is built as a tree.
	if c.ntmpl.Add(1) > maxTmpl {
		return &patchable{exp: exp}
	}
	p := newPatchable(exp)
	c.tmpl.Store(shared, p)
	return p
}

// maxTmpl bounds the AND templates a liveCache keeps.
const maxTmpl = 256

// expireFor is the Aerospike TTL of an exact expiry: the whole seconds
// left, rounded up and at least 1 (a time already past is reclaimed within
// a second, and invisible meanwhile), or "never" beyond Aerospike's ten
// years.
func expireFor(atMs, nowMs int64) uint32 {
	left := atMs - nowMs
	if left <= 0 {
		return 1
	}
	secs := (left + 999) / 1000
	if secs > maxTTL {
		return as.TTLDontExpire
	}
	return uint32(secs)
}

// nowMs is the store's clock in Unix milliseconds.
func (s *Store) nowMs() int64 {
	if s.now != nil {
		return s.now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

// expiryOps adds the hidden ops that keep codec.BinExpire in step with the
// call's TTL mode, after the call's own ops. replace says whether the call
// replaces the record (its old bins, x with them, are gone).
func (t *translator) expiryOps(call *codec.Call, p *plan, replace bool) {
	if !p.write {
		return
	}
	// A call whose last write deletes the record keeps no expiry; one
	// that writes no bin (a touch) must not create a record of x alone.
	lastDelete, writesBin := false, false
	for i := range call.Ops {
		c := call.Ops[i].Code
		if !c.Writes() {
			continue
		}
		lastDelete = c == codec.OpDelete
		writesBin = writesBin || (c != codec.OpTouch && c != codec.OpDelete)
	}
	if lastDelete {
		return
	}
	pol := &call.Policy
	switch pol.TTL {
	case codec.TTLAt:
		if !writesBin && p.exists == as.UPDATE {
			p.exists = as.UPDATE_ONLY
		}
		p.add(as.PutOp(as.NewBin(codec.BinExpire, pol.Seconds)), slot{bin: codec.BinExpire, op: -1, entry: true})
	case codec.TTLNever, codec.TTLSeconds:
		// Aerospike's REPLACE refuses bin deletes, and a replaced record
		// has lost x already.
		if !replace && !p.cleared {
			p.add(t.opClearX, slot{bin: codec.BinExpire, op: -1, entry: true})
		}
	case codec.TTLKeep:
		p.keepX = replace
	}
}

// withLiveShared is withLive for a plan whose filter and guard are shared
// expressions of the translator's caches (sharedExp): the AND of each with
// live comes from c.
func (p *plan) withLiveShared(live *as.Expression, c *liveCache) {
	p.live = live
	guardIsFilter := p.guard == p.filter // a guard and no overflow bound: one lookup
	p.filter = c.and(live, p.filter)
	switch {
	case p.guard == nil:
		p.guard = live
	case guardIsFilter:
		p.guard = p.filter
	default:
		p.guard = c.and(live, p.guard)
	}
}

// withLive ANDs the not-expired filter into the plan's filters.
func (p *plan) withLive(live *as.Expression) {
	p.live = live
	if p.filter == nil {
		p.filter = live
	} else {
		p.filter = as.ExpAnd(live, p.filter)
	}
	if p.guard == nil {
		p.guard = live
	} else {
		p.guard = as.ExpAnd(live, p.guard)
	}
}

// maxExpiredRetries bounds how often a write to an expired record deletes
// and retries when other clients keep writing it.
const maxExpiredRetries = 5

// expired answers a call that failed with FILTERED_OUT or KEY_EXISTS,
// either of which may mean a record whose exact expiry has passed (see the
// top of this file). It reports handled=false when the failure is the
// call's own (type guard, expected item, overflow bound, create-only).
func (x *execCtx) expired(call *codec.Call, p *plan, key *as.Key, res *codec.Result, code codec.Code) (handled bool, err error) {
	if !p.write && code == codec.FilteredOut && call.Policy.Guard == "" && p.bound == nil && len(p.expects) == 0 {
		// Nothing but the expiry filters this call.
		failResult(res, codec.NotFound, "record not found (expired)")
		return true, nil
	}
	rp := x.writePolicy(&plan{getAll: -1}, nil, 0, false)
	for range maxExpiredRetries {
		rec, err := x.operate(rp, key, as.GetBinOp(codec.BinExpire), as.GetBinOp(codec.BinType))
		switch {
		case err == nil:
		case resultCode(err) == types.KEY_NOT_FOUND_ERROR:
			rec = nil // gone since: run the call again
		default:
			if c := classify(err); c != classRecord {
				return true, &errFatal{err: err, class: c}
			}
			c, msg := errResult(err)
			failResult(res, c, msg)
			return true, nil
		}
		if rec != nil {
			at, isInt := rec.Bins[codec.BinExpire].(int)
			if !isInt || int64(at) > x.s.nowMs() {
				// Live: the failure is the call's own, unless the type
				// guard passes, no item or bound could fail, and the
				// call was not create-only (the record was replaced
				// meanwhile): then run it again.
				t, hasT := rec.Bins[codec.BinType]
				ts, _ := t.(string)
				guardOK := call.Policy.Guard == "" || !hasT || t == nil || ts == call.Policy.Guard
				if code == codec.Exists || !guardOK || p.bound != nil || len(p.expects) > 0 {
					return false, nil
				}
			} else {
				if !p.write {
					failResult(res, codec.NotFound, "record not found (expired)")
					return true, nil
				}
				if call.Policy.Generation != 0 {
					// The record the command read is gone.
					failResult(res, codec.GenerationError, "generation mismatch (expired)")
					return true, nil
				}
				dp := as.NewWritePolicy(rec.Generation, 0)
				dp.BasePolicy = x.base(true)
				dp.GenerationPolicy = as.EXPECT_GEN_EQUAL
				x.s.nSingle.Add(1)
				if _, err := x.c.Delete(dp, key); err != nil {
					if c := classify(err); c != classRecord {
						return true, &errFatal{err: err, class: c}
					}
					continue // written meanwhile: look again
				}
			}
		}
		resetResult(res, len(call.Ops))
		rec, err = x.operate(x.writePolicy(p, p.filter, p.gen, false), key, p.ops...)
		if err != nil {
			if rc := resultCode(err); rc == types.FILTERED_OUT || rc == types.KEY_EXISTS_ERROR {
				code, _ = errResult(err)
				continue
			}
		}
		q := *p
		q.live = nil // checked: no second look
		return true, x.finish(call, &q, key, rec, err, res, true)
	}
	failResult(res, codec.BackendError, "aerospike: the record kept changing while checking its expiry")
	return true, nil
}

// keepExpiry runs a replacing call with TTLKeep (SET … KEEPTTL): Aerospike
// replaces every bin, x with them, so the record's exact expiry is read
// first and written again with the call, under the generation read.
func (x *execCtx) keepExpiry(call *codec.Call, p *plan, key *as.Key, res *codec.Result) error {
	rp := x.writePolicy(&plan{getAll: -1}, p.live, 0, false)
	for range maxExpiredRetries {
		rec, err := x.operate(rp, key, as.GetBinOp(codec.BinExpire))
		var at int
		isInt := false
		if err == nil {
			at, isInt = rec.Bins[codec.BinExpire].(int)
		} else if rc := resultCode(err); rc != types.KEY_NOT_FOUND_ERROR && rc != types.FILTERED_OUT {
			if c := classify(err); c != classRecord {
				return &errFatal{err: err, class: c}
			}
			c, msg := errResult(err)
			failResult(res, c, msg)
			return nil
		}
		if !isInt {
			// No exact expiry (or no live record): nothing to keep.
			rec, err := x.operate(x.writePolicy(p, p.filter, p.gen, false), key, p.ops...)
			return x.finish(call, p, key, rec, err, res, true)
		}
		gen := rec.Generation
		if call.Policy.Generation != 0 && call.Policy.Generation != gen {
			failResult(res, codec.GenerationError, "generation mismatch")
			return nil
		}
		q := *p
		q.ops = append(append(make([]*as.Operation, 0, len(p.ops)+1), p.ops...), as.PutOp(as.NewBin(codec.BinExpire, at)))
		q.slots = append(append(make([]slot, 0, len(p.slots)+1), p.slots...), slot{bin: codec.BinExpire, op: -1, entry: true})
		q.expire = expireFor(int64(at), x.s.nowMs())
		resetResult(res, len(call.Ops))
		rec, err = x.operate(x.writePolicy(&q, q.filter, gen, true), key, q.ops...)
		if err != nil && resultCode(err) == types.GENERATION_ERROR && call.Policy.Generation == 0 {
			continue // written meanwhile
		}
		return x.finish(call, &q, key, rec, err, res, true)
	}
	failResult(res, codec.BackendError, "aerospike: the record kept changing while keeping its expiry")
	return nil
}
