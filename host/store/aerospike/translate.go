package aerospike

import (
	"fmt"
	"sync"
	"sync/atomic"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
)

// maxTTL is Aerospike's largest relative TTL (10 years); larger values are
// refused by the server with a parameter error.
const maxTTL = 10 * 365 * 24 * 3600

// decodeKind says how the result entry of a client op becomes a codec value.
type decodeKind uint8

const (
	decNone        decodeKind = iota // the codec op returns nothing
	decValue                         // the entry as it is (Get, map put size, increment)
	decSize                          // map size: a missing bin is 0
	decMapRead                       // map read/remove per MapReturn
	decValueRange                    // key-value pairs of a value range or inverted rank range, put in rank order per MapReturn
	decExistsCount                   // a count asked for in place of an inverted EXISTS: whether it is above 0
	decBulks                         // list values, answered as codec.ReturnBulks
	decRankOne                       // one key's rank, -1 if absent: a list of it, or an empty list
	decRaised                        // OpHLLRaise's write, which runs only when a register rises: Int(1)
)

// slot describes one client op of a translated call.
type slot struct {
	bin string
	op  int // index of the codec op it answers; -1 for a hidden op
	dec decodeKind
	ret codec.MapReturn
	// reply, when a reply return type (codec.ReturnRESPKeys and the
	// like, maybe with codec.ReturnReversed), lays the key-value pairs
	// read out as that reply.
	reply codec.MapReturn
	// geo, on the first of an OpMapGeoSearch's value-range reads, makes
	// its answer from theirs (decodeGeoSearch).
	geo   *geoSearch
	entry bool // answers with a result entry when every op must respond
	// resp: the op answers with a bin even when not every op must respond
	// (bin and CDT reads, CDT writes); Aerospike refuses such ops next to a
	// read of all bins.
	resp bool
}

// plan is one codec.Call translated for the client.
type plan struct {
	ops   []*as.Operation
	slots []slot
	// arena holds the call's own simple ops (own); never grown while ops
	// point into it.
	arena []as.Operation

	write   bool // the call changes the record
	getAll  int  // index of the codec op reading all bins, or -1
	exists  as.RecordExistsAction
	expire  uint32
	gen     uint32
	guard   *as.Expression   // packed guard, or nil (with the expected items, when any)
	expects []*as.Expression // OpExpectListItem and OpExpectBlobSize conditions
	bound   *as.Expression   // overflow bounds (with the guard when cached), or nil
	filter  *as.Expression   // guard and bound together, or nil
	live    *as.Expression   // the not-expired filter (in guard and filter too), or nil
	// sharedExp: filter and guard (if any) are shared expressions of the
	// translator's caches, so their AND with live can be cached too.
	sharedExp bool
	// liveOf, liveMs: when filter is liveOf (a shared expression, or nil)
	// AND-ed with the expiry filter of millisecond liveMs; liveOf is
	// meaningful only where liveMs is not 0. Writes whose filters differ
	// only in the millisecond merge (mergeTarget).
	liveOf *as.Expression
	liveMs int64
	keepX  bool           // a replacing TTLKeep write: keeps x (keepExpiry)
	hll    *as.Expression // OpHLLRaise's diagnosis read (hll.go), or nil
	// hllFilter is OpHLLRaise's filter, which stands for the guard and
	// the expiry filter (hll.go).
	hllFilter *as.Expression
	tracks    []addTrack // adds on record values (for diagnosis)
	notes     []binNote  // what earlier ops did to bins, for new tracks
	cleared   bool       // an earlier op deleted every bin
	// adds: the call has an add (OpAdd, OpMapIncrement), the only ops
	// that read tracks and notes; without one a plain put keeps none.
	adds bool
	// delEmpty: the last three ops are DeleteIfEmpty's (deleteEmptyOps),
	// which a merged operate runs right after the call's own ops.
	delEmpty bool
	// removes: every op of the call reads or removes: on a record that
	// is gone it changes nothing (a pop; mergeTarget).
	removes bool

	// static, when not OK, is the call's answer without asking the server
	// (malformed call, overflow decided by the call's own values).
	static    codec.Code
	staticMsg string
}

func (p *plan) reset() {
	clear(p.arena) // the ops' values: guest memory, not to be kept
	p.arena = p.arena[:0]
	p.ops = p.ops[:0]
	p.slots = p.slots[:0]
	p.tracks = p.tracks[:0]
	p.notes = p.notes[:0]
	p.cleared, p.adds, p.delEmpty, p.removes = false, false, false, false
	p.write, p.getAll = false, -1
	p.exists, p.expire, p.gen = as.UPDATE, 0, 0
	p.guard, p.bound, p.filter, p.live, p.keepX, p.hll, p.hllFilter = nil, nil, nil, nil, false, nil, nil
	p.sharedExp, p.liveOf, p.liveMs = false, nil, 0
	p.expects = p.expects[:0]
	p.static, p.staticMsg = codec.OK, ""
}

func (p *plan) fail(code codec.Code, format string, args ...any) {
	if p.static == codec.OK {
		p.static = code
		p.staticMsg = fmt.Sprintf(format, args...)
	}
}

// own returns a copy of o in p's memory for ops (arena), or on the heap
// when that is full. The client's op constructors return a new op each;
// inlined, with the op copied at once, that op stays on the stack, so a
// plain put or add costs no allocation of its own.
func (p *plan) own(o *as.Operation) *as.Operation {
	if len(p.arena) == cap(p.arena) {
		n := new(as.Operation)
		*n = *o
		return n
	}
	p.arena = p.arena[:len(p.arena)+1]
	n := &p.arena[len(p.arena)-1]
	*n = *o
	return n
}

func (p *plan) add(op *as.Operation, s slot) {
	p.ops = append(p.ops, op)
	p.slots = append(p.slots, s)
}

