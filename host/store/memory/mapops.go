package memory

import (
	"math"
	"slices"
	"unsafe"

	"github.com/respike/respike/guest-sdk/codec"
)

// omap is a map bin: items in an order-statistic tree by key
// (Aerospike's key-ordered map; the key-value-ordered flavour returns the
// same results, so MapOrder flags are accepted and ignored), and, once a
// read by rank or value asked for it, a second tree of the same items by
// value, ties by key, kept up to date from then on (a hash never needs
// it). Items change in place under the shard lock; callers only ever get
// copies.
type omap struct {
	keys ostree
	vals *ostree // by value; nil until rank order is first needed
	// idx finds the items of blob keys (sorted-set members, hash fields)
	// by hash once the map holds idxMin items: a descent of the key tree
	// of a set of 100,000 members compares ~18 keys, each two or three
	// pointers away, mostly out of cache (a tenth of the daemon's CPU per
	// GEOADD), where a hash probe touches two or three lines. Its keys are
	// the items' own key bytes, which never change while the item is in
	// the map (blobKey).
	idx  map[string]*entry
	size int // approximate bytes of all keys and values
}

// The index's bounds: built when a map reaches idxMin items (Redis turns
// a sorted set's listpack into a dict and skiplist at 128), dropped when
// a removal leaves fewer than idxMin/2, so that a map going up and down
// around the bound does not rebuild it each time.
const idxMin = 128

// blobKey is the index's key for k's bytes, without a copy: for a lookup
// it lives only as long as the probe, and an item's own is its key's bytes,
// which the store owns and never writes.
func blobKey(k *codec.Value) string {
	return unsafe.String(unsafe.SliceData(k.Bytes), len(k.Bytes))
}

// index builds the index of a map of idxMin items or more.
func (m *omap) index() {
	m.idx = make(map[string]*entry, m.n())
	for _, e := range m.keys.all(make([]*entry, 0, m.n())) {
		if e.k.Kind == codec.KindBytes {
			m.idx[blobKey(&e.k)] = e
		}
	}
}

// entry is a map item. A blob or string key of up to len(kbuf) bytes
// (sorted-set members, hash fields of common sizes) lives in kbuf, in the
// item's own allocation: a key comparison of a tree descent or of the
// index's probe then reads the bytes beside the item it reads anyway,
// rather than one more line elsewhere, mostly out of cache in a big map
// (GEOADD into a set of 50,000 members), and adding an item allocates
// once. kbuf lies between k and v: a probe of the index compares the key
// and then reads or writes the value.
type entry struct {
	k    codec.Value
	kbuf [32]byte
	v    codec.Value
}

// newEntry makes an item of key k (a valid key, copied) and value v (which
// the store owns already).
func newEntry(k *codec.Value, v codec.Value) (*entry, *opError) {
	e := &entry{v: v}
	if (k.Kind == codec.KindBytes || k.Kind == codec.KindStr) && len(k.Bytes) <= len(e.kbuf) {
		n := copy(e.kbuf[:], k.Bytes)
		// Never nil, as cloneBytes: an empty blob stays a blob. The
		// capacity ends at the key: an append to a handed-out key
		// cannot reach the rest of the buffer.
		e.k = codec.Value{Kind: k.Kind, Bytes: e.kbuf[:n:n]}
		return e, nil
	}
	kk, err := ownValue(*k)
	if err != nil {
		return nil, err
	}
	e.k = kk
	return e, nil
}

func entrySize(e *entry) int { return valueSize(e.k) + valueSize(e.v) }

// newOmap builds a map bin from flattened pairs, copying them. Equal keys:
// the last one wins.
func newOmap(kv []codec.Value) (*omap, *opError) {
	if len(kv)%2 != 0 {
		return nil, &opError{codec.InvalidOperation, "memory: map value with an odd element count"}
	}
	items := make([]*entry, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		if !validKey(&kv[i]) {
			return nil, errParam
		}
		v, err := ownValue(kv[i+1])
		if err != nil {
			return nil, err
		}
		e, err := newEntry(&kv[i], v)
		if err != nil {
			return nil, err
		}
		items = append(items, e)
	}
	slices.SortStableFunc(items, func(a, b *entry) int { return compare(&a.k, &b.k) })
	// Keep the last of equal keys.
	m := &omap{}
	out := items[:0]
	for i := range items {
		if i+1 < len(items) && compare(&items[i].k, &items[i+1].k) == 0 {
			continue
		}
		out = append(out, items[i])
		m.size += entrySize(items[i])
	}
	m.keys.build(out)
	if m.n() >= idxMin {
		m.index()
	}
	return m, nil
}

