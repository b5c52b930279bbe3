package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
	"github.com/respike/respike/guest-sdk/resp"
)

// benchSet is scripts/bench.sh's 10,000-member geo set as scores, sorted.
func benchSet() []float64 {
	var scores []float64
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		scores = append(scores, geo.ScoreOf(lon, lat))
	}
	slices.Sort(scores)
	return scores
}

// BenchmarkSearchPhases splits the guest's part of bench.sh's GEOSEARCH
// (5 km around 13.9, 37.4, COUNT 10 ASC WITHDIST) into its phases, without
// the store and the ABI: run it under GOOS=wasip1 to see WebAssembly's
// costs. The store's filter is geo's BenchmarkFilter.
func BenchmarkSearchPhases(b *testing.B) {
	scores := benchSet()
	newShape := func() geo.Shape {
		return geo.Shape{Kind: geo.KindCircle, Lon: 13.9, Lat: 37.4, Radius: 5, Conversion: 1000}
	}
	sh := newShape()
	ranges := slices.Clone(sh.ScanRanges(nil))
	// The store's answer: the members of the ranges inside the circle.
	f, _ := geo.ParseFilter(sh.AppendFilter(nil))
	var blob []byte
	kept := 0
	for _, rg := range ranges {
		for i, s := range scores {
			if s >= float64(rg[0]) && s < float64(rg[1]) {
				if d, e, in := f.Test(s); in {
					blob = geo.AppendPoint(blob, s, d, e, fmt.Appendf(nil, "geo:%05d", i))
					kept++
				}
			}
		}
	}
	res := &codec.Result{Values: []codec.Value{codec.List(codec.Int(int64(kept)), codec.Bytes(blob))}}
	b.Run("area", func(b *testing.B) {
		for b.Loop() {
			sh := newShape()
			areaBuf = sh.AppendFilter(areaBuf[:0])
		}
	})
	s := &search{sh: sh, sort: sortAsc, count: 10, withDist: true}
	var pts []point
	b.Run("collect", func(b *testing.B) {
		for b.Loop() {
			pts = s.collect(res)
		}
	})
	b.Logf("%d ranges, %d members kept", len(ranges), len(pts))
	order := make([]int32, len(pts))
	keys := make([]float64, len(pts))
	b.Run("order", func(b *testing.B) {
		for b.Loop() {
			// The points in the store's order (Redis's visit order), as
			// answer sorts them.
			for i := range order {
				order[i], keys[i] = int32(i), pts[i].dist
			}
			s.settleOrder(pts, order, keys)
		}
	})
	var w resp.Writer
	b.Run("reply", func(b *testing.B) {
		for b.Loop() {
			w.Reset(2)
			w.Array(10)
			for _, i := range order[:10] {
				w.Buf = appendMemberDist(w.Buf, pts[i].member, pts[i].dist/1000)
			}
		}
	})
}
