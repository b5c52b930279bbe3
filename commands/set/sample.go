package main

import (
	"github.com/respike/respike/commands/internal/kit"
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
	for _, i := range kit.Draw(one[:0], int(k), size, uniq) {
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
		kit.GuardFailed(c, r)
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
		kit.GuardFailed(c, r)
		return
	}
	n := len(r.Values) - 1
	changed := r.Generation != uint32(c.N[3])
	for i := 1; i <= n && !changed; i++ {
		changed = len(r.Value(i).List) == 0
	}
	if changed {
		if retry(c) {
			samplePlan(c, kit.IntOf(r.Value(0)), r.Generation)
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
		idx := kit.Draw(nil, int(k), int64(size), uniq)
		w.Array(len(idx))
		for _, i := range idx {
			w.Bulk(items[i].Bytes)
		}
	}
}