// translator turns calls into plans. It holds what a store shares between
// calls: immutable policies and ops, and caches of packed expressions.
type translator struct {
	guards guardCache
	live   liveCache
	// policies are the map policies by [without index][order][write
	// flags]: the maps respike creates carry a persisted index
	// (docs/data-model.md, "Map index") unless noIndex is set, for a
	// cluster with a node older than Aerospike 7.0.
	policies [2][4][16]*as.MapPolicy
	noIndex  atomic.Bool
	// Parameterless ops that the client never mutates, shared.
	opDelete, opTouch, opHeader, opGetAll *as.Operation
	opClearX                              *as.Operation // deletes codec.BinExpire

	// Ops the client never mutates, shared per bin: reads of a bin, and
	// puts of a type tag into codec.BinType (every SET and INCR writes
	// one). Each was three or four allocations per call.
	getOps, typePuts readMostly[*as.Operation]

	delMu  sync.RWMutex
	delOps map[string][3]*as.Operation // DeleteIfEmpty ops per bin

	filterMu sync.RWMutex
	filters  map[filterKey]*as.Expression
}

// filterKey identifies a filter made of a guard and one integer add bound
// on a plain bin.
type filterKey struct {
	guard, bin string
	delta      int64
}

// cachedFilter returns the packed filter of a call whose only bound is one
// integer add on a plain bin; ok is false for any other call.
func (t *translator) cachedFilter(guard string, p *plan) (*as.Expression, bool) {
	var tr *addTrack
	for i := range p.tracks {
		c := &p.tracks[i]
		if c.known || c.untracked || len(c.ints) == 0 {
			continue
		}
		if tr != nil || c.target.isMap || len(c.ints) != 1 || c.ints[0] == 0 {
			return nil, false
		}
		tr = c
	}
	if tr == nil {
		return nil, false
	}
	k := filterKey{guard: guard, bin: tr.target.bin, delta: tr.ints[0]}
	t.filterMu.RLock()
	f := t.filters[k]
	t.filterMu.RUnlock()
	if f != nil {
		return f, true
	}
	f = tr.boundExp()
	if guard != "" {
		f = as.ExpAnd(guardExp(guard), f)
	}
	f = packed(f)
	t.filterMu.Lock()
	if t.filters == nil {
		t.filters = make(map[filterKey]*as.Expression)
	}
	if len(t.filters) < maxFilters {
		t.filters[k] = f
	}
	t.filterMu.Unlock()
	return f, true
}

// maxFilters bounds the filter cache (INCRBY deltas are unbounded).
const maxFilters = 4096

// deleteEmpty returns the DeleteIfEmpty ops for bin, built once per bin
// (a module uses one or two collection bins).
func (t *translator) deleteEmpty(bin string) [3]*as.Operation {
	t.delMu.RLock()
	ops, ok := t.delOps[bin]
	t.delMu.RUnlock()
	if ok {
		return ops
	}
	ops = deleteEmptyOps(bin)
	t.delMu.Lock()
	if t.delOps == nil {
		t.delOps = make(map[string][3]*as.Operation)
	}
	if len(t.delOps) < maxGuards {
		t.delOps[bin] = ops
	}
	t.delMu.Unlock()
	return ops
}

func newTranslator() *translator {
	t := &translator{
		opDelete: as.DeleteOp(),
		opTouch:  as.TouchOp(),
		opHeader: as.GetHeaderOp(),
		opGetAll: as.GetOp(),
		opClearX: as.PutOp(&as.Bin{Name: codec.BinExpire, Value: as.NewNullValue()}),
	}
	orders := [4]as.MapOrderTypes{as.MapOrder.UNORDERED, as.MapOrder.KEY_ORDERED, as.MapOrder.KEY_ORDERED, as.MapOrder.KEY_VALUE_ORDERED}
	for o := range orders {
		for f := range t.policies[0][o] {
			// Aerospike keeps an index only for an ordered map.
			if o == 0 {
				t.policies[0][o][f] = as.NewMapPolicyWithFlags(orders[o], f)
			} else {
				t.policies[0][o][f] = as.NewMapPolicyWithFlagsAndPersistedIndex(orders[o], f)
			}
			t.policies[1][o][f] = as.NewMapPolicyWithFlags(orders[o], f)
		}
	}
	return t
}

// newTranslatorIndexed is newTranslator whose maps carry a persisted
// index or not (the layout before 2026-12-03): the tests and benchmarks
// compare the two.
func newTranslatorIndexed(mapIndex bool) *translator {
	t := newTranslator()
	t.noIndex.Store(!mapIndex)
	return t
}

// maxSharedOps bounds each cache of shared ops.
const maxSharedOps = 256

// getOp returns the read of bin, shared.
func (t *translator) getOp(bin string) *as.Operation {
	if op, ok := t.getOps.get(bin); ok {
		return op
	}
	op := as.GetBinOp(bin)
	t.getOps.add(bin, op, maxSharedOps)
	return op
}

// putOp returns the put of a scalar value: for a type tag into
// codec.BinType one shared op per tag, else one of p's.
func (t *translator) putOp(op *codec.Op, p *plan) *as.Operation {
	if op.Bin != codec.BinType || op.Value.Kind != codec.KindStr {
		return p.own(as.PutOp(&as.Bin{Name: op.Bin, Value: toClientValue(op.Value)}))
	}
	if o, ok := t.typePuts.getBytes(op.Value.Bytes); ok {
		return o
	}
	o := as.PutOp(&as.Bin{Name: op.Bin, Value: toClientValue(op.Value)})
	t.typePuts.add(string(op.Value.Bytes), o, maxSharedOps)
	return o
}

// mapPolicy returns the map policy for an op's flags. A map that respike
// creates is key ordered unless the flags ask for key-value order, so that
// index ranges read in key order as they do in the memory store. Its
// order and index apply only when the op creates the map: an existing map
// keeps its own (Aerospike applies a policy's attributes to a new bin only).
func (t *translator) mapPolicy(flags uint32) *as.MapPolicy {
	order := (flags >> 8) & 3
	switch order {
	case 0, 2:
		order = 1
	}
	var plain int
	if t.noIndex.Load() {
		plain = 1
	}
	return t.policies[plain][order][flags&15]
}

