package main

import (
	"bytes"
	"math"
	"slices"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	cmd := func(name string, arity int, flags []string, since, summary string, op int64, store bool) sdk.Command {
		first, last := 0, 0
		if store {
			first, last = 1, 1
		}
		return sdk.Command{
			Name: name, Arity: arity, Flags: slices.Concat(flags, []string{"movablekeys"}), FirstKey: first, LastKey: last, Step: 1,
			Group: "sorted_set", Since: since, Summary: summary,
			Run: func(c *sdk.Ctx) { zalgStart(c, op, store) },
		}
	}
	ro, rw := []string{"readonly"}, []string{"write", "denyoom"}
	sdk.Register(
		cmd("zunion", -3, ro, "6.2.0", "Returns the union of multiple sorted sets.", algUnion, false),
		cmd("zinter", -3, ro, "6.2.0", "Returns the intersect of multiple sorted sets.", algInter, false),
		cmd("zdiff", -3, ro, "6.2.0", "Returns the difference between multiple sorted sets.", algDiff, false),
		cmd("zunionstore", -4, rw, "2.0.0", "Stores the union of multiple sorted sets in a key.", algUnion, true),
		cmd("zinterstore", -4, rw, "2.0.0", "Stores the intersect of multiple sorted sets in a key.", algInter, true),
		cmd("zdiffstore", -4, rw, "6.2.0", "Stores the difference of multiple sorted sets in a key.", algDiff, true),
		cmd("zintercard", -3, ro, "7.0.0", "Returns the number of members of the intersect of multiple sorted sets.", algCard, false),
	)
}

// The multi-key commands read every source in one batch request (a set
// counts as a sorted set whose scores are all 1, as in Redis): each read is
// atomic on its record, but the batch is not a snapshot across records.
// The *STORE commands then write the destination in a second request,
// replacing whatever it held (of any type) and clearing its TTL, or
// deleting it when the result is empty; a concurrent write in between is
// not reflected or is overwritten. Scores combine as Redis combines them:
// weighted (a NaN product counts as 0), SUM turning inf + -inf into 0,
// the intersection and union walking the sources from the smallest.
//
// Ctx.N: [0] the alg* op, [1] 1 for the STORE forms, [2] the argument index
// of numkeys, [3] numkeys, [4] an option error to report once the sources'
// types are known to be right (Redis looks the keys up first).

const (
	algUnion = iota
	algInter
	algDiff
	algCard
)

const (
	aggSum = iota
	aggMin
	aggMax
)

// Option errors kept in Ctx.N[4].
const (
	algOptOK = iota
	algOptSyntax
	algOptWeight
	algOptLimit
)

// algOpts are the options after the keys.
type algOpts struct {
	weights    []float64
	aggregate  int
	withScores bool
	limit      int64
	err        int64
}

// zalgOpts parses the options after the keys as Redis does, stopping at
// the first error.
func zalgOpts(c *sdk.Ctx) algOpts {
	op, store := c.N[0], c.N[1] == 1
	setnum := int(c.N[3])
	o := algOpts{}
	j := int(c.N[2]) + 1 + setnum
	for j < c.NArg() {
		remaining := c.NArg() - j
		a := c.Arg(j)
		switch {
		case op != algDiff && op != algCard && remaining >= setnum+1 && kit.Fold(a, "weights"):
			j++
			o.weights = make([]float64, setnum)
			for i := range setnum {
				w, ok := kit.ParseDouble(c.Arg(j))
				if !ok {
					o.err = algOptWeight
					return o
				}
				o.weights[i] = w
				j++
			}
		case op != algDiff && op != algCard && remaining >= 2 && kit.Fold(a, "aggregate"):
			switch b := c.Arg(j + 1); {
			case kit.Fold(b, "sum"):
				o.aggregate = aggSum
			case kit.Fold(b, "min"):
				o.aggregate = aggMin
			case kit.Fold(b, "max"):
				o.aggregate = aggMax
			default:
				o.err = algOptSyntax
				return o
			}
			j += 2
		case !store && op != algCard && kit.Fold(a, "withscores"):
			o.withScores = true
			j++
		case op == algCard && remaining >= 2 && kit.Fold(a, "limit"):
			n, ok := kit.ParseInt(c.Arg(j + 1))
			if !ok || n < 0 {
				o.err = algOptLimit
				return o
			}
			o.limit = n
			j += 2
		default:
			o.err = algOptSyntax
			return o
		}
	}
	return o
}

func zalgStart(c *sdk.Ctx, op int64, store bool) {
	numIdx := 1
	if store {
		numIdx = 2
		c.N[1] = 1
	}
	n, ok := kit.ParseInt(c.Arg(numIdx))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	if n < 1 {
		c.Error("ERR at least 1 input key is needed for '" + string(bytes.ToLower(c.Arg(0))) + "' command")
		return
	}
	if n > int64(c.NArg()-numIdx-1) {
		c.Error(kit.Syntax)
		return
	}
	c.N[0], c.N[2], c.N[3] = op, int64(numIdx), n
	c.N[4] = zalgOpts(c).err
	for i := range int(n) {
		c.Record(c.Arg(numIdx+1+i)).Get(codec.BinType).MapGetByIndex(codec.BinValue, codec.ReturnKeyValue, 0, -1)
	}
	if store {
		c.Record(c.Arg(1)).Get("") // the destination (kit.DestStore)
	}
	c.Exec(zalgCombine)
}

