package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hget", Arity: 3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Returns the value of a field in a hash.",
		Run:     runHGet,
	}, sdk.Command{
		Name: "hmget", Arity: -3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Returns the values of all fields in a hash.",
		Run:     runHMGet,
	}, sdk.Command{
		Name: "hgetall", Arity: 2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Returns all fields and values in a hash.",
		Run:     func(c *sdk.Ctx) { runWhole(c, codec.ReturnKeyValue) },
	}, sdk.Command{
		Name: "hkeys", Arity: 2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Returns all fields in a hash.",
		Run:     func(c *sdk.Ctx) { runWhole(c, codec.ReturnKey) },
	}, sdk.Command{
		Name: "hvals", Arity: 2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Returns all values in a hash.",
		Run:     func(c *sdk.Ctx) { runWhole(c, codec.ReturnValue) },
	}, sdk.Command{
		Name: "hlen", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Returns the number of fields in a hash.",
		Run:     runHLen,
	}, sdk.Command{
		Name: "hexists", Arity: 3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.0.0",
		Summary: "Determines whether a field exists in a hash.",
		Run:     runHExists,
	}, sdk.Command{
		Name: "hstrlen", Arity: 3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "3.2.0",
		Summary: "Returns the length of the value of a field.",
		Run:     runHStrLen,
	})
}

// fieldRead asks for one field's value (a list of zero or one value)
// under the hash guard.
func fieldRead(c *sdk.Ctx) {
	keys := c.Values(1)
	keys[0] = codec.Bytes(c.Arg(2))
	c.Record(c.Arg(1)).Guard(codec.TypeHash).MapGetByKeys(codec.BinValue, codec.ReturnValue, keys)
}

// readField reads one field's value, then runs next.
func readField(c *sdk.Ctx, next sdk.Step) {
	fieldRead(c)
	c.Exec(next)
}

// readFieldFinal is readField for a command whose reply is recipe's where
// the store waits (sdk.Ctx.ExecFinal).
func readFieldFinal(c *sdk.Ctx, recipe *codec.Recipe, next sdk.Step) {
	fieldRead(c)
	c.ExecFinal(recipe, next)
}

// hgetRecipe is hgetDone as a recipe.
var hgetRecipe = codec.NewRecipe(0).
	First(codec.OK, 0).
	Null(codec.NotFound).
	Error(codec.FilteredOut, kit.WrongType).
	Error(codec.BinTypeError, kit.WrongType)

func runHGet(c *sdk.Ctx) { readFieldFinal(c, hgetRecipe, hgetDone) }

func hgetDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch {
	case r.Code == codec.NotFound:
		c.Reply().Null()
	case !r.OK():
		kit.GuardFailed(c, r)
	case len(r.Value(0).List) == 0:
		c.Reply().Null()
	default:
		kit.ReplyStr(c, &r.Values[0].List[0])
	}
}

// hstrlenRecipe is hstrlenDone as a recipe.
var hstrlenRecipe = codec.NewRecipe(0).
	FirstLen(codec.OK, 0).
	Reply(codec.NotFound, ":0\r\n").
	Error(codec.FilteredOut, kit.WrongType).
	Error(codec.BinTypeError, kit.WrongType)

func runHStrLen(c *sdk.Ctx) { readFieldFinal(c, hstrlenRecipe, hstrlenDone) }

func hstrlenDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch {
	case r.Code == codec.NotFound:
		c.Reply().Int(0)
	case !r.OK():
		kit.GuardFailed(c, r)
	case len(r.Value(0).List) == 0:
		c.Reply().Int(0)
	default:
		c.Reply().Int(int64(kit.StrLen(r.Value(0).List[0])))
	}
}

// runHMGet reads each requested field with a read of its own, so that the
// store answers the values in the order asked (one read of them all
// answers those found, in map order): the reply is then a plain function
// of the result, which the host writes where the store waits
// (codec.Recipe.FirstEach covers up to 255 fields; more take a step).
func runHMGet(c *sdk.Ctx) {
	n := c.NArg() - 2
	keys := c.Values(n)
	call := c.Record(c.Arg(1)).Guard(codec.TypeHash)
	for i := range keys {
		keys[i] = codec.Bytes(c.Arg(i + 2))
		call.MapGetByKeys(codec.BinValue, codec.ReturnValue, keys[i:i+1])
	}
	if n >= len(hmgetRecipes) {
		c.Exec(hmgetDone)
		return
	}
	c.ExecFinal(hmgetRecipes[n], hmgetDone)
}

// hmgetRecipes holds hmgetDone as a recipe for each field count up to
// 255 (a few kilobytes, built once).
var hmgetRecipes [256]*codec.Recipe

func init() {
	for n := 1; n < len(hmgetRecipes); n++ {
		hmgetRecipes[n] = codec.NewRecipe(0).
			FirstEach(codec.OK, 0, n).
			Nulls(codec.NotFound, n).
			Error(codec.FilteredOut, kit.WrongType).
			Error(codec.BinTypeError, kit.WrongType)
	}
}

func hmgetDone(c *sdk.Ctx) {
	r := c.Result(0)
	n := c.NArg() - 2
	w := c.Reply()
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		w.Array(n)
		for range n {
			w.Null()
		}
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	w.Array(n)
	for i := range n {
		if l := r.Value(i).List; len(l) > 0 {
			kit.ReplyStr(c, &l[0])
		} else {
			w.Null()
		}
	}
}

// runWhole reads every item of the hash, in key order, returning ret.
func runWhole(c *sdk.Ctx, ret codec.MapReturn) {
	c.N[0] = int64(ret)
	c.Record(c.Arg(1)).Guard(codec.TypeHash).MapGetByIndex(codec.BinValue, ret, 0, -1)
	c.Exec(wholeDone)
}

// wholeDone answers HGETALL (a map in RESP3), HKEYS or HVALS (arrays).
func wholeDone(c *sdk.Ctx) {
	items, ok := kit.ReadItems(c, c.Result(0))
	if !ok {
		return
	}
	w := c.Reply()
	switch codec.MapReturn(c.N[0]) {
	case codec.ReturnKeyValue:
		w.Map(len(items) / 2)
		for i := 0; i+1 < len(items); i += 2 {
			w.Bulk(items[i].Bytes)
			kit.ReplyStr(c, &items[i+1])
		}
	case codec.ReturnKey:
		w.Array(len(items))
		for i := range items {
			w.Bulk(items[i].Bytes)
		}
	default:
		w.Array(len(items))
		for i := range items {
			kit.ReplyStr(c, &items[i])
		}
	}
}

func runHLen(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeHash).MapSize(codec.BinValue)
	c.ExecFinal(kit.IntRecipe, kit.IntDone)
}

func runHExists(c *sdk.Ctx) {
	keys := c.Values(1)
	keys[0] = codec.Bytes(c.Arg(2))
	c.Record(c.Arg(1)).Guard(codec.TypeHash).MapGetByKeys(codec.BinValue, codec.ReturnCount, keys)
	c.ExecFinal(kit.IntRecipe, kit.IntDone)
}
