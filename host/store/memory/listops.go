package memory

import (
	"slices"

	"github.com/respike/respike/guest-sdk/codec"
)

// olist is a list bin: Aerospike's unordered list. Items live in
// buf[off:]; the room before off lets a push at the head cost no move, so
// that both ends work in amortised constant time (LPUSH/RPOP queues).
// Items change in place under the shard lock, with an undo log; callers
// only ever get copies.
type olist struct {
	buf  []codec.Value
	off  int
	size int // approximate bytes of all items
}

func (l *olist) items() []codec.Value { return l.buf[l.off:] }
func (l *olist) n() int               { return len(l.buf) - l.off }

// newOlist builds a list bin from items it takes ownership of.
func newOlist(items []codec.Value) *olist {
	l := &olist{buf: items}
	for i := range items {
		l.size += valueSize(items[i])
	}
	return l
}

// flatten returns a copy of the items as a list value.
func (l *olist) flatten() codec.Value {
	return codec.Value{Kind: codec.KindList, List: slices.Clone(l.items())}
}

// realloc moves the items to a new array with front free slots before them
// and back free slots after them. The old array is left as it was: an undo
// record may still point at it.
func (l *olist) realloc(front, back int) {
	n := l.n()
	buf := make([]codec.Value, front+n, front+n+back)
	copy(buf[front:], l.items())
	l.buf, l.off = buf, front
}

// lSave logs the list's header (array, offset, size) for undo and returns
// the record, to which a change that overwrites live slots adds them.
func (cx *callCtx) lSave(l *olist) *undoRec {
	cx.undo = append(cx.undo, undoRec{kind: undoList, l: l, lbuf: l.buf, loff: l.off, oldSize: l.size})
	return &cx.undo[len(cx.undo)-1]
}

// lPushBack appends owned items.
func (cx *callCtx) lPushBack(l *olist, vs []codec.Value) {
	cx.lSave(l)
	if cap(l.buf)-len(l.buf) < len(vs) {
		n := l.n()
		l.realloc(min(l.off, n/2), n+len(vs)+4)
	}
	l.buf = append(l.buf, vs...)
	for i := range vs {
		l.size += valueSize(vs[i])
	}
}

// lPushFront inserts owned items at the head, in their order.
func (cx *callCtx) lPushFront(l *olist, vs []codec.Value) {
	cx.lSave(l)
	if l.off < len(vs) {
		n := l.n()
		l.realloc(n+len(vs)+4, min(cap(l.buf)-len(l.buf), n/2))
	}
	l.off -= len(vs)
	copy(l.buf[l.off:], vs)
	for i := range vs {
		l.size += valueSize(vs[i])
	}
}

// lInsert inserts owned items before position i (0..n).
func (cx *callCtx) lInsert(l *olist, i int, vs []codec.Value) {
	n := l.n()
	switch i {
	case 0:
		cx.lPushFront(l, vs)
		return
	case n:
		cx.lPushBack(l, vs)
		return
	}
	cx.lSave(l)
	it := l.items()
	nb := make([]codec.Value, 0, n+len(vs)+n/4)
	nb = append(append(append(nb, it[:i]...), vs...), it[i:]...)
	l.buf, l.off = nb, 0
	for k := range vs {
		l.size += valueSize(vs[k])
	}
}

// lSet replaces the item at position i with an owned value.
func (cx *callCtx) lSet(l *olist, i int, v codec.Value) {
	u := cx.lSave(l)
	at := l.off + i
	u.lat, u.lold = at, []codec.Value{l.buf[at]}
	l.size += valueSize(v) - valueSize(l.buf[at])
	l.buf[at] = v
}