func mapReturn(r codec.MapReturn) (as.MapReturnTypes, bool) {
	switch r {
	case codec.ReturnNone:
		return as.MapReturnType.NONE, true
	case codec.ReturnCount:
		return as.MapReturnType.COUNT, true
	case codec.ReturnKey:
		return as.MapReturnType.KEY, true
	case codec.ReturnValue:
		return as.MapReturnType.VALUE, true
	case codec.ReturnKeyValue:
		return as.MapReturnType.KEY_VALUE, true
	case codec.ReturnExists:
		return as.MapReturnType.EXISTS, true
	case codec.ReturnRank:
		return as.MapReturnType.RANK, true
	case codec.ReturnReverseRank:
		return as.MapReturnType.REVERSE_RANK, true
	}
	return 0, false
}

// selectsItems reports whether an op selects map items, so that
// codec.ReturnInverted applies to it.
func selectsItems(c codec.OpCode) bool {
	switch c {
	case codec.OpMapGetByKeys, codec.OpMapRemoveByKeys,
		codec.OpMapGetByIndex, codec.OpMapRemoveByIndex,
		codec.OpMapGetByRank, codec.OpMapRemoveByRank,
		codec.OpMapGetByValues, codec.OpMapRemoveByValueRange,
		codec.OpMapGetByKeyRange, codec.OpMapRemoveByKeyRange,
		codec.OpListGetByIndex, codec.OpListRemoveByIndex, codec.OpListGetByValue, codec.OpListRemoveByValue:
		return true
	}
	return false
}

func clientKeys(vs []codec.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = toClient(v)
	}
	return out
}

// translate fills p from call; nowMs is the store's clock, the base of
// exact expiries.
func (t *translator) translate(call *codec.Call, p *plan, nowMs int64) {
	p.reset()
	if cap(p.arena) < len(call.Ops) {
		p.arena = make([]as.Operation, 0, len(call.Ops))
	}
	if len(call.Ops) == 0 {
		p.fail(codec.InvalidOperation, "call has no ops")
		return
	}
	pol := &call.Policy

	for _, op := range call.Ops {
		if op.Code.Writes() {
			p.write = true
		}
		if op.Code == codec.OpAdd || op.Code == codec.OpMapIncrement {
			p.adds = true
		}
	}

	// Exists policy. Aerospike's REPLACE refuses modify, CDT, touch and
	// bin-delete ops, so respike replaces by deleting every bin before the
	// call's ops, which is what REPLACE does: reads see no old bins.
	replace := false
	switch pol.Exists {
	case codec.ExistsUpdate:
		p.exists = as.UPDATE
	case codec.ExistsUpdateOnly:
		p.exists = as.UPDATE_ONLY
	case codec.ExistsReplace:
		p.exists, replace = as.UPDATE, true
	case codec.ExistsReplaceOnly:
		p.exists, replace = as.UPDATE_ONLY, true
	case codec.ExistsCreateOnly:
		p.exists = as.CREATE_ONLY
	default:
		p.fail(codec.InvalidOperation, "unknown exists policy %d", pol.Exists)
	}

	switch pol.TTL {
	case codec.TTLKeep:
		p.expire = as.TTLDontUpdate
	case codec.TTLNever:
		p.expire = as.TTLDontExpire
	case codec.TTLSeconds:
		switch {
		case pol.Seconds < 1:
			p.fail(codec.InvalidOperation, "TTL of %d seconds: must be at least 1", pol.Seconds)
		case pol.Seconds > maxTTL:
			p.fail(codec.ParameterError, "TTL of %d seconds is above Aerospike's maximum of %d (10 years)", pol.Seconds, maxTTL)
		default:
			p.expire = uint32(pol.Seconds)
		}
	case codec.TTLAt:
		if pol.Seconds < 1 {
			p.fail(codec.InvalidOperation, "TTLAt needs a Unix time in ms >= 1, not %d", pol.Seconds)
		}
		p.expire = expireFor(pol.Seconds, nowMs)
	default:
		p.fail(codec.InvalidOperation, "unknown TTL mode %d", pol.TTL)
	}
	p.gen = pol.Generation
	if pol.Guard != "" {
		p.guard = t.guards.get(pol.Guard)
	}

	if replace && p.write {
		if onlyPlainPuts(call) && pol.DeleteIfEmpty == "" {
			// A call made only of bin writes (SET, SETEX, MSET) is what
			// Aerospike's own REPLACE accepts: one write, no delete first.
			p.exists = as.REPLACE
			if pol.Exists == codec.ExistsReplaceOnly {
				p.exists = as.REPLACE_ONLY
			}
		} else {
			p.add(t.opDelete, slot{op: -1, entry: true})
		}
		p.clearAll()
	}
	hasReads := false
	for i := range call.Ops {
		op := &call.Ops[i]
		t.translateOp(call, i, op, p, nowMs)
		if !op.Code.Writes() && op.Code != codec.OpGetHeader {
			hasReads = true
		}
	}

	// A header read alone asks for metadata only; next to other ops it is
	// redundant (every answer carries generation and TTL) and would confuse
	// a read of all bins, so it is dropped there.
	if hasReads || p.write {
		k := 0
		for i := range p.ops {
			if p.ops[i] == t.opHeader {
				continue
			}
			p.ops[k], p.slots[k] = p.ops[i], p.slots[i]
			k++
		}
		p.ops, p.slots = p.ops[:k], p.slots[:k]
	}

	t.expiryOps(call, p, replace)

	if p.getAll >= 0 {
		// A read of all bins cannot share a command with ops that answer
		// with values: Aerospike refuses or ignores them.
		for _, s := range p.slots {
			if s.op != p.getAll && s.resp {
				p.fail(codec.InvalidOperation, "a read of all bins cannot be combined with other reads in one call on Aerospike")
				break
			}
		}
	}

	if pol.DeleteIfEmpty != "" && p.write {
		if p.getAll >= 0 {
			p.fail(codec.InvalidOperation, "DeleteIfEmpty cannot be combined with a read of all bins on Aerospike")
		}
		ops := t.deleteEmpty(pol.DeleteIfEmpty)
		p.add(ops[0], slot{bin: codec.BinType, op: -1, entry: true})
		p.add(ops[1], slot{bin: codec.BinExpire, op: -1, entry: true})
		p.add(ops[2], slot{bin: pol.DeleteIfEmpty, op: -1, entry: true})
		p.delEmpty = true
		p.removes = onlyRemoves(call)
	}

	// Expected items join the guard: a diagnosis of an overflow bound
	// then still sends them.
	if len(p.expects) > 0 {
		conds := p.expects
		if pol.Guard != "" {
			conds = append([]*as.Expression{guardExp(pol.Guard)}, conds...)
		}
		if len(conds) == 1 {
			p.guard = conds[0]
		} else {
			p.guard = as.ExpAnd(append([]*as.Expression(nil), conds...)...) // p.expects is reused
		}
	}

	// Overflow bounds. The usual case, one integer add on a plain bin
	// (INCR, DECRBY), reuses a packed filter per guard, bin and delta.
	if f, ok := t.cachedFilter(pol.Guard, p); ok && len(p.expects) == 0 {
		p.bound, p.filter = f, f
		p.sharedExp = true
		return
	}
	var bounds []*as.Expression
	for i := range p.tracks {
		if e := p.tracks[i].boundExp(); e != nil {
			bounds = append(bounds, e)
		}
	}
	switch len(bounds) {
	case 0:
	case 1:
		p.bound = bounds[0]
	default:
		p.bound = as.ExpAnd(bounds...)
	}
	switch {
	case p.guard != nil && p.bound != nil:
		p.filter = as.ExpAnd(p.guard, p.bound)
	case p.guard != nil:
		p.filter = p.guard
		p.sharedExp = len(p.expects) == 0 // the guard cache's
	default:
		p.filter = p.bound
	}
}

