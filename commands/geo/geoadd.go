package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
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
// longitude, N[2] the number of members: the next step is a plain function
// (a closure would be allocated on every command, and one member needs no
// slices at all).
func runGeoAdd(c *sdk.Ctx) {
	flags, i := kit.ZAddOptions(c, 2, kit.ZAddNX|kit.ZAddXX|kit.ZAddCH)
	rest := c.NArg() - i
	if rest%3 != 0 || rest == 0 || flags&kit.ZAddNX != 0 && flags&kit.ZAddXX != 0 {
		c.Error(kit.Syntax)
		return
	}
	n := rest / 3
	var kv []codec.Value
	if n == 1 {
		lon, lat, msg := parseLonLat(c.Arg(i), c.Arg(i+1))
		if msg != "" {
			c.Error(msg)
			return
		}
		if flags&kit.ZAddCH == 0 {
			kit.ZAddOne(c, c.Arg(1), flags, c.Arg(i+2), geo.ScoreOf(lon, lat))
			c.N[0], c.N[1], c.N[2] = flags, int64(i), 1
			c.Exec(geoAddDone)
			return
		}
		kv = c.Values(2)
		kit.SetMemberScore(kv, c.Arg(i+2), geo.ScoreOf(lon, lat))
	} else {
		members, scores, msg := geoAddMembers(c, i, n)
		if msg != "" {
			c.Error(msg)
			return
		}
		keep := kit.Dedup(members, flags&kit.ZAddNX == 0)
		kv = c.Values(2 * n)[:0]
		for j := range n {
			if keep == nil || keep[j] { // nil: every member distinct
				kv = append(kv, codec.Bytes(members[j]), kit.StoreScore(scores[j]))
			}
		}
	}
	kit.ZAddCall(c, c.Arg(1), flags, kv)
	c.N[0], c.N[1], c.N[2] = flags, int64(i), int64(n)
	c.Exec(geoAddDone)
}

// geoAddMembers parses the n positions and members from argument i on:
// the members, their scores, or the error text of the first bad position.
func geoAddMembers(c *sdk.Ctx, i, n int) (members [][]byte, scores []float64, msg string) {
	members, scores = make([][]byte, n), make([]float64, n)
	for j := range n {
		lon, lat, msg := parseLonLat(c.Arg(i+3*j), c.Arg(i+3*j+1))
		if msg != "" {
			return nil, nil, msg
		}
		scores[j] = geo.ScoreOf(lon, lat)
		members[j] = c.Arg(i + 3*j + 2)
	}
	return members, scores, ""
}

// geoAddDone answers GEOADD from ZAddCall's result.
func geoAddDone(c *sdk.Ctx) {
	flags, i, n := c.N[0], int(c.N[1]), int(c.N[2])
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if flags&kit.ZAddCH == 0 {
			c.Reply().Int(kit.ZAddCount(r, flags, nil, nil))
			return
		}
		// CH counts changed scores: the members and scores again (the
		// positions parsed before the wait).
		members, scores, _ := geoAddMembers(c, i, n)
		c.Reply().Int(kit.ZAddCount(r, flags, members, scores))
	case codec.NotFound:
		c.Reply().Int(0) // XX on a missing key
	default:
		kit.GuardFailed(c, r)
	}
}
