package main

import (
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "pfmerge", Arity: -2, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "hyperloglog", Since: "2.8.9",
		Summary: "Merges one or more HyperLogLog values into a single key.",
		Run:     runPFMerge,
	})
}

// runPFMerge: PFMERGE destkey [sourcekey ...]. Reads every key (the
// destination first, as Redis merges it too) in one batch, merges the
// registers, and writes the destination under the generation read: dense
// when any input was dense, else sparse, set register by register as
// Redis's pfmergeCommand does, its cache invalidated.
func runPFMerge(c *sdk.Ctx) {
	for _, k := range c.Args()[1:] {
		readHLL(c, k)
	}
	c.Exec(pfmergeApply)
}

func pfmergeApply(c *sdk.Ctx) {
	u := &unionScratch
	first := true
	useDense := false
	var dst loaded
	for i := range c.Results() {
		l, ok := load(c, c.Result(i))
		if !ok {
			return
		}
		if i == 0 {
			dst = l
		}
		if !l.exists {
			continue
		}
		if l.h[4] == encDense {
			useDense = true
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
	h := dst.h
	if dst.exists {
		h = own(h)
	} else {
		h = newSparse()
	}
	if useDense {
		var ok bool
		if h, ok = toDense(h); !ok {
			c.Error(errCorrupt)
			return
		}
	}
	for j := range hllRegisters {
		v := u.register(j)
		if v == 0 {
			continue
		}
		if h[4] == encDense {
			if v > denseGet(h[hdrSize:], j) {
				denseSet(h[hdrSize:], j, v)
			}
		} else {
			h, _ = sparseSet(h, j, v)
		}
	}
	invalidate(h)
	write(c, c.Arg(1), dst, h, runPFMerge, func(c *sdk.Ctx) { c.Reply().OK() })
}
