package memory

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/respike/respike/guest-sdk/codec"
)

// ostree is an order-statistic B+tree of map items: items in its order
// (by key, or by value then key), every node knowing how many items it
// holds, so that finding, inserting and removing an item, the item at a
// position and the position of an item all cost O(log n). A map of 100,000
// members kept as one sorted slice moved half of it on every insert (a
// GEOADD of a new member to a growing geo set); Redis's skiplist does not.
type ostree struct {
	root *onode
	// byValue orders items by value, ties by key (Aerospike's rank
	// order); else by key.
	byValue bool
}

// Node fan-outs: a leaf holds up to leafMax items, an inner node up to
// innerMax children. A node left with under a quarter of that merges
// with a neighbour when both fit in one.
const (
	leafMax  = 64
	innerMax = 32
)

// onode is a tree node: a leaf (kids nil) holds items in order, an inner
// node children in order. size counts the items below it, hi is its last
// item (what a search compares against).
//
// A node of a tree by key whose keys (a leaf's items' keys, an inner
// node's children's last keys: keyAt) are all blobs may keep windows of
// them (win non-nil): every key starts with pfx, and win[i] is the 8 bytes
// of key i after pfx, big-endian, padded with zeros (window). A binary
// search of the node compares a key's window with these and reads an item
// only when two windows are equal: in a set of 50,000 members
// ("member:000000012345"), each of a descent's ~12 comparisons otherwise
// reads an item (and an inner node's child) mostly out of cache (a fifth
// of the store's CPU per GEOADD of a new member). pfx only ever shrinks
// (to the common prefix of every key the node had since it was made), so
// windows need recomputing only when a key without the prefix arrives.
type onode struct {
	size  int
	hi    *entry
	items []*entry
	kids  []*onode
	pfx   string
	win   []uint64
}

func (t *ostree) len() int {
	if t.root == nil {
		return 0
	}
	return t.root.size
}

// cmp orders two items in the tree's order.
func (t *ostree) cmp(a, b *entry) int {
	if t.byValue {
		if c := compare(&a.v, &b.v); c != 0 {
			return c
		}
	}
	return keyCmp(&a.k, &b.k) // blob keys compared directly: every insert's descent
}

// lowerBound returns how many items below holds for (they must come
// first in the tree's order) and the first item it does not hold for, or
// nil.
func (t *ostree) lowerBound(below func(e *entry) bool) (int, *entry) {
	n := t.root
	if n == nil {
		return 0, nil
	}
	pos := 0
	for n.kids != nil {
		i := sort.Search(len(n.kids), func(i int) bool { return !below(n.kids[i].hi) })
		if i == len(n.kids) {
			return pos + n.size, nil
		}
		for _, k := range n.kids[:i] {
			pos += k.size
		}
		n = n.kids[i]
	}
	i := sort.Search(len(n.items), func(i int) bool { return !below(n.items[i]) })
	if i == len(n.items) {
		return pos + i, nil
	}
	return pos + i, n.items[i]
}

