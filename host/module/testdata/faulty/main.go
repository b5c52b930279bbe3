// Command faulty is a test module whose commands kill their instance in ways
// the SDK cannot recover from, or never return. The tests load it twice, as
// trap.wasm and loop.wasm.
package main

import (
	"os"
	"strconv"
	"unsafe"

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
		// fget is a get whose reply, where the store waits, the host
		// gives by a recipe (a final answer); fgetnk is fget without
		// declared keys, so a pipeline runs it in respike_batch.
		sdk.Command{Name: "fget", Arity: 2, Flags: []string{"readonly"}, FirstKey: 1, LastKey: 1, Step: 1, Run: runFget},
		sdk.Command{Name: "fgetnk", Arity: 2, Flags: []string{"readonly"}, Run: runFget},
		// frestart gets its key; a missing key restarts the command,
		// which then replies how it was run.
		sdk.Command{Name: "frestart", Arity: 2, Run: func(c *sdk.Ctx) {
			if c.Restarted() {
				c.Reply().Bulk([]byte("restarted"))
				return
			}
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.ExecFinal(restartRecipe, replyValue)
		}},
		// floop restarts for as long as its key is missing.
		sdk.Command{Name: "floop", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.ExecFinal(restartRecipe, replyValue)
		}},
		// frestartk, badrecipek, tgetk and exitk are frestart, badrecipe,
		// tget and exit with a declared key, for the overlap windows
		// (which start such commands in one batch, their final answers
		// handed over mid-batch).
		sdk.Command{Name: "frestartk", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1, Run: func(c *sdk.Ctx) {
			if c.Restarted() {
				c.Reply().Bulk([]byte("restarted"))
				return
			}
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.ExecFinal(restartRecipe, replyValue)
		}},
		sdk.Command{Name: "badrecipek", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1, Run: func(c *sdk.Ctx) {
			n, _ := strconv.Atoi(string(c.Arg(1)))
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.ExecFinal(badRecipes[n], replyValue)
		}},
		sdk.Command{Name: "tgetk", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.Exec(replyValue)
		}},
		sdk.Command{Name: "exitk", Arity: 2, FirstKey: 1, LastKey: 1, Step: 1, Run: func(c *sdk.Ctx) { os.Exit(3) }},
		// badrecipe n ends with a final answer whose recipe is malformed
		// in way n (badRecipes).
		sdk.Command{Name: "badrecipe", Arity: 2, Run: func(c *sdk.Ctx) {
			n, _ := strconv.Atoi(string(c.Arg(1)))
			c.Record([]byte("k")).Get(codec.BinValue)
			c.ExecFinal(badRecipes[n], replyValue)
		}},
	)
}

func runFget(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get(codec.BinValue)
	c.ExecFinal(fgetRecipe, replyValue)
}

var (
	fgetRecipe    = codec.NewRecipe(0).Value(codec.OK, 0).Null(codec.NotFound)
	restartRecipe = codec.NewRecipe(0).Value(codec.OK, 0).Restart(codec.NotFound)
)

// badRecipes are malformed recipes for a request of one call of one op:
// the builder refuses most of them, so the bytes are set by hand.
var badRecipes = []*codec.Recipe{
	codec.NewRecipe(1).Null(codec.OK),                    // 0: no call 1
	codec.NewRecipe(0).Value(codec.OK, 1),                // 1: no op 1
	raw(9, 0, 1, 0, 0, 0, 0, 3),                          // 2: unknown version
	raw(1, 0, 1, 0, 0, 0, 0),                             // 3: a rule without its action
	raw(1, 0, 1, 0, 0, 0, 0, 99),                         // 4: unknown action
	raw(1, 0, 1, 0, 0, 0, 0, 6),                          // 5: restart on OK
	raw(1, 0, 1, 0, 0, 0, 0, 4, 3, 0, '+', 'O', 'K'),     // 6: a reply without CRLF
	raw(1, 0, 1, 0, 0, 0, 0, 3, 0),                       // 7: trailing bytes
	raw(1, 0, 0),                                         // 8: no rule
	raw(1, 0, 1, 0, 0, 0, 0, 4, 200, 0, '+', '\r', '\n'), // 9: a reply longer than the recipe
}

// raw is a recipe of the bytes b, which the builder would not make.
func raw(b ...byte) *codec.Recipe {
	r := codec.NewRecipe(0)
	(*struct{ enc []byte })(unsafe.Pointer(r)).enc = b
	return r
}
