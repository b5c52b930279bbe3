package memory

import (
	"strconv"

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
	var buf []byte
	kept := 0
	sel := cx.sel[:0]
	var scratch [32]byte
	for _, rg := range ranges {
		if limit > 0 && kept >= limit {
			break
		}
		// The bounds as floats, as the module read them before the
		// store filtered: a cell of the longitude 180 overflow ends
		// past 2^53, rounded as Redis rounds it.
		lo := valueBound(r, &codec.Value{Kind: codec.KindFloat, Float: float64(rg[0])})
		hi := valueBound(r, &codec.Value{Kind: codec.KindFloat, Float: float64(rg[1])})
		sel = r.appendRange(sel[:0], lo, hi)
		for _, e := range sel {
			score := codec.ScoreOf(&e.v)
			d, errBound, in := sh.Test(score)
			if !in {
				continue
			}
			if buf == nil {
				buf = make([]byte, 0, 16*(geo.PointHeader+16))
			}
			buf = geo.AppendPoint(buf, score, d, errBound, keyBytes(&e.k, &scratch))
			kept++
			if limit > 0 && kept >= limit {
				break
			}
		}
	}
	clear(sel)
	cx.sel = sel[:0]
	out := cx.dst
	cx.dst = nil
	if cap(out) < 2 {
		out = make([]codec.Value, 2)
	}
	out = out[:2]
	out[0] = codec.Int(int64(kept))
	out[1] = codec.Bytes(buf)
	return codec.Value{Kind: codec.KindList, List: out}
}

// keyBytes is a map key as a member's bytes, as codec.AppendBulks writes
// an item: bytes and strings as they are, numbers in decimal (the
// ReturnScoredKeys layout's rule).
func keyBytes(k *codec.Value, scratch *[32]byte) []byte {
	switch k.Kind {
	case codec.KindBytes, codec.KindStr:
		return k.Bytes
	case codec.KindInt:
		return strconv.AppendInt(scratch[:0], k.Int, 10)
	case codec.KindFloat:
		return strconv.AppendFloat(scratch[:0], k.Float, 'g', -1, 64)
	}
	return nil
}
