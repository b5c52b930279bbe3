// Command kv is a test module: echo, get, set and multi-step commands.
package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// version is the module's version, which ver replies.
var version = "1"

func main() {}

func reply(c *sdk.Ctx) {
	r := c.Result(0)
	if !r.OK() {
		c.Reply().Null()
		return
	}
	v := r.Value(0)
	if v.IsNil() {
		c.Reply().Null()
		return
	}
	c.Reply().Bulk(v.Bytes)
}

func init() {
	sdk.Module("kv", version)
	sdk.Register(
		sdk.Command{Name: "echo", Arity: 2, Flags: []string{"fast"}, Run: func(c *sdk.Ctx) {
			c.Reply().Bulk(c.Arg(1))
		}},
		sdk.Command{Name: "ver", Arity: 1, Run: func(c *sdk.Ctx) {
			c.Reply().BulkString(version)
		}},
		sdk.Command{Name: "get", Arity: 2, Flags: []string{"readonly", "fast"}, FirstKey: 1, LastKey: 1, Step: 1,
			Run: func(c *sdk.Ctx) {
				c.Record(c.Arg(1)).Get(codec.BinValue)
				c.Exec(reply)
			}},
		sdk.Command{Name: "set", Arity: 3, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1,
			Run: func(c *sdk.Ctx) {
				c.Record(c.Arg(1)).Put(codec.BinValue, codec.Bytes(c.Arg(2)))
				c.Exec(func(c *sdk.Ctx) { c.Reply().OK() })
			}},
		// getset reads then writes in two round trips and replies the old value.
		sdk.Command{Name: "getset", Arity: 3, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1,
			Run: func(c *sdk.Ctx) {
				c.Record(c.Arg(1)).Get(codec.BinValue)
				c.Exec(func(c *sdk.Ctx) {
					r := c.Result(0)
					c.B = append(c.B[:0], 0)
					if v := r.Value(0); r.OK() && !v.IsNil() {
						c.B = append(c.B[:0], 1)
						c.B = append(c.B, v.Bytes...)
					}
					c.Record(c.Arg(1)).Put(codec.BinValue, codec.Bytes(c.Arg(2)))
					c.Exec(func(c *sdk.Ctx) {
						if c.B[0] == 0 {
							c.Reply().Null()
							return
						}
						c.Reply().Bulk(c.B[1:])
					})
				})
			}},
		sdk.Command{Name: "panic", Arity: 1, Run: func(c *sdk.Ctx) {
			panic("boom")
		}},
	)
}
