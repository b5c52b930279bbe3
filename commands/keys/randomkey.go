package main

import (
	"math/rand/v2"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "randomkey", Arity: 1, Flags: []string{"readonly"},
		Group: "generic", Since: "1.0.0",
		Summary: "Returns a random key name from the database.",
		Run:     randomKeyPage,
	})
}

// randomKeySample is how many keys RANDOMKEY draws from.
const randomKeySample = 64

// randomKeyPage picks a key at random from the first non-empty scan page.
// The store has no random access, so this is not uniform over the whole
// database (Redis's is not exactly uniform either); nil when it is empty.
// Ctx.N[0] is the cursor.
func randomKeyPage(c *sdk.Ctx) {
	c.Scan(codec.ScanArgs{Cursor: uint64(c.N[0]), Count: randomKeySample}, randomKeyPick)
}

func randomKeyPick(c *sdk.Ctx) {
	p := c.Page()
	if len(p.Keys) > 0 {
		c.Reply().Bulk(p.Keys[rand.IntN(len(p.Keys))])
		return
	}
	if p.Cursor == 0 {
		c.Reply().Null()
		return
	}
	c.N[0] = int64(p.Cursor)
	randomKeyPage(c)
}
