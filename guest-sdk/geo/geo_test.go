package geo

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// glibcCases are arguments where Go's math package and glibc 2.36 (the
// libm redis-server uses on Debian 12) disagree, with glibc's result:
// the distance must follow glibc.
var glibcCases = []struct {
	f       string
	x, want uint64
}{
	{"asin", 0x3fefe3ba84400cbb, 0x3ff7cd97182c75d0},
	{"cos", 0xbff3be5bba1a958c, 0x3fd526bd4598ba02},
	{"sin", 0xbff7257c68989539, 0xbfefc0f43f3aa520},
	{"sin", 0xc007283ab114f162, 0xbfcf4a0af0107465},
	{"asin", 0x3fdbd34e69362f1e, 0x3fdcc947e27f4062},
	{"cos", 0x3fe7fe80d9905837, 0x3fe76b03eb4af4af},
	{"asin", 0x3fcb6694786ee714, 0x3fcb9d4a3122574d},
	{"cos", 0xbfe44a200ae47fbb, 0x3fe9c7c4a0534540},
	{"sin", 0x3ff29e4d85bcd893, 0x3fed6255e8a8085a},
	{"asin", 0x3feae522ee7f5622, 0x3feff0db41d2dee2},
	{"sin", 0xbff4cc3a9c511eb2, 0xbfeed529bebb569a},
	{"asin", 0x3fe599345e2e85fc, 0x3fe7b57268108d77},
	{"asin", 0x3fe91f0e8ce0b1fa, 0x3fece36e303b32ea},
	{"cos", 0x3fe35bde4a157001, 0x3fea521a63450595},
	{"asin", 0x3fe0c1ceeed17a35, 0x3fe1a2ef1094d429},
	{"cos", 0xbff2d91e8c04a5b4, 0x3fd87f3dd69c44d1},
	{"asin", 0x3fe7c67188a6fec8, 0x3feaccd2d1f4fb63},
	{"sin", 0xbffb61292d373b5b, 0xbfefaf5d04b8c0e3},
	{"cos", 0x3fd52da59bf55012, 0x3fee438ea370a13b},
	{"sin", 0x40026514f57dee38, 0x3fe7e0542b2de5d7},
	{"sin", 0xbff32c1323e53c7d, 0xbfedce16c0867ab3},
	{"cos", 0xbfea7f07cad5ce89, 0x3fe5a49f0f7f7266},
	{"cos", 0xbfedcdb92fcabede, 0x3fe31880ad67c9c3},
	{"sin", 0xbfefe3368350f8f8, 0xbfeaddbbeba13407},
}

func TestTrigMatchesGlibc(t *testing.T) {
	for _, c := range glibcCases {
		x := math.Float64frombits(c.x)
		var got float64
		switch c.f {
		case "sin":
			got = sinCR(x)
		case "cos":
			got = cosCR(x)
		default:
			got = asinCR(x)
		}
		if math.Float64bits(got) != c.want {
			t.Errorf("%s(%v) = %v, glibc %v", c.f, x, got, math.Float64frombits(c.want))
		}
	}
}

// The fast paths agree with the full double-double evaluation.
func TestTrigFastPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		x := (r.Float64()*2 - 1) * math.Pi
		if sinCR(x) != crSin(x) {
			t.Fatalf("sin(%v): fast %v, full %v", x, sinCR(x), crSin(x))
		}
		if cosCR(x) != crCos(x) {
			t.Fatalf("cos(%v): fast %v, full %v", x, cosCR(x), crCos(x))
		}
		y := r.Float64() * math.Pow(10, -float64(r.IntN(8)))
		if asinCR(y) != crAsin(y) {
			t.Fatalf("asin(%v): fast %v, full %v", y, asinCR(y), crAsin(y))
		}
	}
}

