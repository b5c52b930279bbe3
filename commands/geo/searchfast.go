package main

import (
	"math"
	"slices"
	"unsafe"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
)

// The common sorted search without STORE (bench.sh's: COUNT 10 ASC
// WITHDIST of a few tens of points) is answered straight from the store's
// packed points, without collect's points, the full sort and the settling
// passes of the general path (collect, answer): one pass over the points
// keeps the COUNT nearest (farthest with DESC) in a sorted window, and the
// reply reads each kept point's fields from the packed points by its
// offset. In WebAssembly every load and store is a bounds check and every
// jump a trip through the function's dispatch loop, each call a trip
// through the stack in memory: the general path's collect, order, settle,
// sort and reply cost ~60k instructions for bench.sh's 20 points and 10
// answers, this one a fraction of that (docs/performance.md).
//
// The window orders the points by a key of one word: the distance's bits
// (flipped for DESC), its 12 low bits replaced by the point's index
// (where its offset is kept). The estimates and that truncation decide the
// answer only when no two of the kept points, and no kept point and a
// point left out, are within twice the largest error bound of each other:
// then the exact distances (Redis's) order them the same way, and all
// differ, so any correct sort, Redis's pqsort and its stable qsort
// included, answers these points in this order. Otherwise (ties, points
// closer than ~1e-13 of their distance, more than fastMax points to
// answer or more than 4096 to look at), the general path runs, as it
// always did.

// noFast turns the fast path off: the tests compare the two paths.
var noFast bool

// fastMax is the largest answer the fast path sorts (its window's size).
const fastMax = 64

// A key's low bits hold the point's index.
const (
	idxBits = 12
	idxMask = 1<<idxBits - 1
)

// The fast path's scratch: the window's keys, and each point's offset in
// the packed points by its index.
var (
	fastWin  [fastMax]uint64
	fastOffs [1 << idxBits]int32
)

// selectFast keeps in fastWin the keys of the want (1 to fastMax) points
// of blob (total packed points, geo.AppendPoint's layout) with the
// smallest distances (largest with desc), in that order, and reports how
// many it kept (want, or total when fewer) and whether that selection and
// order are the exact distances' (see above); when not, the caller takes
// the general path.
func selectFast(blob []byte, total, want int, desc bool) (kept int, ok bool) {
	if total == 0 {
		return 0, true
	}
	if want < 1 || want > fastMax || total > 1<<idxBits {
		return 0, false
	}
	flip := uint64(0)
	if desc {
		flip = ^uint64(0)
	}
	base := unsafe.Pointer(unsafe.SliceData(blob))
	size := len(blob)
	win, offs := &fastWin, &fastOffs
	m := 0
	last := uint64(0)    // the window's last key, once it is full
	minOut := ^uint64(0) // the smallest key left out
	maxErr := 0.0        // the largest error bound
	for i, off := 0, 0; i < total; i++ {
		if off > size-geo.PointHeader {
			return 0, false // truncated, which no store makes
		}
		end := off + geo.PointHeader + int(*(*uint32)(unsafe.Add(base, off+24)))
		if end > size {
			return 0, false
		}
		bits := *(*uint64)(unsafe.Add(base, off+8))
		if e := *(*float64)(unsafe.Add(base, off+16)); !(e <= maxErr) {
			if !(e > maxErr) {
				return 0, false // NaN
			}
			maxErr = e
		}
		if bits >= 0x7ff0000000000000 {
			return 0, false // negative, infinite or NaN: no store's distance
		}
		key := (bits^flip)&^idxMask | uint64(i)
		offs[i&idxMask] = int32(off)
		off = end
		if m == want {
			if key > last {
				minOut = min(minOut, key)
				continue
			}
			minOut = min(minOut, last)
			m--
		}
		// Insert after the keys below it: two places a turn, as
		// sortByKey.
		j := m
		for ; j > 1 && win[(j-2)&(fastMax-1)] > key; j -= 2 {
			win[j&(fastMax-1)], win[(j-1)&(fastMax-1)] = win[(j-1)&(fastMax-1)], win[(j-2)&(fastMax-1)]
		}
		if j > 0 && win[(j-1)&(fastMax-1)] > key {
			win[j&(fastMax-1)] = win[(j-1)&(fastMax-1)]
			j--
		}
		win[j&(fastMax-1)] = key
		if m++; m == want {
			last = win[(m-1)&(fastMax-1)]
		}
	}
	// The exact distances are within maxErr of the distances, which the
	// keys truncate: the kept ones, read back whole, must be more than
	// 2*maxErr apart in the key order, and the nearest left out (at least
	// its truncated key's distance; at most, with DESC) more than 2*maxErr
	// past the last kept. A NaN fails every comparison.
	gap := 2 * maxErr
	dist := func(key uint64) float64 {
		d := *(*float64)(unsafe.Add(base, int(offs[key&idxMask])+8))
		if desc {
			return -d
		}
		return d
	}
	prev := dist(win[0])
	for k := 1; k < m; k++ {
		d := dist(win[k&(fastMax-1)])
		if !(d-prev > gap) {
			return 0, false
		}
		prev = d
	}
	if minOut != ^uint64(0) {
		out := math.Float64frombits(minOut &^ idxMask)
		if desc {
			out = -math.Float64frombits(^minOut | idxMask) // its bits, the low ones all set
		}
		if !(out-prev > gap) {
			return 0, false
		}
	}
	return m, true
}

