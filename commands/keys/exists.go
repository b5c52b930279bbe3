package main

import sdk "github.com/respike/respike/guest-sdk"

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
func runExists(c *sdk.Ctx) {
	for i := 1; i < c.NArg(); i++ {
		c.Record(c.Arg(i)).Header()
	}
	c.Exec(countOK)
}
