package main

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/respike/respike/guest-sdk/sdktest"
)

// The fast path (answerFast) answers every sorted search byte for byte as
// the general path does: random geo sets clustered around a few places
// (the antimeridian and the latitude limits among them), with shared
// positions (ties), members of every length from 1 to 20 bytes, and
// random searches of every shape, unit, order, COUNT and option, in both
// protocols, each run with and without the fast path.
func TestAnswerFastMatchesGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 17))
	centres := [][2]float64{{13.36, 38.11}, {179.9, 0}, {-179.95, 10}, {0, 85}, {120, -84.9}, {0, 0}}
	position := func() (string, string) {
		c := centres[rng.IntN(len(centres))]
		spread := []float64{0.01, 0.3, 3}[rng.IntN(3)]
		lon := c[0] + (rng.Float64()*2-1)*spread
		lat := c[1] + (rng.Float64()*2-1)*spread
		if rng.IntN(4) == 0 {
			lon, lat = float64(int(lon*10))/10, float64(int(lat*10))/10
		}
		lon = min(max(lon, -180), 180)
		lat = min(max(lat, -85.05112878), 85.05112878)
		return strconv.FormatFloat(lon, 'f', 6, 64), strconv.FormatFloat(lat, 'f', 6, 64)
	}
	member := func() string {
		n := rng.IntN(150)
		return "m" + strconv.Itoa(n) + "________________"[:n%17]
	}
	compared, fast := 0, 0
	for round := range 6 {
		h := sdktest.New()
		h.Proto = 2 + round%2
		for range 300 {
			args := []string{"GEOADD", "g"}
			for range 5 {
				lon, lat := position()
				args = append(args, lon, lat, member())
			}
			h.Do(args...)
		}
		for range 700 {
			var args []string
			if rng.IntN(2) == 0 {
				lon, lat := position()
				args = []string{"GEOSEARCH", "g", "FROMLONLAT", lon, lat}
				if rng.IntN(2) == 0 {
					args = append(args, "BYRADIUS", distance(rng))
				} else {
					args = append(args, "BYBOX", distance(rng), distance(rng))
				}
			} else {
				lon, lat := position()
				args = []string{"GEORADIUS", "g", lon, lat, distance(rng)}
			}
			args = append(args, []string{"m", "km", "ft", "mi"}[rng.IntN(4)])
			for _, w := range []string{"WITHDIST", "WITHCOORD", "WITHHASH"} {
				if rng.IntN(3) == 0 || w == "WITHDIST" && rng.IntN(2) == 0 {
					args = append(args, w)
				}
			}
			args = append(args, []string{"ASC", "DESC"}[rng.IntN(2)])
			if rng.IntN(3) != 0 {
				args = append(args, "COUNT", strconv.Itoa(1+rng.IntN(70)))
				if rng.IntN(4) == 0 {
					args = append(args, "ANY")
				}
			}
			raw := make([][]byte, len(args))
			for i, a := range args {
				raw[i] = []byte(a)
			}
			noFast = true
			want := h.DoRaw(raw...)
			noFast = false
			got := h.DoRaw(raw...)
			if !bytes.Equal(got, want) {
				t.Fatalf("%q:\nfast    %q\ngeneral %q", args, got, want)
			}
			compared++
			if len(want) > 4 {
				fast++
			}
		}
	}
	if compared < 4000 || fast < 2000 {
		t.Fatalf("compared %d searches, %d with members", compared, fast)
	}
}

// distance is a radius or a box side: small to continental.
func distance(rng *rand.Rand) string {
	return strconv.FormatFloat([]float64{0.5, 5, 50, 300, 2000, 5000}[rng.IntN(6)]*(0.5+rng.Float64()), 'f', 3, 64)
}