// onlyRemoves reports whether every op of call reads or removes items:
// ops that change nothing on a missing bin, and make none.
func onlyRemoves(call *codec.Call) bool {
	for i := range call.Ops {
		switch c := call.Ops[i].Code; c {
		case codec.OpMapRemoveByKeys, codec.OpMapRemoveByIndex, codec.OpMapRemoveByRank,
			codec.OpMapRemoveByValueRange, codec.OpMapRemoveByKeyRange,
			codec.OpListRemoveByIndex, codec.OpListRemoveByValue:
		default:
			if c.Writes() {
				return false
			}
		}
	}
	return true
}

// onlyPlainPuts reports whether every op of call writes a scalar value to a
// bin: the calls Aerospike's REPLACE accepts (it refuses reads, modify,
// CDT and bin-delete ops; a map bin is written with a CDT op).
func onlyPlainPuts(call *codec.Call) bool {
	for i := range call.Ops {
		op := &call.Ops[i]
		if op.Code != codec.OpPut {
			return false
		}
		switch op.Value.Kind {
		case codec.KindNil, codec.KindMap, codec.KindList:
			return false
		}
	}
	return true
}

// binNote says what an earlier op of the call did to a bin, so that adds
// after it start from what the op left.
type binNote struct {
	bin   string
	kind  noteKind
	pairs []codec.Value // noteMapPut: the map the bin now holds
}

type noteKind uint8

const (
	noteCleared   noteKind = iota // the bin is now absent or an empty map
	noteMapPut                    // the bin now holds pairs
	noteUntracked                 // the bin changed in a way not followed
)

func (p *plan) note(bin string, kind noteKind, pairs []codec.Value) {
	p.notes = append(p.notes, binNote{bin: bin, kind: kind, pairs: pairs})
}

// clearAll records that every bin is gone.
func (p *plan) clearAll() {
	p.cleared = true
	p.notes = p.notes[:0]
	for i := range p.tracks {
		p.tracks[i] = addTrack{target: p.tracks[i].target, known: true}
	}
}

// track returns the add track for a target, creating it in the state that
// earlier ops of the call left the target in.
func (p *plan) track(t addTarget) *addTrack {
	for i := range p.tracks {
		if p.tracks[i].target.same(t) {
			return &p.tracks[i]
		}
	}
	tr := addTrack{target: t}
	if p.cleared {
		tr.known = true
	}
	for i := len(p.notes) - 1; i >= 0; i-- {
		n := &p.notes[i]
		if n.bin != t.bin {
			continue
		}
		switch n.kind {
		case noteCleared:
			tr.known, tr.value = true, codec.Nil
		case noteUntracked:
			// Plain targets get their own track from the op that wrote
			// the bin; the note is for map keys.
			tr.untracked = t.isMap
		case noteMapPut:
			tr.known, tr.value = true, codec.Nil
			if !t.isMap {
				tr.value = codec.Value{Kind: codec.KindMap}
				break
			}
			for k := 0; k+1 < len(n.pairs); k += 2 {
				if n.pairs[k].Equal(t.key) {
					tr.value = n.pairs[k+1]
				}
			}
		}
		break
	}
	p.tracks = append(p.tracks, tr)
	return &p.tracks[len(p.tracks)-1]
}

// dropBin forgets every track on bin (a whole-bin write follows).
func (p *plan) dropBin(bin string) {
	k := 0
	for _, tr := range p.tracks {
		if tr.target.bin != bin {
			p.tracks[k] = tr
			k++
		}
	}
	p.tracks = p.tracks[:k]
}

// setKnown records that an op of the call set target to v.
func (p *plan) setKnown(t addTarget, v codec.Value) {
	tr := p.track(t)
	if tr.untracked {
		return
	}
	tr.known, tr.value = true, v
	tr.ints = tr.ints[:0]
}

// untrackMap marks every map key of bin as changed in a way the overflow
// check does not follow.
func (p *plan) untrackMap(bin string) {
	for i := range p.tracks {
		if p.tracks[i].target.bin == bin && p.tracks[i].target.isMap {
			p.tracks[i].untracked = true
		}
	}
	p.note(bin, noteUntracked, nil)
}

