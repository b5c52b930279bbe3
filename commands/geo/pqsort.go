package main

// pqsort is Redis's partial quicksort (pqsort.c, after Bentley and
// McIlroy's "Engineering a Sort Function"), ported step for step: a search
// with COUNT sorts only the ranks [lrange, rrange] it answers, and the
// order it leaves members at equal distances in is this algorithm's, not a
// stable sort's.
func pqsort(v []point, cmp func(x, y *point) int, lrange, rrange int) {
	pqsortRange(v, 0, len(v), cmp, lrange, rrange)
}

// pqsortRange sorts v[a:a+n] as _pqsort does; positions are element
// indexes where the C code has byte pointers (its byte comparisons of the
// range bounds give the same answers on indexes).
func pqsortRange(v []point, a, n int, cmp func(x, y *point) int, lrange, rrange int) {
	swap := func(i, j int) { v[i], v[j] = v[j], v[i] }
	vecswap := func(i, j, k int) {
		for ; k > 0; k-- {
			swap(i, j)
			i++
			j++
		}
	}
	med3 := func(x, y, z int) int {
		if cmp(&v[x], &v[y]) < 0 {
			switch {
			case cmp(&v[y], &v[z]) < 0:
				return y
			case cmp(&v[x], &v[z]) < 0:
				return z
			}
			return x
		}
		switch {
		case cmp(&v[y], &v[z]) > 0:
			return y
		case cmp(&v[x], &v[z]) < 0:
			return x
		}
		return z
	}
	outside := func(l, r int) bool {
		return (lrange < l && rrange < l) || (lrange > r && rrange > r)
	}
	for {
		if n < 7 {
			for pm := a + 1; pm < a+n; pm++ {
				for pl := pm; pl > a && cmp(&v[pl-1], &v[pl]) > 0; pl-- {
					swap(pl, pl-1)
				}
			}
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := cmp(&v[pb], &v[a])
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(&v[pc], &v[a])
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !outside(a, a+r-1) {
			pqsortRange(v, a, r, cmp, lrange, rrange)
		}
		if r = pd - pc; r > 1 {
			a, n = pn-r, r
			if !outside(a, a+r-1) {
				continue
			}
		}
		return
	}
}
