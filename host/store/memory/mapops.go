package memory

import (
	"math"
	"slices"

	"github.com/respike/respike/guest-sdk/codec"
)

// omap is a map bin: items sorted by key (Aerospike's key-ordered map; the
// key-value-ordered flavour returns the same results, so MapOrder flags are
// accepted and ignored). Items change in place under the shard lock; callers
// only ever get copies.
type omap struct {
	e []entry
	// rank lists item indexes by value, ties by key, when rankOK.
	rank   []int32
	rankOK bool
	size   int // approximate bytes of all keys and values
}

type entry struct{ k, v codec.Value }

func entrySize(e *entry) int { return valueSize(e.k) + valueSize(e.v) }

// newOmap builds a map bin from flattened pairs, copying them. Equal keys:
// the last one wins.
func newOmap(kv []codec.Value) (*omap, *opError) {
	if len(kv)%2 != 0 {
		return nil, &opError{codec.InvalidOperation, "memory: map value with an odd element count"}
	}
	m := &omap{e: make([]entry, 0, len(kv)/2)}
	for i := 0; i < len(kv); i += 2 {
		if !validKey(&kv[i]) {
			return nil, errParam
		}
		k, err := ownValue(kv[i])
		if err != nil {
			return nil, err
		}
		v, err := ownValue(kv[i+1])
		if err != nil {
			return nil, err
		}
		m.e = append(m.e, entry{k, v})
	}
	slices.SortStableFunc(m.e, func(a, b entry) int { return compare(&a.k, &b.k) })
	// Keep the last of equal keys.
	out := m.e[:0]
	for i := range m.e {
		if i+1 < len(m.e) && compare(&m.e[i].k, &m.e[i+1].k) == 0 {
			continue
		}
		out = append(out, m.e[i])
		m.size += entrySize(&m.e[i])
	}
	clear(m.e[len(out):])
	m.e = out
	return m, nil
}

// find returns the position of key k, or where it would be inserted.
func (m *omap) find(k *codec.Value) (int, bool) {
	return slices.BinarySearchFunc(m.e, k, func(e entry, k *codec.Value) int { return compare(&e.k, k) })
}

// flatten returns a copy of the items as a map value.
func (m *omap) flatten() codec.Value {
	kv := make([]codec.Value, 0, 2*len(m.e))
	for i := range m.e {
		kv = append(kv, m.e[i].k, m.e[i].v)
	}
	return codec.Value{Kind: codec.KindMap, List: kv}
}

// rankOrder returns item indexes ordered by value, ties by key, as
// Aerospike ranks map items.
func (m *omap) rankOrder() []int32 {
	if m.rankOK && len(m.rank) == len(m.e) {
		return m.rank
	}
	r := m.rank[:0]
	for i := range m.e {
		r = append(r, int32(i))
	}
	slices.SortFunc(r, func(a, b int32) int {
		if c := compare(&m.e[a].v, &m.e[b].v); c != 0 {
			return c
		}
		return int(a - b) // items are in key order
	})
	m.rank, m.rankOK = r, true
	return r
}

// Undo log kinds.
const (
	undoInsert  = iota // an item was inserted at i
	undoSet            // item i's value was old
	undoRemove         // items were removed from positions idx (ascending)
	undoReplace        // the item slice was oldE
	undoList           // list l had array lbuf, offset loff and oldSize; lold held the slots from lat
)

type undoRec struct {
	m       *omap
	kind    uint8
	i       int
	old     codec.Value
	oldE    []entry
	idx     []int32
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
		m.e = slices.Delete(m.e, u.i, u.i+1)
	case undoSet:
		m.e[u.i].v = u.old
	case undoRemove:
		for j, at := range u.idx {
			m.e = slices.Insert(m.e, int(at), u.oldE[j])
		}
	case undoReplace:
		m.e = u.oldE
	}
	m.size = u.oldSize
	m.rankOK = false
}

func (cx *callCtx) mInsert(m *omap, i int, e entry) {
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoInsert, i: i, oldSize: m.size})
	m.e = slices.Insert(m.e, i, e)
	m.size += entrySize(&e)
	m.rankOK = false
}