// within's cheap tests (latitude band, longitude band, the haversine's a,
// Go's math with an error bound) decide exactly as Redis's full test:
// random shapes anywhere, members near their edges.
func TestWithinMatchesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		sh := Shape{Lon: r.Float64()*360 - 180, Lat: (r.Float64()*2 - 1) * LatMax, Conversion: 1}
		size := math.Pow(10, r.Float64()*7.3) // 1 m to 20,000 km
		if r.IntN(2) == 0 {
			sh.Kind, sh.Radius = KindCircle, size
		} else {
			sh.Kind, sh.Width, sh.Height = KindBox, size, size*(0.2+r.Float64()*2)
		}
		for range 20 {
			// A member around the edge: a random direction, a distance
			// near the size.
			d := size * (0.9 + 0.2*r.Float64()) / earthRadius
			lat := min(max(sh.Lat+radToDeg(d)*(r.Float64()*2-1), LatMin), LatMax)
			lon := sh.Lon + radToDeg(d)*(r.Float64()*2-1)/math.Max(math.Cos(degToRad(lat)), 0.01)
			lon = math.Mod(lon+540, 360) - 180
			var want bool
			if sh.Kind == KindCircle {
				want = Distance(sh.Lon, sh.Lat, lon, lat) <= sh.Radius
			} else {
				want = latDistance(lat, sh.Lat) <= sh.Height/2 && Distance(lon, lat, sh.Lon, lat) <= sh.Width/2
			}
			dist, gotErr, got := sh.within(lon, lat)
			if got != want {
				t.Fatalf("%+v, member %v,%v: within %v, exact %v", sh, lon, lat, got, want)
			}
			if got {
				exact := Distance(sh.Lon, sh.Lat, lon, lat)
				if math.Abs(dist-exact) > gotErr {
					t.Fatalf("%+v, member %v,%v: distance %v±%v, exact %v", sh, lon, lat, dist, gotErr, exact)
				}
			}
		}
	}
}

// Every member a search keeps lies in the ranges it reads: the narrowing
// to sub-cells never drops a member Redis would answer.
func TestScanRangesCoverTheShape(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 5000 {
		sh := Shape{Lon: r.Float64()*360 - 180, Lat: (r.Float64()*2 - 1) * LatMax, Conversion: 1}
		if i%4 == 0 {
			sh.Lon = 180
		}
		size := math.Pow(10, r.Float64()*9.3-2) // 1 cm to 20,000 km
		if r.IntN(2) == 0 {
			sh.Kind, sh.Radius = KindCircle, size
		} else {
			sh.Kind, sh.Width, sh.Height = KindBox, size, size*(0.2+r.Float64()*2)
		}
		ranges := sh.ScanRanges(nil)
		for range 40 {
			d := size * r.Float64() * 1.05 / earthRadius
			lat := min(max(sh.Lat+radToDeg(d)*(r.Float64()*2-1), LatMin), LatMax)
			lon := sh.Lon + radToDeg(d)*(r.Float64()*2-1)/math.Max(math.Cos(degToRad(lat)), 0.01)
			lon = math.Mod(lon+540, 360) - 180
			if r.IntN(8) == 0 {
				lon = 180 // the overflow cells, whose scores pass 2^53
			}
			score := ScoreOf(lon, lat)
			plon, plat := Position(score)
			if _, _, in := sh.within(plon, plat); !in {
				continue
			}
			// Redis would find it only in the cells it visits; then it
			// must be in the ranges.
			inCells := false
			last := -1
			cells := sh.searchBoxes()
			for i, h := range cells {
				if h.zero() || last > 0 && h == cells[last] {
					continue
				}
				last = i
				lo, hi := scoreRange(h)
				inCells = inCells || score >= float64(lo) && score < float64(hi)
			}
			found := false
			for _, rg := range ranges {
				found = found || score >= float64(rg[0]) && score < float64(rg[1])
			}
			if inCells && !found {
				t.Fatalf("%+v: member %v,%v inside but not in the ranges", sh, plon, plat)
			}
		}
	}
}

// scanRanges cuts a cell's rows and columns from the decoded cell instead
// of decoding each sub-cell: the ranges must be those of the decoded
// sub-cells, over random circles and boxes everywhere.
func TestScanRangesMatchDecodedSubcells(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	reference := func(s *Shape) [][2]uint64 {
		cells := s.searchBoxes()
		b := s.band()
		var out [][2]uint64
		last := -1
		for i, h := range cells {
			if h.zero() || last > 0 && h == cells[last] {
				continue
			}
			last = i
			k := min(2, stepMax-h.step)
			if _, hi := scoreRange(h); hi > 1<<53 {
				k = 0
			}
			if a, _ := decode(lonSpan, latSpan, h); !b.meets(&a) {
				continue
			}
			first := len(out)
			for j := uint64(0); j < 1<<(2*k); j++ {
				sub := hashBits{bits: h.bits<<(2*k) | j, step: h.step + k}
				if a, _ := decode(lonSpan, latSpan, sub); !b.meets(&a) {
					continue
				}
				lo, hi := scoreRange(sub)
				if len(out) > first && out[len(out)-1][1] == lo {
					out[len(out)-1][1] = hi
				} else {
					out = append(out, [2]uint64{lo, hi})
				}
			}
		}
		return out
	}
	for i := range 20000 {
		s := Shape{Lon: rng.Float64()*360 - 180, Lat: rng.Float64()*170 - 85, Conversion: 1}
		size := math.Pow(10, rng.Float64()*7)
		if i%2 == 0 {
			s.Kind, s.Radius = KindCircle, size
		} else {
			s.Kind, s.Width, s.Height = KindBox, size, size*(0.2+rng.Float64()*2)
		}
		s2 := s
		got, want := s.ScanRanges(nil), reference(&s2)
		if len(want) > 48 {
			continue // the whole-cells fallback
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: ranges %v, decoded sub-cells give %v", s, got, want)
		}
	}
}

