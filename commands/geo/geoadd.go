package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "geoadd", Arity: -5, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "geo", Since: "3.2.0",
		Summary: "Adds one or more members to a geospatial index. The key is created if it doesn't exist.",
		Run:     runGeoAdd,
	})
}

// GEOADD key [NX|XX] [CH] longitude latitude member ... is ZADD of the
// members with their geohashes as scores, as Redis runs it: the options
// and every position are checked first (a bad position answers before the
// key is looked at), then the one-operate ZADD of kit (ZAddCall), whose
// reply is ZADD's. Ctx.N[0] holds the flags, N[1] the index of the first
// longitude.
func runGeoAdd(c *sdk.Ctx) {
	flags, i := kit.ZAddOptions(c, 2, kit.ZAddNX|kit.ZAddXX|kit.ZAddCH)
	rest := c.NArg() - i
	if rest%3 != 0 || rest == 0 || flags&kit.ZAddNX != 0 && flags&kit.ZAddXX != 0 {
		c.Error(kit.Syntax)
		return
	}
	n := rest / 3
	members, scores := make([][]byte, n), make([]float64, n)
	for j := range n {
		lon, lat, msg := parseLonLat(c.Arg(i+3*j), c.Arg(i+3*j+1))
		if msg != "" {
			c.Error(msg)
			return
		}
		scores[j] = scoreOf(lon, lat)
		members[j] = c.Arg(i + 3*j + 2)
	}
	var keep []bool // nil: every member distinct
	if n > 1 {
		keep = kit.Dedup(members, flags&kit.ZAddNX == 0)
	}
	kv := c.Values(2 * n)[:0]
	for j := range n {
		if keep == nil || keep[j] {
			kv = append(kv, codec.Bytes(members[j]), kit.StoreScore(scores[j]))
		}
	}
	kit.ZAddCall(c, c.Arg(1), flags, kv)
	c.Exec(func(c *sdk.Ctx) {
		r := c.Result(0)
		switch r.Code {
		case codec.OK:
			// Arguments read before a wait are not valid after it (the
			// host's next message overwrites them): the members again.
			for j := range n {
				members[j] = c.Arg(i + 3*j + 2)
			}
			c.Reply().Int(kit.ZAddCount(r, flags, members, scores))
		case codec.NotFound:
			c.Reply().Int(0) // XX on a missing key
		default:
			kit.GuardFailed(c, r)
		}
	})
}
