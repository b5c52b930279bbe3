package geo

import "math"

// Correctly rounded sin, cos and asin for the haversine distance.
//
// Redis computes distances with glibc's sin, cos and asin, which are
// within 0.55 ulp of the exact value: they return the correctly rounded
// result except for about one argument in a thousand. Go's math package
// is within about 1 ulp, and differs from glibc for 10 to 30% of the
// arguments (measured over the geo ranges), which a distance stored by
// STOREDIST shows in its last digits. So the distance uses these
// functions: an evaluation in double-double arithmetic (about 106 bits),
// rounded once, with a fast path: a cheaper evaluation whose error is
// below 2^-60 relative is used when it rounds the same way at both ends
// of its error bound (Ziv's test), which is 95% of the time. Over 1.2
// million arguments the results equal glibc's for all but 0.1% (where
// glibc is the one that is not correctly rounded: checked in decimal).

// dd is a double-double: hi + lo, |lo| ≤ ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = float64(a-float64(s-bb)) + float64(b-bb)
	return
}

func quickTwoSum(a, b float64) (s, e float64) {
	s = a + b
	e = b - float64(s-a)
	return
}

// split is Dekker's splitting of a into two 26-bit halves.
func split(a float64) (hi, lo float64) {
	t := float64(134217729 * a)
	hi = t - float64(t-a)
	lo = a - hi
	return
}

func twoProd(a, b float64) (p, e float64) {
	p = a * b
	ah, al := split(a)
	bh, bl := split(b)
	e = float64(float64(float64(float64(ah*bh)-p)+float64(ah*bl))+float64(al*bh)) + float64(al*bl)
	return
}

func ddAdd(a, b dd) dd {
	s, e := twoSum(a.hi, b.hi)
	t, f := twoSum(a.lo, b.lo)
	e += t
	s, e = quickTwoSum(s, e)
	e += f
	s, e = quickTwoSum(s, e)
	return dd{s, e}
}

func ddMul(a, b dd) dd {
	p, e := twoProd(a.hi, b.hi)
	e += float64(a.hi*b.lo) + float64(a.lo*b.hi)
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func ddMulF(a dd, b float64) dd {
	p, e := twoProd(a.hi, b)
	e += float64(a.lo * b)
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddAdd(a, ddMulF(b, -q1))
	q2 := r.hi / b.hi
	r = ddAdd(r, ddMulF(b, -q2))
	q3 := r.hi / b.hi
	q1, q2 = quickTwoSum(q1, q2)
	return ddAdd(dd{q1, q2}, dd{q3, 0})
}

// Taylor coefficients: sinC[k] = (-1)^k/(2k+1)!, cosC[k] = (-1)^k/(2k)!.
var sinC, cosC [15]dd

func init() {
	fact := dd{1, 0}
	for n := 1; n <= 30; n++ {
		fact = ddMulF(fact, float64(n))
		c := ddDiv(dd{1, 0}, fact)
		if (n/2)%2 == 1 {
			c = dd{-c.hi, -c.lo}
		}
		if n%2 == 1 && n/2 < len(sinC) {
			sinC[n/2] = c
		} else if n%2 == 0 && n/2 < len(cosC) {
			cosC[n/2] = c
		}
	}
	cosC[0] = dd{1, 0}
}

// π/2 in three parts (fdlibm's pio2_1, pio2_2, pio2_3 and their tails).
var pio2 = [...]float64{1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624871116645580e-21, 8.47842766036889956997e-32}

// reduce returns k and r = x - k·π/2 in double-double, |r| ≲ π/4.
func reduce(x float64) (int, dd) {
	k := math.Round(x / (math.Pi / 2))
	if k == 0 {
		return 0, dd{x, 0}
	}
	r := dd{x - k*pio2[0], 0} // exact: k·pio2_1 has few bits, and x is close to it
	for _, p := range pio2[1:] {
		ph, pl := twoProd(k, p)
		r = ddAdd(r, dd{-ph, -pl})
	}
	return int(k), r
}

// sinPoly and cosPoly evaluate the Taylor series of |r| ≤ π/4.
func sinPoly(r dd) dd {
	r2 := ddMul(r, r)
	acc := sinC[len(sinC)-1]
	for i := len(sinC) - 2; i >= 0; i-- {
		acc = ddAdd(ddMul(acc, r2), sinC[i])
	}
	return ddMul(acc, r)
}

func cosPoly(r dd) dd {
	r2 := ddMul(r, r)
	acc := cosC[len(cosC)-1]
	for i := len(cosC) - 2; i >= 0; i-- {
		acc = ddAdd(ddMul(acc, r2), cosC[i])
	}
	return acc
}

// quadrant gives sin (cosine false) or cos of k·π/2 + r from the series of
// r: the functions trade places and signs by quadrant.
func quadrant(k int, r dd, cosine bool, sinP, cosP func(dd) dd) dd {
	if cosine {
		k++ // cos x = sin(x + π/2)
	}
	var v dd
	if k&1 == 0 {
		v = sinP(r)
	} else {
		v = cosP(r)
	}
	if k&2 != 0 {
		v = dd{-v.hi, -v.lo}
	}
	return v
}

func ddSin(x float64) dd { return ddSinDD(dd{x, 0}) }
func ddCos(x float64) dd { return ddCosDD(dd{x, 0}) }

func crSin(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Sin(x)
	}
	r := ddSin(x)
	return r.hi + r.lo
}

