package e2e

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestGeoRandomAgainstRedis plays random GEOADD, GEOSEARCH (every shape,
// centre, order and option), GEORADIUS, GEORADIUSBYMEMBER, GEODIST,
// GEOPOS, GEOHASH and GEOSEARCHSTORE on two geo sets against redis-server
// and respike and compares every raw reply. Members cluster around a few
// places, among them the antimeridian and the latitude limits, and some
// share positions (ties). Distances are compared as Redis prints them in
// replies (four decimals); a STOREDIST score's 17 digits would show the
// rare argument where glibc's trigonometry is not correctly rounded
// (docs/compatibility.md), so stores here keep geohashes.
// RESPIKE_GEO_SEED replays a seed.
func TestGeoRandomAgainstRedis(t *testing.T) {
	needModules(t, "geo", "zset")
	runRandom(t, randomSpec{seedEnv: "RESPIKE_GEO_SEED", salt: 0x6e0, steps: 1500, proto3: true,
		command: func(r *rand.Rand) []string { return (&ggen{r: r}).command() }})
}

// ggen draws random geo commands.
type ggen struct{ r *rand.Rand }

// gCentres are the places members cluster around: a city, the
// antimeridian on the equator, near the latitude limits, the origin.
var gCentres = [][2]float64{{13.36, 38.11}, {179.9, 0}, {-179.95, 10}, {0, 85}, {120, -84.9}, {0, 0}}

var gUnits = []string{"m", "km", "ft", "mi", "KM"}

func (g *ggen) key() string    { return []string{"g1", "g1", "g2"}[g.r.IntN(3)] }
func (g *ggen) member() string { return "m" + strconv.Itoa(g.r.IntN(120)) }
func (g *ggen) unit() string   { return gUnits[g.r.IntN(len(gUnits))] }

// position is a point near one of the centres (clamped to the limits), on
// a coarse grid now and then so that members share positions.
func (g *ggen) position() (string, string) {
	c := gCentres[g.r.IntN(len(gCentres))]
	spread := []float64{0.01, 0.3, 3}[g.r.IntN(3)]
	lon := c[0] + (g.r.Float64()*2-1)*spread
	lat := c[1] + (g.r.Float64()*2-1)*spread
	if g.r.IntN(4) == 0 {
		lon, lat = float64(int(lon*10))/10, float64(int(lat*10))/10
	}
	lon = min(max(lon, -180), 180)
	lat = min(max(lat, -85.05112878), 85.05112878)
	return strconv.FormatFloat(lon, 'f', 6, 64), strconv.FormatFloat(lat, 'f', 6, 64)
}

// distance is a radius or a box side in a unit: small to continental.
func (g *ggen) distance() string {
	return strconv.FormatFloat([]float64{0.5, 5, 50, 300, 2000, 5000}[g.r.IntN(6)]*(0.5+g.r.Float64()), 'f', 3, 64)
}

// options appends search options: WITH* (unless storing), an order,
// COUNT with or without ANY.
func (g *ggen) options(args []string, store bool) []string {
	if !store {
		for _, w := range []string{"WITHDIST", "WITHCOORD", "WITHHASH"} {
			if g.r.IntN(3) == 0 {
				args = append(args, w)
			}
		}
	}
	switch g.r.IntN(3) {
	case 0:
		args = append(args, "ASC")
	case 1:
		args = append(args, "DESC")
	}
	if g.r.IntN(2) == 0 {
		args = append(args, "COUNT", strconv.Itoa(1+g.r.IntN(12)))
		if g.r.IntN(3) == 0 {
			args = append(args, "ANY")
		}
	}
	return args
}

// searchArgs is GEOSEARCH's centre and shape.
func (g *ggen) searchArgs(args []string) []string {
	if g.r.IntN(2) == 0 {
		lon, lat := g.position()
		args = append(args, "FROMLONLAT", lon, lat)
	} else {
		args = append(args, "FROMMEMBER", g.member())
	}
	if g.r.IntN(2) == 0 {
		return append(args, "BYRADIUS", g.distance(), g.unit())
	}
	return append(args, "BYBOX", g.distance(), g.distance(), g.unit())
}

func (g *ggen) command() []string {
	k := g.key()
	switch n := g.r.IntN(100); {
	case n < 30:
		args := []string{"GEOADD", k}
		switch g.r.IntN(6) {
		case 0:
			args = append(args, "NX")
		case 1:
			args = append(args, "XX", "CH")
		case 2:
			args = append(args, "CH")
		}
		for range 1 + g.r.IntN(5) {
			lon, lat := g.position()
			args = append(args, lon, lat, g.member())
		}
		return args
	case n < 55:
		return g.options(g.searchArgs([]string{"GEOSEARCH", k}), false)
	case n < 63:
		lon, lat := g.position()
		name := []string{"GEORADIUS", "GEORADIUS_RO"}[g.r.IntN(2)]
		return g.options([]string{name, k, lon, lat, g.distance(), g.unit()}, false)
	case n < 70:
		name := []string{"GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"}[g.r.IntN(2)]
		return g.options([]string{name, k, g.member(), g.distance(), g.unit()}, false)
	case n < 78:
		args := []string{"GEODIST", k, g.member(), g.member()}
		if g.r.IntN(2) == 0 {
			args = append(args, g.unit())
		}
		return args
	case n < 84:
		return []string{"GEOPOS", k, g.member(), g.member(), g.member()}
	case n < 88:
		return []string{"GEOHASH", k, g.member(), g.member()}
	case n < 93:
		return g.options(g.searchArgs([]string{"GEOSEARCHSTORE", "dst", k}), true)
	case n < 97:
		return []string{"ZRANGE", []string{"dst", "g1", "g2"}[g.r.IntN(3)], "0", "-1", "WITHSCORES"}
	}
	return []string{"ZREM", k, g.member(), g.member()}
}