// n is the number of items.
func (m *omap) n() int { return m.keys.len() }

// find returns the position of key k and its item, or where it would be
// inserted and nil.
func (m *omap) find(k *codec.Value) (int, *entry) {
	at, e := m.keys.seekKey(k)
	if e != nil && keyCmp(&e.k, k) != 0 {
		e = nil
	}
	return at, e
}

// get returns the item of key k, or nil: find without the position.
func (m *omap) get(k *codec.Value) *entry {
	if m.idx != nil && k.Kind == codec.KindBytes {
		return m.idx[blobKey(k)]
	}
	e := m.keys.seekEntry(k)
	if e != nil && keyCmp(&e.k, k) != 0 {
		e = nil
	}
	return e
}

// flatten returns a copy of the items as a map value.
func (m *omap) flatten() codec.Value {
	kv := make([]codec.Value, 0, 2*m.n())
	for _, e := range m.keys.all(make([]*entry, 0, m.n())) {
		kv = append(kv, e.k, e.v)
	}
	return codec.Value{Kind: codec.KindMap, List: kv}
}

// byValue returns the items by value, ties by key, as Aerospike ranks
// map items, building that tree on first use.
func (m *omap) byValue() *ostree {
	if m.vals == nil {
		items := m.keys.all(make([]*entry, 0, m.n()))
		// Items are in key order: a stable sort by value leaves ties so.
		slices.SortStableFunc(items, func(a, b *entry) int { return compare(&a.v, &b.v) })
		m.vals = &ostree{byValue: true}
		m.vals.build(items)
	}
	return m.vals
}

// add inserts a new item (no item has its key).
func (m *omap) add(e *entry) {
	m.keys.insert(e)
	if m.vals != nil {
		m.vals.insert(e)
	}
	switch {
	case m.idx != nil:
		if e.k.Kind == codec.KindBytes {
			m.idx[blobKey(&e.k)] = e
		}
	case m.n() >= idxMin:
		m.index()
	}
	m.size += entrySize(e)
}

// drop removes an item the map holds.
func (m *omap) drop(e *entry) {
	m.keys.remove(e)
	if m.vals != nil {
		m.vals.remove(e)
	}
	if m.idx != nil {
		if m.n() < idxMin/2 {
			m.idx = nil
		} else if e.k.Kind == codec.KindBytes {
			delete(m.idx, blobKey(&e.k))
		}
	}
	m.size -= entrySize(e)
}

// setValue replaces an item's value, moving it in the value order.
func (m *omap) setValue(e *entry, v codec.Value) {
	if m.vals != nil {
		m.vals.remove(e)
	}
	m.size += valueSize(v) - valueSize(e.v)
	e.v = v
	if m.vals != nil {
		m.vals.insert(e)
	}
}

// Undo log kinds.
const (
	undoInsert  = iota // item e was inserted
	undoSet            // item e's value was old
	undoRemove         // items ents were removed
	undoReplace        // the map's trees were keys and vals
	undoList           // list l had array lbuf, offset loff and oldSize; lold held the slots from lat
)

type undoRec struct {
	m       *omap
	kind    uint8
	e       *entry
	old     codec.Value
	ents    []*entry
	keys    ostree
	vals    *ostree
	idx     map[string]*entry
	oldSize int

	l    *olist
	lbuf []codec.Value
	loff int
	lat  int
	lold []codec.Value
}

func (u *undoRec) apply() {
	if u.kind == undoList {
		l := u.l
		l.buf, l.off, l.size = u.lbuf, u.loff, u.oldSize
		copy(l.buf[u.lat:], u.lold)
		return
	}
	m := u.m
	switch u.kind {
	case undoInsert:
		m.drop(u.e)
	case undoSet:
		m.setValue(u.e, u.old)
	case undoRemove:
		for _, e := range u.ents {
			m.add(e)
		}
	case undoReplace:
		m.keys, m.vals, m.idx = u.keys, u.vals, u.idx
	}
	m.size = u.oldSize
}

func (cx *callCtx) mInsert(m *omap, e *entry) {
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoInsert, e: e, oldSize: m.size})
	m.add(e)
}