// answerFast answers a search without STORE, sorted, from its read r when
// selectFast decides it, and reports whether it did.
func (s *search) answerFast(c *sdk.Ctx, r *codec.Result) bool {
	l := r.Values[0].List
	if len(l) != 2 {
		return false
	}
	total := int(l[0].Int)
	want := total
	if s.count > 0 && int64(want) > s.count {
		want = int(s.count)
	}
	blob := l[1].Bytes
	n, ok := selectFast(blob, total, want, s.sort == sortDesc)
	if !ok {
		return false
	}
	w := c.Reply()
	w.Array(n)
	if s.withDist && !s.withHash && !s.withCoord {
		w.Buf = appendDistsFast(w.Buf, blob, n, s.sh.Conversion, s.sh.Lon, s.sh.Lat)
		return true
	}
	for k := range n {
		off := int(fastOffs[fastWin[k&(fastMax-1)]&idxMask])
		ml := int(load32(blob, off+24))
		p := point{
			member: blob[off+geo.PointHeader : off+geo.PointHeader+ml : off+geo.PointHeader+ml],
			score:  math.Float64frombits(load64(blob, off)),
			dist:   math.Float64frombits(load64(blob, off+8)),
			err:    math.Float64frombits(load64(blob, off+16)),
		}
		if s.withDist && p.err != 0 && !clearlyRounds(p.dist/s.sh.Conversion, p.err/s.sh.Conversion) {
			s.exact(&p)
		}
		p.dist /= s.sh.Conversion
		s.replyPoint(c, &p)
	}
	return true
}

// replyPoint writes one point of a search's reply with its options.
func (s *search) replyPoint(c *sdk.Ctx, p *point) {
	w := c.Reply()
	opts := int(kit.B2I(s.withDist) + kit.B2I(s.withHash) + kit.B2I(s.withCoord))
	if opts > 0 {
		w.Array(opts + 1)
	}
	w.Bulk(p.member)
	if s.withDist {
		replyDistance(c, p.dist)
	}
	if s.withHash {
		w.Int(int64(p.score))
	}
	if s.withCoord {
		lon, lat := geo.Position(p.score)
		w.Array(2)
		replyCoord(c, lon)
		replyCoord(c, lat)
	}
}

