package main

import (
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// baseline is a command with the same request shape as GET that does
// nothing else: the fake host's and the store's own allocations.
func init() {
	sdk.Register(sdk.Command{Name: "baseline", Arity: -2, Run: func(c *sdk.Ctx) {
		c.Record(c.Arg(1)).Get(codec.BinValue)
		c.Exec(func(c *sdk.Ctx) { c.Reply().Null() })
	}})
}

// TestHotPathAllocations checks that GET, SET and INCR allocate nothing in
// the module beyond what the test host and store allocate for any command
// with one store request (guest allocation is 15-20× dearer in wasm).
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	h := sdktest.New()
	defer h.Store.Close()
	h.Inline = true
	args := func(s ...string) [][]byte {
		b := make([][]byte, len(s))
		for i := range s {
			b[i] = []byte(s[i])
		}
		return b
	}
	h.DoRaw(args("SET", "k", "value")...)
	h.DoRaw(args("SET", "n", "1")...)
	base := testing.AllocsPerRun(200, func() { h.DoRaw(args("BASELINE", "k")...) })
	for _, cmd := range [][][]byte{
		args("GET", "k"), args("SET", "k", "value"), args("SET", "k", "value", "EX", "100"), args("INCR", "n"),
	} {
		got := testing.AllocsPerRun(200, func() { h.DoRaw(cmd...) })
		if got > base {
			t.Errorf("%s: %.1f allocations per run, baseline %.1f", cmd[0], got, base)
		}
		t.Logf("%s: %.1f allocations (baseline %.1f)", cmd[0], got, base)
	}
}
