package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/commands/internal/kit"
	"github.com/respike/respike/guest-sdk/geo"
	"github.com/respike/respike/guest-sdk/resp"
)

// Known Redis values: GEOADD Sicily's scores and GEODIST's distance.
func TestGeohashKnownValues(t *testing.T) {
	if s := geo.ScoreOf(13.361389, 38.115556); s != 3479099956230698 {
		t.Errorf("score of Palermo = %v", s)
	}
	lon, lat := geo.Position(3479099956230698)
	if got := string(appendHuman(nil, lon)) + "," + string(appendHuman(nil, lat)); got != "13.36138933897018433,38.11555639549629859" {
		t.Errorf("position of Palermo = %s", got)
	}
	lon2, lat2 := geo.Position(geo.ScoreOf(15.087269, 37.502669))
	if d := geo.Distance(lon, lat, lon2, lat2); math.Abs(d-166274.1516) > 0.00005 {
		t.Errorf("Palermo-Catania = %.4f", d)
	}
}

// The manifest describes every command as Redis 7.0's COMMAND INFO does
// (name, arity, key positions).
func TestManifest(t *testing.T) {
	cmdtest.CheckManifest(t, "geo", "geo", map[string]cmdtest.Spec{
		"geoadd": {-5, 1, 1}, "geopos": {-2, 1, 1}, "geodist": {-4, 1, 1}, "geohash": {-2, 1, 1},
		"geosearch": {-7, 1, 1}, "geosearchstore": {-8, 1, 2}, "georadius": {-6, 1, 1},
		"georadiusbymember": {-5, 1, 1}, "georadius_ro": {-6, 1, 1}, "georadiusbymember_ro": {-5, 1, 1},
	})
}

// A distance's bulk string holds fixedpoint_d2string's digits: the value
// times 10^4 rounded half to even, with four decimals.
func TestAppendDistBulk(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	ref := func(d float64) string {
		if d == 0 {
			return "0.0000"
		}
		n := int64(math.RoundToEven(d * 10000))
		sign := ""
		if n < 0 {
			sign, n = "-", -n
		}
		return fmt.Sprintf("%s%d.%04d", sign, n/10000, n%10000)
	}
	for i := range 100000 {
		d := math.Pow(10, rng.Float64()*12-5)
		if i%3 == 0 {
			d = -d
		}
		if i < 7 {
			d = []float64{0.00005, 1.23445, 18907132.48265000060, -0.00004, 0, 123456789012345, -9e14}[i]
		}
		if i >= 7 && i < 1000 {
			// Around the 32-bit digits' limit, 2^32 ten-thousandths.
			d = (1<<32 + float64(i-500)) / 10000
		}
		if got, want := string(appendDistBulk([]byte("x"), d)), fmt.Sprintf("x$%d\r\n%s\r\n", len(ref(d)), ref(d)); got != want {
			t.Fatalf("appendDistBulk(%v): %q, want %q", d, got, want)
		}
	}
}

// appendMemberDist writes what the reply writer's Array(2) and Bulk and
// appendDistBulk write, for members of every length up to past 100 bytes
// and distances on both sides of the 32-bit digits' limit.
func TestAppendMemberDist(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	for m := range 130 {
		member := make([]byte, m)
		for i := range member {
			member[i] = byte('a' + rng.IntN(26))
		}
		for _, d := range []float64{0, 0.00004, 2.65209, 429496.7295, 429496.72955, 429496.7296, 1e9 + 0.5, rng.Float64() * 5, rng.Float64() * 1e6} {
			w := resp.Writer{Buf: []byte("x")}
			w.Array(2)
			w.Bulk(member)
			want := string(appendDistBulk(w.Buf, d))
			if got := string(appendMemberDist([]byte("x"), member, d)); got != want {
				t.Fatalf("appendMemberDist(%d bytes, %v) = %q, want %q", m, d, got, want)
			}
		}
	}
}

