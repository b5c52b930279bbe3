package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "getex", Arity: -2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns the string value of a key after setting its expiration time.",
		Run:     runGetEx,
	})
}

// runGetEx: GETEX key [EX s|PX ms|EXAT ts|PXAT ms-ts|PERSIST]. One guarded
// call reads the value and applies the expiry (a touch), or deletes the key
// when an absolute time has passed.
func runGetEx(c *sdk.Ctx) {
	flags, expArg, ok := parseOpts(c, 2, false)
	if !ok {
		c.Error(kit.Syntax)
		return
	}
	call := c.Record(c.Arg(1)).Guard(codec.TypeString)
	switch {
	case expArg > 0:
		at, why := expireAt(c, flags, c.Arg(expArg))
		if why != expOK {
			// Redis looks the key up first: a missing key answers nil and
			// another type WRONGTYPE before the expiry is judged.
			c.N[1] = int64(why)
			call.Get(codec.BinValue)
			c.Exec(getExBadExpire)
			return
		}
		if at == 0 {
			call.Get(codec.BinValue).Delete()
		} else {
			call.Exists(codec.ExistsUpdateOnly).ExpireAt(at).Get(codec.BinValue).Touch()
		}
	case flags&optPersist != 0:
		call.Exists(codec.ExistsUpdateOnly).TTLNever().Get(codec.BinValue).Touch()
	default:
		call.Get(codec.BinValue)
	}
	c.Exec(replyGet)
}

// getExBadExpire answers GETEX with an invalid expiry once the key is known
// to exist and hold a string.
func getExBadExpire(c *sdk.Ctx) {
	if c.Result(0).Code != codec.OK {
		replyGet(c)
		return
	}
	c.Error(expireError(int(c.N[1]), "getex"))
}
