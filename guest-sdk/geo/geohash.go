package geo

import (
	"math"
	"math/bits"
)

// The geohash arithmetic of Redis 7.0.15 (geohash.c, geohash_helper.c),
// operation for operation, so that scores, boxes, coordinates and
// distances come out bit for bit as redis-server's (the trigonometry is
// libm.go's, correctly rounded, as glibc's nearly always is). Products are wrapped
// in float64() where a sum follows: Go may fuse a*b+c into one FMA, which
// rounds once where C rounds twice, and an explicit conversion forbids it.

// Limits of the coordinates a geo set holds (EPSG:900913).
const (
	LonMin = -180.0
	LonMax = 180.0
	LatMin = -85.05112878
	LatMax = 85.05112878

	stepMax = 26 // 26*2 = 52 bits

	earthRadius = 6372797.560856 // meters, as Redis
	mercatorMax = 20037726.37
	degRad      = math.Pi / 180.0
)

// hashBits is a geohash of step*2 bits (GeoHashBits).
type hashBits struct {
	bits uint64
	step uint8
}

func (h hashBits) zero() bool { return h.bits == 0 && h.step == 0 }

// span is a coordinate interval (GeoHashRange).
type span struct{ min, max float64 }

// box is the area a geohash covers (GeoHashArea).
type box struct {
	hash     hashBits
	lon, lat span
}

var (
	lonSpan = span{LonMin, LonMax}
	latSpan = span{LatMin, LatMax}
)

