// Command hostile is the module of the hostile-module suite
// (test/e2e/hostile_test.go): each command misbehaves in one way a module
// can, and hok behaves, to show the module itself recovers.
package main

import (
	"bytes"
	"os"
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
)

func main() {}

var (
	counter int
	sink    [][]byte
)

// recurse never returns: each frame holds a little stack, so the
// goroutine's stack grows until the instance's memory runs out.
func recurse(n int) int {
	var pad [256]byte
	pad[n%len(pad)] = byte(n)
	return recurse(n+1) + int(pad[(n*7)%len(pad)])
}

// hostLog is the host's log import, called here with a range outside the
// module's memory.
//
//go:wasmimport respike log
func hostLog(level, ptr, n uint32)

func arg(c *sdk.Ctx, i int) int {
	n, _ := strconv.Atoi(string(c.Arg(i)))
	return n
}

func init() {
	sdk.Module("hostile", "1")
	sdk.Register(
		sdk.Command{Name: "hok", Arity: 1, Run: func(c *sdk.Ctx) { c.Reply().OK() }},
		// hloop loops for ever.
		sdk.Command{Name: "hloop", Arity: 1, Run: func(c *sdk.Ctx) {
			for {
				counter++
			}
		}},
		// hoom allocates without bound.
		sdk.Command{Name: "hoom", Arity: 1, Run: func(c *sdk.Ctx) {
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		}},
		// hrecurse recurses without bound.
		sdk.Command{Name: "hrecurse", Arity: 1, Run: func(c *sdk.Ctx) {
			counter = recurse(0)
			c.Reply().OK()
		}},
		// hhuge n replies a bulk string of n MiB.
		sdk.Command{Name: "hhuge", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Reply().Bulk(bytes.Repeat([]byte("h"), arg(c, 1)<<20))
		}},
		// htrap makes a host call with bytes outside its memory: a trap,
		// on every call.
		sdk.Command{Name: "htrap", Arity: 1, Run: func(c *sdk.Ctx) {
			hostLog(1, 0xffff_ff00, 4096)
			c.Reply().OK()
		}},
		// hexit exits, as a Go module does on a fatal error.
		sdk.Command{Name: "hexit", Arity: 1, Run: func(c *sdk.Ctx) { os.Exit(3) }},
		// hlog n logs n lines.
		sdk.Command{Name: "hlog", Arity: 2, Run: func(c *sdk.Ctx) {
			for i := range arg(c, 1) {
				c.Log(sdk.LogWarn, "hostile line "+strconv.Itoa(i))
			}
			c.Reply().OK()
		}},
	)
}
