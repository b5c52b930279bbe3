package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "strlen", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns the length of a string value.",
		Run:     runStrlen,
	})
}

// runStrlen reads the value (no op returns a bin's length).
func runStrlen(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.ExecFinal(strlenRecipe, strlenDone)
}

// strlenRecipe is strlenDone as a recipe.
var strlenRecipe = codec.NewRecipe(0).
	Len(codec.OK, 0).
	Reply(codec.NotFound, ":0\r\n").
	Error(codec.FilteredOut, kit.WrongType)

func strlenDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(int64(kit.StrLen(r.Value(0))))
	case codec.NotFound:
		c.Reply().Int(0)
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}
