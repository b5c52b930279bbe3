package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// HRANDFIELD samples the hash uniformly (see kit.Sample: size, random
// indexes, a redraw when another client wrote in between); WITHVALUES
// answers each field's value after it.
var hrandfield = kit.NewSample(codec.TypeHash, "withvalues", kit.ReplyStr)

func init() {
	sdk.Register(sdk.Command{
		Name: "hrandfield", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "6.2.0",
		Summary: "Returns one or more random fields from a hash.",
		Run:     hrandfield.Run,
	})
}
