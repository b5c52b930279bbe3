package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "get", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns the string value of a key.",
		Run:     runGet,
	})
}

// runGet reads the value under the string guard: one read, no allocation.
// Where the store waits, the host answers it by getRecipe, which says
// what replyGet does.
func runGet(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Prepared(getValue)
	c.ExecFinal(getRecipe, replyGet)
}

// getRecipe is replyGet as a recipe (sdk.Ctx.ExecFinal): the value, nil
// for a missing key, WRONGTYPE, else the store error.
var getRecipe = codec.NewRecipe(0).
	Value(codec.OK, 0).
	Null(codec.NotFound).
	Error(codec.FilteredOut, kit.WrongType)

// getValue is GET's one op, encoded once: adding it is a copy of its
// bytes (codec.Prepared).
var getValue = codec.Prepare(codec.Op{Code: codec.OpGet, Bin: codec.BinValue})
