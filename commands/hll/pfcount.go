package main

import (
	"github.com/respike/respike/guest-sdk/codec"

	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "pfcount", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "hyperloglog", Since: "2.8.9",
		Summary: "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
		Run:     runPFCount,
	})
}

// runPFCount: PFCOUNT key [key ...]. One key: its cached cardinality, or
// the estimate, which is then cached in the value as Redis does (a write
// under the generation read; when another client wrote in between, the
// estimate of what was read is still the answer and nothing is written).
// Several keys: the estimate of their union, from one batch read. One
// dense key with a valid cache: only its header is read (partial.go).
func runPFCount(c *sdk.Ctx) {
	if c.NArg() == 2 {
		readDenseHeader(c.Record(c.Arg(1)).Guard(codec.TypeString))
		c.Exec(pfcountHeader)
		return
	}
	for _, k := range c.Args()[1:] {
		readHLL(c, k)
	}
	c.Exec(pfcountUnion)
}

func pfcountOne(c *sdk.Ctx) {
	l, ok := load(c, c.Result(0))
	if !ok {
		return
	}
	if !l.exists {
		c.Reply().Int(0)
		return
	}
	if card, ok := cachedCard(l.h); ok {
		c.Reply().Int(int64(card))
		return
	}
	var hist [64]int
	if !histogram(l.h, &hist) {
		c.Error(errCorrupt)
		return
	}
	card := estimate(&hist)
	l.h = own(l.h)
	setCard(l.h, card)
	c.N[0] = int64(card)
	c.Record(c.Arg(1)).Generation(l.gen).Exists(codec.ExistsUpdateOnly).TTLKeep().
		Put(codec.BinValue, codec.Bytes(l.h))
	c.Exec(func(c *sdk.Ctx) { c.Reply().Int(c.N[0]) })
}

// unionScratch holds the registers of a PFCOUNT or PFMERGE union: 16 KB
// that a step fills and uses without giving up control, so one is enough.
var unionScratch union

func pfcountUnion(c *sdk.Ctx) {
	u := &unionScratch
	first := true
	for i := range c.Results() {
		l, ok := load(c, c.Result(i))
		if !ok {
			return
		}
		if !l.exists {
			continue
		}
		if !u.merge(l.h, first) {
			c.Error(errCorrupt)
			return
		}
		first = false
	}
	if first {
		*u = union{} // no key exists
	}
	var hist [64]int
	u.histogram(&hist)
	c.Reply().Int(int64(estimate(&hist)))
}
