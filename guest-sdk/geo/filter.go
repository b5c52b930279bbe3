package geo

import (
	"encoding/binary"
	"math"
)

// The area of a codec.OpMapGeoSearch (its Value) is encoded as the kind
// (one byte, KindCircle or KindBox), then the centre's longitude and
// latitude in degrees, the unit's size in meters (Conversion), and the
// radius, or the width and the height, in the unit: each a float64's
// bits, 8 bytes little-endian. 33 bytes for a circle, 41 for a box. The
// sizes travel in their unit, as the command gave them, because Redis
// multiplies by the unit's size at several places (the cells' radius of
// a box is the half diagonal in the unit, times the unit): the store
// repeats each product as Redis computes it.
const (
	circleFilterLen = 1 + 4*8
	boxFilterLen    = 1 + 5*8
)

// AppendFilter appends the encoding of s for OpMapGeoSearch.
func (s *Shape) AppendFilter(dst []byte) []byte {
	dst = append(dst, byte(s.Kind))
	dst = appendF64(dst, s.Lon)
	dst = appendF64(dst, s.Lat)
	dst = appendF64(dst, s.Conversion)
	if s.Kind == KindCircle {
		return appendF64(dst, s.Radius)
	}
	dst = appendF64(dst, s.Width)
	return appendF64(dst, s.Height)
}

func appendF64(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

func f64At(b []byte, off int) float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(b[off:]))
}

// ParseFilter decodes an area AppendFilter encoded, ready for Test and
// ScanRanges; ok is false when b is not such an encoding of an area a
// search command can give: a centre within the geo limits, sizes at least
// 0 and a unit above 0 (a host must not let a module's bad area loop or
// panic it).
func ParseFilter(b []byte) (s Shape, ok bool) {
	switch {
	case len(b) == circleFilterLen && b[0] == KindCircle:
		s = Shape{Kind: KindCircle, Radius: f64At(b, 25)}
	case len(b) == boxFilterLen && b[0] == KindBox:
		s = Shape{Kind: KindBox, Width: f64At(b, 25), Height: f64At(b, 33)}
	default:
		return Shape{}, false
	}
	s.Lon, s.Lat, s.Conversion = f64At(b, 1), f64At(b, 9), f64At(b, 17)
	if !(s.Lon >= LonMin && s.Lon <= LonMax && s.Lat >= LatMin && s.Lat <= LatMax) ||
		!(s.Conversion > 0) || math.IsInf(s.Conversion, 1) ||
		!(s.Radius >= 0 && s.Width >= 0 && s.Height >= 0) {
		return Shape{}, false
	}
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