func (cx *callCtx) mSet(m *omap, i int, v codec.Value) {
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoSet, i: i, old: m.e[i].v, oldSize: m.size})
	m.size += valueSize(v) - valueSize(m.e[i].v)
	m.e[i].v = v
	m.rankOK = false
}

// mRemove removes the items at idx (ascending).
func (cx *callCtx) mRemove(m *omap, idx []int32) {
	if len(idx) == 0 {
		return
	}
	u := undoRec{m: m, kind: undoRemove, oldSize: m.size, idx: slices.Clone(idx), oldE: make([]entry, len(idx))}
	for j, at := range idx {
		u.oldE[j] = m.e[at]
		m.size -= entrySize(&m.e[at])
	}
	cx.undo = append(cx.undo, u)
	w, next := 0, 0
	for r := range m.e {
		if next < len(idx) && int(idx[next]) == r {
			next++
			continue
		}
		m.e[w] = m.e[r]
		w++
	}
	clear(m.e[w:])
	m.e = m.e[:w]
	m.rankOK = false
}

// mReplace swaps in a new item slice; the old one is kept untouched for undo.
func (cx *callCtx) mReplace(m *omap, e []entry, size int) {
	cx.undo = append(cx.undo, undoRec{m: m, kind: undoReplace, oldE: m.e, oldSize: m.size})
	m.e, m.size, m.rankOK = e, size, false
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
	size := codec.Int(int64(len(m.e)))
	if len(kv) == 0 {
		return size, nil
	}

	// Item order: by key, the last of equal keys kept.
	items := cx.idx[:0]
	for i := 0; i < len(kv); i += 2 {
		items = append(items, int32(i))
	}
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
	defer func() { cx.idx = items[:0] }()

	if len(m.e) == 0 && updateOnly {
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

	// Check every item first.
	w := 0
	for _, it := range items {
		_, found := m.find(&kv[it])
		if (found && createOnly) || (!found && updateOnly) {
			if !noFail {
				if found {
					return codec.Nil, errElemExists
				}
				return codec.Nil, errElemMissing
			}
			if !partial {
				return size, nil
			}
			continue
		}
		items[w] = it
		w++
	}
	items = items[:w]

	if len(items) > 8 {
		return cx.mapMerge(m, kv, items)
	}
	for _, it := range items {
		k, err := ownValue(kv[it])
		if err != nil {
			return codec.Nil, err
		}
		v, err := ownValue(kv[it+1])
		if err != nil {
			return codec.Nil, err
		}
		if i, found := m.find(&k); found {
			cx.mSet(m, i, v)
		} else {
			cx.mInsert(m, i, entry{k, v})
		}
	}
	return codec.Int(int64(len(m.e))), nil
}

// mapMerge writes many sorted items at once into a new item slice.
func (cx *callCtx) mapMerge(m *omap, kv []codec.Value, items []int32) (codec.Value, *opError) {
	out := make([]entry, 0, len(m.e)+len(items))
	size := 0
	i := 0
	for _, it := range items {
		for i < len(m.e) && compare(&m.e[i].k, &kv[it]) < 0 {
			out = append(out, m.e[i])
			i++
		}
		if i < len(m.e) && compare(&m.e[i].k, &kv[it]) == 0 {
			i++ // replaced
		}
		k, err := ownValue(kv[it])
		if err != nil {
			return codec.Nil, err
		}
		v, err := ownValue(kv[it+1])
		if err != nil {
			return codec.Nil, err
		}
		out = append(out, entry{k, v})
	}
	out = append(out, m.e[i:]...)
	for j := range out {
		size += entrySize(&out[j])
	}
	cx.mReplace(m, out, size)
	return codec.Int(int64(len(out))), nil
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
	i, found := m.find(&o.Value)
	if !found {
		k, err := ownValue(o.Value)
		if err != nil {
			return codec.Nil, err
		}
		if d.Kind == codec.KindFloat {
			// Aerospike adds the delta to 0, so -0 becomes 0 (CE 8.1.2,
			// observed).
			d.Float += 0
		}
		cx.mInsert(m, i, entry{k, d})
		return d, nil
	}
	old := m.e[i].v
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
	cx.mSet(m, i, nv)
	return nv, nil
}

// mapRead runs a map read op on an existing map bin.
func (cx *callCtx) mapRead(m *omap, o *codec.Op) (codec.Value, *opError) {
	idx := cx.selectItems(m, o)
	var v codec.Value
	if o.Return.ReplyReturn() {
		v = cx.mapReply(m, idx, o.Return)
	} else {
		v = m.result(idx, o.Return)
	}
	cx.idx = idx[:0]
	return v, nil
}

// mapRemove runs a map remove op (or clear) on an existing map bin.
func (cx *callCtx) mapRemove(m *omap, o *codec.Op) (codec.Value, *opError) {
	if o.Code == codec.OpMapClear {
		if len(m.e) != 0 {
			cx.mReplace(m, nil, 0)
		}
		return codec.Nil, nil
	}
	idx := cx.selectItems(m, o)
	v := m.result(idx, o.Return)
	// Rank and value selections come in rank order; removal wants
	// positions ascending.
	slices.Sort(idx)
	cx.mRemove(m, idx)
	cx.idx = idx[:0]
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

// selectItems returns the indexes of the items an op selects, in the order
// the contract returns them: key order for key and index selections, rank
// order for rank and value selections, inverted (ReturnInverted) or not.
// Aerospike itself answers an inverted rank selection in key order unless
// the complement is one run of ranks, and value ranges in key order; the
// Aerospike backend sorts them, as it must for the non-inverted value range.
func (cx *callCtx) selectItems(m *omap, o *codec.Op) []int32 {
	idx := cx.idx[:0]
	n := len(m.e)
	inv := o.Return.Inverted()
	switch o.Code {
	case codec.OpMapGetByKeys, codec.OpMapRemoveByKeys:
		for i := range o.Values {
			if at, found := m.find(&o.Values[i]); found {
				idx = append(idx, int32(at))
			}
		}
		slices.Sort(idx)
		idx = slices.Compact(idx)
		if inv {
			idx = complement(idx, n)
		}
	case codec.OpMapGetByIndex, codec.OpMapRemoveByIndex:
		start, count := indexRange(o.Index, o.Count, n)
		idx = appendSpan(idx, start, start+count, n, inv)
	case codec.OpMapGetByRank, codec.OpMapRemoveByRank:
		start, count := indexRange(o.Index, o.Count, n)
		idx = appendRun(idx, m.rankOrder(), start, start+count, inv)
	case codec.OpMapGetByValues, codec.OpMapRemoveByValueRange:
		r := m.rankOrder()
		below := func(i int32, v *codec.Value) int {
			if compare(&m.e[i].v, v) < 0 {
				return -1
			}
			return 1
		}
		lo := 0
		if !o.Value.IsNil() {
			lo, _ = slices.BinarySearchFunc(r, &o.Value, below)
		}
		hi := n
		if !o.Value2.IsNil() {
			hi, _ = slices.BinarySearchFunc(r, &o.Value2, below)
		}
		idx = appendRun(idx, r, lo, max(lo, hi), inv)
	case codec.OpMapGetByValueRelRank:
		r := m.rankOrder()
		anchor, _ := slices.BinarySearchFunc(r, &o.Value, func(i int32, v *codec.Value) int {
			if compare(&m.e[i].v, v) < 0 {
				return -1
			}
			return 1
		})
		start, count := relRange(anchor, o.Index, o.Count, n)
		idx = append(idx, r[start:start+count]...)
	case codec.OpMapGetByKeyRelIndex:
		anchor, _ := m.find(&o.Value)
		start, count := relRange(anchor, o.Index, o.Count, n)
		idx = appendSpan(idx, start, start+count, n, false)
	case codec.OpMapGetByKeyRange, codec.OpMapRemoveByKeyRange:
		lo := 0
		if !o.Value.IsNil() {
			lo, _ = m.find(&o.Value)
		}
		hi := n
		if !o.Value2.IsNil() {
			hi, _ = m.find(&o.Value2)
		}
		idx = appendSpan(idx, lo, max(lo, hi), n, inv)
	}
	return idx
}

// appendSpan appends the positions lo..hi-1, or with inv every position of
// 0..n-1 outside them.
func appendSpan(idx []int32, lo, hi, n int, inv bool) []int32 {
	if !inv {
		for i := lo; i < hi; i++ {
			idx = append(idx, int32(i))
		}
		return idx
	}
	for i := 0; i < n; i++ {
		if i < lo || i >= hi {
			idx = append(idx, int32(i))
		}
	}
	return idx
}

// appendRun appends order[lo:hi], or with inv the rest of order.
func appendRun(idx, order []int32, lo, hi int, inv bool) []int32 {
	if !inv {
		return append(idx, order[lo:hi]...)
	}
	return append(append(idx, order[:lo]...), order[hi:]...)
}

// complement turns sorted positions into the other positions of 0..n-1,
// reusing idx's storage.
func complement(idx []int32, n int) []int32 {
	k, j := len(idx), 0
	for i := 0; i < n; i++ {
		if j < k && int(idx[j]) == i {
			j++
			continue
		}
		idx = append(idx, int32(i))
	}
	return append(idx[:0], idx[k:]...)
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
func (m *omap) result(idx []int32, ret codec.MapReturn) codec.Value {
	ret = ret.Type()
	switch ret {
	case codec.ReturnCount:
		return codec.Int(int64(len(idx)))
	case codec.ReturnExists:
		return codec.Bool(len(idx) > 0)
	case codec.ReturnKey, codec.ReturnValue:
		l := make([]codec.Value, len(idx))
		for j, i := range idx {
			if ret == codec.ReturnKey {
				l[j] = m.e[i].k
			} else {
				l[j] = m.e[i].v
			}
		}
		return codec.Value{Kind: codec.KindList, List: l}
	case codec.ReturnRank, codec.ReturnReverseRank:
		order := m.rankOrder()
		l := make([]codec.Value, len(idx))
		for j, i := range idx {
			// The rank order is by value, then position (key order).
			at, _ := slices.BinarySearchFunc(order, i, func(a, b int32) int {
				if c := compare(&m.e[a].v, &m.e[b].v); c != 0 {
					return c
				}
				return int(a - b)
			})
			r := int64(at)
			if ret == codec.ReturnReverseRank {
				r = int64(len(m.e)) - 1 - r
			}
			l[j] = codec.Int(r)
		}
		return codec.Value{Kind: codec.KindList, List: l}
	case codec.ReturnKeyValue:
		kv := make([]codec.Value, 0, 2*len(idx))
		for _, i := range idx {
			kv = append(kv, m.e[i].k, m.e[i].v)
		}
		return codec.Value{Kind: codec.KindMap, List: kv}
	}
	return codec.Nil
}

// mapReply builds the result of a reply return type (codec.ReturnRESPKeys
// and the like) straight from the items, its pair in the response's
// previous list when there is one (cx.dst): no list of the items' values
// is made, the blob holds no pointers for the collector to scan.
func (cx *callCtx) mapReply(m *omap, idx []int32, ret codec.MapReturn) codec.Value {
	out := cx.dst
	cx.dst = nil
	per := 8 // $nn\r\n, \r\n
	if ret.Type() != codec.ReturnRESPKeys {
		per += 36 // a score of up to 24 characters, its framing, *2\r\n
	}
	size := 0
	for _, i := range idx {
		size += len(m.e[i].k.Bytes) + per
	}
	buf := make([]byte, 0, size)
	rev := ret.Reversed()
	for j := range idx {
		i := idx[j]
		if rev {
			i = idx[len(idx)-1-j]
		}
		buf = codec.AppendReplyItem(buf, ret, &m.e[i].k, &m.e[i].v)
	}
	if cap(out) < 2 {
		out = make([]codec.Value, 2)
	}
	out = out[:2]
	out[0] = codec.Int(int64(len(idx)))
	out[1] = codec.Bytes(buf)
	return codec.Value{Kind: codec.KindList, List: out}
}
