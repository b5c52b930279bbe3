package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "exists", Arity: -2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Determines whether one or more keys exist.",
		Run:     runExists,
	}, sdk.Command{
		Name: "touch", Arity: -2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed.",
		Run:     runExists,
	})
}

// runExists reads every key's header in one batch and counts those found;
// a key given twice counts twice, as in Redis. TOUCH is the same: the
// store keeps no access time to update.
//
// Of one key, the reply is a plain function of the call's code: the host
// writes it where the store waits (existsRecipe).
func runExists(c *sdk.Ctx) {
	for i := 1; i < c.NArg(); i++ {
		c.Record(c.Arg(i)).Header()
	}
	if c.NArg() == 2 {
		c.ExecFinal(existsRecipe, countOK)
		return
	}
	c.Exec(countOK)
}

// existsRecipe is countOK of one call as a recipe.
var existsRecipe = codec.NewRecipe(0).
	Reply(codec.OK, ":1\r\n").
	Reply(codec.NotFound, ":0\r\n")