// keyword, which compares folded words, names the option kit.Fold would
// find, for every keyword in mixed case and with any one byte changed to
// any value.
func TestKeywordMatchesFold(t *testing.T) {
	ref := func(arg []byte) int {
		for k, w := range keywords {
			if k != kwNone && kit.Fold(arg, w) {
				return k
			}
		}
		return kwNone
	}
	r := rand.New(rand.NewPCG(3, 4))
	checked := 0
	for k, w := range keywords {
		if k == kwNone {
			continue
		}
		for range 20 {
			arg := []byte(w)
			for i := range arg {
				if r.IntN(2) == 0 {
					arg[i] -= 'a' - 'A'
				}
			}
			if got := keyword(arg); got != k {
				t.Fatalf("keyword(%q) = %d, want %d", arg, got, k)
			}
			for i := range arg {
				for c := range 256 {
					mut := slices.Clone(arg)
					mut[i] = byte(c)
					if got, want := keyword(mut), ref(mut); got != want {
						t.Fatalf("keyword(%q) = %d, want %d", mut, got, want)
					}
					checked++
				}
			}
		}
	}
	for _, arg := range []string{"", "a", "an", "km", "withdists", "frommembers", "FROMLONLAT1", "x\x00\x00"} {
		if got, want := keyword([]byte(arg)), ref([]byte(arg)); got != want {
			t.Fatalf("keyword(%q) = %d, want %d", arg, got, want)
		}
	}
	if checked < 100000 {
		t.Fatalf("only %d arguments checked", checked)
	}
}

// sortByKey sorts keys and order together, stably, as the one-place
// insertion sort it replaced, for every length up to 64 (and the
// SortStableFunc path above), with many ties.
func TestSortByKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for i := range 20000 {
		n := i % 70
		pts := make([]point, n)
		keys := make([]float64, n)
		order := make([]int32, n)
		for k := range n {
			d := float64(rng.IntN(1 + i%17))
			if i%3 == 0 {
				d = rng.Float64()
			}
			pts[k].dist, keys[k], order[k] = d, d, int32(k)
		}
		want := slices.Clone(order)
		slices.SortStableFunc(want, func(a, b int32) int { return cmpFloat(pts[a].dist, pts[b].dist) })
		sortByKey(order, keys, pts)
		if !slices.Equal(order, want) {
			t.Fatalf("n=%d: order %v, want %v", n, order, want)
		}
		for k, o := range order {
			if keys[k] != pts[o].dist {
				t.Fatalf("n=%d: keys[%d] = %v, the distance of point %d is %v", n, k, keys[k], o, pts[o].dist)
			}
		}
	}
}

// foldKeyRef is foldKey as it was, a byte at a time past the first word.
func foldKeyRef(b []byte) (lo, hi uint64) {
	const fold = 0x2020202020202020
	n := len(b)
	switch {
	case n >= 8:
		lo = load64(b, 0) | fold
		for i := 8; i < n && i < 16; i++ {
			hi |= uint64(b[i]|0x20) << (8 * (i - 8))
		}
	case n >= 4:
		lo = uint64(load32(b, 0) | 0x20202020)
		for i := 4; i < n; i++ {
			lo |= uint64(b[i]|0x20) << (8 * i)
		}
	default:
		for i := range n {
			lo |= uint64(b[i]|0x20) << (8 * i)
		}
	}
	return lo, hi
}

// foldKey's whole-word loads give the keys of the byte-wise packing, for
// every length from 0 to 16 and random bytes, read from a larger buffer
// so that a byte past the argument would show.
func TestFoldKeyWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 11))
	buf := make([]byte, 32)
	for i := range 200000 {
		for j := range buf {
			buf[j] = byte(rng.Uint32())
		}
		n := i % 17
		b := buf[:n:n]
		lo, hi := foldKeyRef(b)
		if got := foldKey(b); got != [2]uint64{lo, hi} {
			t.Fatalf("foldKey(%x) = %x, want %x %x", b, got, lo, hi)
		}
	}
}

