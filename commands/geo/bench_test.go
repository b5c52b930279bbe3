package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
)

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

// benchSet is scripts/bench.sh's 10,000-member geo set as scores, sorted.
func benchSet() []float64 {
	var scores []float64
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		scores = append(scores, scoreOf(lon, lat))
	}
	slices.Sort(scores)
	return scores
}

// BenchmarkSearchPhases splits bench.sh's GEOSEARCH (5 km around 13.9,
// 37.4, COUNT 10 ASC WITHDIST) into the guest's phases, without the store
// and the ABI: run it under GOOS=wasip1 to see WebAssembly's costs.
func BenchmarkSearchPhases(b *testing.B) {
	scores := benchSet()
	newShape := func() shape {
		return shape{kind: circular, lon: 13.9, lat: 37.4, radius: 5, conversion: 1000}
	}
	sh := newShape()
	ranges := slices.Clone(sh.scanRanges())
	var blobs [][]byte
	for _, rg := range ranges {
		var blob []byte
		for i, s := range scores {
			if s >= float64(rg[0]) && s <= float64(rg[1]) {
				key := codec.Bytes(fmt.Appendf(nil, "geo:%05d", i))
				val := codec.Float(s)
				blob = codec.AppendReplyItem(blob, codec.ReturnScoredKeys, &key, &val)
			}
		}
		blobs = append(blobs, blob)
	}
	for _, phase := range []struct {
		name string
		run  func(sh *shape)
	}{
		{"scanRanges", func(sh *shape) { sh.scanRanges() }},
		{"boundingBox", func(sh *shape) { sh.boundingBox() }},
		{"searchBoxes", func(sh *shape) { sh.searchBoxes() }},
		{"band", func(sh *shape) { sh.band() }},
	} {
		b.Run(phase.name, func(b *testing.B) {
			for b.Loop() {
				sh := newShape()
				phase.run(&sh)
			}
		})
	}
	pts := make([]point, 0, 200)
	b.Run("collect", func(b *testing.B) {
		for b.Loop() {
			pts = pts[:0]
			sh.circleSetup()
			for _, blob := range blobs {
				pts = sh.collectCircle(blob, pts, 0)
			}
		}
	})
	b.Logf("%d ranges, %d members kept", len(ranges), len(pts))
	s := &search{sh: sh, sort: sortAsc, count: 10, withDist: true}
	order := make([]int32, len(pts))
	b.Run("order", func(b *testing.B) {
		for b.Loop() {
			for i := range order {
				order[i] = int32(i)
			}
			s.settleOrder(pts, order)
		}
	})
	var w resp.Writer
	b.Run("reply", func(b *testing.B) {
		for b.Loop() {
			w.Reset(2)
			w.Array(10)
			for _, i := range order[:10] {
				p := &pts[i]
				w.Array(2)
				w.Bulk(p.member)
				w.Buf = appendDistBulk(w.Buf, p.dist/1000)
			}
		}
	})
}