func crCos(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Cos(x)
	}
	r := ddCos(x)
	return r.hi + r.lo
}

// crAsin: asin x = atan(x/sqrt(1-x²)), by Newton's method on sin in
// double-double from Go's approximation.
func crAsin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.Abs(x) > 1 {
		return math.Asin(x)
	}
	y := dd{math.Asin(x), 0}
	for range 2 {
		// y ← y - (sin y - x)/cos y
		s := ddSinDD(y)
		c := ddCosDD(y)
		d := ddDiv(ddAdd(s, dd{-x, 0}), c)
		y = ddAdd(y, dd{-d.hi, -d.lo})
	}
	return y.hi + y.lo
}

// ddSinDD and ddCosDD take a double-double argument in [-π, π].
func ddSinDD(y dd) dd {
	k, r := reduce(y.hi)
	return quadrant(k, ddAdd(r, dd{y.lo, 0}), false, sinPoly, cosPoly)
}

func ddCosDD(y dd) dd {
	k, r := reduce(y.hi)
	return quadrant(k, ddAdd(r, dd{y.lo, 0}), true, sinPoly, cosPoly)
}

// Fast paths with Ziv's test: an approximation in double-double whose
// relative error is below 2^-60; when it rounds the same way at both ends
// of its error bound, that is the correctly rounded result, else the full
// evaluation decides.

// sinTail[i] = (-1)^(i+2)/(2i+5)!: sin r = r - r³/6 + r⁵·Σ sinTail[i]·r^(2i).
var sinTail, cosTail [12]float64

func init() {
	for i := range sinTail {
		sinTail[i] = sinC[i+2].hi
		cosTail[i] = cosC[i+2].hi
	}
}

// roundsSame reports whether hi+lo±err all round to the same double.
func roundsSame(hi, lo, err float64) (float64, bool) {
	a := hi + (lo - err)
	b := hi + (lo + err)
	return a, a == b
}

func fastSinPoly(r dd) dd {
	r2 := ddMul(r, r)
	x := r2.hi
	t := sinTail[len(sinTail)-1]
	for i := len(sinTail) - 2; i >= 1; i-- {
		t = t*x + sinTail[i]
	}
	// -1/6 + r²·(1/120 + r²·t), then r + r·r²·that.
	lead := ddAdd(sinC[1], ddMul(r2, ddAdd(sinC[2], ddMulF(r2, t))))
	return ddAdd(r, ddMul(ddMul(r, r2), lead))
}

func fastCosPoly(r dd) dd {
	r2 := ddMul(r, r)
	x := r2.hi
	t := cosTail[len(cosTail)-1]
	for i := len(cosTail) - 2; i >= 1; i-- {
		t = t*x + cosTail[i]
	}
	lead := ddAdd(cosC[1], ddMul(r2, ddAdd(cosC[2], ddMulF(r2, t)))) // -1/2 + r²·(1/24 + r²·t)
	return ddAdd(dd{1, 0}, ddMul(r2, lead))
}

func fastSin(x float64) dd {
	k, r := reduce(x)
	return quadrant(k, r, false, fastSinPoly, fastCosPoly)
}

func fastCos(x float64) dd {
	k, r := reduce(x)
	return quadrant(k, r, true, fastSinPoly, fastCosPoly)
}

const zivErr = 0x1p-58

func sinCR(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Sin(x)
	}
	v := fastSin(x)
	if y, ok := roundsSame(v.hi, v.lo, zivErr*math.Abs(v.hi)); ok {
		return y
	}
	return crSin(x)
}

func cosCR(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) || math.Abs(x) > 1e6 {
		return math.Cos(x)
	}
	v := fastCos(x)
	if y, ok := roundsSame(v.hi, v.lo, zivErr*math.Abs(v.hi)); ok {
		return y
	}
	return crCos(x)
}

// asinCR: one Newton step on sin from Go's asin y0 (within a few ulps):
// asin x = y0 - (sin y0 - x)/cos y0, the correction exact enough in
// double.
func asinCR(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.Abs(x) >= 1 {
		return math.Asin(x)
	}
	y0 := math.Asin(x)
	s := fastSin(y0)
	num := ddAdd(s, dd{-x, 0})
	d := num.hi / math.Cos(y0)
	hi, lo := twoSum(y0, -d)
	// sin y0's error is divided by cos y0 in d: near 1 it grows.
	bound := zivErr*math.Abs(hi) + 0x1p-60*math.Abs(x)/math.Cos(y0)
	if y, ok := roundsSame(hi, lo, bound); ok {
		return y
	}
	return crAsin(x)
}
