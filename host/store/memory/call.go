package memory

import (
	"slices"
	"strconv"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// callCtx is the scratch state of one Call: the bins being built (the
// draft) and the undo log of in-place map changes. Each shard owns one and
// uses it under its lock, so running a call allocates nothing for it.
type callCtx struct {
	draft []bin
	undo  []undoRec
	idx   []int32   // selected list items
	sel   []*entry  // selected map items
	geo   []geoKept // items an OpMapGeoSearch keeps
	// dst is storage a list read may reuse for its result (length 0):
	// the list of the response's previous value for the op.
	dst []codec.Value
	// cleared is set when an OpDelete dropped every bin of the draft,
	// the exact expiry with them.
	cleared bool
	// ownBlob is the blob the call's last bit write made, not yet seen by
	// anyone: the bit writes that follow it in the call change it in
	// place instead of copying it again (a PFADD sets a few registers of
	// a 12 KB HLL with several bit writes). Any other op forgets it.
	ownBlob []byte
	// unchanged is set by an OpHLLRaise that raised no register: the
	// call then writes nothing.
	unchanged bool
}

// opError is a failed op: the call's result code and message.
type opError struct {
	code codec.Code
	msg  string
}

var (
	errBinType     = &opError{codec.BinTypeError, "memory: bin type mismatch"}
	errOverflow    = &opError{codec.Overflow, "memory: integer overflow"}
	errParam       = &opError{codec.ParameterError, "memory: invalid parameter"}
	errElemExists  = &opError{codec.ElementExists, "memory: map key exists"}
	errElemMissing = &opError{codec.ElementNotFound, "memory: map key not found"}
)

func (s *Store) execCall(d *db, c *codec.Call, res *codec.Result, now *instant) {
	res.Code, res.Msg, res.Generation, res.TTL = codec.OK, "", 0, 0
	// A list value of the response's previous use keeps its List (with
	// Kind Nil) for a list read of the same op to reuse: Exec reuses
	// resp's slices (store.Store), and an LRANGE of 600 items then
	// allocates nothing. Every op overwrites its value; a failure clears
	// them all.
	vals := res.Values[:0]
	for i := range c.Ops {
		var v codec.Value
		if i < len(res.Values) && res.Values[i].Kind == codec.KindList {
			v.List = res.Values[i].List[:0]
		}
		vals = append(vals, v)
	}
	res.Values = vals

	writes, e := validate(c)
	if e != nil {
		fail(res, e)
		return
	}
	sh, slot := d.locate(c.Key)
	sh.mu.Lock()
	if writes {
		s.write(sh, slot, c, res, now)
	} else {
		read(sh, slot, c, res, now)
	}
	sh.mu.Unlock()
}

// fail reports a failed call: nothing read, nothing written.
func fail(res *codec.Result, e *opError) {
	res.Code, res.Msg, res.Generation, res.TTL = e.code, e.msg, 0, 0
	clear(res.Values)
}

// validate checks what can be checked without the record, and reports
// whether the call writes.
func validate(c *codec.Call) (writes bool, e *opError) {
	p := &c.Policy
	if p.Exists > codec.ExistsCreateOnly {
		return false, &opError{codec.InvalidOperation, "memory: unknown exists policy"}
	}
	switch p.TTL {
	case codec.TTLKeep, codec.TTLNever:
	case codec.TTLSeconds:
		if p.Seconds < 1 {
			return false, &opError{codec.InvalidOperation, "memory: TTLSeconds needs Seconds >= 1"}
		}
	case codec.TTLAt:
		if p.Seconds < 1 {
			return false, &opError{codec.InvalidOperation, "memory: TTLAt needs a Unix time in ms >= 1"}
		}
	default:
		return false, &opError{codec.InvalidOperation, "memory: unknown TTL mode"}
	}
	for i := range c.Ops {
		o := &c.Ops[i]
		needBin := true
		switch o.Code {
		case codec.OpGet:
			needBin = false
		case codec.OpGetHeader:
			needBin = false
		case codec.OpDelete, codec.OpTouch:
			needBin = false
			writes = true
		case codec.OpPut, codec.OpAdd, codec.OpAppend, codec.OpPrepend, codec.OpMapIncrement, codec.OpMapClear:
			writes = true
		case codec.OpMapPut:
			writes = true
			if len(o.Values)%2 != 0 {
				return false, &opError{codec.InvalidOperation, "memory: map put needs key, value pairs"}
			}
		case codec.OpMapRemoveByKeys, codec.OpMapRemoveByIndex, codec.OpMapRemoveByRank,
			codec.OpMapRemoveByValueRange, codec.OpMapRemoveByKeyRange:
			writes = true
			if o.Return.Type() > codec.ReturnReverseRank {
				return false, &opError{codec.InvalidOperation, "memory: unknown map return type"}
			}
		case codec.OpMapSize:
		case codec.OpMapGeoSearch:
			if e := validateGeoSearch(o); e != nil {
				return false, e
			}
		case codec.OpListAppend, codec.OpListInsert:
			writes = true
			if len(o.Values) == 0 {
				return false, &opError{codec.InvalidOperation, "memory: list append or insert without items"}
			}
		case codec.OpListSet:
			writes = true
		case codec.OpListRemoveByIndex, codec.OpListRemoveByValue:
			writes = true
			if !listReturnOK(o.Return) {
				return false, &opError{codec.InvalidOperation, "memory: unknown list return type"}
			}
		case codec.OpListSize:
		case codec.OpBitGrow, codec.OpBitSet, codec.OpBitGet, codec.OpBitCount:
			writes = writes || o.Code == codec.OpBitGrow || o.Code == codec.OpBitSet
			if e := validateBitOp(o); e != nil {
				return false, e
			}
		case codec.OpHLLRaise:
			writes = true
			if e := validateHLLRaise(c, o); e != nil {
				return false, e
			}
		case codec.OpExpectBlobSize:
			if o.Index < 0 {
				return false, &opError{codec.InvalidOperation, "memory: OpExpectBlobSize needs a size >= 0"}
			}
		case codec.OpExpectListItem:
			switch o.Value.Kind {
			case codec.KindBytes, codec.KindStr, codec.KindInt, codec.KindFloat:
			default:
				return false, &opError{codec.InvalidOperation, "memory: OpExpectListItem compares bytes, strings or numbers"}
			}
		case codec.OpListGetByIndex, codec.OpListGetByValue:
			if !listReturnOK(o.Return) && o.Return.Type() != codec.ReturnBulks {
				return false, &opError{codec.InvalidOperation, "memory: unknown list return type"}
			}
		case codec.OpMapGetByKeys, codec.OpMapGetByIndex, codec.OpMapGetByRank, codec.OpMapGetByValues, codec.OpMapGetByKeyRange,
			codec.OpMapGetByValueRelRank, codec.OpMapGetByKeyRelIndex:
			if o.Return.Type() > codec.ReturnReverseRank && !o.Return.ReplyReturn() {
				return false, &opError{codec.InvalidOperation, "memory: unknown map return type"}
			}
		default:
			return false, &opError{codec.InvalidOperation, "memory: unknown op code"}
		}
		if rt := o.Return.Type(); (rt == codec.ReturnRank || rt == codec.ReturnReverseRank) && !codec.RankReturn(o) {
			// As Aerospike, which answers rank returns only for one key.
			return false, &opError{codec.InvalidOperation, "memory: a rank return needs a get or remove by one key"}
		}
		if o.Return.Reversed() && !o.Return.ReplyReturn() {
			return false, &opError{codec.InvalidOperation, "memory: ReturnReversed without a reply return type"}
		}
		if o.Return.Inverted() && !selects(o.Code) && !listSelects(o.Code) {
			return false, &opError{codec.InvalidOperation, "memory: ReturnInverted on an op that selects no map items"}
		}
		if needBin && o.Bin == "" {
			return false, &opError{codec.InvalidOperation, "memory: op needs a bin name"}
		}
		if len(o.Bin) > maxBinName {
			return false, &opError{codec.InvalidOperation, "memory: bin name longer than 15 bytes"}
		}
	}
	if writes && p.TTL == codec.TTLSeconds && p.Seconds > maxTTL {
		// Aerospike refuses TTLs over 10 years with PARAMETER_ERROR.
		return false, &opError{codec.ParameterError, "memory: TTL over 10 years"}
	}
	return writes, nil
}

// guardPasses reports whether the type guard admits an existing record: its
// type bin equals the guard, or it has no type bin (the filter expression is
// `t == guard or not exists(t)`).
func guardPasses(bins []bin, guard string) bool {
	if guard == "" {
		return true
	}
	b := findBin(bins, codec.BinType)
	if b == nil {
		return true
	}
	return b.val.Kind == codec.KindStr && string(b.val.Bytes) == guard
}

// expectsPass reports whether every OpExpectListItem and OpExpectBlobSize
// of ops holds on bins: the list bin has an item at the index equal to the
// value, the blob bin has the size. Like
// Aerospike's filter expression, it sees the record before the ops, and a
// missing bin, a bin that is not a list or an index out of range fails it.
func expectsPass(bins []bin, ops []codec.Op) bool {
	for i := range ops {
		o := &ops[i]
		if o.Code == codec.OpExpectBlobSize {
			// A blob of exactly that many bytes (OpExpectBlobSize).
			b := findBin(bins, o.Bin)
			if b == nil || b.val.Kind != codec.KindBytes || int64(len(b.val.Bytes)) != o.Index {
				return false
			}
			continue
		}
		if o.Code != codec.OpExpectListItem {
			continue
		}
		b := findBin(bins, o.Bin)
		if b == nil || b.l == nil {
			return false
		}
		items := b.l.items()
		idx := o.Index
		if idx < 0 {
			idx += int64(len(items))
		}
		if idx < 0 || idx >= int64(len(items)) || !items[idx].Equal(o.Value) {
			return false
		}
	}
	return true
}

// read runs a call without write ops, as Aerospike's read path does: a
// missing record is NotFound; the generation check, TTL and exists policies
// do not apply.
func read(sh *shard, slot int, c *codec.Call, res *codec.Result, now *instant) {
	r := sh.lookup(slot, c.Key, now)
	if r == nil {
		fail(res, &opError{codec.NotFound, "memory: record not found"})
		return
	}
	if !guardPasses(r.bins, c.Policy.Guard) {
		fail(res, &opError{codec.FilteredOut, "memory: filtered out by the type guard"})
		return
	}
	if !expectsPass(r.bins, c.Ops) {
		fail(res, &opError{codec.FilteredOut, "memory: filtered out: a list item is not the one expected"})
		return
	}
	cx := &sh.cx
	for i := range c.Ops {
		cx.dst = res.Values[i].List
		v, e := cx.readOp(r.bins, &c.Ops[i])
		if e != nil {
			fail(res, e)
			return
		}
		res.Values[i] = v
	}
	cx.dst = nil
	res.Generation = r.gen
	res.TTL = ttl(r.expires, now)
}

// write runs a call with write ops atomically: the ops build a draft of the
// record's bins (map bins change in place, with an undo log); any failure
// undoes everything, success commits the draft.
func (s *Store) write(sh *shard, slot int, c *codec.Call, res *codec.Result, now *instant) {
	p := &c.Policy
	r := sh.lookup(slot, c.Key, now)

	// Checks in Aerospike's order (write_master): existence, generation,
	// then the filter, which applies only to an existing record.
	switch {
	case r == nil && (p.Exists == codec.ExistsUpdateOnly || p.Exists == codec.ExistsReplaceOnly):
		fail(res, &opError{codec.NotFound, "memory: record not found"})
		return
	case r != nil && p.Exists == codec.ExistsCreateOnly:
		fail(res, &opError{codec.Exists, "memory: record exists"})
		return
	}
	var gen uint32
	if r != nil {
		gen = r.gen
	}
	if p.Generation != 0 && p.Generation != gen {
		fail(res, &opError{codec.GenerationError, "memory: generation mismatch"})
		return
	}
	if r != nil && !guardPasses(r.bins, p.Guard) {
		fail(res, &opError{codec.FilteredOut, "memory: filtered out by the type guard"})
		return
	}
	if r != nil && !expectsPass(r.bins, c.Ops) {
		fail(res, &opError{codec.FilteredOut, "memory: filtered out: a list item is not the one expected"})
		return
	}

	cx := &sh.cx
	cx.draft = cx.draft[:0]
	cx.undo = cx.undo[:0]
	if r != nil && p.Exists != codec.ExistsReplace && p.Exists != codec.ExistsReplaceOnly {
		cx.draft = append(cx.draft, r.bins...)
	}
	defer cx.reset()

	for i := range c.Ops {
		cx.dst = res.Values[i].List
		v, e := cx.writeOp(&c.Ops[i])
		if e != nil {
			cx.rollback()
			fail(res, e)
			return
		}
		res.Values[i] = v
	}
	if cx.unchanged {
		// An OpHLLRaise that raised nothing: no write at all, and no
		// record metadata in the answer, as on Aerospike, where its
		// filter leaves the record alone.
		cx.rollback()
		return
	}

	// The exact expiry bin follows the TTL mode, as on Aerospike, where
	// it is one more bin write of the same operate (see expire.go).
	// A call that leaves no other bin (a delete, a touch of a missing
	// record) keeps no expiry either.
	hasBins := false
	for i := range cx.draft {
		hasBins = hasBins || cx.draft[i].name != codec.BinExpire
	}
	switch {
	case !hasBins:
		cx.deleteBin(codec.BinExpire)
	case p.TTL == codec.TTLAt:
		cx.setBin(codec.BinExpire, codec.Int(p.Seconds), nil)
	case p.TTL == codec.TTLNever, p.TTL == codec.TTLSeconds:
		cx.deleteBin(codec.BinExpire)
	case p.TTL == codec.TTLKeep:
		if r != nil && cx.draftBin(codec.BinExpire) == nil && !cx.cleared {
			if x := findBin(r.bins, codec.BinExpire); x != nil {
				cx.setBin(codec.BinExpire, x.val, nil) // a replacing write keeps it too
			}
		}
	}

	empty := len(cx.draft) == 0
	if !empty && p.DeleteIfEmpty != "" {
		if b := findBin(cx.draft, p.DeleteIfEmpty); b != nil && binIsEmptyCollection(b) {
			empty = true
			if r == nil {
				// Nothing to delete and nothing to create.
				cx.rollback()
				return
			}
		}
	}
	if empty {
		if r == nil {
			// Aerospike: a write that leaves a new record without bins
			// fails with KEY_NOT_FOUND (write_master_apply).
			cx.rollback()
			fail(res, &opError{codec.NotFound, "memory: record not found"})
			return
		}
		sh.remove(r)
		return
	}

	size := len(c.Key)
	for i := range cx.draft {
		size += len(cx.draft[i].name) + binSize(&cx.draft[i])
	}
	if size > s.maxRecord {
		cx.rollback()
		fail(res, &opError{codec.RecordTooBig, "memory: record of " + strconv.Itoa(size) +
			" bytes over the store's limit of " + strconv.Itoa(s.maxRecord) + " bytes (max_record_bytes)"})
		return
	}

	var expires int64
	switch p.TTL {
	case codec.TTLKeep:
		if r != nil {
			expires = r.expires
		}
	case codec.TTLSeconds:
		expires = now.get() + p.Seconds*int64(time.Second)
	case codec.TTLAt:
		expires = msToNanos(p.Seconds)
	}
	if r == nil {
		r = &record{key: string(c.Key), slot: slot, gen: 1, expires: expires}
		r.bins = append(r.inline[:0], cx.draft...)
		sh.insert(r)
	} else {
		r.bins = append(r.bins[:0], cx.draft...)
		clear(r.bins[len(r.bins):cap(r.bins)])
		// Generations are 16 bits in Aerospike and skip 0 when they wrap.
		r.gen = uint32(uint16(r.gen + 1))
		if r.gen == 0 {
			r.gen = 1
		}
		if expires != r.expires {
			switch {
			case expires == 0:
				delete(sh.expiring, r.key)
			case r.expires == 0:
				sh.setExpiring(r)
			}
			r.expires = expires
		}
	}
	res.Generation = r.gen
	res.TTL = ttl(r.expires, now)
}

// reset drops the call's references to values so they can be collected.
func (cx *callCtx) reset() {
	cx.dst = nil
	cx.ownBlob = nil
	cx.unchanged = false
	cx.cleared = false
	clear(cx.draft)
	cx.draft = cx.draft[:0]
	clear(cx.undo)
	cx.undo = cx.undo[:0]
}

func findBin(bins []bin, name string) *bin {
	for i := range bins {
		if bins[i].name == name {
			return &bins[i]
		}
	}
	return nil
}

func binIsEmptyCollection(b *bin) bool {
	if b.m != nil {
		return b.m.n() == 0
	}
	if b.l != nil {
		return b.l.n() == 0
	}
	return b.val.Kind == codec.KindList && len(b.val.List) == 0
}

// binSize approximates the stored size of a bin's value.
func binSize(b *bin) int {
	if b.m != nil {
		return b.m.size
	}
	if b.l != nil {
		return 1 + b.l.size
	}
	return valueSize(b.val)
}

// draftBin returns the draft's bin, or nil.
func (cx *callCtx) draftBin(name string) *bin {
	return findBin(cx.draft, name)
}

// setBin stores v (already owned by the store) in the draft, keeping the
// draft sorted by name.
func (cx *callCtx) setBin(name string, v codec.Value, m *omap) {
	for i := range cx.draft {
		switch {
		case cx.draft[i].name == name:
			cx.draft[i].val, cx.draft[i].m, cx.draft[i].l, cx.draft[i].own = v, m, nil, false
			return
		case cx.draft[i].name > name:
			cx.draft = append(cx.draft, bin{})
			copy(cx.draft[i+1:], cx.draft[i:])
			cx.draft[i] = bin{name: internName(name), val: v, m: m}
			return
		}
	}
	cx.draft = append(cx.draft, bin{name: internName(name), val: v, m: m})
}

// setList stores a list bin in the draft.
func (cx *callCtx) setList(name string, l *olist) {
	cx.setBin(name, codec.Value{Kind: codec.KindList}, nil)
	cx.draftBin(name).l = l
}

func (cx *callCtx) deleteBin(name string) {
	for i := range cx.draft {
		if cx.draft[i].name == name {
			cx.draft = slices.Delete(cx.draft, i, i+1)
			return
		}
	}
}

// internName returns the shared constant for the usual bin names, so that
// records do not each keep the decoder's copy.
func internName(name string) string {
	switch name {
	case codec.BinType:
		return codec.BinType
	case codec.BinValue:
		return codec.BinValue
	}
	return name
}

// readOp runs an op that reads, against bins.
func (cx *callCtx) readOp(bins []bin, o *codec.Op) (codec.Value, *opError) {
	switch o.Code {
	case codec.OpGet:
		if o.Bin == "" {
			return allBins(bins), nil
		}
		b := findBin(bins, o.Bin)
		if b == nil {
			return codec.Nil, nil
		}
		return binValue(b), nil
	case codec.OpGetHeader, codec.OpExpectListItem, codec.OpExpectBlobSize:
		return codec.Nil, nil // a condition, checked before the ops
	case codec.OpMapSize:
		b := findBin(bins, o.Bin)
		if b == nil {
			// Aerospike returns no value for a CDT read of a missing bin;
			// the contract (codec builder) promises 0 for the size.
			return codec.Int(0), nil
		}
		if b.m == nil {
			return codec.Nil, errBinType
		}
		return codec.Int(int64(b.m.n())), nil
	case codec.OpListSize, codec.OpListGetByIndex, codec.OpListGetByValue:
		b := findBin(bins, o.Bin)
		if b == nil {
			if o.Code == codec.OpListSize {
				return codec.Int(0), nil
			}
			return codec.Nil, nil
		}
		if b.l == nil {
			return codec.Nil, errBinType
		}
		return cx.listRead(b.l, o), nil
	case codec.OpBitGet, codec.OpBitCount:
		return bitRead(findBin(bins, o.Bin), o)
	default: // map reads
		b := findBin(bins, o.Bin)
		if b == nil {
			// Aerospike: a CDT read of a missing bin returns nothing.
			return codec.Nil, nil
		}
		if b.m == nil {
			return codec.Nil, errBinType
		}
		return cx.mapRead(b.m, o)
	}
}

// binValue returns a bin's value for a caller: scalars and lists as stored
// (they are never mutated once handed out: it clears own), maps copied out.
func binValue(b *bin) codec.Value {
	b.own = false
	if b.m != nil {
		return b.m.flatten()
	}
	if b.l != nil {
		return b.l.flatten()
	}
	return b.val
}

func allBins(bins []bin) codec.Value {
	kv := make([]codec.Value, 0, 2*len(bins))
	for i := range bins {
		kv = append(kv, codec.Value{Kind: codec.KindStr, Bytes: []byte(bins[i].name)}, binValue(&bins[i]))
	}
	return codec.Map(kv...)
}

// writeOp runs any op against the draft.
func (cx *callCtx) writeOp(o *codec.Op) (codec.Value, *opError) {
	if o.Code != codec.OpBitSet {
		cx.ownBlob = nil // a read may hand the blob out
	}
	switch o.Code {
	case codec.OpPut:
		if o.Value.Kind == codec.KindNil {
			cx.deleteBin(o.Bin)
			return codec.Nil, nil
		}
		if o.Value.Kind == codec.KindMap {
			m, e := newOmap(o.Value.List)
			if e != nil {
				return codec.Nil, e
			}
			cx.setBin(o.Bin, codec.Value{Kind: codec.KindMap}, m)
			return codec.Nil, nil
		}
		if o.Value.Kind == codec.KindList {
			items, e := ownItems(o.Value.List)
			if e != nil {
				return codec.Nil, e
			}
			cx.setList(o.Bin, newOlist(items))
			return codec.Nil, nil
		}
		v, e := ownValue(o.Value)
		if e != nil {
			return codec.Nil, e
		}
		cx.setBin(o.Bin, v, nil)
		return codec.Nil, nil
	case codec.OpAdd:
		return codec.Nil, cx.add(o)
	case codec.OpAppend, codec.OpPrepend:
		return codec.Nil, cx.concat(o)
	case codec.OpDelete:
		// Aerospike's delete op drops every bin; later ops of the call may
		// write new ones, and a record left without bins is deleted.
		clear(cx.draft)
		cx.draft = cx.draft[:0]
		cx.cleared = true
		return codec.Nil, nil
	case codec.OpTouch:
		// Any write applies the policy's TTL and bumps the generation; a
		// touch alone on a missing record leaves it without bins, which
		// is NotFound.
		return codec.Nil, nil
	case codec.OpListAppend, codec.OpListInsert, codec.OpListSet, codec.OpListRemoveByIndex, codec.OpListRemoveByValue:
		return cx.listWrite(o)
	case codec.OpBitGrow, codec.OpBitSet:
		return codec.Nil, cx.bitWrite(o)
	case codec.OpHLLRaise:
		return cx.hllRaise(o)
	case codec.OpMapPut:
		return cx.mapPut(o)
	case codec.OpMapIncrement:
		return cx.mapIncrement(o)
	case codec.OpMapRemoveByKeys, codec.OpMapRemoveByIndex, codec.OpMapRemoveByRank,
		codec.OpMapRemoveByValueRange, codec.OpMapRemoveByKeyRange, codec.OpMapClear:
		b := cx.draftBin(o.Bin)
		if b == nil {
			// Aerospike: removing from a missing bin is a no-op.
			return codec.Nil, nil
		}
		if b.m == nil {
			return codec.Nil, errBinType
		}
		return cx.mapRemove(b.m, o)
	default:
		return cx.readOp(cx.draft, o)
	}
}

func (cx *callCtx) add(o *codec.Op) *opError {
	b := cx.draftBin(o.Bin)
	d := o.Value
	switch d.Kind {
	case codec.KindInt:
		if b == nil {
			cx.setBin(o.Bin, codec.Int(d.Int), nil)
			return nil
		}
		if b.val.Kind != codec.KindInt || b.m != nil || b.l != nil {
			return errBinType
		}
		sum := b.val.Int + d.Int
		if (sum > b.val.Int) != (d.Int > 0) {
			// Aerospike wraps silently; respike's contract reports it.
			return errOverflow
		}
		b.val.Int = sum
		return nil
	case codec.KindFloat:
		if b == nil {
			cx.setBin(o.Bin, codec.Float(d.Float), nil)
			return nil
		}
		if b.val.Kind != codec.KindFloat {
			return errBinType
		}
		b.val.Float += d.Float
		return nil
	default:
		// Aerospike refuses an increment of any other particle type with
		// BIN_TYPE_ERROR (INCOMPATIBLE_TYPE).
		return errBinType
	}
}

func (cx *callCtx) concat(o *codec.Op) *opError {
	d := o.Value
	if d.Kind != codec.KindBytes && d.Kind != codec.KindStr {
		return errBinType
	}
	b := cx.draftBin(o.Bin)
	if b == nil {
		cx.setBin(o.Bin, codec.Value{Kind: d.Kind, Bytes: cloneBytes(d.Bytes)}, nil)
		return nil
	}
	// Aerospike appends only to a blob or string of the same particle type.
	if b.val.Kind != d.Kind || b.m != nil {
		return errBinType
	}
	old := b.val.Bytes
	nb := make([]byte, 0, len(old)+len(d.Bytes))
	if o.Code == codec.OpAppend {
		nb = append(append(nb, old...), d.Bytes...)
	} else {
		nb = append(append(nb, d.Bytes...), old...)
	}
	b.val.Bytes = nb
	return nil
}

// rollback undoes the in-place map changes of a failed call, newest first.
func (cx *callCtx) rollback() {
	for i := len(cx.undo) - 1; i >= 0; i-- {
		cx.undo[i].apply()
	}
	cx.undo = cx.undo[:0]
}

// listReturnOK reports whether a list read or remove may return r.
func listReturnOK(r codec.MapReturn) bool {
	switch r.Type() {
	case codec.ReturnNone, codec.ReturnCount, codec.ReturnValue, codec.ReturnIndex, codec.ReturnExists:
		return true
	}
	return false
}
