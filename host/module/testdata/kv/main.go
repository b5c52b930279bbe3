// Command kv is a test module: echo, get, set and multi-step commands.
package main

import (
	"strconv"

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
		// casincr adds 1 to a decimal value by read-modify-write under the
		// generation, as INCRBYFLOAT does, and starts over when another
		// client wrote in between; it replies how many tries it took.
		sdk.Command{Name: "casincr", Arity: 2, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1,
			Run: casRead},
		sdk.Command{Name: "panic", Arity: 1, Run: func(c *sdk.Ctx) {
			panic("boom")
		}},
	)
}

// casTries bounds casincr's tries, so that a test fails rather than hangs.
const casTries = 100000

func casRead(c *sdk.Ctx) {
	c.N[0]++
	c.Record(c.Arg(1)).Get(codec.BinValue)
	c.Exec(casWrite)
}

func casWrite(c *sdk.Ctx) {
	r := c.Result(0)
	n := 0
	call := c.Record(c.Arg(1))
	switch r.Code {
	case codec.OK:
		n, _ = strconv.Atoi(string(r.Value(0).Bytes))
		call.Generation(r.Generation).Exists(codec.ExistsUpdateOnly)
	case codec.NotFound:
		call.Exists(codec.ExistsCreateOnly)
	default:
		c.Error("ERR read failed")
		return
	}
	c.B = strconv.AppendInt(c.B[:0], int64(n+1), 10)
	call.Put(codec.BinValue, codec.Bytes(c.B))
	c.Exec(casDone)
}

func casDone(c *sdk.Ctx) {
	switch c.Result(0).Code {
	case codec.OK:
		c.Reply().Int(c.N[0])
	case codec.GenerationError, codec.Exists, codec.NotFound:
		if c.N[0] >= casTries {
			c.Error("ERR too many tries")
			return
		}
		casRead(c)
	default:
		c.Error("ERR write failed")
	}
}
