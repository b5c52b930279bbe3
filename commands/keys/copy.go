package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "copy", Arity: -3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Copies the value of a key to a new key.",
		Run:     runCopy,
	})
}

// runCopy: COPY source destination [DB index] [REPLACE]. A read of every
// bin, then one write of the destination (create-only unless REPLACE), with
// the source's TTL. The copy is of the source as read; it is atomic on the
// destination only. With DB the destination is written in that database
// (sdk.Ctx.ExecDB), which is looked up first: a database the server does
// not have fails the command before anything is read, as in Redis.
func runCopy(c *sdk.Ctx) {
	replace := false
	db := c.DB()
	for i := 3; i < c.NArg(); i++ {
		switch opt := c.Arg(i); {
		case kit.Fold(opt, "replace"):
			replace = true
		case kit.Fold(opt, "db") && i+1 < c.NArg():
			i++
			n, ok := parseDB(c, c.Arg(i))
			if !ok {
				return
			}
			db = n
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	if db == c.DB() && string(c.Arg(1)) == string(c.Arg(2)) {
		c.Error("ERR source and destination objects are the same")
		return
	}
	if replace {
		c.N[0] = 1
	}
	c.N[1] = int64(db)
	if db == c.DB() {
		copyStart(c)
		return
	}
	// The target database is checked first (the host refuses one it does
	// not have): Redis answers that error before looking at the keys.
	c.Record(c.Arg(2)).Header()
	c.ExecDB(db, func(c *sdk.Ctx) {
		switch r := c.Result(0); r.Code {
		case codec.OK, codec.NotFound:
			copyStart(c)
		default:
			kit.StoreError(c, r)
		}
	})
}

func copyStart(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get("")
	c.Exec(copyRead)
}

func copyRead(c *sdk.Ctx) {
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
	if kit.Pending(r.Value(0)) {
		// A RENAME wrote the source and may still take it back: copying
		// it could keep a value that never was (kit.PendingBin).
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		copyStart(c)
		return
	}
	exists := codec.ExistsCreateOnly
	if c.N[0] != 0 {
		exists = codec.ExistsReplace
	}
	kit.CopyBins(c.Record(c.Arg(2)).Exists(exists), r.TTL, r.Value(0))
	if db := int(c.N[1]); db != c.DB() {
		c.ExecDB(db, copyDone)
		return
	}
	c.Exec(copyDone)
}

func copyDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(1)
	case codec.Exists:
		c.Reply().Int(0)
	default:
		kit.StoreError(c, r)
	}
}