func (cx *callCtx) mSet(m *omap, e *entry, v codec.Value) {
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoSet, e: e, old: e.v, oldSize: m.size})
	m.setValue(e, v)
}

// mRemove removes the items ents.
func (cx *callCtx) mRemove(m *omap, ents []*entry) {
	if len(ents) == 0 {
		return
	}
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoRemove, oldSize: m.size, ents: slices.Clone(ents)})
	for _, e := range ents {
		m.drop(e)
	}
}

// mClear empties the map; the old trees are kept untouched for undo.
func (cx *callCtx) mClear(m *omap) {
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoReplace, keys: m.keys, vals: m.vals, idx: m.idx, oldSize: m.size})
	m.keys, m.vals, m.idx, m.size = ostree{}, nil, nil, 0
}

// mapBinForWrite returns the map bin a map write works on, creating an
// empty one when the bin is missing (Aerospike does, even when the write
// then changes nothing).
func (cx *callCtx) mapBinForWrite(name string) (*omap, *opError) {
	b := cx.draftBin(name)
	if b == nil {
		m := &omap{}
		cx.setBin(name, codec.Value{Kind: codec.KindMap}, m)
		return m, nil
	}
	if b.m == nil {
		return nil, errBinType
	}
	return b.m, nil
}

// mapPut writes items with Aerospike's map write flags (map_add_items):
// every item is checked before any is written; CreateOnly fails on an
// existing key with ElementExists and UpdateOnly on a missing one with
// ElementNotFound, unless NoFail, which turns the whole op into a no-op, or
// NoFail|Partial, which skips just the offending items. Returns the size.
func (cx *callCtx) mapPut(o *codec.Op) (codec.Value, *opError) {
	// The scratch slices are handed back here rather than by defers: with
	// mapPutItems's many returns Go would not open-code them, and a
	// defer record and its run cost ~200 instructions of every ZADD,
	// HSET and GEOADD.
	items, found := cx.idx[:0], cx.sel[:0]
	v, e := cx.mapPutItems(o, &items, &found)
	clear(found)
	cx.idx, cx.sel = items[:0], found[:0]
	return v, e
}

// mapPutItems is mapPut with its scratch slices (the items' order and
// the items found), which it may grow.
func (cx *callCtx) mapPutItems(o *codec.Op, itemsp *[]int32, foundp *[]*entry) (codec.Value, *opError) {
	kv := o.Values
	for i := 0; i < len(kv); i += 2 {
		if !validKey(&kv[i]) {
			return codec.Nil, errParam
		}
	}
	m, e := cx.mapBinForWrite(o.Bin)
	if e != nil {
		return codec.Nil, e
	}
	createOnly := o.Flags&codec.MapWriteCreateOnly != 0
	updateOnly := o.Flags&codec.MapWriteUpdateOnly != 0
	noFail := o.Flags&codec.MapWriteNoFail != 0
	partial := o.Flags&codec.MapWritePartial != 0
	size := codec.Int(int64(m.n()))
	if len(kv) == 0 {
		return size, nil
	}

	// Item order: by key, the last of equal keys kept.
	items := (*itemsp)[:0]
	for i := 0; i < len(kv); i += 2 {
		items = append(items, int32(i))
	}
	*itemsp = items
	if len(items) > 1 {
		slices.SortStableFunc(items, func(a, b int32) int { return compare(&kv[a], &kv[b]) })
		w := 0
		for i := range items {
			if i+1 < len(items) && compare(&kv[items[i]], &kv[items[i+1]]) == 0 {
				continue
			}
			items[w] = items[i]
			w++
		}
		items = items[:w]
	}

	if m.n() == 0 && updateOnly {
		if !noFail {
			return codec.Nil, errElemMissing
		}
		if !partial {
			return size, nil
		}
		// Aerospike 8.1.2 (map_add_items_ordered) writes every item into
		// an empty map under UPDATE_ONLY|NO_FAIL|PARTIAL; mirrored so that
		// command tests see what production would do.
		updateOnly, createOnly = false, false
	}

	// Check every item first, keeping the items found (cx.sel) for the
	// writes.
	found := (*foundp)[:0]
	w := 0
	for _, it := range items {
		e := m.get(&kv[it])
		found = append(found, e)
		*foundp = found
		if (e != nil && createOnly) || (e == nil && updateOnly) {
			if !noFail {
				if e != nil {
					return codec.Nil, errElemExists
				}
				return codec.Nil, errElemMissing
			}
			if !partial {
				return size, nil
			}
			found = found[:len(found)-1]
			continue
		}
		items[w] = it
		w++
	}
	items = items[:w]

	for j, it := range items {
		e := found[j]
		if e != nil && sameValue(&e.v, &kv[it+1]) {
			// Rewriting the value it already has would change nothing
			// but cost an undo record (~250 bytes copied) and, with a
			// rank order, a removal and insert: a GEOADD of a member at
			// the place it already has, a ZADD of the same score.
			continue
		}
		v, err := ownValue(kv[it+1])
		if err != nil {
			return codec.Nil, err
		}
		if e != nil {
			cx.mSet(m, e, v)
			continue
		}
		ne, err := newEntry(&kv[it], v)
		if err != nil {
			return codec.Nil, err
		}
		cx.mInsert(m, ne)
	}
	return codec.Int(int64(m.n())), nil
}