// selectFast keeps the want points nearest (farthest with desc) by exact
// distance, in order, whenever it reports ok: the exact distances here are
// drawn anywhere within each estimate's error bound. It declines ties and
// estimates too close to order, and takes every search of distinct,
// well-separated distances.
func TestSelectFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 13))
	taken, declined := 0, 0
	for i := range 40000 {
		total := rng.IntN(90)
		want := 1 + rng.IntN(70)
		if i%5 == 0 {
			want = max(total, 1)
		}
		desc := i%2 == 1
		var blob []byte
		exact := make([]float64, total)
		separated := true // every two estimates far apart, no ties
		var dists []float64
		for k := range total {
			d := rng.Float64() * 5000
			switch i % 4 {
			case 1:
				d = float64(rng.IntN(40))*1111.1 + 0.123 // ties, with low bits set, up to ~44 km
			case 2:
				d = 1000 + float64(rng.IntN(30))*1e-10 // within the errors
			}
			e := d*1e-13 + 1e-9
			if rng.IntN(5) == 0 {
				e = 0 // settled by the store
			}
			exact[k] = d + (rng.Float64()*2-1)*e
			for _, o := range dists {
				if math.Abs(o-d) <= 4*(5000*1e-13+1e-9) {
					separated = false
				}
			}
			dists = append(dists, d)
			blob = geo.AppendPoint(blob, float64(k), d, e, fmt.Appendf(nil, "m%d", k))
		}
		n, ok := selectFast(blob, total, want, desc)
		if !ok {
			declined++
			if separated && want <= fastMax {
				t.Fatalf("case %d: declined %d well-separated points (want %d)", i, total, want)
			}
			continue
		}
		taken++
		ref := make([]int, total)
		for k := range ref {
			ref[k] = k
		}
		slices.SortStableFunc(ref, func(a, b int) int {
			if desc {
				a, b = b, a
			}
			return cmpFloat(exact[a], exact[b])
		})
		all := ref
		ref = ref[:min(want, total)]
		if n != len(ref) {
			t.Fatalf("case %d: kept %d, want %d", i, n, len(ref))
		}
		for k := range n {
			if got := math.Float64frombits(load64(blob, int(fastOffs[fastWin[k]&idxMask]))); got != float64(ref[k]) {
				t.Fatalf("case %d (desc %v, want %d of %d): place %d holds point %v, want %d", i, desc, want, total, k, got, ref[k])
			}
		}
		for k := 1; k < n; k++ {
			if exact[ref[k]] == exact[ref[k-1]] {
				t.Fatalf("case %d: took a tie", i)
			}
		}
		if n > 0 && n < total && dists[all[n-1]] == dists[all[n]] {
			t.Fatalf("case %d (desc %v): took a tie between the last kept point and one left out", i, desc)
		}
	}
	if taken < 10000 || declined < 5000 {
		t.Fatalf("taken %d, declined %d: the cases do not cover both", taken, declined)
	}
}

// appendDistsFast writes what appendMemberDist writes for each kept point,
// with the distance in the unit, exact (geo.Distance from the score's
// position) where the estimate could print otherwise: for members of
// every length up to 20 bytes and distances around each of its limits.
func TestAppendDistsFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	limits := []float64{0, math.Copysign(0, -1), 0.00004, 0.00005, 0.00015, 2.65209, 9.99995, 9.99994, 10, 99.99995, 100,
		999.99995, 999.99994, 1000, 9999.99994, 9999.99995, 10000, 1e9 + 0.5}
	lon, lat := 13.9, 37.4
	for round := range 3000 {
		conv := []float64{1, 1000, 0.3048, 1609.34}[round%4]
		n := 1 + rng.IntN(fastMax)
		var blob, want []byte
		for k := range n {
			member := make([]byte, rng.IntN(21))
			for i := range member {
				member[i] = byte('a' + rng.IntN(26))
			}
			score := geo.ScoreOf(lon+rng.Float64()-0.5, lat+rng.Float64()-0.5)
			plon, plat := geo.Position(score)
			d := geo.Distance(lon, lat, plon, plat) // in metres
			if rng.IntN(3) == 0 {
				d = limits[rng.IntN(len(limits))] * conv
			}
			e := 0.0
			if rng.IntN(2) == 0 {
				e = d*1e-13 + 1e-9
				if rng.IntN(4) == 0 {
					e = 0.6 * conv / 10000 // never clearly rounds
				}
			}
			fastOffs[k] = int32(len(blob))
			fastWin[k] = uint64(k)
			blob = geo.AppendPoint(blob, score, d, e, member)
			p := point{member: member, score: score, dist: d, err: e}
			if e != 0 && !clearlyRounds(d/conv, e/conv) {
				(&search{sh: geo.Shape{Lon: lon, Lat: lat}}).exact(&p)
			}
			want = appendMemberDist(want, member, p.dist/conv)
		}
		if got := appendDistsFast(nil, blob, n, conv, lon, lat); string(got) != string(want) {
			t.Fatalf("round %d: appendDistsFast = %q, want %q", round, got, want)
		}
	}
}
