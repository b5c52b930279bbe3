package main

import (
	"slices"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	multi := func(name string, arity int, flags []string, first, last int, summary string, run sdk.Step) sdk.Command {
		return sdk.Command{
			Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: 1,
			Group: "set", Since: "1.0.0", Summary: summary, Run: run,
		}
	}
	ro, rw := []string{"readonly"}, []string{"write", "denyoom"}
	sdk.Register(
		multi("sinter", -2, ro, 1, -1, "Returns the intersect of multiple sets.",
			func(c *sdk.Ctx) { readSets(c, opInter, 1, false) }),
		multi("sunion", -2, ro, 1, -1, "Returns the union of multiple sets.",
			func(c *sdk.Ctx) { readSets(c, opUnion, 1, false) }),
		multi("sdiff", -2, ro, 1, -1, "Returns the difference of multiple sets.",
			func(c *sdk.Ctx) { readSets(c, opDiff, 1, false) }),
		multi("sinterstore", -3, rw, 1, -1, "Stores the intersect of multiple sets in a key.",
			func(c *sdk.Ctx) { readSets(c, opInter, 2, true) }),
		multi("sunionstore", -3, rw, 1, -1, "Stores the union of multiple sets in a key.",
			func(c *sdk.Ctx) { readSets(c, opUnion, 2, true) }),
		multi("sdiffstore", -3, rw, 1, -1, "Stores the difference of multiple sets in a key.",
			func(c *sdk.Ctx) { readSets(c, opDiff, 2, true) }),
	)
	card := multi("sintercard", -3, []string{"readonly", "movablekeys"}, 0, 0,
		"Returns the number of members of the intersect of multiple sets.", runSInterCard)
	card.Since, card.Step = "7.0.0", 0
	sdk.Register(card)
}

// The multi-key commands read every source set in one batch request: each
// read is atomic on its record, but the batch is not a snapshot across
// records. Results come in bytewise order (Redis's order for small integer
// sets).
//
// The *STORE commands write the destination in a second request as
// kit.DestStore describes: guarded by the destination's generation read in
// the sources' batch, then checking that no other source changed, putting
// the destination back and starting over if one did.
//
// Ctx.N: [0] the op, [1] the first source argument, [2] 1 to store into
// argument 1, [3] the number of sources, [4] SINTERCARD's limit (0: none),
// [5] 1 for SINTERCARD.

const (
	opInter = iota
	opUnion
	opDiff
)

func readSets(c *sdk.Ctx, op, first int, store bool) {
	c.N[0], c.N[1], c.N[3] = int64(op), int64(first), int64(c.NArg()-first)
	if store {
		c.N[2] = 1
	}
	for i := first; i < c.NArg(); i++ {
		c.Record(c.Arg(i)).Guard(codec.TypeSet).MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)
	}
	if store {
		c.Record(c.Arg(1)).Get("")
	}
	c.Exec(combine)
}

func runSInterCard(c *sdk.Ctx) {
	n, ok := kit.ParseInt(c.Arg(1))
	if !ok || n < 1 {
		c.Error("ERR numkeys should be greater than 0")
		return
	}
	if n > int64(c.NArg()-2) {
		c.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	for j := 2 + int(n); j < c.NArg(); j++ {
		if kit.Fold(c.Arg(j), "limit") && j+1 < c.NArg() {
			j++
			limit, ok := kit.ParseInt(c.Arg(j))
			if !ok || limit < 0 {
				c.Error("ERR LIMIT can't be negative")
				return
			}
			c.N[4] = limit
			continue
		}
		c.Error(kit.Syntax)
		return
	}
	c.N[0], c.N[1], c.N[3], c.N[5] = opInter, 2, n, 1
	for i := 2; i < 2+int(n); i++ {
		c.Record(c.Arg(i)).Guard(codec.TypeSet).MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)
	}
	c.Exec(combine)
}

// combine computes the result from the sources' members, then answers or
// writes the destination.
func combine(c *sdk.Ctx) {
	n := int(c.N[3])
	sets := make([][]codec.Value, n)
	missing := false
	for i := range n {
		r := c.Result(i)
		switch r.Code {
		case codec.OK:
			sets[i] = r.Value(0).List
			sortValues(sets[i])
		case codec.NotFound:
			missing = true
		default:
			kit.GuardFailed(c, r)
			return
		}
	}
	var out []codec.Value
	switch {
	case c.N[5] == 1:
		if missing {
			c.Reply().Int(0)
		} else {
			c.Reply().Int(interCard(sets, c.N[4]))
		}
		return
	case c.N[0] == opInter:
		if !missing {
			out = inter(sets)
		}
	case c.N[0] == opUnion:
		out = union(sets)
	default:
		if sets[0] != nil {
			out = diff(sets)
		}
	}
	if c.N[2] == 0 {
		w := c.Reply()
		w.Set(len(out))
		for i := range out {
			w.Bulk(out[i].Bytes)
		}
		return
	}
	first, op := int(c.N[1]), int(c.N[0])
	st := &kit.DestStore{Dst: c.Arg(1), Srcs: make([][]byte, n), Gens: make([]uint32, n), Size: int64(len(out)),
		Restart: func(c *sdk.Ctx) { readSets(c, op, first, true) }}
	for i := range n {
		st.Srcs[i], st.Gens[i] = c.Arg(first+i), c.Result(i).Generation // 0 when missing
	}
	if len(out) > 0 {
		st.Fill = func(call *codec.Call) {
			kv := c.Values(2 * len(out))
			for i := range out {
				kv[2*i], kv[2*i+1] = out[i], present
			}
			call.Put(codec.BinType, tagSet).MapPut(codec.BinValue, codec.MapOrderKey, kv)
		}
	}
	st.Write(c, c.Result(n))
}

// smallest returns the index of the smallest set.
func smallest(sets [][]codec.Value) int {
	s := 0
	for i := range sets {
		if len(sets[i]) < len(sets[s]) {
			s = i
		}
	}
	return s
}

// inAll reports whether m is in every set but skip.
func inAll(sets [][]codec.Value, skip int, m []byte) bool {
	for i := range sets {
		if i != skip && !contains(sets[i], m) {
			return false
		}
	}
	return true
}

// inter intersects sorted sets, walking the smallest.
func inter(sets [][]codec.Value) []codec.Value {
	s := smallest(sets)
	var out []codec.Value
	for _, m := range sets[s] {
		if inAll(sets, s, m.Bytes) {
			out = append(out, m)
		}
	}
	return out
}

// interCard counts the intersection, stopping at limit (0: no limit).
func interCard(sets [][]codec.Value, limit int64) int64 {
	s := smallest(sets)
	var n int64
	for _, m := range sets[s] {
		if inAll(sets, s, m.Bytes) {
			n++
			if limit > 0 && n >= limit {
				break
			}
		}
	}
	return n
}

// union merges sorted sets, without duplicates.
func union(sets [][]codec.Value) []codec.Value {
	total := 0
	for _, s := range sets {
		total += len(s)
	}
	out := make([]codec.Value, 0, total)
	for _, s := range sets {
		out = append(out, s...)
	}
	sortValues(out)
	return slices.CompactFunc(out, func(a, b codec.Value) bool { return cmpValue(a, b) == 0 })
}

// diff is the members of the first sorted set in none of the others.
func diff(sets [][]codec.Value) []codec.Value {
	var out []codec.Value
outer:
	for _, m := range sets[0] {
		for _, s := range sets[1:] {
			if contains(s, m.Bytes) {
				continue outer
			}
		}
		out = append(out, m)
	}
	return out
}