// sameValue reports whether a stored value is the very value v: the same
// kind and a number of the same bits (0 and -0 differ) or the same bytes.
// Other kinds report false.
func sameValue(stored, v *codec.Value) bool {
	if stored.Kind != v.Kind {
		return false
	}
	switch v.Kind {
	case codec.KindInt, codec.KindFloat:
		// Both fields, as ownValue keeps both.
		return stored.Int == v.Int && math.Float64bits(stored.Float) == math.Float64bits(v.Float)
	case codec.KindBytes, codec.KindStr:
		return string(stored.Bytes) == string(v.Bytes)
	}
	return false
}

// mapIncrement adds a delta to the value under a key (missing counts as 0)
// and returns the new value, as Aerospike's map increment
// (cdt_calc_delta_add): int+int and float+float; an int value plus a float
// delta stays an int (the delta truncated), a float value plus an int delta
// stays a float.
func (cx *callCtx) mapIncrement(o *codec.Op) (codec.Value, *opError) {
	if !validKey(&o.Value) {
		return codec.Nil, errParam
	}
	d := o.Value2
	switch d.Kind {
	case codec.KindNil:
		d = codec.Int(1) // Aerospike's default delta
	case codec.KindInt, codec.KindFloat:
	default:
		return codec.Nil, errParam
	}
	m, e := cx.mapBinForWrite(o.Bin)
	if e != nil {
		return codec.Nil, e
	}
	it := m.get(&o.Value)
	if it == nil {
		if d.Kind == codec.KindFloat {
			// Aerospike adds the delta to 0, so -0 becomes 0 (CE 8.1.2,
			// observed).
			d.Float += 0
		}
		ne, err := newEntry(&o.Value, d)
		if err != nil {
			return codec.Nil, err
		}
		cx.mInsert(m, ne)
		return d, nil
	}
	old := it.v
	var nv codec.Value
	switch old.Kind {
	case codec.KindInt:
		delta := d.Int
		if d.Kind == codec.KindFloat {
			if d.Float >= math.MaxInt64 || d.Float < math.MinInt64 || d.Float != d.Float {
				return codec.Nil, errOverflow
			}
			delta = int64(d.Float)
		}
		sum := old.Int + delta
		if (sum > old.Int) != (delta > 0) {
			// Aerospike wraps silently; respike's contract reports it.
			return codec.Nil, errOverflow
		}
		nv = codec.Int(sum)
	case codec.KindFloat:
		if d.Kind == codec.KindFloat {
			nv = codec.Float(old.Float + d.Float)
		} else {
			nv = codec.Float(old.Float + float64(d.Int))
		}
	default:
		// Aerospike answers PARAMETER_ERROR (4) here: map_increment returns
		// -AS_ERR_PARAMETER when cdt_calc_delta_add meets a non-numeric
		// value. Read in the CE 8.1.2 source, not yet observed on a server.
		return codec.Nil, &opError{codec.ParameterError, "memory: map value is not a number"}
	}
	cx.mSet(m, it, nv)
	return nv, nil
}

// mapRead runs a map read op on an existing map bin.
func (cx *callCtx) mapRead(m *omap, o *codec.Op) (codec.Value, *opError) {
	if o.Code == codec.OpMapGeoSearch {
		return cx.geoSearch(m, o), nil
	}
	sel := cx.selectItems(m, o)
	var v codec.Value
	if o.Return.ReplyReturn() {
		v = cx.mapReply(sel, o.Return)
	} else {
		v = m.result(sel, o.Return)
	}
	clear(sel)
	cx.sel = sel[:0]
	return v, nil
}

