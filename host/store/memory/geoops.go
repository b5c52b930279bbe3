package memory

import (
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
)

// validateGeoSearch checks an OpMapGeoSearch's fields (codec.OpMapGeoSearch).
func validateGeoSearch(o *codec.Op) *opError {
	if o.Return != codec.ReturnNone || o.Count < 0 || o.Value.Kind != codec.KindBytes {
		return &opError{codec.InvalidOperation, "memory: OpMapGeoSearch needs an area, Count >= 0 and no return type"}
	}
	if _, ok := geo.ParseFilter(o.Value.Bytes); !ok {
		return &opError{codec.InvalidOperation, "memory: OpMapGeoSearch: malformed area"}
	}
	return nil
}

// geoSearch runs an OpMapGeoSearch on an existing map bin: the items of
// each score range covering the area (geo.Shape.ScanRanges), in rank order, those inside the area (geo.Shape.Test)
// laid out with their distances, up to o.Count of them. Its pair is in the
// response's previous list when there is one (cx.dst), as mapReply's.
func (cx *callCtx) geoSearch(m *omap, o *codec.Op) codec.Value {
	sh, _ := geo.ParseFilter(o.Value.Bytes) // validated
	var rangesBuf [geo.RangesCap][2]uint64
	ranges := sh.ScanRanges(rangesBuf[:0])
	limit := int(min(o.Count, 1<<30))
	r := m.byValue()
	// The kept items first, then the blob made at its size: one
	// allocation where growing it would copy it a few times.
	kept := cx.geo[:0]
	size := 0
	var cur ocursor
	for _, rg := range ranges {
		if limit > 0 && len(kept) >= limit {
			break
		}
		// The bounds as floats, as the module read them before the
		// store filtered: a cell of the longitude 180 overflow ends
		// past 2^53, rounded as Redis rounds it.
		hi := float64(rg[1])
		for cur.seekFloat(r, float64(rg[0])); ; cur.advance() {
			e := cur.item()
			if e == nil || !floatBelow(e, hi) {
				break
			}
			score := codec.ScoreOf(&e.v)
			d, errBound, in := sh.Test(score)
			if !in {
				continue
			}
			kept = append(kept, geoKept{e: e, score: score, dist: d, err: errBound})
			size += geo.PointHeader + len(e.k.Bytes) + 24 // room for a number's digits
			if limit > 0 && len(kept) >= limit {
				break
			}
		}
	}
	var buf []byte
	if len(kept) > 0 {
		buf = make([]byte, 0, size)
	}
	var scratch [32]byte
	for i := range kept {
		k := &kept[i]
		buf = geo.AppendPoint(buf, k.score, k.dist, k.err, codec.MemberBytes(&k.e.k, &scratch))
	}
	n := len(kept)
	clear(kept)
	cx.geo = kept[:0]
	out := cx.dst
	cx.dst = nil
	if cap(out) < 2 {
		out = make([]codec.Value, 2)
	}
	out = out[:2]
	out[0] = codec.Int(int64(n))
	out[1] = codec.Bytes(buf)
	return codec.Value{Kind: codec.KindList, List: out}
}

// geoKept is an item an OpMapGeoSearch keeps, with its score and
// distance.
type geoKept struct {
	e                *entry
	score, dist, err float64
}
