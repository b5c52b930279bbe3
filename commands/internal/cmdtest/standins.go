package cmdtest

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// ObserverStandIns returns test-only stand-ins for the keys module's TTL,
// EXISTS (one key) and TYPE, so a module's tests can observe expiry,
// existence and type. Register them from a test file's init.
func ObserverStandIns() []sdk.Command {
	header := func(next sdk.Step) sdk.Step {
		return func(c *sdk.Ctx) { c.Record(c.Arg(1)).Get(codec.BinType); c.Exec(next) }
	}
	return []sdk.Command{{Name: "ttl", Arity: 2, Run: header(func(c *sdk.Ctx) {
		switch r := c.Result(0); r.Code {
		case codec.NotFound:
			c.Reply().Int(-2)
		default:
			c.Reply().Int(r.TTL)
		}
	})}, {Name: "exists", Arity: 2, Run: header(func(c *sdk.Ctx) {
		if c.Result(0).Code == codec.OK {
			c.Reply().Int(1)
		} else {
			c.Reply().Int(0)
		}
	})}, {Name: "type", Arity: 2, Run: header(func(c *sdk.Ctx) {
		if r := c.Result(0); r.Code == codec.OK {
			c.Reply().Simple(string(r.Value(0).Bytes))
		} else {
			c.Reply().Simple("none")
		}
	})}}
}

// WriterStandIns returns test-only stand-ins for SET (a string, no TTL) and
// EXPIRE (seconds), so a module's tests can make keys of another type and
// give keys a TTL.
func WriterStandIns() []sdk.Command {
	return []sdk.Command{{Name: "set", Arity: 3, Run: func(c *sdk.Ctx) {
		c.Record(c.Arg(1)).Exists(codec.ExistsReplace).TTLNever().
			Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(c.Arg(2)))
		c.Exec(func(c *sdk.Ctx) { c.Reply().OK() })
	}}, {Name: "expire", Arity: 3, Run: func(c *sdk.Ctx) {
		n, _ := strconv.Atoi(string(c.Arg(2)))
		c.Record(c.Arg(1)).Expire(int64(n)).Touch()
		c.Exec(func(c *sdk.Ctx) {
			if c.Result(0).OK() {
				c.Reply().Int(1)
			} else {
				c.Reply().Int(0)
			}
		})
	}}}
}
