package main

import (
	"math/rand/v2"
	"slices"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "spop", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.",
		Run:     runSPop,
	}, sdk.Command{
		Name: "srandmember", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Get one or multiple random members from a set.",
		Run:     sample.Run,
	})
	sample.SetPop(popPlan)
}

// SRANDMEMBER samples the set uniformly (kit.Sample: size, random indexes
// of the key-ordered map, a redraw when another client wrote in between).
//
// SPOP shares its first read, then removes what it drew. SPOP key (one
// member, no count) removes the member at a random index below the size it
// read, with no condition on the record's generation: whatever another
// client wrote in between, the removal takes one member that is there,
// atomically, so many clients popping one set all make progress (a
// generation check made every loser read and remove again: 50 clients
// pipelining 16 SPOPs on one set on Aerospike kept failing until
// kit.RetryFor ran out and a third of them answered kit.Contention). If
// the set shrank below that index meanwhile, the removal takes nothing and
// SPOP starts again. SPOP key count removes its sample under the generation
// the size came from, since a partial removal could not be taken back; when
// another client wrote in between, the removal fails as a whole and SPOP
// starts again (within kit.RetryFor). Samples larger than kit.MaxIndexOps
// come from a read of the whole set instead of one op per index.
//
// Ctx.N: as kit.Sample, and [5] 1 when SPOP takes the whole set.
var sample = kit.NewSample(codec.TypeSet, "", nil)

func runSPop(c *sdk.Ctx) {
	c.N[1] = kit.RandPop | kit.RandUniq
	c.N[0] = 1
	switch {
	case c.NArg() == 3:
		n, ok := kit.ParseInt(c.Arg(2))
		if !ok || n < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		c.N[0] = n
		c.N[1] |= kit.RandCount
	case c.NArg() > 3:
		c.Error(kit.Syntax)
		return
	}
	sample.Read(c)
}

// popPlan removes a sample from a set of size members whose generation is
// gen; items holds all members when a read returned them all.
func popPlan(c *sdk.Ctx, size int64, gen uint32, items []codec.Value) {
	k := c.N[0]
	if c.N[1]&kit.RandCount == 0 {
		if size <= 0 {
			sample.Empty(c)
			return
		}
		c.Record(c.Arg(1)).Guard(codec.TypeSet).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(codec.BinValue).
			MapRemoveByIndex(codec.BinValue, codec.ReturnKey, rand.Int64N(size), 1)
		c.Exec(popDone)
		return
	}
	if k < size && items == nil && k > kit.MaxIndexOps {
		// Too many index ops: read every member, then remove by key.
		c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)
		c.Exec(popAll)
		return
	}
	call := c.Record(c.Arg(1)).Guard(codec.TypeSet).Generation(gen).Exists(codec.ExistsUpdateOnly).
		DeleteIfEmpty(codec.BinValue)
	switch {
	case k >= size:
		c.N[5] = 1 // the whole set, answered in set order as Redis does
		call.MapRemoveByIndex(codec.BinValue, codec.ReturnKey, 0, size)
	case items != nil:
		call.MapRemoveByKeys(codec.BinValue, codec.ReturnKey, pickKeys(c, items, int(k)))
	default:
		idx := kit.Draw(nil, int(k), size, true)
		// Highest index first, so each removal leaves the lower indexes
		// in place.
		slices.Sort(idx)
		for i := len(idx) - 1; i >= 0; i-- {
			call.MapRemoveByIndex(codec.BinValue, codec.ReturnKey, idx[i], 1)
		}
	}
	c.Exec(popDone)
}

// pickKeys returns k distinct members of items, uniformly.
func pickKeys(c *sdk.Ctx, items []codec.Value, k int) []codec.Value {
	out := c.Values(k)
	var one [1]int64
	for i, p := range kit.Draw(one[:0], k, int64(len(items)), true) {
		out[i] = items[p]
	}
	return out
}

func popAll(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		sample.Empty(c)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	items := r.Value(0).List
	popPlan(c, int64(len(items)), r.Generation, items)
}

// popDone answers the removed members in random order, or starts again
// when another client wrote since the size was read (SPOP key count) or
// the set shrank below the drawn index (SPOP key).
func popDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.GenerationError, codec.NotFound:
		c.N[5] = 0
		if kit.Retry(c) {
			sample.Read(c)
		}
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	w := c.Reply()
	if c.N[1]&kit.RandCount == 0 {
		if v := r.Value(0); len(v.List) > 0 {
			w.Bulk(v.List[0].Bytes)
			return
		}
		// The set shrank below the drawn index since its size was read.
		if kit.Retry(c) {
			sample.Read(c)
		}
		return
	}
	var got [][]byte
	for _, v := range r.Values {
		for _, m := range v.List {
			got = append(got, m.Bytes)
		}
	}
	if c.N[5] == 0 {
		rand.Shuffle(len(got), func(a, b int) { got[a], got[b] = got[b], got[a] })
	}
	w.Set(len(got))
	for _, m := range got {
		w.Bulk(m)
	}
}
