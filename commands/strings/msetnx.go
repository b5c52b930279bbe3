package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "msetnx", Arity: -3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.0",
		Summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.",
		Run:     runMSetNX,
	})
}

// runMSetNX: MSETNX key value [key value ...]. Not atomic across keys:
// (1) one batch checks that every key is absent (any present: 0);
// (2) one batch creates each key create-only;
// (3) if a concurrent client created one of the keys between (1) and (2),
// the keys this command created are deleted again (each delete guarded by
// the generation this command wrote, so a later write by someone else is
// kept) and the reply is 0. Other clients may briefly see the partial
// write.
func runMSetNX(c *sdk.Ctx) {
	if c.NArg()%2 == 0 {
		c.Error("ERR wrong number of arguments for 'msetnx' command")
		return
	}
	for i := 1; i < c.NArg(); i += 2 {
		c.Record(c.Arg(i)).Header()
	}
	c.Exec(msetnxChecked)
}

func msetnxChecked(c *sdk.Ctx) {
	rs := c.Results()
	for i := range rs {
		switch rs[i].Code {
		case codec.NotFound:
		case codec.OK:
			c.Reply().Int(0)
			return
		default:
			kit.StoreError(c, &rs[i])
			return
		}
	}
	keep := pairKeys(c, true)
	for i := 1; i < c.NArg(); i += 2 {
		if keep != nil && !keep[i/2] {
			continue
		}
		c.Record(c.Arg(i)).Exists(codec.ExistsCreateOnly).TTLNever().
			Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.Arg(i+1)))
	}
	c.Exec(msetnxWritten)
}

func msetnxWritten(c *sdk.Ctx) {
	rs := c.Results()
	failed := -1
	for i := range rs {
		if rs[i].Code != codec.OK {
			failed = i
			if rs[i].Code == codec.Exists {
				break
			}
		}
	}
	if failed < 0 {
		c.Reply().Int(1)
		return
	}
	// Remember why, then undo what this command created. Calls were built
	// in argument order skipping the same duplicates, so recompute that.
	c.N[0] = int64(rs[failed].Code)
	keep := pairKeys(c, true)
	n := 0
	for i, k := 1, 0; i < c.NArg(); i += 2 {
		if keep != nil && !keep[i/2] {
			continue
		}
		if r := &rs[k]; r.Code == codec.OK {
			c.Record(c.Arg(i)).Generation(r.Generation).Delete()
			n++
		}
		k++
	}
	if n == 0 {
		msetnxUndone(c)
		return
	}
	c.Exec(msetnxUndone)
}

// msetnxUndone answers after the undo. Undo failures are ignored: a
// generation mismatch means another client has written the key since, and
// its value must stay.
func msetnxUndone(c *sdk.Ctx) {
	if code := codec.Code(c.N[0]); code != codec.Exists {
		c.Error(kit.StoreErrorText(code, ""))
		return
	}
	c.Reply().Int(0)
}
