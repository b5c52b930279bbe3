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
	if args := c.Args(); len(args) == 5 {
		// GEOADD key longitude latitude member, the common form, when
		// both coordinates are plain decimals (kit.DecimalPair) inside
		// the limits: a number is no option, so there are none, and
		// nothing is left to refuse. Anything else (an option, another
		// form of number, a position out of range) takes the general
		// path below, which answers as before.
		// The limits tested without branches (kit.B2I), then one: each
		// branch taken is a trip through the function's dispatch loop
		// in Go's WebAssembly.
		lon, lat, ok := kit.DecimalPair(args[2], args[3])
		out := kit.B2I(!ok) | kit.B2I(lon < geo.LonMin) | kit.B2I(lon > geo.LonMax) |
			kit.B2I(lat < geo.LatMin) | kit.B2I(lat > geo.LatMax)
		if out == 0 && !geoAddChain {
			// kit.ZAddOne without flags, written out: its call passed
			// nine words through memory. A geohash score is never -0.
			c.Record(args[1]).Guard(codec.TypeZSet).PutScore(kit.ZAddPut, args[4], geo.ScoreOf(lon, lat))
			c.Exec(geoAddOneDone)
			return
		}
	}
	geoAddGeneral(c)
}

// geoAddChain sends every one-member GEOADD through ZAddCall's builder
// chain, the request runGeoAdd's and ZAddOne's word stores must equal:
// the tests compare the two.
var geoAddChain bool

// geoAddGeneral is GEOADD in every form: the options, any number of
// members, any form of number, the errors. It is a function of its own
// so that runGeoAdd's common path stays a small function in
// WebAssembly.
func geoAddGeneral(c *sdk.Ctx) {
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
		if flags&kit.ZAddCH == 0 && !geoAddChain {
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

// geoAddOneDone answers a GEOADD of runGeoAdd's common form (one
// member, no option) from the put's result: the members added (0 or 1),
// as geoAddDone with no flags, without reading them back from Ctx.N.
func geoAddOneDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(r.IntAt(1) - r.IntAt(0)) // kit.ZAddCount without CH
	case codec.NotFound:
		c.Reply().Int(0)
	default:
		kit.GuardFailed(c, r)
	}
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