// searchItems returns the first index of items whose item compares with e
// at least at (0: the first item >= e, 1: the first item > e). Binary
// searches written out, here and in searchKids and seekKey: through
// sort.Search's function value they cost a map insert a third more.
func (t *ostree) searchItems(items []*entry, e *entry, at int) int {
	lo, hi := 0, len(items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.cmp(items[m], e) < at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// searchKids returns the first child whose last item is >= e.
func (t *ostree) searchKids(kids []*onode, e *entry) int {
	lo, hi := 0, len(kids)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.cmp(kids[m].hi, e) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// keyCmp compares map keys as compare does, two blobs or two strings
// directly.
func keyCmp(a, b *codec.Value) int {
	if a.Kind == b.Kind && (a.Kind == codec.KindBytes || a.Kind == codec.KindStr) {
		return bytes.Compare(a.Bytes, b.Bytes)
	}
	return compare(a, b)
}

// seekKey is lowerBound for key k in a tree by key: the position of the
// first item whose key is >= k, and that item or nil.
func (t *ostree) seekKey(k *codec.Value) (int, *entry) { return t.seek(k, true) }

// seekEntry is seekKey without the position: the first item whose key
// is >= k, or nil. It reads only the nodes on the path down, where seekKey
// also reads the size of every child left of it (in a map of 100,000
// members, tens of nodes mostly out of cache).
func (t *ostree) seekEntry(k *codec.Value) *entry {
	_, e := t.seek(k, false)
	return e
}

// seek is seekKey, counting the position only when withPos is set.
func (t *ostree) seek(k *codec.Value, withPos bool) (int, *entry) {
	n := t.root
	if n == nil {
		return 0, nil
	}
	pos := 0
	for n.kids != nil {
		lo := searchKey(n, k, 0)
		if lo == len(n.kids) {
			return pos + n.size, nil
		}
		if withPos {
			for _, c := range n.kids[:lo] {
				pos += c.size
			}
		}
		n = n.kids[lo]
	}
	lo := searchKey(n, k, 0)
	if lo == len(n.items) {
		return pos + lo, nil
	}
	return pos + lo, n.items[lo]
}

// searchNode is searchItems (a leaf) or searchKids (at 0, an inner node)
// on n, through its windows when it has them (a tree by key).
func (t *ostree) searchNode(n *onode, e *entry, at int) int {
	switch {
	case n.win != nil:
		return searchKey(n, &e.k, at)
	case n.kids == nil:
		return t.searchItems(n.items, e, at)
	}
	return t.searchKids(n.kids, e)
}

// keyAt is the key of n's entry i: item i's key in a leaf, child i's
// last key in an inner node.
func (n *onode) keyAt(i int) *codec.Value {
	if n.kids == nil {
		return &n.items[i].k
	}
	return &n.kids[i].hi.k
}

// entries is how many items (a leaf) or children n has.
func (n *onode) entries() int {
	if n.kids == nil {
		return len(n.items)
	}
	return len(n.kids)
}

// searchKey returns the first index of n's keys (keyAt, of a tree by
// key) that compares with k at least at (0: the first key >= k, 1: the
// first key > k).
func searchKey(n *onode, k *codec.Value, at int) int {
	lo, hi := 0, n.entries()
	if n.win == nil || k.Kind != codec.KindBytes {
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if keyCmp(n.keyAt(m), k) < at {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo
	}
	x := k.Bytes
	if !strings.HasPrefix(unsafeString(x), n.pfx) {
		// Every key of the leaf starts with pfx: k, which does not,
		// orders before all of them or after all of them.
		if unsafeString(x) < n.pfx {
			return 0
		}
		return hi
	}
	xw := window(x, len(n.pfx))
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		c := 1
		switch w := n.win[m]; {
		case w < xw:
			c = -1
		case w == xw:
			c = bytes.Compare(n.keyAt(m).Bytes, x)
		}
		if c < at {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// window is the 8 bytes of key b after its first cp, big-endian, padded
// with zeros. Two keys with the same first cp bytes whose windows differ
// order as their windows: at the first byte where the windows differ,
// either both keys have that byte, or the one that ended before it is a
// prefix of the other (its padding met zeros) and orders first, as its
// window does (zero below the other's byte, which is not zero).
func window(b []byte, cp int) uint64 {
	b = b[cp:]
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (56 - 8*uint(i))
	}
	return w
}

// unsafeString is b's bytes as a string for a comparison, without a copy.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// initWindows computes n's windows from its keys (keyAt; a node of a
// tree by key): the prefix is the common prefix of its first and last
// keys, none when a key is not a blob.
func (n *onode) initWindows() {
	n.pfx, n.win = "", nil
	c := n.entries()
	if c == 0 {
		return
	}
	for i := range c {
		if n.keyAt(i).Kind != codec.KindBytes {
			return
		}
	}
	first, last := n.keyAt(0).Bytes, n.keyAt(c-1).Bytes
	cp := 0
	for cp < len(first) && cp < len(last) && first[cp] == last[cp] {
		cp++
	}
	n.pfx = string(first[:cp])
	n.fillWindows()
}

// fillWindows computes every key's window after n.pfx.
func (n *onode) fillWindows() {
	c := n.entries()
	win := make([]uint64, c, max(c, innerMax))
	for i := range win {
		win[i] = window(n.keyAt(i).Bytes, len(n.pfx))
	}
	n.win = win
}

// putWindow records the window of key i of n, which keeps windows: a new
// key (insert: a new item or child at i) or a changed one (a child's last
// key). The prefix shrinks to what the key shares with it (and every
// window is computed again) when the key does not start with it, and n
// stops keeping windows when the key is not a blob.
func (n *onode) putWindow(i int, insert bool) {
	k := n.keyAt(i)
	if k.Kind != codec.KindBytes {
		n.pfx, n.win = "", nil
		return
	}
	x := k.Bytes
	if !strings.HasPrefix(unsafeString(x), n.pfx) {
		cp := 0
		for cp < len(x) && x[cp] == n.pfx[cp] {
			cp++
		}
		n.pfx = n.pfx[:cp]
		n.fillWindows()
		return
	}
	w := window(x, len(n.pfx))
	if insert {
		n.win = slices.Insert(n.win, i, w)
	} else {
		n.win[i] = w
	}
}

// position returns the position of item e, which the tree holds.
func (t *ostree) position(e *entry) int {
	pos, _ := t.lowerBound(func(x *entry) bool { return t.cmp(x, e) < 0 })
	return pos
}

// at returns the item at position i (0 <= i < len).
func (t *ostree) at(i int) *entry {
	n := t.root
	for n.kids != nil {
		for _, k := range n.kids {
			if i < k.size {
				n = k
				break
			}
			i -= k.size
		}
	}
	return n.items[i]
}

// appendRange appends the items at positions lo..hi-1 in order.
func (t *ostree) appendRange(dst []*entry, lo, hi int) []*entry {
	if t.root == nil || lo >= hi {
		return dst
	}
	return appendNode(dst, t.root, lo, hi)
}

func appendNode(dst []*entry, n *onode, lo, hi int) []*entry {
	if n.kids == nil {
		return append(dst, n.items[lo:hi]...)
	}
	off := 0
	for _, k := range n.kids {
		end := off + k.size
		if end > lo {
			if off >= hi {
				break
			}
			dst = appendNode(dst, k, max(lo, off)-off, min(hi, end)-off)
		}
		off = end
	}
	return dst
}

// all appends every item in order.
func (t *ostree) all(dst []*entry) []*entry { return t.appendRange(dst, 0, t.len()) }

// insert adds e, which the tree does not hold (no equal item).
func (t *ostree) insert(e *entry) {
	if t.root == nil {
		t.root = &onode{size: 1, hi: e, items: []*entry{e}}
		if !t.byValue {
			t.root.initWindows()
		}
		return
	}
	if right := t.ins(t.root, e); right != nil {
		left := t.root
		t.root = &onode{size: left.size + right.size, hi: right.hi, kids: []*onode{left, right}}
		if !t.byValue {
			t.root.initWindows()
		}
	}
}

// ins inserts e below n and returns the node n split off, if it did.
func (t *ostree) ins(n *onode, e *entry) *onode {
	n.size++
	if n.kids == nil {
		i := t.searchNode(n, e, 1)
		n.items = slices.Insert(n.items, i, e)
		if n.win != nil {
			n.putWindow(i, true)
		}
		n.hi = n.items[len(n.items)-1]
		if len(n.items) <= leafMax {
			return nil
		}
		h := len(n.items) / 2
		right := &onode{size: len(n.items) - h, items: slices.Clone(n.items[h:])}
		right.hi = right.items[len(right.items)-1]
		clear(n.items[h:])
		n.items = n.items[:h]
		n.size, n.hi = h, n.items[h-1]
		if n.win != nil {
			// Both halves keep the prefix: still every key's.
			right.pfx, right.win = n.pfx, slices.Clone(n.win[h:])
			n.win = n.win[:h]
		}
		return right
	}
	i := t.searchNode(n, e, 0)
	if i == len(n.kids) {
		i--
	}
	c := n.kids[i]
	split := t.ins(c, e)
	if split != nil {
		n.kids = slices.Insert(n.kids, i+1, split)
	}
	n.hi = n.kids[len(n.kids)-1].hi
	if n.win != nil {
		// A split child's last key changed and its new sibling's is new;
		// otherwise the child's last key changed only if it is e.
		if split != nil {
			n.putWindow(i+1, true)
		}
		if n.win != nil && (split != nil || c.hi == e) {
			n.putWindow(i, false)
		}
	}
	if len(n.kids) <= innerMax {
		return nil
	}
	h := len(n.kids) / 2
	right := &onode{kids: slices.Clone(n.kids[h:])}
	for _, k := range right.kids {
		right.size += k.size
	}
	right.hi = right.kids[len(right.kids)-1].hi
	clear(n.kids[h:])
	n.kids = n.kids[:h]
	n.size -= right.size
	n.hi = n.kids[h-1].hi
	if n.win != nil {
		right.pfx, right.win = n.pfx, slices.Clone(n.win[h:])
		n.win = n.win[:h]
	}
	return right
}

// remove deletes e (the very item) and reports whether the tree held it.
// For a tree by value, e's value must be the one it was inserted with.
func (t *ostree) remove(e *entry) bool {
	if t.root == nil || !t.del(t.root, e) {
		return false
	}
	switch {
	case t.root.size == 0:
		t.root = nil
	case t.root.kids != nil && len(t.root.kids) == 1:
		t.root = t.root.kids[0]
	}
	return true
}

func (t *ostree) del(n *onode, e *entry) bool {
	if n.kids == nil {
		i := t.searchNode(n, e, 0)
		if i == len(n.items) || n.items[i] != e {
			return false
		}
		n.items = slices.Delete(n.items, i, i+1)
		if n.win != nil {
			n.win = slices.Delete(n.win, i, i+1)
		}
		n.size--
		if len(n.items) > 0 {
			n.hi = n.items[len(n.items)-1]
		}
		return true
	}
	i := t.searchNode(n, e, 0)
	if i == len(n.kids) {
		return false
	}
	old := n.kids[i].hi
	if !t.del(n.kids[i], e) {
		return false
	}
	n.size--
	k := n.kids[i]
	at, merged := i, false // the child holding k's items now, -1 if none
	switch {
	case k.size == 0:
		n.kids = slices.Delete(n.kids, i, i+1)
		if n.win != nil {
			n.win = slices.Delete(n.win, i, i+1)
		}
		at = -1
	case k.kids == nil && len(k.items) < leafMax/4, k.kids != nil && len(k.kids) < innerMax/4:
		// Merge with a neighbour when both fit in one node.
		l, r := i, i+1
		if r == len(n.kids) {
			l, r = i-1, i
		}
		if l >= 0 {
			a, b := n.kids[l], n.kids[r]
			switch {
			case a.kids == nil && len(a.items)+len(b.items) <= leafMax:
				a.items = append(a.items, b.items...)
			case a.kids != nil && len(a.kids)+len(b.kids) <= innerMax:
				a.kids = append(a.kids, b.kids...)
			default:
				a = nil
			}
			if a != nil {
				a.mergeWindows(b)
				a.size += b.size
				a.hi = b.hi
				n.kids = slices.Delete(n.kids, r, r+1)
				if n.win != nil {
					n.win = slices.Delete(n.win, r, r+1)
				}
				at, merged = l, true
			}
		}
	}
	if n.win != nil && at >= 0 && (merged || n.kids[at].hi != old) {
		n.putWindow(at, false)
	}
	if len(n.kids) > 0 {
		n.hi = n.kids[len(n.kids)-1].hi
	}
	return true
}

// mergeWindows brings a's windows up to date after b's items or children
// were appended to a's.
func (a *onode) mergeWindows(b *onode) {
	switch {
	case a.win == nil || b.win == nil:
		a.pfx, a.win = "", nil
	case a.pfx == b.pfx:
		a.win = append(a.win, b.win...)
	default:
		a.initWindows()
	}
}

// build makes the tree of items, which are in the tree's order and
// distinct: leaves three quarters full, then the levels above.
func (t *ostree) build(items []*entry) {
	t.root = nil
	if len(items) == 0 {
		return
	}
	per := leafMax * 3 / 4
	var level []*onode
	for i := 0; i < len(items); i += per {
		j := min(i+per, len(items))
		leaf := &onode{size: j - i, hi: items[j-1], items: slices.Clone(items[i:j])}
		if !t.byValue {
			leaf.initWindows()
		}
		level = append(level, leaf)
	}
	per = innerMax * 3 / 4
	for len(level) > 1 {
		var up []*onode
		for i := 0; i < len(level); i += per {
			j := min(i+per, len(level))
			n := &onode{hi: level[j-1].hi, kids: slices.Clone(level[i:j])}
			for _, k := range n.kids {
				n.size += k.size
			}
			if !t.byValue {
				n.initWindows()
			}
			up = append(up, n)
		}
		level = up
	}
	t.root = level[0]
}

// floatBelow reports whether item e's value orders before the float f, as
// compare(&e.v, codec.Float(f)) < 0 decides it: a value of a lower type
// rank first, a float by value (NaN before nothing).
func floatBelow(e *entry, f float64) bool {
	if e.v.Kind == codec.KindFloat {
		return e.v.Float < f
	}
	return typeRank(&e.v) < floatRank
}

// floatRank is a float's type rank.
var floatRank = typeRank(&codec.Value{Kind: codec.KindFloat})

// ocursor walks the items of a tree in order from a position: a geo
// search reads a few tens of items in each of a few score ranges, and
// walking the leaves costs neither a second descent for the range's end
// nor a copy of its items.
type ocursor struct {
	path [16]struct {
		n *onode
		i int
	} // the inner nodes above the leaf and the child taken
	depth int
	leaf  []*entry // the items of the current leaf
	i     int      // the current item in leaf
}

// seekFloat places c at the first item of t (ordered by value) whose value
// is not below f (floatBelow), or at the end.
func (c *ocursor) seekFloat(t *ostree, f float64) {
	c.depth, c.leaf, c.i = 0, nil, 0
	n := t.root
	if n == nil {
		return
	}
	for n.kids != nil {
		lo, hi := 0, len(n.kids)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if floatBelow(n.kids[m].hi, f) {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(n.kids) || c.depth == len(c.path) {
			c.depth = 0 // the end
			return
		}
		c.path[c.depth].n, c.path[c.depth].i = n, lo
		c.depth++
		n = n.kids[lo]
	}
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if floatBelow(n.items[m], f) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	c.leaf, c.i = n.items, lo
	if lo == len(n.items) {
		c.next()
	}
}

// item is the item at c, or nil at the end.
func (c *ocursor) item() *entry {
	if c.i < len(c.leaf) {
		return c.leaf[c.i]
	}
	return nil
}

// advance moves c to the next item (item reads it).
func (c *ocursor) advance() {
	c.i++
	if c.i >= len(c.leaf) {
		c.next()
	}
}

// next moves c to the first item of the leaf after its current one, or to
// the end.
func (c *ocursor) next() {
	c.leaf, c.i = nil, 0
	for c.depth > 0 {
		p := &c.path[c.depth-1]
		if p.i+1 < len(p.n.kids) {
			p.i++
			n := p.n.kids[p.i]
			for n.kids != nil {
				c.path[c.depth].n, c.path[c.depth].i = n, 0
				c.depth++
				n = n.kids[0]
			}
			c.leaf = n.items
			if len(c.leaf) > 0 {
				return
			}
			continue
		}
		c.depth--
	}
}
