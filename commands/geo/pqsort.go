package main

// pqsort is Redis's partial quicksort (pqsort.c, after Bentley and
// McIlroy's "Engineering a Sort Function"), ported step for step: a search
// with COUNT sorts only the ranks [lrange, rrange] it answers, and the
// order it leaves members at equal distances in is this algorithm's, not a
// stable sort's. It sorts v, indexes of pts, by the points' distances
// (descending with desc): the same swaps on indexes as on the points, with
// neither function values nor struct copies (each a memory.copy, a host
// call, in WebAssembly).
func pqsort(v []int32, pts []point, desc bool, lrange, rrange int) {
	q := pq{v: v, pts: pts, desc: desc, lrange: lrange, rrange: rrange}
	q.sort(0, len(v))
}

// pq is one pqsort's state.
type pq struct {
	v              []int32
	pts            []point
	desc           bool
	lrange, rrange int
}

// cmp compares the points at positions x and y of v.
func (q *pq) cmp(x, y int) int {
	a, b := q.pts[q.v[x]].dist, q.pts[q.v[y]].dist
	if q.desc {
		a, b = b, a
	}
	switch {
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return -1
}

func (q *pq) swap(i, j int) { q.v[i], q.v[j] = q.v[j], q.v[i] }

func (q *pq) vecswap(i, j, k int) {
	for ; k > 0; k-- {
		q.swap(i, j)
		i++
		j++
	}
}

func (q *pq) med3(x, y, z int) int {
	if q.cmp(x, y) < 0 {
		switch {
		case q.cmp(y, z) < 0:
			return y
		case q.cmp(x, z) < 0:
			return z
		}
		return x
	}
	switch {
	case q.cmp(y, z) > 0:
		return y
	case q.cmp(x, z) < 0:
		return x
	}
	return z
}

func (q *pq) outside(l, r int) bool {
	return (q.lrange < l && q.rrange < l) || (q.lrange > r && q.rrange > r)
}

// sort sorts v[a:a+n] as _pqsort does; positions are element indexes
// where the C code has byte pointers (its byte comparisons of the range
// bounds give the same answers on indexes).
func (q *pq) sort(a, n int) {
	for {
		if n < 7 {
			for pm := a + 1; pm < a+n; pm++ {
				for pl := pm; pl > a && q.cmp(pl-1, pl) > 0; pl-- {
					q.swap(pl, pl-1)
				}
			}
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = q.med3(pl, pl+d, pl+2*d)
				pm = q.med3(pm-d, pm, pm+d)
				pn = q.med3(pn-2*d, pn-d, pn)
			}
			pm = q.med3(pl, pm, pn)
		}
		q.swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := q.cmp(pb, a)
				if r > 0 {
					break
				}
				if r == 0 {
					q.swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := q.cmp(pc, a)
				if r < 0 {
					break
				}
				if r == 0 {
					q.swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			q.swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		q.vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		q.vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !q.outside(a, a+r-1) {
			q.sort(a, r)
		}
		if r = pd - pc; r > 1 {
			a, n = pn-r, r
			if !q.outside(a, a+r-1) {
				continue
			}
		}
		return
	}
}
