package memory

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestOstreeAgainstSlice runs random inserts, value changes and removals
// on a map's two trees (by key and by value) across several thousand items,
// enough for leaf and inner splits and merges, and checks every read
// against sorted slices after each step: with integer keys, with blob keys
// (whose leaves keep windows: short and long keys sharing prefixes, keys
// ending in zero bytes, the empty key), and with blobs mixed with integer
// and string keys (leaves that stop keeping windows).
func TestOstreeAgainstSlice(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  func(k int64) codec.Value
	}{
		{"int", codec.Int},
		{"blob", blobKeyOf},
		{"mixed", func(k int64) codec.Value {
			switch k % 23 {
			case 1:
				return codec.Int(k)
			case 2:
				return codec.Str(fmt.Sprintf("s%d", k))
			}
			return blobKeyOf(k)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { testOstreeAgainstSlice(t, tc.key, tc.name == "blob") })
	}
}

// blobKeyOf is a distinct blob key for each k of 0..3999, of a few shapes
// that share prefixes: bench.sh's members, the same numbers in longer
// keys (windows that tie), "m" and two bytes of k then zero bytes (keys
// that are prefixes of others but for their zeros), "r" and k's base-5
// digits as bytes 0x00, 0x01, 0x7f, 0xfe, 0xff, half of them followed by
// seven 0xff (short and long tails of high and low bytes side by side),
// the empty key.
func blobKeyOf(k int64) codec.Value {
	switch {
	case k == 7:
		return codec.Bytes([]byte{})
	case k%4 == 0:
		return codec.Bytes(fmt.Appendf(nil, "member:%012d", k))
	case k%4 == 1:
		return codec.Bytes(fmt.Appendf(nil, "member:%025d", k))
	case k%4 == 2:
		b := []byte{'m', byte(k >> 8), byte(k)}
		return codec.Bytes(append(b, make([]byte, k%3)...))
	}
	b := []byte{'r'}
	for d := k / 4; d > 0; d /= 5 {
		b = append(b, [5]byte{0x00, 0x01, 0x7f, 0xfe, 0xff}[d%5])
	}
	if k%8 == 7 {
		b = append(b, "\xff\xff\xff\xff\xff\xff\xff"...)
	}
	return codec.Bytes(b)
}

// checkWindows checks the windows of the nodes below n (onode.win)
// against their keys (onode.keyAt), and returns how many leaves and inner
// nodes keep them.
func checkWindows(t *testing.T, n *onode) (leaves, inner int) {
	t.Helper()
	if n == nil {
		return 0, 0
	}
	for _, k := range n.kids {
		l, i := checkWindows(t, k)
		leaves += l
		inner += i
	}
	if n.win == nil {
		return leaves, inner
	}
	if len(n.win) != n.entries() {
		t.Fatalf("node of %d entries keeps %d windows", n.entries(), len(n.win))
	}
	for i := range n.entries() {
		k := n.keyAt(i)
		if k.Kind != codec.KindBytes || !strings.HasPrefix(string(k.Bytes), n.pfx) || n.win[i] != window(k.Bytes, len(n.pfx)) {
			t.Fatalf("key %d (%v) of a node (leaf %v) against prefix %q and window %x", i, k, n.kids == nil, n.pfx, n.win[i])
		}
	}
	if n.kids == nil {
		return leaves + 1, inner
	}
	return leaves, inner + 1
}

