package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "type", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Determines the type of value stored at a key.",
		Run:     runType,
	})
}

func runType(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get(codec.BinType)
	c.Exec(typeDone)
}

// typeDone answers the type tag as a simple string; "none" for a missing
// key. A record without a tag (not written by respike) reports "string".
func typeDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		t := r.Value(0).Bytes
		if len(t) == 0 {
			c.Reply().Simple(codec.TypeString)
			return
		}
		w := c.Reply()
		w.Buf = append(w.Buf, '+')
		for _, ch := range t {
			if ch == '\r' || ch == '\n' {
				ch = ' '
			}
			w.Buf = append(w.Buf, ch)
		}
		w.Buf = append(w.Buf, '\r', '\n')
	case codec.NotFound:
		c.Reply().Simple("none")
	default:
		kit.StoreError(c, r)
	}
}