// The Taylor path of haversineA and fastFromA agrees with distanceFast
// (Go's sin, cos and asin) far inside distanceFast's error bound, near and
// beyond smallAngle, at every latitude.
func TestSmallAngleDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	worst := 0.0
	for range 200000 {
		s := Shape{Kind: KindCircle, Lon: rng.Float64()*358 - 179, Lat: rng.Float64()*170 - 85, Radius: 1, Conversion: 1}
		s.circleBounds(1)
		span := math.Pow(10, -1-rng.Float64()*6) * 100 // up to 10 degrees either way
		lon := s.Lon + (rng.Float64()*2-1)*span
		lat := max(min(s.Lat+(rng.Float64()*2-1)*span, 85), -85)
		d, _ := fastFromA(s.haversineA(lon, lat))
		want, e := distanceFast(s.Lon, s.Lat, lon, lat)
		if math.Abs(d-want) > e/100 {
			t.Fatalf("%v,%v to %v,%v: %v, distanceFast %v ± %v", s.Lon, s.Lat, lon, lat, d, want, e)
		}
		if want > 0 {
			worst = max(worst, math.Abs(d-want)/want)
		}
	}
	t.Logf("worst relative difference %.3g", worst)
}

// The store's filter (AppendFilter, ParseFilter, Test: the area sent in
// meters, Test's circle path written out) keeps exactly the members
// within keeps for the shape in its unit, at the same distances and error
// bounds: random circles and boxes anywhere, in every unit, members near
// their edges.
func TestFilterMatchesWithin(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	units := []float64{1, 1000, 0.3048, 1609.34}
	kept, tested := 0, 0
	for i := range 6000 {
		sh := Shape{Lon: r.Float64()*360 - 180, Lat: (r.Float64()*2 - 1) * LatMax, Conversion: units[r.IntN(len(units))]}
		if i%5 == 0 {
			sh.Lon = 180
		}
		size := math.Pow(10, r.Float64()*9.3-2) // 1 cm to 20,000 km
		if i%2 == 0 {
			sh.Kind, sh.Radius = KindCircle, size/sh.Conversion
		} else {
			sh.Kind, sh.Width, sh.Height = KindBox, 2*size/sh.Conversion, 2*size*(0.2+r.Float64()*2)/sh.Conversion
		}
		f, ok := ParseFilter(sh.AppendFilter(nil))
		if !ok {
			t.Fatalf("%+v: ParseFilter refuses AppendFilter's encoding", sh)
		}
		for range 30 {
			d := size * r.Float64() * 1.3 / earthRadius
			lat := min(max(sh.Lat+radToDeg(d)*(r.Float64()*2-1), LatMin), LatMax)
			lon := sh.Lon + radToDeg(d)*(r.Float64()*2-1)/math.Max(math.Cos(degToRad(lat)), 0.01)
			lon = math.Mod(lon+540, 360) - 180
			score := ScoreOf(lon, lat)
			plon, plat := Position(score)
			wd, we, win := sh.within(plon, plat)
			gd, ge, gin := f.Test(score)
			if gin != win || gin && (gd != wd || ge != we) {
				t.Fatalf("%+v, member %v,%v: Test %v,%v,%v; within %v,%v,%v", sh, plon, plat, gd, ge, gin, wd, we, win)
			}
			tested++
			if gin {
				kept++
			}
		}
	}
	if kept < tested/5 || kept > tested*4/5 {
		t.Fatalf("%d of %d members kept: the test hardly tests", kept, tested)
	}
	for _, b := range [][]byte{nil, {KindCircle}, make([]byte, 25), append([]byte{KindBox}, make([]byte, 24)...), append([]byte{KindCircle}, make([]byte, 32)...)} {
		if _, ok := ParseFilter(b); ok {
			t.Errorf("ParseFilter(%x) accepts a malformed area", b)
		}
	}
}

