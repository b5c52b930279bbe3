package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lpush", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Prepends one or more elements to a list. Creates the key if it doesn't exist.",
		Run:     func(c *sdk.Ctx) { push(c, false, false) },
	}, sdk.Command{
		Name: "rpush", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Appends one or more elements to a list. Creates the key if it doesn't exist.",
		Run:     func(c *sdk.Ctx) { push(c, true, false) },
	}, sdk.Command{
		Name: "lpushx", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0",
		Summary: "Prepends one or more elements to a list only when the list exists.",
		Run:     func(c *sdk.Ctx) { push(c, false, true) },
	}, sdk.Command{
		Name: "rpushx", Arity: -3, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "2.2.0",
		Summary: "Appends one or more elements to a list only when the list exists.",
		Run:     func(c *sdk.Ctx) { push(c, true, true) },
	})
}

// push adds args[2:] at the tail (right) or head in one operate and
// answers the length after. LPUSH a b c leaves c first, as in Redis: the
// items are inserted at 0 in reverse order. The X forms require the key to
// exist (update-only) and answer 0 when it does not.
func push(c *sdk.Ctx, right, onlyExisting bool) {
	n := c.NArg() - 2
	items := c.Values(n)
	for i := range items {
		if right {
			items[i] = codec.Bytes(c.Arg(2 + i))
		} else {
			items[i] = codec.Bytes(c.Arg(c.NArg() - 1 - i))
		}
	}
	call := c.Record(c.Arg(1)).Guard(codec.TypeList)
	if onlyExisting {
		call.Exists(codec.ExistsUpdateOnly)
	}
	call.Put(codec.BinType, tagList)
	if right {
		call.ListAppend(bin, items)
	} else {
		call.ListInsert(bin, 0, items)
	}
	c.Exec(pushDone)
}

func pushDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(r.Value(1).Int)
	case codec.NotFound:
		c.Reply().Int(0) // LPUSHX/RPUSHX on a missing key
	default:
		failed(c, r)
	}
}
