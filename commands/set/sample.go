package main

import (
	"math/rand/v2"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// samplePlan reads what SRANDMEMBER's sample of a set of size members
// needs: the whole set, or the members at freshly drawn indexes.
func samplePlan(c *sdk.Ctx, size int64, gen uint32) {
	k := c.N[0]
	uniq := c.N[1]&randUniq != 0
	if !uniq && k > maxDraws {
		c.Error(errTooManyDraws)
		return
	}
	if (uniq && k >= size) || k > maxIndexOps {
		c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)
		c.Exec(sampleWhole)
		return
	}
	c.N[3] = int64(gen)
	call := c.Record(c.Arg(1)).Guard(codec.TypeSet).MapSize(codec.BinValue)
	var one [1]int64
	for _, i := range draw(one[:0], int(k), size, uniq) {
		call.MapGetByIndex(codec.BinValue, codec.ReturnKey, i, 1)
	}
	c.Exec(sampleIndexed)
}

func sampleWhole(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		sampleLocal(c, r.Value(0).List)
	case codec.NotFound:
		randEmpty(c)
	default:
		failed(c, r)
	}
}

// sampleIndexed answers from the index reads, or draws again when the
// record changed since its size was read.
func sampleIndexed(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		randEmpty(c)
		return
	default:
		failed(c, r)
		return
	}
	n := len(r.Values) - 1
	changed := r.Generation != uint32(c.N[3])
	for i := 1; i <= n && !changed; i++ {
		changed = len(r.Value(i).List) == 0
	}
	if changed {
		if retry(c) {
			samplePlan(c, intOf(r.Value(0)), r.Generation)
		}
		return
	}
	w := c.Reply()
	if c.N[1]&randCount == 0 {
		w.Bulk(r.Value(1).List[0].Bytes)
		return
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		w.Bulk(r.Value(i).List[0].Bytes)
	}
}

// sampleLocal answers SRANDMEMBER from all members of the set.
func sampleLocal(c *sdk.Ctx, items []codec.Value) {
	size := len(items)
	w := c.Reply()
	if size == 0 {
		randEmpty(c)
		return
	}
	if c.N[1]&randCount == 0 {
		w.Bulk(items[rand.IntN(size)].Bytes)
		return
	}
	k := c.N[0]
	uniq := c.N[1]&randUniq != 0
	switch {
	case uniq && k >= int64(size):
		w.Array(size)
		for i := range items {
			w.Bulk(items[i].Bytes)
		}
	case !uniq && k > maxDraws:
		c.Error(errTooManyDraws)
	default:
		idx := draw(nil, int(k), int64(size), uniq)
		w.Array(len(idx))
		for _, i := range idx {
			w.Bulk(items[i].Bytes)
		}
	}
}

// draw appends k indexes below size to dst: distinct and in random order
// when uniq (k < size), independent uniform draws otherwise. A single draw
// into a caller's array allocates nothing.
func draw(dst []int64, k int, size int64, uniq bool) []int64 {
	out := dst[:0]
	if k == 1 {
		return append(out, rand.Int64N(size))
	}
	if !uniq {
		for range k {
			out = append(out, rand.Int64N(size))
		}
		return out
	}
	if int64(k)*4 >= size {
		// A partial Fisher-Yates shuffle of all indexes.
		perm := make([]int64, size)
		for i := range perm {
			perm[i] = int64(i)
		}
		for i := range k {
			j := int64(i) + rand.Int64N(size-int64(i))
			perm[i], perm[j] = perm[j], perm[i]
		}
		return append(out, perm[:k]...)
	}
	// Floyd's algorithm: a uniform k-subset, then a shuffle for the order.
	seen := make(map[int64]struct{}, k)
	for j := size - int64(k); j < size; j++ {
		t := rand.Int64N(j + 1)
		if _, dup := seen[t]; dup {
			t = j
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	rand.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}
