package main

import sdk "github.com/respike/respike/guest-sdk"

func init() {
	sdk.Register(sdk.Command{
		Name: "greet", Arity: 2, Flags: []string{"fast"},
		Group: "module", Summary: "Replies with a greeting for the name given.",
		Run: greet,
	})
}

// greet is the whole command: one step that writes the reply. The reply is
// built in c.B, scratch bytes that are empty when a command starts and keep
// their capacity from command to command, so greet allocates nothing.
func greet(c *sdk.Ctx) {
	c.B = append(c.B, "hello, "...)
	c.B = append(c.B, c.Arg(1)...)
	c.Reply().Bulk(c.B)
}