// appendDistsFast appends the n points selectFast kept (of blob) with
// their distances (exact where the estimate could print otherwise, from
// the centre lon, lat; in the unit conv) as appendMemberDist writes each:
// one call for all of them. A member of 8 to 16 bytes and a distance
// below 10,000 of the unit (1 to 4 digits before the point), the reply
// of most searches in kilometres or miles and of short ones in metres, is
// written as a few 8-byte words (at increasing offsets, each later one
// overwriting what an earlier one wrote past its own bytes), where
// appendMemberDist writes it byte by byte through a scratch array and
// calls fixed4 and memmove. Anything else goes to appendMemberDist.
func appendDistsFast(dst, blob []byte, n int, conv, lon, lat float64) []byte {
	for k := range n {
		off := int(fastOffs[fastWin[k&(fastMax-1)]&idxMask])
		ml := int(load32(blob, off+24))
		member := blob[off+geo.PointHeader : off+geo.PointHeader+ml : off+geo.PointHeader+ml]
		d := math.Float64frombits(load64(blob, off+8)) / conv
		// An estimate that could print otherwise (clearlyRounds, inline)
		// replaced by the exact distance.
		e := math.Float64frombits(load64(blob, off+16))
		d4 := d * 10000
		if kit.B2I(e != 0)&kit.B2I(!(math.Abs(d4-math.Floor(d4)-0.5) > e/conv*10000+1e-6)) != 0 {
			plon, plat := geo.Position(math.Float64frombits(load64(blob, off)))
			d = geo.Distance(lon, lat, plon, plat) / conv
		}
		// One test for the fast form (a taken branch is a trip through
		// the dispatch loop, which a not-taken one is not): the
		// conditions as bits.
		x := math.RoundToEven(d * 10000)
		if kit.B2I(ml < 8)|kit.B2I(ml > 16)|kit.B2I(!(x >= 0))|kit.B2I(!(x < 1e8)) != 0 {
			dst = appendMemberDist(dst, member, d) // NaN, or 10,000 or more once rounded
			continue
		}
		u := uint32(x)
		// The text "I.FFFF", I's k digits (1 to 4), the point and four
		// decimals, as a little-endian word (first byte lowest) and, for
		// k = 4, the last decimal past it; I's leading zeros shifted out.
		q := uint32(uint64(u) * 0xD1B71759 >> 45) // u / 10000
		frac := digits4(u - q*10000)
		k := 1 + uint(kit.B2I(q >= 10)+kit.B2I(q >= 100)+kit.B2I(q >= 1000))
		t := digits4(q)>>(32-8*k) | '.'<<(8*k) | frac<<(8*(k+1))
		tl := int(k) + 5 // the text's length, 6 to 9
		// *2\r\n$<ml>\r\n <member> \r\n$<tl>\r\n <text> \r\n: the headers
		// of the array and the member in one word (ml < 10) or two
		// overlapping ones; the text's last byte and the CRLF in one
		// word.
		const head1 = '*' | '2'<<8 | '\r'<<16 | '\n'<<24 | '$'<<32 | '\r'<<48 | '\n'<<56
		const head2a = '*' | '2'<<8 | '\r'<<16 | '\n'<<24 | '$'<<32 | '1'<<40 | '\r'<<56
		const head2b = '2' | '\r'<<8 | '\n'<<16 | '$'<<24 | '1'<<32 | '\r'<<48 | '\n'<<56
		long := ml >= 10
		h0, h1 := head1|uint64('0'+ml)<<40, head1|uint64('0'+ml)<<40
		if long {
			h0 = head2a | uint64('0'+ml-10)<<48
		}
		if long {
			h1 = head2b | uint64('0'+ml-10)<<40
		}
		hl := 8 + int(kit.B2I(long))
		lastText := t >> (8 * uint(tl-1) & 63) & 0xff
		if tl == 9 {
			lastText = frac >> 24
		}
		need := hl + ml + 6 + tl + 2
		l := len(dst)
		dst = slices.Grow(dst, need+8)
		p := unsafe.Pointer(unsafe.SliceData(dst[l : l+need+8]))
		store64(p, 0, h0)
		store64(p, hl-8, h1)
		store64(p, hl, load64(member, 0))
		store64(p, hl+ml-8, load64(member, ml-8))
		y := hl + ml
		store64(p, y, '\r'|'\n'<<8|'$'<<16|uint64('0'+tl)<<24|'\r'<<32|'\n'<<40|t<<48)
		store64(p, y+6, t)
		store64(p, y+5+tl, lastText|'\r'<<8|'\n'<<16)
		dst = dst[:l+need]
	}
	return dst
}

// digits4 is the four decimal digits of x (below 10,000) as a
// little-endian word of ASCII, the first digit lowest.
func digits4(x uint32) uint64 {
	hi := x * 5243 >> 19 // x / 100, exact below 43,699
	lo := x - hi*100
	h1 := hi * 205 >> 11 // hi / 10, exact below 1029
	l1 := lo * 205 >> 11
	return uint64(h1) | uint64(hi-h1*10)<<8 | uint64(l1)<<16 | uint64(lo-l1*10)<<24 | 0x30303030
}

// store64 stores v little-endian at p+off (the caller has made room).
func store64(p unsafe.Pointer, off int, v uint64) {
	*(*uint64)(unsafe.Add(p, off)) = v
}
