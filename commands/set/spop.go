package main

import (
	"math"
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
		Run:     runSRandMember,
	})
}

// SPOP and SRANDMEMBER pick uniformly: they learn the size, draw random
// indexes (math/rand/v2, seeded by the runtime from the host's random
// source) and take the members at those indexes of the key-ordered map. The
// first read also fetches the first few members, so a small set is sampled
// from it directly.
//
// SPOP removes what it drew under the generation the size came from; when
// another client wrote in between, the removal fails as a whole and SPOP
// starts again (within kit.RetryFor). SRANDMEMBER's index read checks
// the generation in its answer and draws again likewise. Samples larger
// than maxIndexOps come from a read of the whole set instead of one op per
// index.
//
// Ctx.N: [0] the count's magnitude, [1] the rand* flags, [2] unused,
// [3] the generation the size came from, [5] 1 when SPOP takes the whole
// set.

const (
	randCount = 1 << iota // a count was given: answer an array (or set)
	randUniq              // the count is not negative: distinct members
	randPop               // SPOP: remove what is drawn
)

const (
	// prefetch is how many members the first read returns with the size.
	prefetch = 16
	// maxIndexOps bounds the index ops in one call; a larger sample reads
	// the whole set.
	maxIndexOps = 512
	// maxDraws bounds a negative count's reply, which repeats members and
	// so is not bounded by the set's size. Redis has no bound; a reply of
	// millions of members would exhaust the module's memory.
	maxDraws = 1 << 20
	// errTooManyDraws refuses a negative count beyond maxDraws.
	errTooManyDraws = "ERR respike: a negative count may ask for at most 1048576 items"
)

func runSPop(c *sdk.Ctx) {
	c.N[1] = randPop | randUniq
	c.N[0] = 1
	switch {
	case c.NArg() == 3:
		n, ok := kit.ParseInt(c.Arg(2))
		if !ok || n < 0 {
			c.Error("ERR value is out of range, must be positive")
			return
		}
		c.N[0] = n
		c.N[1] |= randCount
	case c.NArg() > 3:
		c.Error(kit.Syntax)
		return
	}
	randRead(c)
}

func runSRandMember(c *sdk.Ctx) {
	c.N[0], c.N[1] = 1, randUniq
	switch {
	case c.NArg() == 3:
		n, ok := kit.ParseInt(c.Arg(2))
		if !ok {
			c.Error(kit.NotInt)
			return
		}
		if n == math.MinInt64 {
			c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		c.N[1] = randCount
		if n >= 0 {
			c.N[0] = n
			c.N[1] |= randUniq
		} else {
			c.N[0] = -n
		}
	case c.NArg() > 3:
		c.Error(kit.Syntax)
		return
	}
	randRead(c)
}

// randRead reads the size and the first members.
func randRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).
		MapSize(codec.BinValue).
		MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, prefetch)
	c.Exec(randFirst)
}

// randEmpty answers for a missing key (or an empty sample).
func randEmpty(c *sdk.Ctx) {
	w := c.Reply()
	switch {
	case c.N[1]&randCount == 0:
		w.Null()
	case c.N[1]&randPop != 0:
		w.Set(0)
	default:
		w.Array(0)
	}
}

func randFirst(c *sdk.Ctx) {
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
	if c.N[1]&randCount != 0 && c.N[0] == 0 {
		randEmpty(c)
		return
	}
	size := kit.IntOf(r.Value(0))
	items := r.Value(1).List
	if int64(len(items)) < size {
		items = nil // not all of them
	}
	if c.N[1]&randPop != 0 {
		popPlan(c, size, r.Generation, items)
		return
	}
	if items != nil {
		sampleLocal(c, items)
		return
	}
	samplePlan(c, size, r.Generation)
}

// retry counts an attempt and reports whether another is allowed; when not,
// it has replied.
func retry(c *sdk.Ctx) bool {
	if !kit.Again(c) {
		c.Error(kit.Contention)
		return false
	}
	return true
}

// popPlan removes a sample from a set of size members whose generation is
// gen; items holds all members when a read returned them all.
func popPlan(c *sdk.Ctx, size int64, gen uint32, items []codec.Value) {
	k := c.N[0]
	if k < size && items == nil && k > maxIndexOps {
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
		randEmpty(c)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	items := r.Value(0).List
	popPlan(c, int64(len(items)), r.Generation, items)
}

// popDone answers the removed members in random order, or starts again
// when another client wrote since the size was read.
func popDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.GenerationError, codec.NotFound:
		c.N[5] = 0
		if retry(c) {
			randRead(c)
		}
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	w := c.Reply()
	if c.N[1]&randCount == 0 {
		for _, v := range r.Values {
			if len(v.List) > 0 {
				w.Bulk(v.List[0].Bytes)
				return
			}
		}
		w.Null()
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