// lRemove removes the items at positions idx (ascending) and returns them
// when want is set. Items at either end go without moving the others.
func (cx *callCtx) lRemove(l *olist, idx []int32, want bool) []codec.Value {
	k := len(idx)
	if k == 0 {
		return nil
	}
	n := l.n()
	it := l.items()
	first, last := int(idx[0]), int(idx[k-1])
	u := cx.lSave(l)
	if last-first+1 == k && (first == 0 || last == n-1) {
		// The removed items serve both the undo record and the result,
		// in the response's own storage when it has some (cx.dst).
		gone := append(cx.dst[:0:cap(cx.dst)], it[first:last+1]...)
		cx.dst = nil
		u.lat, u.lold = l.off+first, gone
		for i := range gone {
			l.size -= valueSize(gone[i])
		}
		clear(it[first : last+1])
		if first == 0 {
			l.off += k
		} else {
			l.buf = l.buf[:len(l.buf)-k]
		}
		return gone
	}
	var gone []codec.Value
	if want {
		gone = make([]codec.Value, 0, k)
	}
	nb := make([]codec.Value, 0, n-k+(n-k)/4)
	next := 0
	for i := range it {
		if next < k && int(idx[next]) == i {
			next++
			l.size -= valueSize(it[i])
			if want {
				gone = append(gone, it[i])
			}
			continue
		}
		nb = append(nb, it[i])
	}
	l.buf, l.off = nb, 0
	return gone
}

// listBinForWrite returns the list bin a list write works on, creating an
// empty one when the bin is missing and create is set.
func (cx *callCtx) listBinForWrite(name string, create bool) (*olist, *opError) {
	b := cx.draftBin(name)
	if b == nil {
		if !create {
			return nil, nil
		}
		l := &olist{}
		cx.setList(name, l)
		return l, nil
	}
	if b.l == nil {
		return nil, errBinType
	}
	return b.l, nil
}

// ownItems copies the items of a push so the store may keep them.
func ownItems(vs []codec.Value) ([]codec.Value, *opError) {
	out := make([]codec.Value, len(vs))
	for i := range vs {
		v, e := ownValue(vs[i])
		if e != nil {
			return nil, e
		}
		out[i] = v
	}
	return out, nil
}

// errOutOfBounds is Aerospike's answer to an insert or set outside the list
// under INSERT_BOUNDED, which respike always sends.
var errOutOfBounds = &opError{codec.OpNotApplicable, "memory: list index out of bounds"}

// listWrite runs a list op that changes the bin.
func (cx *callCtx) listWrite(o *codec.Op) (codec.Value, *opError) {
	switch o.Code {
	case codec.OpListAppend, codec.OpListInsert:
		l, e := cx.listBinForWrite(o.Bin, true)
		if e != nil {
			return codec.Nil, e
		}
		n := int64(l.n())
		at := n
		if o.Code == codec.OpListInsert {
			at = o.Index
			if at < 0 {
				at += n
			}
			if at < 0 || at > n {
				return codec.Nil, errOutOfBounds
			}
		}
		vs, e := ownItems(o.Values)
		if e != nil {
			return codec.Nil, e
		}
		cx.lInsert(l, int(at), vs)
		return codec.Int(int64(l.n())), nil
	case codec.OpListSet:
		l, e := cx.listBinForWrite(o.Bin, false)
		if e != nil {
			return codec.Nil, e
		}
		var n int64
		if l != nil {
			n = int64(l.n())
		}
		at := o.Index
		if at < 0 {
			at += n
		}
		if at < 0 || at >= n {
			return codec.Nil, errOutOfBounds
		}
		v, e := ownValue(o.Value)
		if e != nil {
			return codec.Nil, e
		}
		cx.lSet(l, int(at), v)
		return codec.Nil, nil
	default: // removes
		l, e := cx.listBinForWrite(o.Bin, false)
		if l == nil || e != nil {
			// Aerospike: removing from a missing bin is a no-op.
			return codec.Nil, e
		}
		idx := cx.selectList(l, o)
		ret := o.Return.Type()
		var v codec.Value
		if ret != codec.ReturnValue {
			v = listResult(l, idx, ret)
		}
		gone := cx.lRemove(l, idx, ret == codec.ReturnValue)
		if ret == codec.ReturnValue {
			v = codec.Value{Kind: codec.KindList, List: gone}
			if gone == nil {
				v.List = []codec.Value{}
			}
		}
		cx.idx = idx[:0]
		return v, nil
	}
}

