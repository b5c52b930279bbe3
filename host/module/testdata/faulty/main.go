// Command faulty is a test module whose commands kill their instance in ways
// the SDK cannot recover from, or never return. The tests load it twice, as
// trap.wasm and loop.wasm.
package main

import (
	"os"
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

var (
	sink    []byte
	counter int
)

func spin() {
	for i := 0; ; i++ {
		counter = i
	}
}

func replyValue(c *sdk.Ctx) {
	v := c.Result(0).Value(0)
	if v.IsNil() {
		c.Reply().Null()
		return
	}
	c.Reply().Bulk(v.Bytes)
}

func init() {
	sdk.Module("faulty", "1")
	sdk.Register(
		// oom allocates beyond any sane memory limit: the Go runtime's
		// "fatal error: out of memory" is not a recoverable panic.
		sdk.Command{Name: "oom", Arity: 1, Run: func(c *sdk.Ctx) {
			sink = make([]byte, 3<<30)
			sink[len(sink)-1] = 1
			c.Reply().OK()
		}},
		sdk.Command{Name: "exit", Arity: 1, Run: func(c *sdk.Ctx) { os.Exit(3) }},
		// tget is a plain get, used to leave a continuation in an instance
		// that another command then kills.
		sdk.Command{Name: "tget", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.Exec(replyValue)
		}},
		sdk.Command{Name: "spin", Arity: 1, Run: func(c *sdk.Ctx) { spin() }},
		// spinafter loops in the step that runs after its store request, so
		// the deadline applies to resume as well as to start.
		sdk.Command{Name: "spinafter", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.Exec(func(c *sdk.Ctx) { spin() })
		}},
		sdk.Command{Name: "lecho", Arity: 2, Run: func(c *sdk.Ctx) { c.Reply().Bulk(c.Arg(1)) }},
		// logflood n logs n warning lines, "line 0" to "line n-1".
		sdk.Command{Name: "logflood", Arity: 2, Run: func(c *sdk.Ctx) {
			n, _ := strconv.Atoi(string(c.Arg(1)))
			for i := 0; i < n; i++ {
				c.Log(sdk.LogWarn, "line "+strconv.Itoa(i))
			}
			c.Reply().OK()
		}},
	)
}