// source is one input: members in key order with their scores.
type source struct {
	kv     []codec.Value
	weight float64
}

func (s *source) len() int { return len(s.kv) / 2 }

// find returns the score of member m.
func (s *source) find(m []byte) (float64, bool) {
	n := s.len()
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(s.kv[2*mid].Bytes, m) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < n && bytes.Equal(s.kv[2*lo].Bytes, m) {
		return codec.ScoreOf(&s.kv[2*lo+1]), true
	}
	return 0, false
}

// aggregate folds val into *target as Redis's zunionInterAggregate.
func aggregate(target *float64, val float64, agg int) {
	switch agg {
	case aggSum:
		*target += val
		if math.IsNaN(*target) {
			*target = 0
		}
	case aggMin:
		if val < *target {
			*target = val
		}
	case aggMax:
		if val > *target {
			*target = val
		}
	}
}

// weighted is score × weight, a NaN product counting as 0.
func weighted(score, weight float64) float64 {
	v := score * weight
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func zalgCombine(c *sdk.Ctx) {
	setnum := int(c.N[3])
	srcs := make([]source, setnum)
	for i := range setnum {
		r := c.Result(i)
		switch r.Code {
		case codec.OK:
			t := r.Value(0)
			if t.Kind != codec.KindNil && string(t.Bytes) != codec.TypeZSet && string(t.Bytes) != codec.TypeSet {
				c.Error(kit.WrongType)
				return
			}
			srcs[i].kv = r.Value(1).List
		case codec.NotFound:
		default:
			failed(c, r)
			return
		}
	}
	o := zalgOpts(c)
	switch o.err {
	case algOptSyntax:
		c.Error(kit.Syntax)
		return
	case algOptWeight:
		c.Error("ERR weight value is not a float")
		return
	case algOptLimit:
		c.Error("ERR LIMIT can't be negative")
		return
	}
	for i := range srcs {
		srcs[i].weight = 1
		if o.weights != nil {
			srcs[i].weight = o.weights[i]
		}
	}
	op := c.N[0]
	if op != algDiff {
		slices.SortStableFunc(srcs, func(a, b source) int { return a.len() - b.len() })
	}
	var out []codec.Value // member, score pairs
	switch op {
	case algCard:
		var n int64
		for i := 0; i < srcs[0].len(); i++ {
			m := srcs[0].kv[2*i].Bytes
			in := true
			for j := 1; j < setnum && in; j++ {
				_, in = srcs[j].find(m)
			}
			if in {
				n++
				if o.limit > 0 && n >= o.limit {
					break
				}
			}
		}
		c.Reply().Int(n)
		return
	case algInter:
		for i := 0; i < srcs[0].len(); i++ {
			m := srcs[0].kv[2*i].Bytes
			score := weighted(codec.ScoreOf(&srcs[0].kv[2*i+1]), srcs[0].weight)
			in := true
			for j := 1; j < setnum; j++ {
				v, ok := srcs[j].find(m)
				if !ok {
					in = false
					break
				}
				aggregate(&score, v*srcs[j].weight, o.aggregate)
			}
			if in {
				out = append(out, codec.Bytes(m), codec.Float(score))
			}
		}
	case algUnion:
		acc := map[string]int{} // member → index of its score in out
		for _, s := range srcs {
			for i := 0; i < s.len(); i++ {
				m := s.kv[2*i].Bytes
				score := weighted(codec.ScoreOf(&s.kv[2*i+1]), s.weight)
				if at, ok := acc[string(m)]; ok {
					aggregate(&out[at].Float, score, o.aggregate)
					continue
				}
				acc[string(m)] = len(out) + 1
				out = append(out, codec.Bytes(m), codec.Float(score))
			}
		}
	case algDiff:
	outer:
		for i := 0; i < srcs[0].len(); i++ {
			m := srcs[0].kv[2*i].Bytes
			for j := 1; j < setnum; j++ {
				if _, ok := srcs[j].find(m); ok {
					continue outer
				}
			}
			out = append(out, codec.Bytes(m), codec.Float(codec.ScoreOf(&srcs[0].kv[2*i+1])))
		}
	}
	sortByScore(out)
	if c.N[1] == 1 {
		st := &kit.DestStore{Dst: c.Arg(1), Srcs: make([][]byte, setnum), Gens: make([]uint32, setnum),
			Restart: func(c *sdk.Ctx) { zalgStart(c, op, true) }}
		for i := range setnum {
			st.Srcs[i], st.Gens[i] = c.Arg(int(c.N[2])+1+i), c.Result(i).Generation
		}
		kit.StoreZSet(c, st, out, c.Result(setnum))
		return
	}
	replyItems(c, out, o.withScores, false)
}

// sortByScore sorts member, score pairs into rank order: by score, equal
// scores by member bytes.
func sortByScore(kv []codec.Value) {
	n := len(kv) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		sa, sb := kv[2*a+1].Float, kv[2*b+1].Float
		switch {
		case sa < sb:
			return -1
		case sa > sb:
			return 1
		}
		return bytes.Compare(kv[2*a].Bytes, kv[2*b].Bytes)
	})
	sorted := make([]codec.Value, 0, len(kv))
	for _, i := range idx {
		sorted = append(sorted, kv[2*i], kv[2*i+1])
	}
	copy(kv, sorted)
}
