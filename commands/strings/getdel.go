package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "getdel", Arity: 2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns the string value of a key after deleting the key.",
		Run:     runGetDel,
	})
}

// runGetDel reads and deletes in one guarded call.
func runGetDel(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue).Delete()
	c.Exec(replyGet)
}