// mapRemove runs a map remove op (or clear) on an existing map bin.
func (cx *callCtx) mapRemove(m *omap, o *codec.Op) (codec.Value, *opError) {
	if o.Code == codec.OpMapClear {
		if m.n() != 0 {
			cx.mClear(m)
		}
		return codec.Nil, nil
	}
	sel := cx.selectItems(m, o)
	v := m.result(sel, o.Return)
	cx.mRemove(m, sel)
	clear(sel)
	cx.sel = sel[:0]
	return v, nil
}

// selects reports whether an op selects map items, so that ReturnInverted
// applies to it.
func selects(c codec.OpCode) bool {
	switch c {
	case codec.OpMapGetByKeys, codec.OpMapRemoveByKeys,
		codec.OpMapGetByIndex, codec.OpMapRemoveByIndex,
		codec.OpMapGetByRank, codec.OpMapRemoveByRank,
		codec.OpMapGetByValues, codec.OpMapRemoveByValueRange,
		codec.OpMapGetByKeyRange, codec.OpMapRemoveByKeyRange:
		return true
	}
	return false
}

// selectItems returns the items an op selects, in the order the contract
// returns them: key order for key and index selections, rank order for
// rank and value selections, inverted (ReturnInverted) or not.
// Aerospike itself answers an inverted rank selection in key order unless
// the complement is one run of ranks, and value ranges in key order; the
// Aerospike backend sorts them, as it must for the non-inverted value range.
func (cx *callCtx) selectItems(m *omap, o *codec.Op) []*entry {
	sel := cx.sel[:0]
	n := m.n()
	inv := o.Return.Inverted()
	switch o.Code {
	case codec.OpMapGetByKeys, codec.OpMapRemoveByKeys:
		for i := range o.Values {
			if e := m.get(&o.Values[i]); e != nil {
				sel = append(sel, e)
			}
		}
		if len(sel) > 1 {
			slices.SortFunc(sel, func(a, b *entry) int { return compare(&a.k, &b.k) })
			sel = slices.Compact(sel)
		}
		if inv {
			sel = complement(&m.keys, sel)
		}
	case codec.OpMapGetByIndex, codec.OpMapRemoveByIndex:
		start, count := indexRange(o.Index, o.Count, n)
		sel = appendRun(sel, &m.keys, start, start+count, inv)
	case codec.OpMapGetByRank, codec.OpMapRemoveByRank:
		start, count := indexRange(o.Index, o.Count, n)
		sel = appendRun(sel, m.byValue(), start, start+count, inv)
	case codec.OpMapGetByValues, codec.OpMapRemoveByValueRange:
		r := m.byValue()
		lo := 0
		if !o.Value.IsNil() {
			lo = valueBound(r, &o.Value)
		}
		hi := n
		if !o.Value2.IsNil() {
			hi = valueBound(r, &o.Value2)
		}
		sel = appendRun(sel, r, lo, max(lo, hi), inv)
	case codec.OpMapGetByValueRelRank:
		r := m.byValue()
		start, count := relRange(valueBound(r, &o.Value), o.Index, o.Count, n)
		sel = r.appendRange(sel, start, start+count)
	case codec.OpMapGetByKeyRelIndex:
		anchor, _ := m.find(&o.Value)
		start, count := relRange(anchor, o.Index, o.Count, n)
		sel = m.keys.appendRange(sel, start, start+count)
	case codec.OpMapGetByKeyRange, codec.OpMapRemoveByKeyRange:
		lo := 0
		if !o.Value.IsNil() {
			lo, _ = m.find(&o.Value)
		}
		hi := n
		if !o.Value2.IsNil() {
			hi, _ = m.find(&o.Value2)
		}
		sel = appendRun(sel, &m.keys, lo, max(lo, hi), inv)
	}
	return sel
}

// valueBound is the rank of the first item whose value is at least v.
func valueBound(r *ostree, v *codec.Value) int {
	at, _ := r.lowerBound(func(e *entry) bool { return compare(&e.v, v) < 0 })
	return at
}

// appendRun appends the items of t at positions lo..hi-1, or with inv
// every other item, in t's order.
func appendRun(sel []*entry, t *ostree, lo, hi int, inv bool) []*entry {
	if !inv {
		return t.appendRange(sel, lo, hi)
	}
	return t.appendRange(t.appendRange(sel, 0, lo), hi, t.len())
}