// listRead runs a list read op on an existing list bin.
func (cx *callCtx) listRead(l *olist, o *codec.Op) codec.Value {
	if o.Code == codec.OpListSize {
		return codec.Int(int64(l.n()))
	}
	if o.Code == codec.OpListGetByIndex && !o.Return.Inverted() {
		switch o.Return.Type() {
		case codec.ReturnValue:
			// The usual LRANGE: copy the span, no position list.
			start, cnt := indexRange(o.Index, o.Count, l.n())
			out := append(cx.dst[:0], l.items()[start:start+cnt]...)
			cx.dst = nil
			if out == nil {
				out = []codec.Value{}
			}
			return codec.Value{Kind: codec.KindList, List: out}
		case codec.ReturnBulks:
			start, cnt := indexRange(o.Index, o.Count, l.n())
			return cx.bulks(l.items()[start : start+cnt])
		}
	}
	idx := cx.selectList(l, o)
	var v codec.Value
	if o.Return.Type() == codec.ReturnBulks {
		sel := make([]codec.Value, len(idx))
		for j, i := range idx {
			sel[j] = l.items()[i]
		}
		v = cx.bulks(sel)
	} else {
		v = listResult(l, idx, o.Return.Type())
	}
	cx.idx = idx[:0]
	return v
}

// bulks builds a ReturnBulks result, its pair in the response's previous
// list when there is one (cx.dst). The blob is new: a byte slice in a
// previous value may be a stored element's.
func (cx *callCtx) bulks(items []codec.Value) codec.Value {
	out := cx.dst
	cx.dst = nil
	size := 0
	for i := range items {
		size += len(items[i].Bytes) + 16
	}
	buf := make([]byte, 0, size)
	if cap(out) < 2 {
		out = make([]codec.Value, 2)
	}
	out = out[:2]
	out[0] = codec.Int(int64(len(items)))
	out[1] = codec.Bytes(codec.AppendBulks(buf, items))
	return codec.Value{Kind: codec.KindList, List: out}
}

// selectList returns the positions, ascending, that a list op selects.
func (cx *callCtx) selectList(l *olist, o *codec.Op) []int32 {
	idx := cx.idx[:0]
	n := l.n()
	inv := o.Return.Inverted()
	switch o.Code {
	case codec.OpListGetByIndex, codec.OpListRemoveByIndex:
		start, count := indexRange(o.Index, o.Count, n)
		idx = appendSpan(idx, start, start+count, n, inv)
	case codec.OpListGetByValue, codec.OpListRemoveByValue:
		it := l.items()
		for i := range it {
			if (compare(&it[i], &o.Value) == 0) != inv {
				idx = append(idx, int32(i))
			}
		}
	}
	return idx
}

// listResult builds what a list read or remove returns for the selected
// positions.
func listResult(l *olist, idx []int32, ret codec.MapReturn) codec.Value {
	switch ret {
	case codec.ReturnCount:
		return codec.Int(int64(len(idx)))
	case codec.ReturnExists:
		return codec.Bool(len(idx) > 0)
	case codec.ReturnValue, codec.ReturnIndex:
		out := make([]codec.Value, len(idx))
		it := l.items()
		for j, i := range idx {
			if ret == codec.ReturnIndex {
				out[j] = codec.Int(int64(i))
			} else {
				out[j] = it[i]
			}
		}
		return codec.Value{Kind: codec.KindList, List: out}
	}
	return codec.Nil
}

// listSelects reports whether a list op selects items, so that a return
// type and ReturnInverted apply to it.
func listSelects(c codec.OpCode) bool {
	switch c {
	case codec.OpListGetByIndex, codec.OpListRemoveByIndex, codec.OpListGetByValue, codec.OpListRemoveByValue:
		return true
	}
	return false
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
