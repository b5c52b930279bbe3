package geo

import (
	"slices"
	"testing"
)

// BenchmarkFilter is the store's arithmetic for scripts/bench.sh's
// GEOSEARCH (5 km around 13.9, 37.4 in its 10,000-member set): the area
// decoded, its covering ranges, and Test of every member they hold.
func BenchmarkFilter(b *testing.B) {
	var scores []float64
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		scores = append(scores, ScoreOf(lon, lat))
	}
	slices.Sort(scores)
	sh := Shape{Kind: KindCircle, Lon: 13.9, Lat: 37.4, Radius: 5, Conversion: 1000}
	var cands []float64
	for _, rg := range sh.ScanRanges(nil) {
		for _, s := range scores {
			if s >= float64(rg[0]) && s < float64(rg[1]) {
				cands = append(cands, s)
			}
		}
	}
	filter := sh.AppendFilter(nil)
	kept := 0
	for b.Loop() {
		f, _ := ParseFilter(filter)
		var buf [RangesCap][2]uint64
		f.ScanRanges(buf[:0])
		kept = 0
		for _, s := range cands {
			if _, _, in := f.Test(s); in {
				kept++
			}
		}
	}
	b.ReportMetric(float64(len(cands)), "candidates")
	b.ReportMetric(float64(kept), "kept")
}