// complement turns items in key order into the map's other items, in key
// order, reusing sel's storage.
func complement(keys *ostree, sel []*entry) []*entry {
	chosen := slices.Clone(sel)
	out, j := keys.all(sel[:0]), 0
	w := 0
	for _, e := range out {
		if j < len(chosen) && chosen[j] == e {
			j++
			continue
		}
		out[w] = e
		w++
	}
	clear(out[w:])
	return out[:w]
}

// indexRange turns an index (negative: from the end) and count (negative:
// to the end) into absolute bounds, as Aerospike's calc_index_count_multi:
// a range partly out of bounds yields its in-bounds part.
func indexRange(index, count int64, n int) (start, cnt int) {
	c := uint64(math.MaxUint32) // Aerospike's "to the end"
	if count >= 0 {
		c = uint64(count)
	}
	size := int64(n)
	if index >= size {
		return n, 0
	}
	if index < 0 {
		index += size
	}
	if index < 0 {
		before := uint64(-index)
		if before >= c {
			return 0, 0
		}
		return 0, int(min(c-before, uint64(n)))
	}
	return int(index), int(min(c, uint64(size-index)))
}

// relRange turns a position relative to anchor and a count (negative: to
// the end) into absolute in-bounds positions, as Aerospike's relative
// rank and index selections do: a range partly out of bounds yields its
// in-bounds part.
func relRange(anchor int, rel, count int64, n int) (start, cnt int) {
	s := int64(anchor) + rel
	end := int64(n)
	if count >= 0 {
		end = min(end, s+count)
	}
	s = max(s, 0)
	if s >= end {
		return 0, 0
	}
	return int(s), int(end - s)
}

// result builds what a map read or remove returns for the selected items.
func (m *omap) result(sel []*entry, ret codec.MapReturn) codec.Value {
	ret = ret.Type()
	switch ret {
	case codec.ReturnCount:
		return codec.Int(int64(len(sel)))
	case codec.ReturnExists:
		return codec.Bool(len(sel) > 0)
	case codec.ReturnKey, codec.ReturnValue:
		l := make([]codec.Value, len(sel))
		for j, e := range sel {
			if ret == codec.ReturnKey {
				l[j] = e.k
			} else {
				l[j] = e.v
			}
		}
		return codec.Value{Kind: codec.KindList, List: l}
	case codec.ReturnRank, codec.ReturnReverseRank:
		order := m.byValue()
		l := make([]codec.Value, len(sel))
		for j, e := range sel {
			r := int64(order.position(e))
			if ret == codec.ReturnReverseRank {
				r = int64(m.n()) - 1 - r
			}
			l[j] = codec.Int(r)
		}
		return codec.Value{Kind: codec.KindList, List: l}
	case codec.ReturnKeyValue:
		kv := make([]codec.Value, 0, 2*len(sel))
		for _, e := range sel {
			kv = append(kv, e.k, e.v)
		}
		return codec.Value{Kind: codec.KindMap, List: kv}
	}
	return codec.Nil
}

// mapReply builds the result of a reply return type (codec.ReturnRESPKeys
// and the like) straight from the items, its pair in the response's
// previous list when there is one (cx.dst): no list of the items' values
// is made, the blob holds no pointers for the collector to scan.
func (cx *callCtx) mapReply(sel []*entry, ret codec.MapReturn) codec.Value {
	out := cx.dst
	cx.dst = nil
	per := 8 // $nn\r\n, \r\n
	switch ret.Type() {
	case codec.ReturnRESPKeys:
	case codec.ReturnScoredKeys:
		per = 12 // the score's bits and the key's length
	default:
		per += 36 // a score of up to 24 characters, its framing, *2\r\n
	}
	size := 0
	for _, e := range sel {
		size += len(e.k.Bytes) + per
	}
	buf := make([]byte, 0, size)
	rev := ret.Reversed()
	for j := range sel {
		e := sel[j]
		if rev {
			e = sel[len(sel)-1-j]
		}
		buf = codec.AppendReplyItem(buf, ret, &e.k, &e.v)
	}
	if cap(out) < 2 {
		out = make([]codec.Value, 2)
	}
	out = out[:2]
	out[0] = codec.Int(int64(len(sel)))
	out[1] = codec.Bytes(buf)
	return codec.Value{Kind: codec.KindList, List: out}
}