func testOstreeAgainstSlice(t *testing.T, key func(int64) codec.Value, wantWindows bool) {
	rng := rand.New(rand.NewSource(1))
	m := &omap{}
	m.byValue()
	live := map[int64]*entry{}
	check := func(step int) {
		var want []*entry
		for _, e := range live {
			want = append(want, e)
		}
		slices.SortFunc(want, func(a, b *entry) int { return compare(&a.k, &b.k) })
		byVal := slices.Clone(want)
		slices.SortStableFunc(byVal, func(a, b *entry) int { return compare(&a.v, &b.v) })
		for _, tc := range []struct {
			tr   *ostree
			want []*entry
		}{{&m.keys, want}, {m.vals, byVal}} {
			if tc.tr.len() != len(tc.want) {
				t.Fatalf("step %d: len %d, want %d", step, tc.tr.len(), len(tc.want))
			}
			if got := tc.tr.all(nil); !slices.Equal(got, tc.want) {
				t.Fatalf("step %d (byValue %v): items out of order", step, tc.tr.byValue)
			}
			if len(tc.want) == 0 {
				continue
			}
			for range 5 {
				i := rng.Intn(len(tc.want))
				if tc.tr.at(i) != tc.want[i] || tc.tr.position(tc.want[i]) != i {
					t.Fatalf("step %d: at/position %d wrong", step, i)
				}
				j := i + rng.Intn(len(tc.want)-i+1)
				if got := tc.tr.appendRange(nil, i, j); !slices.Equal(got, tc.want[i:j]) {
					t.Fatalf("step %d: range %d..%d wrong", step, i, j)
				}
			}
		}
		// A cursor from a float walks what valueBound's ranks hold.
		for range 3 {
			lo := float64(rng.Intn(60)) - 5 + float64(rng.Intn(2))/2
			hi := lo + float64(rng.Intn(20))
			var cur ocursor
			var got []*entry
			for cur.seekFloat(m.vals, lo); cur.item() != nil && floatBelow(cur.item(), hi); cur.advance() {
				got = append(got, cur.item())
			}
			from := valueBound(m.vals, &codec.Value{Kind: codec.KindFloat, Float: lo})
			to := max(from, valueBound(m.vals, &codec.Value{Kind: codec.KindFloat, Float: hi}))
			if want := m.vals.appendRange(nil, from, to); !slices.Equal(got, want) {
				t.Fatalf("step %d: cursor over [%v, %v) walked %d items, want %d", step, lo, hi, len(got), len(want))
			}
		}
		leaves, inner := checkWindows(t, m.keys.root)
		if wantWindows && m.n() > 0 && leaves == 0 || wantWindows && m.n() > 2*leafMax && inner == 0 {
			t.Fatalf("step %d: %d leaves and %d inner nodes of blob keys keep windows", step, leaves, inner)
		}
		if m.n() > 0 {
			k := key(rng.Int63n(4000))
			at, e := m.find(&k)
			wantAt, found := slices.BinarySearchFunc(want, &k, func(e *entry, k *codec.Value) int { return compare(&e.k, k) })
			if at != wantAt || (e != nil) != found {
				t.Fatalf("step %d: find %v = %d %v, want %d %v", step, k, at, e != nil, wantAt, found)
			}
			if g := m.get(&k); g != e || found && g != want[wantAt] {
				t.Fatalf("step %d: get %v = %v, find %v", step, k, g, e)
			}
			var next *entry // the first item at or after k: seekEntry's answer
			if wantAt < len(want) {
				next = want[wantAt]
			}
			if g := m.keys.seekEntry(&k); g != next {
				t.Fatalf("step %d: seekEntry %v = %v, want %v", step, k, g, next)
			}
		}
	}
	// Values are floats, and one in ten an integer (a lower type rank).
	value := func() codec.Value {
		if rng.Intn(10) == 0 {
			return codec.Int(int64(rng.Intn(50)))
		}
		return codec.Float(float64(rng.Intn(50)))
	}
	for step := range 12000 {
		k := rng.Int63n(4000)
		if step < 3000 {
			// Multiples of 4 first (blobKeyOf's members): leaves whose
			// windows start after "member:", then keys that shrink the
			// prefix of some of them (neighbours with different ones).
			k -= k % 4
		}
		e := live[k]
		switch op := rng.Intn(10); {
		case e == nil && op < 7:
			e = &entry{k: key(k), v: value()}
			m.add(e)
			live[k] = e
		case e != nil && op < 3:
			m.setValue(e, value())
		case e != nil:
			m.drop(e)
			delete(live, k)
		}
		if step%97 == 0 || step > 11900 {
			check(step)
		}
	}
	// Drain it: merges down to an empty tree.
	for k, e := range live {
		m.drop(e)
		delete(live, k)
		if len(live)%211 == 0 {
			check(-len(live))
		}
	}
	if m.keys.root != nil || m.vals.root != nil {
		t.Fatal("drained trees keep nodes")
	}
}
