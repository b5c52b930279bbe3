package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	flags := []string{"write", "fast"}
	sdk.Register(sdk.Command{
		Name: "expire", Arity: -3, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Sets the expiration time of a key in seconds.",
		Run:     func(c *sdk.Ctx) { runExpire(c, true, true, "expire") },
	}, sdk.Command{
		Name: "pexpire", Arity: -3, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Sets the expiration time of a key in milliseconds.",
		Run:     func(c *sdk.Ctx) { runExpire(c, false, true, "pexpire") },
	}, sdk.Command{
		Name: "expireat", Arity: -3, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Sets the expiration time of a key to a Unix timestamp.",
		Run:     func(c *sdk.Ctx) { runExpire(c, true, false, "expireat") },
	}, sdk.Command{
		Name: "pexpireat", Arity: -3, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.",
		Run:     func(c *sdk.Ctx) { runExpire(c, false, false, "pexpireat") },
	})
}

// EXPIRE option flags and state in Ctx.N.
const (
	expNX = 1 << iota
	expXX
	expGT
	expLT

	exFlags = 0 // option flags
	exWhen  = 1 // the new expiry, Unix ms
)

// runExpire: EXPIRE key seconds [NX|XX|GT|LT] and its ms/absolute forms,
// with Redis's order of checks: options, then the number, then overflow.
// The expiry is exact to the millisecond at any horizon (codec.TTLAt). A
// time not in the future deletes the key (reply 1 if it existed), as in
// Redis.
func runExpire(c *sdk.Ctx, seconds, relative bool, cmd string) {
	var flags int64
	for i := 3; i < c.NArg(); i++ {
		switch opt := c.Arg(i); {
		case kit.Fold(opt, "nx"):
			flags |= expNX
		case kit.Fold(opt, "xx"):
			flags |= expXX
		case kit.Fold(opt, "gt"):
			flags |= expGT
		case kit.Fold(opt, "lt"):
			flags |= expLT
		default:
			c.Error("ERR Unsupported option " + string(opt))
			return
		}
	}
	if flags&expNX != 0 && flags&(expXX|expGT|expLT) != 0 {
		c.Error("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expGT != 0 && flags&expLT != 0 {
		c.Error("ERR GT and LT options at the same time are not compatible")
		return
	}
	n, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	now := kit.NowMs(c)
	base := int64(0)
	if relative {
		base = now
	}
	when, ok := kit.KeyExpiry(n, seconds, base)
	if !ok {
		c.Error(kit.InvalidExpire(cmd))
		return
	}
	c.N[exFlags], c.N[exWhen] = flags, when
	if flags == 0 {
		// Unconditional: one call, no read.
		expireApply(c, c.Record(c.Arg(1)), now)
		return
	}
	expireCheck(c)
}

// expireApply sets the expiry on call (or deletes the key when the time
// has passed) and answers 1, or 0 for a missing key.
func expireApply(c *sdk.Ctx, call *codec.Call, now int64) {
	if when := c.N[exWhen]; when > now {
		call.Exists(codec.ExistsUpdateOnly).ExpireAt(when).Touch()
	} else {
		call.Delete()
	}
	c.Exec(expireDone)
}

// expireCheck reads the key's expiry for the NX/XX/GT/LT conditions.
func expireCheck(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get(codec.BinExpire)
	c.Exec(expireDecide)
}

// expireDecide applies Redis's conditions to the current expiry (exact,
// in ms) and writes guarded by the generation read, so a concurrent change
// of the key restarts the check.
func expireDecide(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	now := kit.NowMs(c)
	flags, when := c.N[exFlags], c.N[exWhen]
	cur := kit.ExpireAtOf(r, r.Value(0), now) // -1: no expiry
	switch {
	case flags&expNX != 0 && cur != -1,
		flags&expXX != 0 && cur == -1,
		flags&expGT != 0 && (cur == -1 || when <= cur),
		flags&expLT != 0 && cur != -1 && when >= cur:
		c.Reply().Int(0)
		return
	}
	expireApply(c, c.Record(c.Arg(1)).Generation(r.Generation), now)
}

func expireDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(1)
	case codec.NotFound:
		c.Reply().Int(0)
	case codec.GenerationError:
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		expireCheck(c)
	default:
		kit.StoreError(c, r)
	}
}
