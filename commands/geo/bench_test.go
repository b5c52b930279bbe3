package main

import "testing"

// BenchmarkWithin is the per-member work of a 5 km search in the
// 10,000-member set of scripts/bench.sh over every member of Redis's
// cells (123), as before the narrowing to sub-cells.
func BenchmarkWithin(b *testing.B) {
	var scores []float64
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		scores = append(scores, scoreOf(lon, lat))
	}
	sh := shape{kind: circular, lon: 13.9, lat: 37.4, radius: 5, conversion: 1000}
	cells := sh.searchBoxes()
	var in []float64
	for _, s := range scores {
		for _, h := range cells {
			lo, hi := scoreRange(h)
			if !h.zero() && s >= float64(lo) && s < float64(hi) {
				in = append(in, s)
				break
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		for _, s := range in {
			lon, lat, _ := position(s)
			sh.within(lon, lat)
		}
	}
}

func BenchmarkPosition(b *testing.B) {
	s := scoreOf(13.9, 37.4)
	var sink float64
	for range b.N {
		lon, lat, _ := position(s)
		sink += lon + lat
	}
	_ = sink
}