// decode multiplies by 2^-step where geohashDecode divides by 2^step, and
// neighbours is written out where geohashNeighbors loops over moves: the
// same boxes and cells, bit for bit, for random hashes of every step.
func TestDecodeAndNeighboursMatchRedis(t *testing.T) {
	moves := [9][2]int{{0, 0}, {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}}
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		step := uint8(1 + r.IntN(32))
		h := hashBits{bits: r.Uint64() & (1<<(2*uint(step)) - 1), step: step}
		if h.zero() {
			continue
		}
		if x, y := r.Uint32(), r.Uint32(); deinterleave64(interleave64(x, y)) != uint64(x)|uint64(y)<<32 {
			t.Fatalf("deinterleave64(interleave64(%#x, %#x)) = %#x", x, y, deinterleave64(interleave64(x, y)))
		}
		got, _ := decode(lonSpan, latSpan, h)
		sep := deinterleave64(h.bits)
		div := float64(uint64(1) << h.step)
		want := box{hash: h}
		want.lat.min = LatMin + float64(float64(uint32(sep))*1.0/div*(LatMax-LatMin))
		want.lat.max = LatMin + float64((float64(uint32(sep))+1)*1.0/div*(LatMax-LatMin))
		want.lon.min = LonMin + float64(float64(uint32(sep>>32))*1.0/div*(LonMax-LonMin))
		want.lon.max = LonMin + float64((float64(uint32(sep>>32))+1)*1.0/div*(LonMax-LonMin))
		if got != want {
			t.Fatalf("decode(%+v) = %+v, want %+v", h, got, want)
		}
		var nb [9]hashBits
		neighbours(h, &nb)
		for i, m := range moves {
			n := h
			if i > 0 {
				moveX(&n, m[0])
				moveY(&n, m[1])
			}
			if nb[i] != n {
				t.Fatalf("neighbour %d of %+v: %+v, want %+v", i, h, nb[i], n)
			}
		}
	}
}

// decode is decodeInto returning the box, for tests.
func decode(lonR, latR span, h hashBits) (box, bool) {
	var a box
	return a, decodeInto(lonR, latR, h, &a)
}

// searchBoxes is searchBoxesInto returning the cells, for tests.
func (s *Shape) searchBoxes() [9]hashBits {
	var nb [9]hashBits
	s.searchBoxesInto(&nb)
	return nb
}

// ScoreOf is encode at step 26 over the geo limits, as Redis's
// geohashEncodeWGS84 then geohashAlign52Bits: the same score bit for bit
// at random positions, at and next to the limits and the cells' edges,
// and 0 outside.
func TestScoreOfMatchesEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 14))
	want := func(lon, lat float64) float64 {
		h, _ := encode(lonSpan, latSpan, lon, lat, stepMax)
		return float64(align52(h))
	}
	edges := []float64{LonMin, LonMax, LatMin, LatMax, 0, -0.0, 1e-300, -1e-300, 90, -90, 85.05112877, -85.05112877, 179.99999999, 13.361389, 38.115556}
	var pos [][2]float64
	for _, a := range edges {
		for _, b := range edges {
			pos = append(pos, [2]float64{a, b}, [2]float64{math.Nextafter(a, 1000), math.Nextafter(b, -1000)})
		}
	}
	for range 500000 {
		lon, lat := r.Float64()*360-180, r.Float64()*2*LatMax-LatMax
		if r.IntN(4) == 0 {
			// On a cell's edge: a multiple of the step's cell size.
			lon = LonMin + float64(r.IntN(1<<stepMax))*(LonMax-LonMin)/(1<<stepMax)
			lat = LatMin + float64(r.IntN(1<<stepMax))*(LatMax-LatMin)/(1<<stepMax)
		}
		pos = append(pos, [2]float64{lon, lat})
	}
	inside := 0
	for _, p := range pos {
		got, w := ScoreOf(p[0], p[1]), want(p[0], p[1])
		if math.Float64bits(got) != math.Float64bits(w) {
			t.Fatalf("ScoreOf(%v, %v) = %v, encode %v", p[0], p[1], got, w)
		}
		if w != 0 {
			inside++
		}
	}
	if inside < len(pos)*9/10 {
		t.Fatalf("only %d of %d positions inside the limits", inside, len(pos))
	}
}
