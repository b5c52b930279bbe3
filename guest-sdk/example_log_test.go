package sdk_test

import (
	"fmt"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "note", Arity: 2, Flags: []string{"fast"}, Group: "example",
		Summary: "Logs its argument.",
		Run: func(c *sdk.Ctx) {
			c.Log(sdk.LogInfo, "noted "+string(c.Arg(1)))
			c.Reply().OK()
		},
	})
}

// A command logs through the daemon's structured log: the host adds the
// module, its version and the command, and drops lines past a rate per
// module. Under sdktest the lines are kept in Host.Logs.
func ExampleCtx_Log() {
	h := sdktest.New()
	fmt.Println(h.Do("NOTE", "this"))
	for _, l := range h.Logs {
		fmt.Println(l.Level == int(sdk.LogInfo), l.Msg)
	}
	// Output:
	// OK
	// true noted this
}
