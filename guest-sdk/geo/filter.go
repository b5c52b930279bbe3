package geo

import (
	"encoding/binary"
	"math"
)

// The area of a codec.OpMapGeoSearch (its Value) is encoded as the kind
// (one byte, KindCircle or KindBox), then the centre's longitude and
// latitude in degrees and the radius, or the width and the height, in
// meters: each a float64's bits, 8 bytes little-endian. 25 bytes for a
// circle, 33 for a box.
const (
	circleFilterLen = 1 + 3*8
	boxFilterLen    = 1 + 4*8
)

// AppendFilter appends the encoding of s for OpMapGeoSearch: its sizes in
// meters (the radius, width and height times Conversion, as Redis's
// geoWithinShape computes them, so the store's test is the same
// arithmetic).
func (s *Shape) AppendFilter(dst []byte) []byte {
	dst = append(dst, byte(s.Kind))
	dst = appendF64(dst, s.Lon)
	dst = appendF64(dst, s.Lat)
	if s.Kind == KindCircle {
		return appendF64(dst, s.Radius*s.Conversion)
	}
	dst = appendF64(dst, s.Width*s.Conversion)
	return appendF64(dst, s.Height*s.Conversion)
}

func appendF64(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

func f64At(b []byte, off int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(b[off:]))
}

// ParseFilter decodes an area AppendFilter encoded, in meters (Conversion
// 1), ready for Test; ok is false when b is not such an encoding.
func ParseFilter(b []byte) (s Shape, ok bool) {
	switch {
	case len(b) == circleFilterLen && b[0] == KindCircle:
		s = Shape{Kind: KindCircle, Radius: f64At(b, 17)}
	case len(b) == boxFilterLen && b[0] == KindBox:
		s = Shape{Kind: KindBox, Width: f64At(b, 17), Height: f64At(b, 25)}
	default:
		return Shape{}, false
	}
	s.Lon, s.Lat, s.Conversion = f64At(b, 1), f64At(b, 9), 1
	s.prepare()
	return s, true
}

// prepare computes once what Test's circle tests use.
func (s *Shape) prepare() {
	if s.Kind != KindCircle {
		return
	}
	s.r = s.Radius * s.Conversion
	s.latLim = radToDeg(s.r/earthRadius)*(1+1e-9) + 1e-9
	s.lat1r, s.lon1r = degToRad(s.Lat), degToRad(s.Lon)
	s.circleBounds(s.r)
}

// Test reports whether the member of a geo set with score is inside s,
// which ParseFilter made, as Redis's geoWithinShape decides it, with its
// distance from the centre in meters and a bound on that distance's error:
// 0 when it is Redis's distance, else an estimate within errBound of it
// (Distance, called only where the estimate cannot decide, is several
// times dearer than the estimate, and most members are decided without
// it).
func (s *Shape) Test(score float64) (d, errBound float64, in bool) {
	lon, lat := Position(score)
	if s.Kind != KindCircle {
		return s.within(lon, lat)
	}
	// within's circle tests, haversineA's small-angle path written out.
	if math.Abs(lat-s.Lat) > s.latLim {
		return 0, 0, false
	}
	dl := math.Abs(lon - s.Lon)
	if dl > 180 {
		dl = 360 - dl
	}
	if dl > s.lonLim {
		return 0, 0, false
	}
	var a float64
	hlat := (degToRad(lat) - s.lat1r) / 2
	hlon := (degToRad(lon) - s.lon1r) / 2
	if math.Abs(hlat) < smallAngle && math.Abs(hlon) < smallAngle {
		u, v := sinSmall(hlat), sinSmall(hlon)
		t := 2 * hlat
		cos2 := s.cosLat*cosSmall(t) - s.sinLat*sinSmall(t)
		a = u*u + s.cosLat*cos2*v*v
	} else {
		a = s.haversineA(lon, lat)
	}
	if a > s.aMax {
		return 0, 0, false
	}
	d, e := fastFromA(a)
	switch {
	case d-e > s.r:
		return 0, 0, false
	case d+e > s.r:
		d = Distance(s.Lon, s.Lat, lon, lat)
		return d, 0, d <= s.r
	}
	return d, e, true
}

// PointHeader is the size of a point's fixed fields in an OpMapGeoSearch
// result: before the member, its score, distance and error bound (each a
// float64's bits, 8 bytes little-endian) and the member's length (4 bytes,
// little-endian).
const PointHeader = 28

// AppendPoint appends one point of an OpMapGeoSearch result: the member's
// score, its distance from the centre in meters and that distance's error
// bound (Test's), the member's length and the member.
func AppendPoint(dst []byte, score, dist, errBound float64, member []byte) []byte {
	dst = appendF64(dst, score)
	dst = appendF64(dst, dist)
	dst = appendF64(dst, errBound)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(member)))
	return append(dst, member...)
}

// ValidRanges reports whether b is an OpMapGeoSearch's score ranges: one
// or more pairs of float64 bits (8 bytes little-endian each), begin and
// end (exclusive).
func ValidRanges(b []byte) bool { return len(b) > 0 && len(b)%16 == 0 }

// Range is the i-th score range of an OpMapGeoSearch's ranges b.
func Range(b []byte, i int) (begin, end float64) {
	return f64At(b, 16*i), f64At(b, 16*i+8)
}

// AppendRange appends a score range [begin, end) to an OpMapGeoSearch's
// ranges.
func AppendRange(dst []byte, begin, end float64) []byte {
	return appendF64(appendF64(dst, begin), end)
}
