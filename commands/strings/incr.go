package main

import (
	"math"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	flags := []string{"write", "denyoom", "fast"}
	sdk.Register(sdk.Command{
		Name: "incr", Arity: 2, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "string", Since: "1.0.0",
		Summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
		Run:     func(c *sdk.Ctx) { c.N[0] = 1; incrStart(c) },
	}, sdk.Command{
		Name: "decr", Arity: 2, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "string", Since: "1.0.0",
		Summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.",
		Run:     func(c *sdk.Ctx) { c.N[0] = -1; incrStart(c) },
	}, sdk.Command{
		Name: "incrby", Arity: 3, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "string", Since: "1.0.0",
		Summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.",
		Run:     runIncrBy,
	}, sdk.Command{
		Name: "decrby", Arity: 3, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "string", Since: "1.0.0",
		Summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.",
		Run:     runDecrBy,
	})
}

// State of the INCR family in Ctx.N.
const (
	incrDelta = 0 // the increment
	incrNew   = 2 // the value written by the read-modify-write path
)

const errOverflow = "ERR increment or decrement would overflow"

func runIncrBy(c *sdk.Ctx) {
	n, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	c.N[incrDelta] = n
	incrStart(c)
}

func runDecrBy(c *sdk.Ctx) {
	n, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	if n == math.MinInt64 {
		c.Error("ERR decrement would overflow")
		return
	}
	c.N[incrDelta] = -n
	incrStart(c)
}

// incrStart begins the command: at the fast path, or, when the host runs
// the command again because the fast path's add found the value stored as
// bytes (incrRecipe's restart), at the read.
func incrStart(c *sdk.Ctx) {
	if c.Restarted() {
		incrReadValue(c)
		return
	}
	incrAdd(c)
}

// incrAdd is the fast path: one atomic call adds to the integer bin (a new
// record starts at 0 and gets its type tag), keeps the TTL and reads the
// result back. It fails with BinTypeError when the value is stored as bytes
// ("10" built by APPEND, or "abc"); incrRead then takes over.
func incrAdd(c *sdk.Ctx) {
	incrAddCall(c)
	c.ExecFinal(incrRecipe, incrAdded)
}

// incrAddCall adds the fast path's call to the request.
func incrAddCall(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).TTLKeep().
		Add(codec.BinValue, codec.Int(c.N[incrDelta])).
		Put(codec.BinType, tagString).
		Get(codec.BinValue)
}

// incrRecipe is incrAdded as a recipe (sdk.Ctx.ExecFinal): where the store
// waits, the host answers the fast path by it. A value stored as bytes
// fails the add with no effect, and the command runs again from the
// start, where incrStart takes the read path.
var incrRecipe = codec.NewRecipe(0).
	Int(codec.OK, 2).
	Restart(codec.BinTypeError).
	Error(codec.Overflow, errOverflow).
	Error(codec.FilteredOut, kit.WrongType)

// incrReadValue reads the value for incrRead.
func incrReadValue(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(incrRead)
}

func incrAdded(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(kit.IntOf(r.Value(2))) // as incrRecipe's Int reads it
	case codec.BinTypeError:
		incrReadValue(c)
	case codec.Overflow:
		c.Error(errOverflow)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}

// incrRead parses a value stored as bytes exactly as Redis does (canonical
// integers only) and writes the sum as an integer, guarded by the
// generation it read; a concurrent change restarts from the fast path.
func incrRead(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		incrRetry(c) // deleted meanwhile
		return
	case codec.FilteredOut:
		c.Error(kit.WrongType)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	v := r.Value(0)
	var old int64
	switch v.Kind {
	case codec.KindInt:
		incrRetry(c) // rewritten as an integer meanwhile
		return
	case codec.KindBytes, codec.KindStr, codec.KindNil:
		var ok bool
		if old, ok = kit.ParseInt(v.Bytes); !ok {
			c.Error(kit.NotInt)
			return
		}
	default:
		c.Error(kit.NotInt)
		return
	}
	d := c.N[incrDelta]
	if (d < 0 && old < 0 && d < math.MinInt64-old) || (d > 0 && old > 0 && d > math.MaxInt64-old) {
		c.Error(errOverflow)
		return
	}
	c.N[incrNew] = old + d
	c.Record(c.Arg(1)).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).TTLKeep().
		Put(codec.BinValue, codec.Int(old+d))
	c.Exec(incrWritten)
}

func incrWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(c.N[incrNew])
	case codec.GenerationError, codec.NotFound:
		incrRetry(c)
	default:
		kit.StoreError(c, r)
	}
}

// incrRetry starts over at the fast path, whose outcome this step then
// handles (Exec, not ExecFinal): a restart for every lost race would run
// the command from the start many times under contention, where one
// command's steps loop within kit.RetryFor.
func incrRetry(c *sdk.Ctx) {
	if !kit.Again(c) {
		c.Error(kit.Contention)
		return
	}
	incrAddCall(c)
	c.Exec(incrAdded)
}
