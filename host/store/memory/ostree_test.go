package memory

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestOstreeAgainstSlice runs random inserts, value changes and removals
// on a map's two trees (by key and by value) across several thousand items,
// enough for leaf and inner splits and merges, and checks every read
// against sorted slices after each step.
func TestOstreeAgainstSlice(t *testing.T) {
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
		if m.n() > 0 {
			k := codec.Int(rng.Int63n(4000))
			at, e := m.find(&k)
			wantAt, found := slices.BinarySearchFunc(want, &k, func(e *entry, k *codec.Value) int { return compare(&e.k, k) })
			if at != wantAt || (e != nil) != found {
				t.Fatalf("step %d: find %d = %d %v, want %d %v", step, k.Int, at, e != nil, wantAt, found)
			}
			if g := m.get(&k); g != e || found && g != want[wantAt] {
				t.Fatalf("step %d: get %d = %v, find %v", step, k.Int, g, e)
			}
			var next *entry // the first item at or after k: seekEntry's answer
			if wantAt < len(want) {
				next = want[wantAt]
			}
			if g := m.keys.seekEntry(&k); g != next {
				t.Fatalf("step %d: seekEntry %d = %v, want %v", step, k.Int, g, next)
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
		e := live[k]
		switch op := rng.Intn(10); {
		case e == nil && op < 7:
			e = &entry{codec.Int(k), value()}
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
