package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "persist", Arity: 2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Removes the expiration time of a key.",
		Run:     persistRead,
	})
}

// persistRead reads the expiry: only a key with one answers 1. The write
// is guarded by the generation read; retried within kit.RetryFor.
func persistRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get(codec.BinExpire)
	c.Exec(persistDecide)
}

func persistDecide(c *sdk.Ctx) {
	r := c.Result(0)
	switch {
	case r.Code == codec.NotFound, r.Code == codec.OK && kit.ExpireAtOf(r, r.Value(0), 0) < 0:
		c.Reply().Int(0)
	case r.Code == codec.OK:
		c.Record(c.Arg(1)).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).TTLNever().Touch()
		c.Exec(persistDone)
	default:
		kit.StoreError(c, r)
	}
}

func persistDone(c *sdk.Ctx) {
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
		persistRead(c)
	default:
		kit.StoreError(c, r)
	}
}