// addDelta records an add of delta to target.
func (p *plan) addDelta(t addTarget, delta codec.Value) {
	tr := p.track(t)
	if tr.untracked {
		return
	}
	if tr.known {
		v, overflow, ok := addValue(tr.value, delta)
		switch {
		case overflow:
			p.fail(codec.Overflow, "increment or decrement would overflow")
		case ok:
			tr.value = v
		default:
			tr.untracked = true // kinds do not add: the server will say so
		}
		return
	}
	if delta.Kind == codec.KindInt {
		tr.ints = append(tr.ints, delta.Int)
	} else {
		tr.untracked = true // float adds are not bounded
	}
}

func (t *translator) translateOp(call *codec.Call, i int, op *codec.Op, p *plan, nowMs int64) {
	if op.Return.Inverted() && !selectsItems(op.Code) {
		p.fail(codec.InvalidOperation, "ReturnInverted on op %d, which selects no map items", op.Code)
		return
	}
	if op.Return.Reversed() && !op.Return.ReplyReturn() {
		p.fail(codec.InvalidOperation, "ReturnReversed on op %d without a reply return type", op.Code)
		return
	}
	switch op.Code {
	case codec.OpGet:
		if op.Bin == "" {
			if p.getAll >= 0 {
				p.fail(codec.InvalidOperation, "more than one read of all bins in a call")
			}
			p.getAll = i
			p.add(t.opGetAll, slot{op: i, dec: decValue})
			return
		}
		p.add(t.getOp(op.Bin), slot{bin: op.Bin, op: i, dec: decValue, entry: true, resp: true})

	case codec.OpPut:
		if op.Bin == "" {
			p.fail(codec.InvalidOperation, "put needs a bin")
			return
		}
		bt := addTarget{bin: op.Bin}
		switch op.Value.Kind {
		case codec.KindMap:
			if len(op.Value.List)%2 != 0 {
				p.fail(codec.InvalidOperation, "map value with an odd number of elements")
				return
			}
			// A map bin is written as "delete the bin, put the items" so that
			// it gets the map order of the flags (key order by default).
			p.add(as.PutOp(&as.Bin{Name: op.Bin, Value: as.NewNullValue()}), slot{bin: op.Bin, op: i, entry: true})
			if len(op.Value.List) > 0 {
				p.add(t.putItems(op.Bin, op.Flags, op.Value.List), slot{bin: op.Bin, op: -1, entry: true, resp: true})
			}
			p.dropBin(op.Bin)
			p.note(op.Bin, noteMapPut, op.Value.List)
		default:
			p.add(t.putOp(op, p), slot{bin: op.Bin, op: i, entry: true})
			if !p.adds {
				break // what a put leaves matters only to an add after it
			}
			p.dropBin(op.Bin)
			if op.Value.Kind == codec.KindNil {
				p.note(op.Bin, noteCleared, nil)
			} else {
				p.note(op.Bin, noteUntracked, nil)
			}
			p.setKnown(bt, op.Value)
		}

	case codec.OpAdd:
		if op.Bin == "" {
			p.fail(codec.InvalidOperation, "add needs a bin")
			return
		}
		if op.Value.Kind != codec.KindInt && op.Value.Kind != codec.KindFloat {
			p.fail(codec.InvalidOperation, "add needs an int or float delta")
			return
		}
		p.add(p.own(as.AddOp(&as.Bin{Name: op.Bin, Value: toClientValue(op.Value)})), slot{bin: op.Bin, op: i, entry: true})
		p.addDelta(addTarget{bin: op.Bin}, op.Value)

	case codec.OpAppend, codec.OpPrepend:
		if op.Bin == "" {
			p.fail(codec.InvalidOperation, "append needs a bin")
			return
		}
		if op.Value.Kind != codec.KindBytes && op.Value.Kind != codec.KindStr {
			p.fail(codec.InvalidOperation, "append needs bytes")
			return
		}
		b := &as.Bin{Name: op.Bin, Value: toClientValue(op.Value)}
		if op.Code == codec.OpAppend {
			p.add(as.AppendOp(b), slot{bin: op.Bin, op: i, entry: true})
		} else {
			p.add(as.PrependOp(b), slot{bin: op.Bin, op: i, entry: true})
		}
		p.dropBin(op.Bin)
		p.note(op.Bin, noteUntracked, nil)
		p.track(addTarget{bin: op.Bin}).untracked = true

	case codec.OpDelete:
		p.add(t.opDelete, slot{op: i, entry: true})
		p.clearAll()

	case codec.OpTouch:
		p.add(t.opTouch, slot{op: i}) // the server answers a touch with no entry

	case codec.OpGetHeader:
		p.add(t.opHeader, slot{op: i, entry: true})

	case codec.OpMapPut:
		if len(op.Values)%2 != 0 {
			p.fail(codec.InvalidOperation, "map put with an odd number of elements")
			return
		}
		s := slot{bin: op.Bin, op: i, dec: decValue, entry: true, resp: true}
		switch len(op.Values) {
		case 0:
			// Nothing to put: answer the size.
			p.add(as.MapSizeOp(op.Bin), slot{bin: op.Bin, op: i, dec: decSize, entry: true, resp: true})
		case 2:
			p.add(as.MapPutOp(t.mapPolicy(op.Flags), op.Bin, toClient(op.Values[0]), toClient(op.Values[1])), s)
		default:
			p.add(t.putItems(op.Bin, op.Flags, op.Values), s)
		}
		for k := 0; k+1 < len(op.Values); k += 2 {
			if op.Flags&(codec.MapWriteCreateOnly|codec.MapWriteUpdateOnly) != 0 {
				// Whether the item was written depends on the record.
				p.track(addTarget{bin: op.Bin, isMap: true, key: op.Values[k]}).untracked = true
			} else {
				p.setKnown(addTarget{bin: op.Bin, isMap: true, key: op.Values[k]}, op.Values[k+1])
			}
		}

	case codec.OpMapIncrement:
		if op.Value2.Kind != codec.KindInt && op.Value2.Kind != codec.KindFloat {
			p.fail(codec.InvalidOperation, "map increment needs an int or float delta")
			return
		}
		p.add(as.MapIncrementOp(t.mapPolicy(op.Flags), op.Bin, toClient(op.Value), toClient(op.Value2)),
			slot{bin: op.Bin, op: i, dec: decValue, entry: true, resp: true})
		p.addDelta(addTarget{bin: op.Bin, isMap: true, key: op.Value}, op.Value2)

	case codec.OpMapSize:
		p.add(as.MapSizeOp(op.Bin), slot{bin: op.Bin, op: i, dec: decSize, entry: true, resp: true})

	case codec.OpMapGetByKeys, codec.OpMapRemoveByKeys,
		codec.OpMapGetByIndex, codec.OpMapRemoveByIndex,
		codec.OpMapGetByRank, codec.OpMapRemoveByRank,
		codec.OpMapGetByValues, codec.OpMapRemoveByValueRange,
		codec.OpMapGetByKeyRange, codec.OpMapRemoveByKeyRange,
		codec.OpMapGetByValueRelRank, codec.OpMapGetByKeyRelIndex:
		t.translateSelect(i, op, p)

	case codec.OpMapGeoSearch:
		translateGeoSearch(i, op, p)

	case codec.OpMapClear:
		p.add(as.MapClearOp(op.Bin), slot{bin: op.Bin, op: i, entry: true, resp: true})
		for j := range p.tracks {
			if p.tracks[j].target.bin == op.Bin && p.tracks[j].target.isMap {
				p.tracks[j] = addTrack{target: p.tracks[j].target, known: true}
			}
		}
		p.note(op.Bin, noteCleared, nil)

	case codec.OpListAppend, codec.OpListInsert, codec.OpListSize, codec.OpListGetByIndex,
		codec.OpListRemoveByIndex, codec.OpListSet, codec.OpListGetByValue, codec.OpListRemoveByValue:
		translateList(i, op, p)

	case codec.OpBitGrow, codec.OpBitGet, codec.OpBitSet, codec.OpBitCount:
		translateBit(i, op, p)

	case codec.OpHLLRaise:
		translateHLLRaise(call, i, op, p, nowMs)

	case codec.OpExpectListItem:
		// A condition of the filter expression, evaluated before the ops;
		// no operation of its own, so its value stays nil. An index past
		// the list's end makes the expression fail, which filters the
		// record out as an unequal item does.
		if op.Bin == "" {
			p.fail(codec.InvalidOperation, "OpExpectListItem needs a bin")
			return
		}
		var typ as.ExpType
		var val *as.Expression
		switch op.Value.Kind {
		case codec.KindBytes:
			typ, val = as.ExpTypeBLOB, as.ExpBlobVal(op.Value.Bytes)
		case codec.KindStr:
			typ, val = as.ExpTypeSTRING, as.ExpStringVal(string(op.Value.Bytes))
		case codec.KindInt:
			typ, val = as.ExpTypeINT, as.ExpIntVal(op.Value.Int)
		case codec.KindFloat:
			typ, val = as.ExpTypeFLOAT, as.ExpFloatVal(op.Value.Float)
		default:
			p.fail(codec.InvalidOperation, "OpExpectListItem compares bytes, strings or numbers, not kind %d", op.Value.Kind)
			return
		}
		item := as.ExpListGetByIndex(as.ListReturnTypeValue, typ, as.ExpIntVal(op.Index), as.ExpListBin(op.Bin))
		p.expects = append(p.expects, as.ExpEq(item, val))

	case codec.OpExpectBlobSize:
		// A condition of the filter expression, as OpExpectListItem: a
		// blob bin whose resize to the size leaves it as it is (the
		// client has no blob-length expression; hllDenseExp's test). The
		// type test comes first, so the resize never sees a non-blob.
		if op.Bin == "" || op.Index < 0 {
			p.fail(codec.InvalidOperation, "OpExpectBlobSize needs a bin and a size >= 0")
			return
		}
		p.expects = append(p.expects, blobSizeExp(op.Bin, op.Index))

	default:
		p.fail(codec.InvalidOperation, "unknown op code %d", op.Code)
	}
}