// interleave64 puts the bits of x in the even positions and those of y in
// the odd ones. Straight-line, as in C: a loop costs a fuel check per
// iteration in the host's instrumented modules.
func interleave64(xlo, ylo uint32) uint64 {
	x, y := uint64(xlo), uint64(ylo)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	y = (y | y<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	y = (y | y<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	y = (y | y<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	y = (y | y<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	y = (y | y<<1) & 0x5555555555555555
	return x | y<<1
}

// deinterleave64 undoes interleave64: x in the low 32 bits, y in the high.
func deinterleave64(v uint64) uint64 {
	return uint64(squeeze(v)) | uint64(squeeze(v>>1))<<32
}

// squeeze packs the even bits of v into 32 bits (bit 2i to bit i): half
// of deinterleave64, small enough to be inlined where a search decodes
// every member it reads (deinterleave64 whole is not).
func squeeze(v uint64) uint32 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	return uint32(v | v>>16)
}

// encode is geohashEncode: false outside the geo limits or the spans.
func encode(lonR, latR span, lon, lat float64, step uint8) (hashBits, bool) {
	if step > 32 || step == 0 {
		return hashBits{}, false
	}
	if lon > LonMax || lon < LonMin || lat > LatMax || lat < LatMin {
		return hashBits{}, false
	}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return hashBits{}, false
	}
	latOff := (lat - latR.min) / (latR.max - latR.min)
	lonOff := (lon - lonR.min) / (lonR.max - lonR.min)
	latOff *= float64(uint64(1) << step)
	lonOff *= float64(uint64(1) << step)
	return hashBits{bits: interleave64(uint32(latOff), uint32(lonOff)), step: step}, true
}

// decodeInto is geohashDecode: the area a hash covers, written into a
// (false for the zero hash): a box returned in WebAssembly is
// copied through memory (memory.copy), and a search decodes up to
// fifteen. Its division by 2^step is a multiplication by 2^-step, which
// is the same exact scaling.
func decodeInto(lonR, latR span, h hashBits, a *box) bool {
	if h.zero() {
		*a = box{}
		return false
	}
	sep := deinterleave64(h.bits)
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	inv := math.Float64frombits(uint64(1023-int(h.step)) << 52) // 1 / 2^step, step ≤ 32
	a.hash = h
	a.lat.min = latR.min + float64(float64(ilato)*inv*latScale)
	a.lat.max = latR.min + float64((float64(ilato)+1)*inv*latScale)
	a.lon.min = lonR.min + float64(float64(ilono)*inv*lonScale)
	a.lon.max = lonR.min + float64((float64(ilono)+1)*inv*lonScale)
	return true
}

// ScoreOf is the score GEOADD gives a position: its 52-bit hash, as the
// float ZADD parses from its decimal form (0 outside the limits). It is
// encode over the geo limits at step 26 (align52 then shifts by 0) on
// scalars and constants: every GEOADD runs it, and encode's spans and
// checks and its call of interleave64 were ~600 instructions in
// WebAssembly. The arithmetic is encode's, operation for operation
// (LatMax - LatMin is exact either way: it doubles LatMax).
func ScoreOf(lon, lat float64) float64 {
	if lon > LonMax || lon < LonMin || lat > LatMax || lat < LatMin {
		return 0
	}
	const latScale = LatMax - LatMin
	const lonScale = LonMax - LonMin
	const mul = float64(uint64(1) << stepMax)
	latOff := (lat - LatMin) / latScale
	lonOff := (lon - LonMin) / lonScale
	latOff *= mul
	lonOff *= mul
	// interleave64, inline.
	x, y := uint64(uint32(latOff)), uint64(uint32(lonOff))
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	y = (y | y<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	y = (y | y<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	y = (y | y<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	y = (y | y<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	y = (y | y<<1) & 0x5555555555555555
	return float64(x | y<<1)
}

// align52 is geohashAlign52Bits.
func align52(h hashBits) uint64 { return h.bits << (52 - uint(h.step)*2) }

// Position is decodeGeohash: the centre of the 52-bit cell of a score,
// clamped to the limits. It is decode's arithmetic on scalars: a search
// calls it for every member it reads, and a struct returned in
// WebAssembly is copied through memory (a host call for memory.copy).
func Position(score float64) (lon, lat float64) {
	sep := deinterleave64(uint64(score))
	const latScale = LatMax - LatMin
	const lonScale = LonMax - LonMin
	const div = float64(uint64(1) << stepMax)
	ilato := float64(uint32(sep))
	ilono := float64(uint32(sep >> 32))
	latLo := LatMin + float64(ilato*1.0/div*latScale)
	latHi := LatMin + float64((ilato+1)*1.0/div*latScale)
	lonLo := LonMin + float64(ilono*1.0/div*lonScale)
	lonHi := LonMin + float64((ilono+1)*1.0/div*lonScale)
	// Clamped with comparisons: Go's min and max of floats are runtime
	// calls in WebAssembly (NaN and signed zeros cannot occur here).
	lon = clamp((lonLo+lonHi)/2, LonMin, LonMax)
	lat = clamp((latLo+latHi)/2, LatMin, LatMax)
	return lon, lat
}

// StandardHash is the standard geohash's 52 bits of a position (GEOHASH):
// it covers latitudes ±90, not a geo set's ±85.05, so the position is
// encoded again over those spans.
func StandardHash(lon, lat float64) uint64 {
	h, _ := encode(span{-180, 180}, span{-90, 90}, lon, lat, stepMax)
	return h.bits
}

// clamp is min(max(x, lo), hi) for a number x.
func clamp(x, lo, hi float64) float64 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

func degToRad(d float64) float64 { return d * degRad }
func radToDeg(r float64) float64 { return r / degRad }

// Distance is geohashGetDistance (Redis 7.0.15): the haversine
// great-circle distance in meters; along a meridian (the half longitude
// difference's sine is 0) the arc of the latitudes.
func Distance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	lon1r, lon2r := degToRad(lon1d), degToRad(lon2d)
	v := sinCR((lon2r - lon1r) / 2)
	if v == 0 {
		return latDistance(lat1d, lat2d)
	}
	lat1r, lat2r := degToRad(lat1d), degToRad(lat2d)
	u := sinCR((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(cosCR(lat1r)*cosCR(lat2r))*v*v)
	return 2.0 * earthRadius * asinCR(math.Sqrt(a))
}

// latDistance is geohashGetLatDistance: the distance between two
// latitudes on one meridian.
func latDistance(lat1d, lat2d float64) float64 {
	return earthRadius * math.Abs(degToRad(lat2d)-degToRad(lat1d))
}

// stepsByRadius is geohashEstimateStepsByRadius.
func stepsByRadius(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// moveX and moveY are geohash_move_x and geohash_move_y: the neighbour
// cell d (±1) east or north.
func moveX(h *hashBits, d int) { move(h, d, 0xaaaaaaaaaaaaaaaa) }
func moveY(h *hashBits, d int) { move(h, d, 0x5555555555555555) }

// move steps the coordinate held in the bits of mask by d, leaving the
// other coordinate's bits as they are.
func move(h *hashBits, d int, mask uint64) {
	if d == 0 {
		return
	}
	x := h.bits & mask
	y := h.bits &^ mask
	zz := ^mask >> (64 - uint(h.step)*2)
	if d > 0 {
		x = x + (zz + 1)
	} else {
		x = x | zz
		x = x - (zz + 1)
	}
	x &= mask >> (64 - uint(h.step)*2)
	h.bits = x | y
}

// Shape kinds.
const (
	KindCircle = iota + 1
	KindBox
)

// Shape is a search area (GeoShape): a centre, a radius or a box, and the
// unit's size in meters.
type Shape struct {
	Kind          int        // KindCircle or KindBox
	Lon, Lat      float64    // the centre, in degrees
	Radius        float64    // KindCircle, in the unit
	Width, Height float64    // KindBox, in the unit
	Conversion    float64    // the unit in meters
	bounds        [4]float64 // min lon, min lat, max lon, max lat
	aMax, lonLim  float64    // KindCircle: the bounds circleBounds sets; 0 until within calls it
	cosLat        float64    // KindCircle: Go's cos of the centre's latitude, set with aMax
	sinLat        float64    // KindCircle: Go's sin of the centre's latitude, set with aMax
	// Set by prepare (ParseFilter) for Test: the radius in meters, within's
	// latitude limit, the centre in radians.
	r, latLim, lat1r, lon1r float64
}

// boundingBox is geohashBoundingBox.
func (s *Shape) boundingBox() {
	height, width := s.Radius, s.Radius
	if s.Kind != KindCircle {
		height, width = s.Height/2, s.Width/2
	}
	height *= s.Conversion
	width *= s.Conversion
	latDelta := radToDeg(height / earthRadius)
	// Redis computes the longitude deltas at the top and the bottom edge
	// and uses the one on the pole's side: only that one is computed (a
	// correctly rounded cosine is a few hundred nanoseconds here).
	edge := s.Lat + latDelta
	if s.Lat < 0 {
		edge = s.Lat - latDelta
	}
	lonDelta := radToDeg(width / earthRadius / cosCR(degToRad(edge)))
	s.bounds[0] = s.Lon - lonDelta
	s.bounds[2] = s.Lon + lonDelta
	s.bounds[1] = s.Lat - latDelta
	s.bounds[3] = s.Lat + latDelta
}

// searchBoxesInto is geohashCalculateAreasByShapeWGS84 followed by the
// order membersOfAllNeighbors visits the cells in, written into nb (no
// copy of the array): the centre cell, then north, south, east, west,
// north-east, north-west, south-east, south-west; an excluded neighbour
// is the zero hash.
func (s *Shape) searchBoxesInto(nb *[9]hashBits) {
	s.boundingBox()
	minLon, minLat, maxLon, maxLat := s.bounds[0], s.bounds[1], s.bounds[2], s.bounds[3]
	radiusMeters := s.Radius
	if s.Kind != KindCircle {
		radiusMeters = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	}
	radiusMeters *= s.Conversion
	steps := stepsByRadius(radiusMeters, s.Lat)
	hash, _ := encode(lonSpan, latSpan, s.Lon, s.Lat, steps)
	neighbours(hash, nb)
	var area, north, south, east, west box
	decodeInto(lonSpan, latSpan, hash, &area)
	decodeInto(lonSpan, latSpan, nb[1], &north)
	decodeInto(lonSpan, latSpan, nb[2], &south)
	decodeInto(lonSpan, latSpan, nb[3], &east)
	decodeInto(lonSpan, latSpan, nb[4], &west)
	decrease := north.lat.max < maxLat || south.lat.min > minLat || east.lon.max < maxLon || west.lon.min > minLon
	if steps > 1 && decrease {
		steps--
		hash, _ = encode(lonSpan, latSpan, s.Lon, s.Lat, steps)
		neighbours(hash, nb)
		decodeInto(lonSpan, latSpan, hash, &area)
	}
	if steps >= 2 {
		if area.lat.min < minLat {
			nb[2], nb[8], nb[7] = hashBits{}, hashBits{}, hashBits{} // south, south-west, south-east
		}
		if area.lat.max > maxLat {
			nb[1], nb[5], nb[6] = hashBits{}, hashBits{}, hashBits{} // north, north-east, north-west
		}
		if area.lon.min < minLon {
			nb[4], nb[8], nb[6] = hashBits{}, hashBits{}, hashBits{} // west, south-west, north-west
		}
		if area.lon.max > maxLon {
			nb[3], nb[7], nb[5] = hashBits{}, hashBits{}, hashBits{} // east, south-east, north-east
		}
	}
}

// neighbours sets out to the cell and its eight neighbours
// (geohashNeighbors), in the order searchBoxes returns them. Written out:
// a table of moves is built in memory on every call in WebAssembly.
func neighbours(h hashBits, out *[9]hashBits) {
	out[0] = h
	n, s, e, w := h, h, h, h
	moveY(&n, 1)
	moveY(&s, -1)
	moveX(&e, 1)
	moveX(&w, -1)
	out[1], out[2], out[3], out[4] = n, s, e, w
	ne, nw, se, sw := e, w, e, w // moveX then moveY: the coordinates move independently
	moveY(&ne, 1)
	moveY(&nw, 1)
	moveY(&se, -1)
	moveY(&sw, -1)
	out[5], out[6], out[7], out[8] = ne, nw, se, sw
}

// scoreRange is scoresOfGeoHashBox: the scores [min, max) of a cell.
func scoreRange(h hashBits) (lo, hi uint64) {
	lo = align52(h)
	h.bits++
	hi = align52(h)
	return lo, hi
}

// within is geoWithinShape's test of a member at lon, lat (Redis
// 7.0.15): whether it is inside, and its distance from the centre in
// meters with a bound on that distance's error: 0 when it is the exact
// distance, the one Redis computes, else an estimate by distanceFast. A
// box checks the latitude leg first, then the longitude leg along the
// member's parallel.
//
// The exact (correctly rounded) distances cost about a microsecond in
// WebAssembly, and a search reads every member of up to nine cells: only
// a member whose estimate is too close to the radius (or box side) to
// decide is measured exactly here. The answer measures exactly only what
// the estimates cannot settle: near ties in the sort, a distance printed
// near a rounding boundary, STOREDIST (search.exact).
func (s *Shape) within(lon, lat float64) (d, errBound float64, in bool) {
	if s.Kind == KindCircle {
		r := s.Radius * s.Conversion
		// A great-circle distance is at least the arc between the
		// latitudes: a member further in latitude than the radius is out.
		if math.Abs(lat-s.Lat) > radToDeg(r/earthRadius)*(1+1e-9)+1e-9 {
			return 0, 0, false
		}
		// And the haversine's a grows with the distance: above the a of
		// the radius (with a margin far beyond the rounding errors) the
		// member is out, which saves the asin of most members of the
		// cells.
		if s.aMax == 0 {
			s.circleBounds(r)
		}
		// a ≥ cos φ1 · cos φ2 · sin²(Δλ/2), and cos φ2 is at least its
		// smallest value in the latitude band: beyond lonLim degrees of
		// longitude (either way round) the member is out.
		dl := math.Abs(lon - s.Lon)
		if dl > 180 {
			dl = 360 - dl
		}
		if dl > s.lonLim {
			return 0, 0, false
		}
		// The a of distanceFast(s.Lon, s.Lat, lon, lat), computed once.
		a := s.haversineA(lon, lat)
		if a > s.aMax {
			return 0, 0, false
		}
		d, e := fastFromA(a)
		switch {
		case d-e > r:
			return 0, 0, false
		case d+e <= r:
			return d, e, true
		}
		d = Distance(s.Lon, s.Lat, lon, lat)
		return d, 0, d <= r
	}
	if latDistance(lat, s.Lat) > s.Height*s.Conversion/2 {
		return 0, 0, false
	}
	w := s.Width * s.Conversion / 2
	switch lw, e := distanceFast(lon, lat, s.Lon, lat); {
	case lw-e > w:
		return 0, 0, false
	case lw+e > w && Distance(lon, lat, s.Lon, lat) > w:
		return 0, 0, false
	}
	d, e := distanceFast(s.Lon, s.Lat, lon, lat)
	return d, e, true
}

// circleBounds sets the cheap tests of a circle of r meters: aMax, the
// haversine's a of the radius, and lonLim, the longitude difference in
// degrees beyond which a member of the latitude band is out; both with
// margins far beyond the rounding errors of Go's math.
func (s *Shape) circleBounds(r float64) {
	s.aMax, s.lonLim = math.Inf(1), math.Inf(1)
	s.cosLat, s.sinLat = math.Cos(degToRad(s.Lat)), math.Sin(degToRad(s.Lat))
	h := r / (2 * earthRadius)
	if h >= math.Pi/2 {
		return
	}
	sinH := math.Sin(h)
	s.aMax = sinH*sinH*(1+1e-9) + 1e-15
	lat1r, band := degToRad(s.Lat), r/earthRadius*(1+1e-9)
	if math.Abs(lat1r)+band >= math.Pi/2 {
		return // the band reaches a pole
	}
	k := s.cosLat * min(math.Cos(lat1r-band), math.Cos(lat1r+band))
	if x := s.aMax / k; k > 0 && x < 1 {
		s.lonLim = radToDeg(2*math.Asin(math.Sqrt(x)))*(1+1e-6) + 1e-9
	}
}

// maxRanges is the most ranges a search reads before it reads whole cells.
const maxRanges = 48

// RangesCap is the most ranges ScanRanges appends before it falls back to
// whole cells: a dst of this capacity never grows.
const RangesCap = maxRanges + 16

// ScanRanges is the score ranges a search reads: the cells Redis visits
// (searchBoxes, in its order, a cell equal to the last one visited
// skipped), each narrowed to its sub-cells two steps finer that meet the
// band (shape.band) outside which no member can be inside the shape, and
// those merged where contiguous. Members of the cells outside the ranges
// are ones Redis reads and drops: the members kept, and their order, are
// Redis's, for a fraction of the reading and measuring. More than
// maxRanges ranges fall back to the whole cells. The ranges are appended
// to dst[:0] and returned: with a capacity of RangesCap, nothing is
// allocated.
func (s *Shape) ScanRanges(dst [][2]uint64) [][2]uint64 {
	var cells [9]hashBits
	s.searchBoxesInto(&cells)
	var visitBuf [9]hashBits
	visit := visitBuf[:0]
	last := -1
	for i := range cells { // by index: ranging over an array copies it (memory.copy)
		h := cells[i]
		if h.zero() || last > 0 && h == cells[last] {
			continue
		}
		visit = append(visit, h)
		last = i
	}
	b := s.band()
	// Up to maxRanges plus one cell's 16 before the check: no growth.
	out := dst[:0]
	for _, h := range visit {
		k := min(2, stepMax-h.step)
		if _, hi := scoreRange(h); hi > 1<<53 {
			// A cell of the longitude 180 overflow: its scores are not
			// all exact as floats, so sub-ranges could collapse; it is
			// read whole, with the float bounds Redis uses.
			k = 0
		}
		var a box
		decodeInto(lonSpan, latSpan, h, &a)
		if !b.meets(&a) {
			continue // the whole cell is outside the band
		}
		// The band is a latitude range times a longitude range, so a
		// sub-cell meets it when its row and its column do: 2·2^k tests
		// of spans cut from the cell's (within far less than meets's
		// margin of the decoded sub-cells') instead of 4^k decodes.
		n := uint64(1) << k
		var rows, cols [4]bool
		var rowMask, colMask uint
		// Part i of n equal parts of each span, the part's width computed
		// once per cell (a product by 1/n: exact, as a division by n is).
		inv := 1 / float64(n)
		latW, lonW := (a.lat.max-a.lat.min)*inv, (a.lon.max-a.lon.min)*inv
		for i := range n {
			lo, hi := float64(i), float64(i+1)
			rows[i] = b.meetsLat(span{a.lat.min + lo*latW, a.lat.min + hi*latW})
			cols[i] = b.meetsLon(span{a.lon.min + lo*lonW, a.lon.min + hi*lonW})
			if rows[i] {
				rowMask |= 1 << i
			}
			if cols[i] {
				colMask |= 1 << i
			}
		}
		first := len(out)
		// Sub-cell j's scores (scoreRange of the sub-cell, inline).
		shift := 52 - 2*uint(h.step+k)
		if k == 2 {
			// The 16 sub-cells that meet the band as a mask, walked run by
			// run of consecutive sub-cells (one range each): a few steps
			// where the loop below takes sixteen.
			mask := uint32(rowSpread[rowMask] & colSpread[colMask])
			for mask != 0 {
				j := uint64(bits.TrailingZeros32(mask))
				run := uint64(bits.TrailingZeros32(^(mask >> j)))
				lo := (h.bits<<4 | j) << shift
				hi := lo + run<<shift
				if len(out) > first && out[len(out)-1][1] == lo {
					out[len(out)-1][1] = hi
				} else {
					out = append(out, [2]uint64{lo, hi})
				}
				mask &^= (1<<run - 1) << j
			}
			if len(out) > maxRanges {
				return s.wholeCells(dst, visit)
			}
			continue
		}
		for j := uint64(0); j < 1<<(2*k); j++ {
			// Interleaved as encode does: latitude bits in the even
			// positions, longitude bits in the odd ones.
			if !rows[j&1|j>>1&2] || !cols[j>>1&1|j>>2&2] {
				continue
			}
			lo := (h.bits<<(2*k) | j) << shift
			hi := lo + 1<<shift
			if len(out) > first && out[len(out)-1][1] == lo {
				out[len(out)-1][1] = hi
			} else {
				out = append(out, [2]uint64{lo, hi})
			}
		}
		if len(out) > maxRanges {
			return s.wholeCells(dst, visit)
		}
	}
	return out
}

// wholeCells is the score ranges of the cells visit, whole.
func (s *Shape) wholeCells(dst [][2]uint64, visit []hashBits) [][2]uint64 {
	out := dst[:0]
	for _, h := range visit {
		lo, hi := scoreRange(h)
		out = append(out, [2]uint64{lo, hi})
	}
	return out
}

// rowSpread and colSpread map a mask of the rows (or columns) of a cell
// cut in 4×4 that meet a band to the mask of its 16 sub-cells in those
// rows (columns), sub-cell j in bit j. j interleaves as encode does: the
// row's bits at j's bits 0 and 2, the column's at bits 1 and 3.
var rowSpread, colSpread = spreads()

func spreads() (rows, cols [16]uint16) {
	for m := range 16 {
		for j := range 16 {
			if m>>(j&1|j>>1&2)&1 != 0 {
				rows[m] |= 1 << j
			}
			if m>>(j>>1&1|j>>2&2)&1 != 0 {
				cols[m] |= 1 << j
			}
		}
	}
	return rows, cols
}

// band is where a member inside a shape can be: latitudes latLo..latHi
// and at most lonHalf degrees of longitude from the centre either way
// round (+Inf: any), with margins far beyond rounding errors.
type band struct{ latLo, latHi, lon, lonHalf float64 }

// band bounds the shape: a circle's points are within the radius's arc in
// latitude and within circleBounds's lonLim; a box's within half its
// height in latitude (the arc latDistance measures) and, along their
// parallel, within half its width: 2R·asin(cos φ·sin(Δλ/2)) ≤ w/2 with cos
// φ at least its smallest value in the band.
func (s *Shape) band() band {
	b := band{lon: s.Lon, lonHalf: math.Inf(1)}
	var dlat float64
	if s.Kind == KindCircle {
		r := s.Radius * s.Conversion
		s.circleBounds(r)
		dlat, b.lonHalf = radToDeg(r/earthRadius), s.lonLim
	} else {
		dlat = radToDeg(s.Height * s.Conversion / 2 / earthRadius)
		lat1r, bandR := degToRad(s.Lat), degToRad(dlat)*(1+1e-9)
		h := s.Width * s.Conversion / 2 / (2 * earthRadius)
		if math.Abs(lat1r)+bandR < math.Pi/2 && h < math.Pi/2 {
			cmin := min(math.Cos(lat1r-bandR), math.Cos(lat1r+bandR))
			if x := math.Sin(h) / cmin; x < 1 {
				b.lonHalf = radToDeg(2*math.Asin(x))*(1+1e-6) + 1e-9
			}
		}
	}
	dlat = dlat*(1+1e-9) + 1e-9
	b.latLo, b.latHi = s.Lat-dlat, s.Lat+dlat
	return b
}

// meets reports whether area a may hold a point of the band.
func (b *band) meets(a *box) bool { return b.meetsLat(a.lat) && b.meetsLon(a.lon) }

// bandEps is meets's margin: positions are cell centres computed in floats.
const bandEps = 1e-9

// meetsLat reports whether latitudes lat may hold a point of the band.
func (b *band) meetsLat(lat span) bool {
	return lat.max+bandEps >= b.latLo && lat.min-bandEps <= b.latHi
}

// meetsLon reports whether longitudes lon may hold a point of the band:
// the band's longitudes, or them shifted by 360 degrees either way (a band
// across the antimeridian). Unrolled: a loop over the shifts costs more
// than the tests in WebAssembly.
func (b *band) meetsLon(lon span) bool {
	if b.lonHalf >= 180 {
		return true
	}
	lo, hi := b.lon-b.lonHalf, b.lon+b.lonHalf
	up, down := lon.max+bandEps, lon.min-bandEps
	return up >= lo && down <= hi ||
		up >= lo-360 && down <= hi-360 ||
		up >= lo+360 && down <= hi+360
}

// distanceFast is distance with Go's sin, cos and asin, and a bound on
// how far it may be from distance: Go's functions are within a few units
// in the last place, which the haversine turns into at most about 1e-15
// relative; the bound allows 1e-13, times the growth of asin's error near
// 1 (within metres of the antipode the bound is the whole distance, so
// the exact distance decides).
func distanceFast(lon1d, lat1d, lon2d, lat2d float64) (d, errBound float64) {
	lat1r, lon1r := degToRad(lat1d), degToRad(lon1d)
	lat2r, lon2r := degToRad(lat2d), degToRad(lon2d)
	u := math.Sin((lat2r - lat1r) / 2)
	v := math.Sin((lon2r - lon1r) / 2)
	return fastFromA(u*u + math.Cos(lat1r)*math.Cos(lat2r)*v*v)
}

// smallAngle bounds the half angles (radians) that haversineA and
// fastFromA take through short Taylor series instead of Go's sin, cos and
// asin (pure Go in WebAssembly, where they cost most of a search): below
// it the series' truncation errors are under 1e-17 relative, far inside
// distanceFast's bound.
const smallAngle = 0.02

// haversineA is the a of distanceFast from the circle's centre to lon,
// lat: sin²(Δφ/2) + cos φ1·cos φ2·sin²(Δλ/2), as distanceFast computes it,
// or, for a member within smallAngle in both half angles, from Taylor
// series and cos φ2 = cos φ1·cos Δφ - sin φ1·sin Δφ (cosLat and sinLat
// set by circleBounds).
func (s *Shape) haversineA(lon, lat float64) float64 {
	lat1r, lat2r := degToRad(s.Lat), degToRad(lat)
	hlat := (lat2r - lat1r) / 2
	hlon := (degToRad(lon) - degToRad(s.Lon)) / 2
	if math.Abs(hlat) < smallAngle && math.Abs(hlon) < smallAngle {
		u, v := sinSmall(hlat), sinSmall(hlon)
		t := 2 * hlat
		cos2 := s.cosLat*cosSmall(t) - s.sinLat*sinSmall(t)
		return u*u + s.cosLat*cos2*v*v
	}
	u, v := math.Sin(hlat), math.Sin(hlon)
	return u*u + s.cosLat*math.Cos(lat2r)*v*v
}

// sinSmall, cosSmall and asinSmall are Taylor series for |x| < 2·smallAngle,
// their coefficients' reciprocals constants: a division by a constant is
// a real division (tens of cycles each) where a product is a few.
func sinSmall(x float64) float64 {
	x2 := x * x
	return x * (1 - x2*(1.0/6)*(1-x2*(1.0/20)*(1-x2*(1.0/42)*(1-x2*(1.0/72)))))
}

func cosSmall(x float64) float64 {
	x2 := x * x
	return 1 - x2*0.5*(1-x2*(1.0/12)*(1-x2*(1.0/30)*(1-x2*(1.0/56)*(1-x2*(1.0/90)))))
}

func asinSmall(x float64) float64 {
	x2 := x * x
	return x * (1 + x2*(1.0/6+x2*(3.0/40+x2*(15.0/336+x2*(105.0/3456+x2*(945.0/42240))))))
}

// fastFromA is distanceFast from the haversine's a.
func fastFromA(a float64) (d, errBound float64) {
	sq := math.Sqrt(a)
	var as float64
	if sq < 2*smallAngle {
		as = asinSmall(sq)
	} else {
		as = math.Asin(sq)
	}
	d = 2.0 * earthRadius * as
	growth := 1.0
	if sq > 0.5 {
		c := math.Sqrt(max(1-sq*sq, 0))
		if c < 1e-6 {
			return d, d + 1
		}
		growth = sq / (c * as)
	}
	return d, d*1e-13*growth + 1e-9
}
