package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "mset", Arity: -3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Since: "1.0.0",
		Summary: "Atomically creates or modifies the string values of one or more keys.",
		Run:     runMSet,
	})
}

// runMSet writes every pair in one batch of replacing writes. Each key is
// written atomically; the keys are not written atomically together (another
// client may see some new values and some old ones, and a store failure can
// leave some keys written). A repeated key is written once, with its last
// value, as Redis's last write wins.
func runMSet(c *sdk.Ctx) {
	if c.NArg()%2 == 0 {
		c.Error("ERR wrong number of arguments for 'mset' command")
		return
	}
	keep := pairKeys(c, true)
	for i := 1; i < c.NArg(); i += 2 {
		if keep != nil && !keep[i/2] {
			continue
		}
		c.Record(c.Arg(i)).Exists(codec.ExistsReplace).TTLNever().
			Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(c.Arg(i+1)))
	}
	c.Exec(msetDone)
}

// pairKeys marks which keys of a key/value argument list to write (see
// kit.Dedup); nil when all are distinct.
func pairKeys(c *sdk.Ctx, last bool) []bool {
	if c.NArg() <= 3 {
		return nil
	}
	keys := make([][]byte, 0, c.NArg()/2)
	for i := 1; i < c.NArg(); i += 2 {
		keys = append(keys, c.Arg(i))
	}
	return kit.Dedup(keys, last)
}

func msetDone(c *sdk.Ctx) {
	rs := c.Results()
	for i := range rs {
		if rs[i].Code != codec.OK {
			kit.StoreError(c, &rs[i])
			return
		}
	}
	c.Reply().OK()
}