// List policies: respike's lists are unordered; inserts and sets stay
// within the list (INSERT_BOUNDED), where Aerospike would otherwise pad
// with nils.
var (
	listAppendPolicy  = as.NewListPolicy(as.ListOrderUnordered, as.ListWriteFlagsDefault)
	listBoundedPolicy = as.NewListPolicy(as.ListOrderUnordered, as.ListWriteFlagsInsertBounded)
)

func listReturn(r codec.MapReturn) (as.ListReturnType, bool) {
	var rt as.ListReturnType
	switch r.Type() {
	case codec.ReturnNone:
		rt = as.ListReturnTypeNone
	case codec.ReturnCount:
		rt = as.ListReturnTypeCount
	case codec.ReturnValue:
		rt = as.ListReturnTypeValue
	case codec.ReturnIndex:
		rt = as.ListReturnTypeIndex
	case codec.ReturnBulks:
		rt = as.ListReturnTypeValue
	case codec.ReturnExists:
		rt = as.ListReturnTypeExists
	default:
		return 0, false
	}
	if r.Inverted() {
		rt |= as.ListReturnTypeInverted
	}
	return rt, true
}

// translateList translates a list op to Aerospike's list CDT operations.
func translateList(i int, op *codec.Op, p *plan) {
	if op.Bin == "" {
		p.fail(codec.InvalidOperation, "list op needs a bin")
		return
	}
	s := slot{bin: op.Bin, op: i, dec: decValue, entry: true, resp: true}
	idx, cnt := int(op.Index), int(op.Count)
	var o *as.Operation
	switch op.Code {
	case codec.OpListAppend, codec.OpListInsert:
		if len(op.Values) == 0 {
			p.fail(codec.InvalidOperation, "list append or insert without items")
			return
		}
		items := make([]any, len(op.Values))
		for k := range op.Values {
			items[k] = toClient(op.Values[k])
		}
		if op.Code == codec.OpListAppend {
			o = as.ListAppendWithPolicyOp(listAppendPolicy, op.Bin, items...)
		} else {
			o = as.ListInsertWithPolicyOp(listBoundedPolicy, op.Bin, idx, items...)
		}
	case codec.OpListSize:
		o, s.dec = as.ListSizeOp(op.Bin), decSize
	case codec.OpListSet:
		// Aerospike 8.1 sets at index == size by appending, even with
		// INSERT_BOUNDED (seen on CE 8.1.2); a get of that one index
		// first fails the whole operate with OP_NOT_APPLICABLE, so a set
		// only replaces an item that is there, as LSET needs. (Before
		// the head, the set itself fails the same way.)
		if idx >= 0 {
			p.add(as.ListGetByIndexOp(op.Bin, idx, as.ListReturnTypeNone), slot{bin: op.Bin, op: -1, entry: true, resp: true})
		}
		o, s.dec = as.ListSetWithPolicyOp(listBoundedPolicy, op.Bin, idx, toClient(op.Value)), decNone
	default:
		rt, ok := listReturn(op.Return)
		if !ok {
			p.fail(codec.InvalidOperation, "unknown list return type %d", op.Return)
			return
		}
		s.dec, s.ret = decMapRead, op.Return.Type()
		if s.ret == codec.ReturnBulks {
			if op.Code != codec.OpListGetByIndex && op.Code != codec.OpListGetByValue {
				p.fail(codec.InvalidOperation, "ReturnBulks on a list op that is not a read")
				return
			}
			s.dec = decBulks
		}
		switch op.Code {
		case codec.OpListGetByIndex:
			if cnt < 0 {
				o = as.ListGetByIndexRangeOp(op.Bin, idx, rt)
			} else {
				o = as.ListGetByIndexRangeCountOp(op.Bin, idx, cnt, rt)
			}
		case codec.OpListRemoveByIndex:
			if cnt < 0 {
				o = as.ListRemoveByIndexRangeOp(op.Bin, idx, rt)
			} else {
				o = as.ListRemoveByIndexRangeCountOp(op.Bin, idx, cnt, rt)
			}
		case codec.OpListGetByValue:
			o = as.ListGetByValueOp(op.Bin, toClient(op.Value), rt)
		case codec.OpListRemoveByValue:
			o = as.ListRemoveByValueOp(op.Bin, toClient(op.Value), rt)
		}
	}
	p.add(o, s)
}

