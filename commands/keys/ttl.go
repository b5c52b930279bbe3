package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	flags := []string{"readonly", "fast"}
	sdk.Register(sdk.Command{
		Name: "ttl", Arity: 2, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Returns the expiration time in seconds of a key.",
		Run:     func(c *sdk.Ctx) { c.N[0] = ttlSeconds; ttlRead(c) },
	}, sdk.Command{
		Name: "pttl", Arity: 2, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Returns the expiration time in milliseconds of a key.",
		Run:     func(c *sdk.Ctx) { c.N[0] = ttlMillis; ttlRead(c) },
	}, sdk.Command{
		Name: "expiretime", Arity: 2, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Returns the expiration time of a key as a Unix timestamp.",
		Run:     func(c *sdk.Ctx) { c.N[0] = ttlUnix; ttlRead(c) },
	}, sdk.Command{
		Name: "pexpiretime", Arity: 2, Flags: flags, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "generic", Since: "1.0.0",
		Summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.",
		Run:     func(c *sdk.Ctx) { c.N[0] = ttlUnixMillis; ttlRead(c) },
	})
}

// What a TTL command reports, in Ctx.N[0].
const (
	ttlSeconds = iota
	ttlMillis
	ttlUnix
	ttlUnixMillis
)

func ttlRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get(codec.BinExpire)
	c.Exec(ttlDone)
}

// ttlDone answers -2 for a missing key, -1 for no expiry, else the
// expiry in the asked form, as Redis's ttlGenericCommand: milliseconds
// left, or seconds left rounded to the nearest; the Unix time in ms, or
// in seconds rounded likewise.
func ttlDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(-2)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	now := kit.NowMs(c)
	at := kit.ExpireAtOf(r, r.Value(0), now)
	if at < 0 {
		c.Reply().Int(-1)
		return
	}
	t := at
	if c.N[0] == ttlSeconds || c.N[0] == ttlMillis {
		t = max(at-now, 0)
	}
	if c.N[0] == ttlSeconds || c.N[0] == ttlUnix {
		t = t/1000 + (t%1000+500)/1000 // (t+500)/1000 without overflow
	}
	c.Reply().Int(t)
}
