package sdk_test

import (
	"fmt"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// FETCH key is GET by another name: its reply follows from the read's
// outcome alone, so where the store waits (Aerospike) the host answers it
// by a recipe, without entering the module a second time.
func init() {
	sdk.Register(sdk.Command{
		Name: "fetch", Arity: 2, Flags: []string{"readonly", "fast"}, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "example", Summary: "Returns a string, or nil.",
		Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
			c.ExecFinal(fetchRecipe, fetched)
		},
	})
}

// fetchRecipe is fetched's reply as a recipe, built once: the value, nil
// for a missing key, WRONGTYPE for another type; any other code answers
// the store error, as kit.StoreError does.
var fetchRecipe = codec.NewRecipe(0).
	Value(codec.OK, 0).
	Null(codec.NotFound).
	Error(codec.FilteredOut, "WRONGTYPE Operation against a key holding the wrong kind of value")

// fetched is the step that runs where the host runs the request at once
// (the embedded store): it must reply as the recipe says.
func fetched(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(r.Value(0).Bytes)
	case codec.NotFound:
		c.Reply().Null()
	case codec.FilteredOut:
		c.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.Error(codec.StoreErrorText(r.Code, r.Msg))
	}
}

// Both paths answer alike: sdktest's Inline runs requests at once, as the
// daemon does on its embedded store; without it the command ends with a
// final answer and sdktest applies the recipe, as the daemon does on
// Aerospike.
func ExampleCtx_ExecFinal() {
	for _, inline := range []bool{true, false} {
		h := sdktest.New()
		h.Inline = inline
		seed := codec.Call{Key: []byte("greeting")}
		seed.Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("hello")))
		h.Exec(seed)
		fmt.Println(h.Do("FETCH", "greeting"), h.Do("FETCH", "nobody"))
	}
	// Output:
	// "hello" (nil)
	// "hello" (nil)
}