// putItems is a map put of several pairs. The client takes them as a Go map,
// which also keeps only the last value of a repeated key, as Redis does.
func (t *translator) putItems(bin string, flags uint32, kv []codec.Value) *as.Operation {
	m := make(map[any]any, len(kv)/2)
	for k := 0; k+1 < len(kv); k += 2 {
		m[toClientKey(kv[k])] = toClient(kv[k+1])
	}
	return as.MapPutItemsOp(t.mapPolicy(flags), bin, m)
}

// translateSelect translates a map get or remove of selected items.
func (t *translator) translateSelect(i int, op *codec.Op, p *plan) {
	ret, inverted := op.Return.Type(), op.Return.Inverted()
	var reply codec.MapReturn
	if op.Return.ReplyReturn() {
		// The items are read with their values, in the contract's order
		// as for ReturnKeyValue, and laid out as the reply after.
		if !op.Code.ReadOnly() {
			p.fail(codec.InvalidOperation, "reply return type %d on a map op that is not a read", op.Return)
			return
		}
		reply, ret = op.Return&^codec.ReturnInverted, codec.ReturnKeyValue
	}
	rt, ok := mapReturn(ret)
	if !ok {
		p.fail(codec.InvalidOperation, "unknown map return type %d", op.Return)
		return
	}
	s := slot{bin: op.Bin, op: i, dec: decMapRead, ret: ret, reply: reply, entry: true, resp: true}
	if ret == codec.ReturnRank || ret == codec.ReturnReverseRank {
		// Aerospike CE 8.1.2 refuses a rank return on a key list, even of
		// one key (OP_NOT_APPLICABLE, observed); the single-key ops answer
		// it. codec.RankReturn limits the contract to them.
		if !codec.RankReturn(op) {
			p.fail(codec.InvalidOperation, "a rank return needs a get or remove by one key")
			return
		}
		s.dec = decRankOne
		if op.Code == codec.OpMapRemoveByKeys {
			p.add(as.MapRemoveByKeyOp(op.Bin, toClient(op.Values[0]), rt), s)
			p.setKnown(addTarget{bin: op.Bin, isMap: true, key: op.Values[0]}, codec.Nil)
		} else {
			p.add(as.MapGetByKeyOp(op.Bin, toClient(op.Values[0]), rt), s)
		}
		return
	}
	if inverted {
		rt |= as.MapReturnType.INVERTED
		switch ret {
		case codec.ReturnExists:
			// Aerospike 8.1.2 answers EXISTS|INVERTED with false for rank
			// and value ranges whose complement is not empty (observed);
			// a count says it right.
			rt, s.dec = as.MapReturnType.COUNT|as.MapReturnType.INVERTED, decExistsCount
		case codec.ReturnKey, codec.ReturnValue, codec.ReturnKeyValue:
			if op.Code == codec.OpMapGetByRank || op.Code == codec.OpMapRemoveByRank {
				// Aerospike answers an inverted rank range in key order
				// unless the complement is one run of ranks (observed);
				// the contract is rank order.
				rt, s.dec = as.MapReturnType.KEY_VALUE|as.MapReturnType.INVERTED, decValueRange
			}
		}
	}
	idx, cnt := int(op.Index), int(op.Count)
	var o *as.Operation
	switch op.Code {
	case codec.OpMapGetByKeys, codec.OpMapRemoveByKeys:
		remove := op.Code == codec.OpMapRemoveByKeys
		switch {
		case inverted && len(op.Values) == 0:
			// Every item. Aerospike CE 8.1.2 crashed (SIGSEGV in
			// packed_map_get_remove_all_by_key_list) on an inverted get by
			// an empty key list; an index range from 0 says the same.
			rt &^= as.MapReturnType.INVERTED
			if remove {
				o = as.MapRemoveByIndexRangeOp(op.Bin, 0, rt)
			} else {
				o = as.MapGetByIndexRangeOp(op.Bin, 0, rt)
			}
		case remove:
			o = as.MapRemoveByKeyListOp(op.Bin, clientKeys(op.Values), rt)
		default:
			o = as.MapGetByKeyListOp(op.Bin, clientKeys(op.Values), rt)
		}
		if remove {
			if inverted {
				p.untrackMap(op.Bin)
			} else {
				for _, k := range op.Values {
					p.setKnown(addTarget{bin: op.Bin, isMap: true, key: k}, codec.Nil)
				}
			}
		}
	case codec.OpMapGetByIndex:
		if cnt < 0 {
			o = as.MapGetByIndexRangeOp(op.Bin, idx, rt)
		} else {
			o = as.MapGetByIndexRangeCountOp(op.Bin, idx, cnt, rt)
		}
	case codec.OpMapRemoveByIndex:
		if cnt < 0 {
			o = as.MapRemoveByIndexRangeOp(op.Bin, idx, rt)
		} else {
			o = as.MapRemoveByIndexRangeCountOp(op.Bin, idx, cnt, rt)
		}
		p.untrackMap(op.Bin)
	case codec.OpMapGetByRank:
		if cnt < 0 {
			o = as.MapGetByRankRangeOp(op.Bin, idx, rt)
		} else {
			o = as.MapGetByRankRangeCountOp(op.Bin, idx, cnt, rt)
		}
	case codec.OpMapRemoveByRank:
		if cnt < 0 {
			o = as.MapRemoveByRankRangeOp(op.Bin, idx, rt)
		} else {
			o = as.MapRemoveByRankRangeCountOp(op.Bin, idx, cnt, rt)
		}
		p.untrackMap(op.Bin)
	case codec.OpMapGetByValues, codec.OpMapRemoveByValueRange:
		// Aerospike answers a value range in map (key) order, inverted or
		// not; the contract is rank order. Items come back with their
		// values and are sorted here.
		switch ret {
		case codec.ReturnKey, codec.ReturnValue, codec.ReturnKeyValue:
			rt, s.dec = as.MapReturnType.KEY_VALUE|(rt&as.MapReturnType.INVERTED), decValueRange
		}
		if op.Code == codec.OpMapGetByValues {
			o = as.MapGetByValueRangeOp(op.Bin, toClient(op.Value), toClient(op.Value2), rt)
		} else {
			o = as.MapRemoveByValueRangeOp(op.Bin, toClient(op.Value), toClient(op.Value2), rt)
			p.untrackMap(op.Bin)
		}
	case codec.OpMapGetByValueRelRank:
		// Aerospike answers in map (key) order: sorted into rank order as
		// for value ranges.
		switch ret {
		case codec.ReturnKey, codec.ReturnValue, codec.ReturnKeyValue:
			rt, s.dec = as.MapReturnType.KEY_VALUE, decValueRange
		}
		if cnt < 0 {
			o = as.MapGetByValueRelativeRankRangeOp(op.Bin, toClient(op.Value), idx, rt)
		} else {
			o = as.MapGetByValueRelativeRankRangeCountOp(op.Bin, toClient(op.Value), idx, cnt, rt)
		}
	case codec.OpMapGetByKeyRelIndex:
		if cnt < 0 {
			o = as.MapGetByKeyRelativeIndexRangeOp(op.Bin, toClient(op.Value), idx, rt)
		} else {
			o = as.MapGetByKeyRelativeIndexRangeCountOp(op.Bin, toClient(op.Value), idx, cnt, rt)
		}
	case codec.OpMapGetByKeyRange:
		o = as.MapGetByKeyRangeOp(op.Bin, toClient(op.Value), toClient(op.Value2), rt)
	case codec.OpMapRemoveByKeyRange:
		o = as.MapRemoveByKeyRangeOp(op.Bin, toClient(op.Value), toClient(op.Value2), rt)
		p.untrackMap(op.Bin)
	}
	p.add(o, s)
}

