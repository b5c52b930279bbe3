package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "del", Arity: -2, Flags: []string{"write"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Deletes one or more keys.",
		Run:     runDel,
	}, sdk.Command{
		Name: "unlink", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: -1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Asynchronously deletes one or more keys.",
		Run:     runDel,
	})
}

// runDel deletes every distinct key in one batch and counts those that
// existed. Each delete is atomic; the batch is not atomic across keys.
// UNLINK is the same: the store frees memory on its own schedule anyway.
func runDel(c *sdk.Ctx) {
	var keep []bool
	if c.NArg() > 2 {
		keep = kit.Dedup(c.Args()[1:], false)
	}
	for i := 1; i < c.NArg(); i++ {
		if keep == nil || keep[i-1] {
			c.Record(c.Arg(i)).Delete()
		}
	}
	c.Exec(countOK)
}
