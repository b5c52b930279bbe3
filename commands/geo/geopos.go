package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
)

func init() {
	ro := []string{"readonly"}
	sdk.Register(sdk.Command{
		Name: "geopos", Arity: -2, Flags: ro, FirstKey: 1, LastKey: 1, Step: 1, Group: "geo", Since: "3.2.0",
		Summary: "Returns the longitude and latitude of members from a geospatial index.",
		Run:     func(c *sdk.Ctx) { readMembers(c, c.Arg(1), c.Args()[2:], geoposDone) },
	}, sdk.Command{
		Name: "geohash", Arity: -2, Flags: ro, FirstKey: 1, LastKey: 1, Step: 1, Group: "geo", Since: "3.2.0",
		Summary: "Returns members from a geospatial index as geohash strings.",
		Run:     func(c *sdk.Ctx) { readMembers(c, c.Arg(1), c.Args()[2:], geohashDone) },
	}, sdk.Command{
		Name: "geodist", Arity: -4, Flags: ro, FirstKey: 1, LastKey: 1, Step: 1, Group: "geo", Since: "3.2.0",
		Summary: "Returns the distance between two members of a geospatial index.",
		Run:     runGeoDist,
	})
}

// GEOPOS, GEOHASH and GEODIST read the scores of the members named in one
// operate, with the type guard, and decode them in the module.

// memberScores answers the read of readMembers: the members' scores, ok
// false when the reply (an error) is written.
func memberScores(c *sdk.Ctx) (map[string]float64, bool) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if c.NArg() <= 2 || r.Value(0).Kind != codec.KindList && r.Value(0).Kind != codec.KindMap {
			return nil, true
		}
		return scoresByMember(r.Value(0).List), true
	case codec.NotFound:
		return nil, true
	}
	kit.GuardFailed(c, r)
	return nil, false
}

func geoposDone(c *sdk.Ctx)  { eachMember(c, false) }
func geohashDone(c *sdk.Ctx) { eachMember(c, true) }

// geoAlphabet is the standard geohash's base 32.
const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// eachMember answers GEOPOS (the position of each member named, a null
// array for a missing one) or GEOHASH (its standard geohash, a null).
func eachMember(c *sdk.Ctx, hash bool) {
	scores, ok := memberScores(c)
	if !ok {
		return
	}
	w := c.Reply()
	w.Array(c.NArg() - 2)
	for _, m := range c.Args()[2:] {
		s, found := scores[string(m)]
		switch {
		case !found && hash:
			w.Null()
		case !found:
			w.NullArray()
		case hash:
			h := geo.StandardHash(geo.Position(s))
			var buf [11]byte
			for i := range 11 {
				idx := 0
				if i < 10 {
					idx = int(h>>(52-uint(i+1)*5)) & 0x1f
				}
				buf[i] = geoAlphabet[idx]
			}
			w.Bulk(buf[:])
		default:
			lon, lat := geo.Position(s)
			w.Array(2)
			replyCoord(c, lon)
			replyCoord(c, lat)
		}
	}
}

// runGeoDist: GEODIST key member1 member2 [unit]. The unit is checked
// before the key, as Redis does.
func runGeoDist(c *sdk.Ctx) {
	conv := 1.0
	switch {
	case c.NArg() == 5:
		if conv = parseUnit(c.Arg(4)); conv == 0 {
			c.Error(errUnit)
			return
		}
	case c.NArg() > 5:
		c.Error(kit.Syntax)
		return
	}
	readMembers(c, c.Arg(1), c.Args()[2:4], func(c *sdk.Ctx) {
		scores, ok := memberScores(c)
		if !ok {
			return
		}
		s1, ok1 := scores[string(c.Arg(2))]
		s2, ok2 := scores[string(c.Arg(3))]
		if !ok1 || !ok2 {
			c.Reply().Null()
			return
		}
		lon1, lat1 := geo.Position(s1)
		lon2, lat2 := geo.Position(s2)
		replyDistance(c, geo.Distance(lon1, lat1, lon2, lat2)/conv)
	})
}