// Bit policies: a grow is a resize that only grows and, with NO_FAIL,
// leaves a blob already long enough as it is (GROW_ONLY alone refuses a
// smaller size with PARAMETER_ERROR; seen on CE 8.1.2).
var (
	bitGrowPolicy = as.NewBitPolicy(as.BitWriteFlagsNoFail)
	bitSetPolicy  = as.DefaultBitPolicy()
)

// translateBit translates a bit op to Aerospike's bitwise operations.
func translateBit(i int, op *codec.Op, p *plan) {
	if op.Bin == "" {
		p.fail(codec.InvalidOperation, "bit op needs a bin")
		return
	}
	if op.Count < 1 || op.Code != codec.OpBitGrow && op.Index < 0 {
		p.fail(codec.InvalidOperation, "a bit op needs Index >= 0 and Count >= 1")
		return
	}
	s := slot{bin: op.Bin, op: i, dec: decValue, entry: true, resp: true}
	off, n := int(op.Index), int(op.Count)
	switch op.Code {
	case codec.OpBitGrow:
		s.dec = decNone
		p.add(as.BitResizeOp(bitGrowPolicy, op.Bin, n, as.BitResizeFlagsGrowOnly), s)
	case codec.OpBitSet:
		if op.Value.Kind != codec.KindBytes {
			p.fail(codec.InvalidOperation, "a bit set needs bytes")
			return
		}
		s.dec = decNone
		p.add(as.BitSetOp(bitSetPolicy, op.Bin, off, n, op.Value.Bytes), s)
	case codec.OpBitGet:
		p.add(as.BitGetOp(op.Bin, off, n), s)
		return
	case codec.OpBitCount:
		p.add(as.BitCountOp(op.Bin, off, n), s)
		return
	}
	// The bin's value is no longer known to the overflow bounds.
	p.dropBin(op.Bin)
	p.note(op.Bin, noteUntracked, nil)
	p.track(addTarget{bin: op.Bin}).untracked = true
}
