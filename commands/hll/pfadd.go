package main

import (
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "pfadd", Arity: -2, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hyperloglog", Since: "2.8.9",
		Summary: "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
		Run:     runPFAdd,
	})
}

// runPFAdd: PFADD key [element ...]. Reads the HLL, adds the elements in
// the module as Redis's pfaddCommand does, and writes it back when a
// register changed (or the key is new): 1, else 0 and nothing written.
// A few elements first try the partial path of a dense HLL (partial.go),
// which reads and writes only the registers' bytes.
func runPFAdd(c *sdk.Ctx) {
	if n := c.NArg() - 2; n >= 1 && n <= maxPartial {
		pfaddPartial(c)
		return
	}
	pfaddWhole(c)
}

// pfaddWhole is PFADD on the whole value.
func pfaddWhole(c *sdk.Ctx) {
	readHLL(c, c.Arg(1))
	c.Exec(pfaddApply)
}

func pfaddApply(c *sdk.Ctx) {
	l, ok := load(c, c.Result(0))
	if !ok {
		return
	}
	h, updated := l.h, 0
	switch {
	case !l.exists:
		h, updated = newSparse(), 1
	case h[4] == encDense && !denseChanges(h, c.Args()[2:]):
		c.Reply().Int(0) // nothing to write: no copy of the 12 KB
		return
	default:
		h = own(h)
	}
	for _, ele := range c.Args()[2:] {
		var ret int
		h, ret = add(h, ele)
		switch ret {
		case 1:
			updated++
		case -1:
			c.Error(errCorrupt)
			return
		}
	}
	if updated == 0 {
		c.Reply().Int(0)
		return
	}
	invalidate(h)
	write(c, c.Arg(1), l, h, runPFAdd, func(c *sdk.Ctx) { c.Reply().Int(1) })
}

// denseChanges reports whether adding the elements to the dense HLL h
// would change a register.
func denseChanges(h []byte, elements [][]byte) bool {
	for _, ele := range elements {
		index, count := patLen(ele)
		if count > denseGet(h[hdrSize:], index) {
			return true
		}
	}
	return false
}
