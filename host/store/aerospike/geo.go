package aerospike

import (
	"sort"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
)

// geoSearch is what decoding an OpMapGeoSearch needs: the area, in
// meters, the most items to keep (0: all), and how many client ops (one
// per score range, consecutive) answer it.
type geoSearch struct {
	shape geo.Shape
	limit int
	parts int
}

// translateGeoSearch translates an OpMapGeoSearch into a value-range read
// of each score range covering the area (geo.Shape.ScanRanges, at least
// one: the centre's cell), with keys and values: Aerospike has no geohash
// filter on map items, so the items are filtered here, after the read
// (decodeGeoSearch), with the arithmetic the memory store and the geo
// module use.
func translateGeoSearch(i int, op *codec.Op, p *plan) {
	if op.Return != codec.ReturnNone || op.Count < 0 || op.Value.Kind != codec.KindBytes {
		p.fail(codec.InvalidOperation, "OpMapGeoSearch needs an area, Count >= 0 and no return type")
		return
	}
	sh, ok := geo.ParseFilter(op.Value.Bytes)
	if !ok {
		p.fail(codec.InvalidOperation, "OpMapGeoSearch: malformed area")
		return
	}
	var rangesBuf [geo.RangesCap][2]uint64
	ranges := sh.ScanRanges(rangesBuf[:0])
	if len(ranges) == 0 {
		// Never so (the centre's cell meets the area), but the answer
		// needs a read to come from: an empty range.
		ranges = append(ranges, [2]uint64{0, 0})
	}
	g := &geoSearch{shape: sh, limit: int(min(op.Count, 1<<30)), parts: len(ranges)}
	for k, rg := range ranges {
		begin, end := float64(rg[0]), float64(rg[1])
		s := slot{bin: op.Bin, op: -1, entry: true, resp: true}
		if k == 0 {
			s.op, s.geo = i, g // the first answers for all
		}
		p.add(as.MapGetByValueRangeOp(op.Bin, begin, end, as.MapReturnType.KEY_VALUE), s)
	}
}

// decodeGeoSearch is an OpMapGeoSearch's result from the answers to its
// value-range reads, entries n to n+parts-1 of bin: each range's items in
// rank order (Aerospike answers a value range in key order), those inside
// the area laid out as geo.AppendPoint, up to the limit.
func decodeGeoSearch(g *geoSearch, bins as.BinMap, bin string, n int) codec.Value {
	var buf []byte
	kept := 0
	found := false
	var scratch [32]byte
	for k := range g.parts {
		if g.limit > 0 && kept >= g.limit {
			break
		}
		m := fromClient(entry(bins, bin, n+k))
		if m.Kind != codec.KindMap {
			continue // the bin is missing
		}
		found = true
		kv := m.List[:len(m.List)/2*2]
		sort.Stable(rankSorter(kv))
		for j := 0; j < len(kv); j += 2 {
			score := codec.ScoreOf(&kv[j+1])
			d, errBound, in := g.shape.Test(score)
			if !in {
				continue
			}
			buf = geo.AppendPoint(buf, score, d, errBound, codec.MemberBytes(&kv[j], &scratch))
			kept++
			if g.limit > 0 && kept >= g.limit {
				break
			}
		}
	}
	if !found {
		return codec.Nil
	}
	return codec.List(codec.Int(int64(kept)), codec.Bytes(buf))
}
