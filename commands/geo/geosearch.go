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

func init() {
	ro := []string{"readonly"}
	rw := []string{"write", "denyoom"}
	// GEORADIUS and GEORADIUSBYMEMBER may write a key their manifest
	// cannot place (STORE dst): movablekeys, as Redis says, so that a
	// pipeline never runs them beside a command on that key.
	rwm := []string{"write", "denyoom", "movablekeys"}
	cmd := func(name string, arity int, flags []string, last int, since, summary string, mode int) sdk.Command {
		return sdk.Command{
			Name: name, Arity: arity, Flags: flags, FirstKey: 1, LastKey: last, Step: 1,
			Group: "geo", Since: since, Summary: summary,
			Run: func(c *sdk.Ctx) { searchStart(c, mode) },
		}
	}
	sdk.Register(
		cmd("geosearch", -7, ro, 1, "6.2.0", "Queries a geospatial index for members inside an area of a box or a circle.", modeSearch),
		cmd("geosearchstore", -8, rw, 2, "6.2.0", "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.", modeSearch|modeSearchStore),
		cmd("georadius", -6, rwm, 1, "3.2.0", "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.", modeCoords),
		cmd("georadiusbymember", -5, rwm, 1, "3.2.0", "Queries a geospatial index for members within a distance from a member, optionally stores the result.", modeMember),
		cmd("georadius_ro", -6, ro, 1, "3.2.10", "Returns members from a geospatial index that are within a distance from a coordinate.", modeCoords|modeNoStore),
		cmd("georadiusbymember_ro", -5, ro, 1, "3.2.10", "Returns members from a geospatial index that are within a distance from a member.", modeMember|modeNoStore),
	)
}

// The variants of Redis's georadiusGeneric.
const (
	modeCoords      = 1 << iota // search around a position (GEORADIUS)
	modeMember                  // search around a member (GEORADIUSBYMEMBER)
	modeNoStore                 // no STORE or STOREDIST (the _RO forms)
	modeSearch                  // GEOSEARCH's arguments
	modeSearchStore             // GEOSEARCHSTORE
)

// Sort orders.
const (
	sortNone = iota
	sortAsc
	sortDesc
)

// search is a parsed search command.
type search struct {
	mode      int
	src       int // the argument index of the geo set
	store     int // the argument index of the destination, or 0
	storeDist bool
	withDist  bool
	withHash  bool
	withCoord bool
	sort      int
	any       bool
	count     int64
	sh        geo.Shape
}

// What parsing a search command decided.
const (
	parsedSearch  = iota // search s.sh
	parsedError          // answer msg
	parsedMissing        // the key does not exist: an empty answer
)

// keyView is what the parser knows of the source key: whether it exists,
// and how to find a member's position.
type keyView struct {
	exists bool
	lookup func(member []byte) (lon, lat float64, found bool)
}

// parse is georadiusGeneric's argument handling, in Redis's order, so
// that the same error wins; the source's existence and members come from
// kv. It fills s, the caller's (a search parsed into the caller's
// variable is not allocated).
func parse(c *sdk.Ctx, mode int, kv keyView, s *search) (outcome int, msg string) {
	*s = search{mode: mode, src: 1}
	var base int
	switch {
	case mode&modeCoords != 0:
		base = 6
		s.sh.Kind = geo.KindCircle
		lon, lat, m := parseLonLat(c.Arg(2), c.Arg(3))
		if m != "" {
			return parsedError, m
		}
		s.sh.Lon, s.sh.Lat = lon, lat
		if m := parseDistance(c.Arg(4), c.Arg(5), &s.sh); m != "" {
			return parsedError, m
		}
	case mode&modeMember != 0 && !kv.exists:
		base = 5
	case mode&modeMember != 0:
		base = 5
		s.sh.Kind = geo.KindCircle
		lon, lat, found := kv.lookup(c.Arg(2))
		if !found {
			return parsedError, errNoMember
		}
		s.sh.Lon, s.sh.Lat = lon, lat
		if m := parseDistance(c.Arg(3), c.Arg(4), &s.sh); m != "" {
			return parsedError, m
		}
	default: // modeSearch
		base = 2
		if mode&modeSearchStore != 0 {
			base = 3
			s.src, s.store = 2, 1
		}
	}
	var fromMember, fromLoc, byRadius, byBox bool
	remaining := c.NArg() - base
	for i := 0; i < remaining; i++ {
		arg := c.Arg(base + i)
		next := func(k int) []byte { return c.Arg(base + i + k) }
		kw := keyword(arg)
		switch {
		case kw == kwWithDist:
			s.withDist = true
		case kw == kwWithHash:
			s.withHash = true
		case kw == kwWithCoord:
			s.withCoord = true
		case kw == kwAny:
			s.any = true
		case kw == kwAsc:
			s.sort = sortAsc
		case kw == kwDesc:
			s.sort = sortDesc
		case kw == kwCount && i+1 < remaining:
			n, ok := kit.ParseInt(next(1))
			if !ok {
				return parsedError, kit.NotInt
			}
			if n <= 0 {
				return parsedError, "ERR COUNT must be > 0"
			}
			s.count = n
			i++
		case kw == kwStore && i+1 < remaining && mode&(modeNoStore|modeSearch) == 0:
			s.store, s.storeDist = base+i+1, false
			i++
		case kw == kwStoreDist && i+1 < remaining && mode&(modeNoStore|modeSearch) == 0:
			s.store, s.storeDist = base+i+1, true
			i++
		case kw == kwStoreDist && mode&modeSearch != 0 && mode&modeSearchStore != 0:
			s.storeDist = true
		case kw == kwFromMember && i+1 < remaining && mode&modeSearch != 0 && !fromLoc:
			if kv.exists {
				lon, lat, found := kv.lookup(next(1))
				if !found {
					return parsedError, errNoMember
				}
				s.sh.Lon, s.sh.Lat = lon, lat
			}
			fromMember = true
			i++
		case kw == kwFromLonLat && i+2 < remaining && mode&modeSearch != 0 && !fromMember:
			lon, lat, m := parseLonLat(next(1), next(2))
			if m != "" {
				return parsedError, m
			}
			s.sh.Lon, s.sh.Lat = lon, lat
			fromLoc = true
			i += 2
		case kw == kwByRadius && i+2 < remaining && mode&modeSearch != 0 && !byBox:
			if m := parseDistance(next(1), next(2), &s.sh); m != "" {
				return parsedError, m
			}
			s.sh.Kind = geo.KindCircle
			byRadius = true
			i += 2
		case kw == kwByBox && i+3 < remaining && mode&modeSearch != 0 && !byRadius:
			if m := parseBox(next(1), next(2), next(3), &s.sh); m != "" {
				return parsedError, m
			}
			s.sh.Kind = geo.KindBox
			byBox = true
			i += 3
		default:
			return parsedError, kit.Syntax
		}
	}
	if s.store != 0 && (s.withDist || s.withHash || s.withCoord) {
		what := "STORE option in GEORADIUS"
		if mode&modeSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		return parsedError, "ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
	}
	if mode&modeSearch != 0 && !fromMember && !fromLoc {
		return parsedError, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(c.Arg(0))
	}
	if mode&modeSearch != 0 && !byRadius && !byBox {
		return parsedError, "ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(c.Arg(0))
	}
	if s.any && s.count == 0 {
		return parsedError, "ERR the ANY argument requires COUNT argument"
	}
	if !kv.exists {
		return parsedMissing, ""
	}
	if s.count != 0 && s.sort == sortNone && !s.any {
		s.sort = sortAsc
	}
	return parsedSearch, ""
}

// The option keywords of the search commands.
const (
	kwNone = iota
	kwWithDist
	kwWithHash
	kwWithCoord
	kwAny
	kwAsc
	kwDesc
	kwCount
	kwStore
	kwStoreDist
	kwFromMember
	kwFromLonLat
	kwByRadius
	kwByBox
)

// keyword is the option an argument names (any case), or kwNone: its
// bytes folded into two words (foldKey) compared with the keys of the
// candidates of its length, where parse would try up to thirteen
// byte-wise comparisons (each a loop of loads and branches in
// WebAssembly). The candidates are compared one after the other, not in
// a loop over an array of them: each loop turn is a trip through the
// function's dispatch loop.
func keyword(arg []byte) int {
	var a, b, c int
	switch len(arg) {
	case 3:
		a, b = kwAny, kwAsc
	case 4:
		a = kwDesc
	case 5:
		a, b, c = kwCount, kwStore, kwByBox
	case 8:
		a, b, c = kwWithDist, kwWithHash, kwByRadius
	case 9:
		a, b = kwWithCoord, kwStoreDist
	case 10:
		a, b = kwFromMember, kwFromLonLat
	default:
		return kwNone
	}
	key := foldKey(arg)
	switch key {
	case keywordKeys[a]:
		return a
	case keywordKeys[b]:
		return b
	case keywordKeys[c]:
		return c
	}
	return kwNone
}

var keywords = [...]string{
	kwWithDist: "withdist", kwWithHash: "withhash", kwWithCoord: "withcoord", kwAny: "any",
	kwAsc: "asc", kwDesc: "desc", kwCount: "count", kwStore: "store", kwStoreDist: "storedist",
	kwFromMember: "frommember", kwFromLonLat: "fromlonlat", kwByRadius: "byradius", kwByBox: "bybox",
}

// keywordKeys is foldKey of each keyword; kwNone's is a key that no
// argument of a keyword's length folds to (its second word would need
// eight bytes of 0xff past the first eight).
var keywordKeys = func() (keys [len(keywords)][2]uint64) {
	for k, w := range keywords {
		keys[k] = foldKey([]byte(w))
	}
	keys[kwNone] = [2]uint64{^uint64(0), ^uint64(0)}
	return keys
}()

// foldKey packs the bytes of b (3 to 16) into two little-endian words,
// each byte ORed with 0x20: for the letters of the keywords that is ASCII
// case folding, and a byte that is not a letter of either case never
// folds onto a letter, so two arguments of one length have equal keys
// exactly when they are equal without regard to case. The words are
// loaded whole, a short tail as the top of a word that overlaps what is
// already loaded (ORing a byte into itself changes nothing): no loop
// over the bytes. A shift by 64 is 0 in Go, which an 8-byte argument's
// second word relies on.
func foldKey(b []byte) [2]uint64 {
	const fold = 0x2020202020202020
	n := len(b)
	var lo, hi uint64
	switch {
	case n >= 8:
		sh := uint(16-n) * 8
		lo = load64(b, 0) | fold
		hi = (load64(b, n-8) | fold) >> sh
	case n >= 4:
		sh := uint(n-4) * 8
		lo = uint64(load32(b, 0)|0x20202020) | uint64(load32(b, n-4)|0x20202020)<<sh
	default:
		for i := range n {
			lo |= uint64(b[i]|0x20) << (8 * i)
		}
	}
	return [2]uint64{lo, hi}
}

// parseDistance is extractDistanceOrReply: a radius and its unit.
func parseDistance(radius, unit []byte, sh *geo.Shape) string {
	r, ok := kit.ParseDouble(radius)
	if !ok {
		return "ERR need numeric radius"
	}
	if r < 0 {
		return errNegRadius
	}
	sh.Radius = r
	if sh.Conversion = parseUnit(unit); sh.Conversion == 0 {
		return errUnit
	}
	return ""
}

// parseBox is extractBoxOrReply: a width, a height and their unit.
func parseBox(width, height, unit []byte, sh *geo.Shape) string {
	w, ok := kit.ParseDouble(width)
	if !ok {
		return "ERR need numeric width"
	}
	h, ok := kit.ParseDouble(height)
	if !ok {
		return "ERR need numeric height"
	}
	if h < 0 || w < 0 {
		return errNegBox
	}
	sh.Width, sh.Height = w, h
	if sh.Conversion = parseUnit(unit); sh.Conversion == 0 {
		return errUnit
	}
	return ""
}

// searchStart parses the command as if the key existed, noting the member
// a search around a member needs. Without one, it reads the covering
// cells at once (searchRead), or, when an argument is wrong, only the
// key's type, so that WRONGTYPE wins as in Redis. With one, it reads the
// member's score first, then parses again with what it found.
func searchStart(c *sdk.Ctx, mode int) {
	var members [][]byte // every member the parser looked up (FROMMEMBER may repeat)
	stub := keyView{exists: true, lookup: func(m []byte) (float64, float64, bool) {
		members = append(members, m)
		return 0, 0, true
	}}
	var s search
	outcome, msg := parse(c, mode, stub, &s)
	src := c.Arg(1)
	if mode&modeSearchStore != 0 {
		src = c.Arg(2)
	}
	if members != nil {
		readMembers(c, src, members, func(c *sdk.Ctx) {
			r := c.Result(0)
			if r.Code != codec.OK && r.Code != codec.NotFound {
				kit.GuardFailed(c, r)
				return
			}
			var scores map[string]float64
			if r.Code == codec.OK {
				scores = scoresByMember(r.Value(0).List)
			}
			var s search
			outcome, msg := parse(c, mode, keyView{exists: r.Code == codec.OK, lookup: func(m []byte) (float64, float64, bool) {
				sc, found := scores[string(m)]
				if !found {
					return 0, 0, false
				}
				lon, lat := geo.Position(sc)
				return lon, lat, true
			}}, &s)
			switch outcome {
			case parsedError:
				c.Error(msg)
			case parsedMissing:
				s.answer(c, nil, nil)
			default:
				s.read(c)
			}
		})
		return
	}
	if outcome == parsedError {
		readMembers(c, src, nil, func(c *sdk.Ctx) {
			if r := c.Result(0); r.Code != codec.OK && r.Code != codec.NotFound {
				kit.GuardFailed(c, r)
				return
			}
			c.Error(msg)
		})
		return
	}
	s.read(c)
}

// read reads the members inside the search area, the store covering it
// with score ranges and filtering their members (codec.OpMapGeoSearch),
// in one operate on the source, and (to store) the destination beside it.
// What answering needs travels to the next step in c.N (park), which is a
// plain function: a closure holding s would be two allocations per
// search, and the guest's garbage collector a tenth of its work.
func (s *search) read(c *sdk.Ctx) {
	areaBuf = s.sh.AppendFilter(areaBuf[:0])
	var limit int64
	if s.any {
		limit = s.count // stop where Redis stops: after COUNT members in its visit order
	}
	c.Record(c.Arg(s.src)).Guard(codec.TypeZSet).MapGeoSearch(codec.BinValue, areaBuf, limit)
	if s.store != 0 {
		c.Record(c.Arg(s.store)).Get("") // the destination (kit.DestStore)
	}
	s.park(c)
	c.Exec(searchRead)
}

// searchRead answers a search from its read.
func searchRead(c *sdk.Ctx) {
	var s search
	s.unpark(c)
	r := c.Result(0)
	var dst *codec.Result
	if s.store != 0 {
		dst = c.Result(1)
	}
	switch r.Code {
	case codec.OK:
		if s.store == 0 && s.sort != sortNone && !noFast && s.answerFast(c, r) {
			return
		}
	case codec.NotFound:
		s.answer(c, nil, dst)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	s.answer(c, s.collect(r), dst)
}

// Bits of park's first word.
const (
	parkStoreDist = 1 << (iota + 8)
	parkWithDist
	parkWithHash
	parkWithCoord
	parkAny
	parkSortShift = iota + 8 // two bits
)

// park keeps in c.N what answering the search needs after its read: the
// options, the argument indexes, COUNT, and the centre and the unit
// (exact distances and the reply's unit). N[0]: the mode (its low 8
// bits), the park flags and the order; N[1] and N[2]: the source's and
// the destination's argument indexes; N[3]: COUNT; N[4] to N[6]: the
// centre's longitude and latitude and the unit's size, as float64 bits.
func (s *search) park(c *sdk.Ctx) {
	// Straight-line flag bits (b2i compiles to a select): a loop over
	// the five options was five turns and five branches in WebAssembly.
	w := int64(s.mode) | int64(s.sort)<<parkSortShift |
		kit.B2I(s.storeDist)*parkStoreDist | kit.B2I(s.withDist)*parkWithDist | kit.B2I(s.withHash)*parkWithHash |
		kit.B2I(s.withCoord)*parkWithCoord | kit.B2I(s.any)*parkAny
	c.N[0], c.N[1], c.N[2], c.N[3] = w, int64(s.src), int64(s.store), s.count
	c.N[4] = int64(math.Float64bits(s.sh.Lon))
	c.N[5] = int64(math.Float64bits(s.sh.Lat))
	c.N[6] = int64(math.Float64bits(s.sh.Conversion))
}

// unpark is park's inverse, into a zero s.
func (s *search) unpark(c *sdk.Ctx) {
	w := c.N[0]
	s.mode, s.sort = int(w&0xff), int(w>>parkSortShift&3)
	s.storeDist, s.withDist = w&parkStoreDist != 0, w&parkWithDist != 0
	s.withHash, s.withCoord, s.any = w&parkWithHash != 0, w&parkWithCoord != 0, w&parkAny != 0
	s.src, s.store, s.count = int(c.N[1]), int(c.N[2]), c.N[3]
	s.sh.Lon = math.Float64frombits(uint64(c.N[4]))
	s.sh.Lat = math.Float64frombits(uint64(c.N[5]))
	s.sh.Conversion = math.Float64frombits(uint64(c.N[6]))
}

// areaBuf is scratch storage for the encoded area, which the call's
// builder reads when the op is added.
var areaBuf []byte

// point is a member the store kept inside the area. dist is exact
// (Redis's) when err is 0, else an estimate within err of it.
type point struct {
	member []byte
	score  float64
	dist   float64
	err    float64
}

// Scratch storage of the search being answered, reused from one search to
// the next: a search runs collect and answer in one step (no wait in
// between), so no two searches of an instance use them at once.
var (
	ptsBuf   []point
	orderBuf []int32
	keysBuf  []float64
)

// collect reads the points the store kept (codec.OpMapGeoSearch's Int(how
// many) and packed points), in the order Redis visits them.
func (s *search) collect(r *codec.Result) []point {
	l := r.Values[0].List
	if len(l) != 2 {
		return nil // the bin is missing
	}
	total := int(l[0].Int)
	pts := ptsBuf[:0]
	if cap(pts) < total {
		pts = make([]point, 0, total)
		ptsBuf = pts
	}
	blob := l[1].Bytes
	for off := 0; len(pts) < total; {
		if off+geo.PointHeader > len(blob) {
			break // truncated, which no store makes
		}
		end := off + geo.PointHeader + int(load32(blob, off+24))
		if end > len(blob) || end < off {
			break
		}
		pts = pts[:len(pts)+1]
		p := &pts[len(pts)-1]
		p.score = math.Float64frombits(load64(blob, off))
		p.dist = math.Float64frombits(load64(blob, off+8))
		p.err = math.Float64frombits(load64(blob, off+16))
		p.member = blob[off+geo.PointHeader : end : end]
		off = end
	}
	return pts
}

// answer sorts, cuts and replies with or stores the points (nil for a
// missing key). dst is the destination's all-bins read, when storing.
func (s *search) answer(c *sdk.Ctx, pts []point, dst *codec.Result) {
	defer clear(pts) // the scratch keeps no member alive
	n := len(pts)
	if s.count > 0 && int64(n) > s.count {
		n = int(s.count)
	}
	// The points in answer order, as indexes: sorting them moves four
	// bytes where a point is 48 (a memory.copy each in WebAssembly), and
	// their distances beside them (keys[k] is the distance of
	// pts[order[k]]), which the sort compares without going through the
	// points. (Filled in collect's loop instead, they cost more, not
	// less: collect grew by 8.3k instructions, answer shrank by 5.3k;
	// docs/performance.md, "GEO and HLL, ninth pass".)
	order, keys := orderBuf[:0], keysBuf[:0]
	if cap(order) < len(pts) {
		order, keys = make([]int32, 0, len(pts)), make([]float64, 0, len(pts))
		orderBuf, keysBuf = order, keys
	}
	for i := range pts {
		order = append(order, int32(i))
		keys = append(keys, pts[i].dist)
	}
	if s.sort != sortNone {
		desc := s.sort == sortDesc
		if s.settleOrder(pts, order, keys) {
			// Equal distances: their order is the one Redis's sort
			// leaves. It sorts with glibc's qsort (a merge sort: stable)
			// when it answers every point, and with its partial pqsort
			// otherwise.
			for i := range order {
				order[i] = int32(i)
			}
			if n == len(pts) {
				stableByDist(order, pts, desc)
			} else {
				pqsort(order, pts, desc, 0, n-1)
			}
		} else if desc {
			// Distinct distances: any correct sort gives Redis's order.
			slices.Reverse(order)
		}
	}
	order = order[:n]
	conv := s.sh.Conversion
	if s.store == 0 && s.withDist && !s.withHash && !s.withCoord {
		// bench.sh's search and the common one: each distance settled,
		// in the unit and written with its member in one append, in one
		// loop.
		w := c.Reply()
		w.Array(n)
		for _, i := range order {
			p := &pts[i]
			if p.err != 0 && !clearlyRounds(p.dist/conv, p.err/conv) {
				s.exact(p)
			}
			w.Buf = appendMemberDist(w.Buf, p.member, p.dist/conv)
		}
		return
	}
	for _, i := range order {
		p := &pts[i]
		if p.err != 0 && (s.storeDist || s.withDist && !clearlyRounds(p.dist/conv, p.err/conv)) {
			s.exact(p)
		}
		p.dist /= conv
	}
	if s.store != 0 {
		s.storeResult(c, pts, order, dst)
		return
	}
	c.Reply().Array(n)
	for _, i := range order {
		s.replyPoint(c, &pts[i])
	}
}

// stableByDist sorts order, indexes of pts, by distance (descending with
// desc), equal distances in their order: what a stable sort of the points
// leaves. An insertion sort for the few tens of points of most searches.
func stableByDist(order []int32, pts []point, desc bool) {
	if len(order) > 64 {
		slices.SortStableFunc(order, func(i, j int32) int {
			if desc {
				i, j = j, i
			}
			return cmpFloat(pts[i].dist, pts[j].dist)
		})
		return
	}
	for i := 1; i < len(order); i++ {
		o := order[i]
		d := pts[o].dist
		j := i
		for ; j > 0; j-- {
			prev := pts[order[j-1]].dist
			if desc && !(prev < d) || !desc && !(prev > d) {
				break
			}
			order[j] = order[j-1]
		}
		order[j] = o
	}
}

// storeResult writes the points to the destination as a sorted set
// (scores their geohashes, or with STOREDIST their distances), or deletes
// it when there are none, and answers how many.
func (s *search) storeResult(c *sdk.Ctx, pts []point, order []int32, dst *codec.Result) {
	kv := make([]codec.Value, 0, 2*len(order))
	for _, i := range order {
		p := &pts[i]
		score := p.score
		if s.storeDist {
			score = p.dist
		}
		kv = append(kv, codec.Bytes(p.member), codec.Float(score))
	}
	gen := uint32(0)
	if r := c.Result(0); r.Code == codec.OK {
		gen = r.Generation
	}
	mode := s.mode // not s, which would move every search to the heap
	st := &kit.DestStore{Dst: c.Arg(s.store), Srcs: [][]byte{c.Arg(s.src)}, Gens: []uint32{gen},
		Restart: func(c *sdk.Ctx) { searchStart(c, mode) }}
	kit.StoreZSet(c, st, kv, dst)
}

// cmpFloat orders two distances.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// exact replaces an estimated distance with Redis's.
func (s *search) exact(p *point) {
	lon, lat := geo.Position(p.score)
	p.dist, p.err = geo.Distance(s.sh.Lon, s.sh.Lat, lon, lat), 0
}

// settleOrder measures exactly every point whose estimate could compare
// differently with another's than the exact distances do, so that sorting
// sees exactly Redis's comparisons (ties included), whatever order it
// compares in. It sorts order (indexes of pts) by the estimates (keys,
// their distances, beside it), where every pair closer than their error
// bounds is a run of neighbours, settles those, and sorts order again by
// the distances as they now are: ascending by Redis's distances. It
// reports whether two of them are equal (then only Redis's own sort says
// which comes first).
func (s *search) settleOrder(pts []point, order []int32, keys []float64) (ties bool) {
	sortByKey(order, keys, pts)
	settled := false
	for k := 0; k+1 < len(order); k++ {
		a, b := &pts[order[k]], &pts[order[k+1]]
		if keys[k+1]-keys[k] <= a.err+b.err {
			if a.err != 0 {
				s.exact(a)
				keys[k] = a.dist
				settled = true
			}
			if b.err != 0 {
				s.exact(b)
				keys[k+1] = b.dist
				settled = true
			}
		}
	}
	if settled {
		sortByKey(order, keys, pts) // nearly sorted: a pass or two
	}
	for k := 0; k+1 < len(keys); k++ {
		if keys[k] == keys[k+1] {
			return true
		}
	}
	return false
}

// sortByKey sorts order and keys, the distances of the points order
// indexes, together by distance, stably; an insertion sort on the keys
// for the few tens of points of most searches (a comparison through a
// function value costs more than the sort itself in WebAssembly, and
// through the points a bounds check and an index more).
func sortByKey(order []int32, keys []float64, pts []point) {
	if len(order) > 64 {
		slices.SortStableFunc(order, func(i, j int32) int { return cmpFloat(pts[i].dist, pts[j].dist) })
		for k, i := range order {
			keys[k] = pts[i].dist
		}
		return
	}
	keys = keys[:len(order)]
	for i := 1; i < len(keys); i++ {
		d, o := keys[i], order[i]
		j := i
		// Two places a turn: each turn of a loop is a trip through the
		// function's dispatch loop in WebAssembly, which costs more than
		// the moves.
		for ; j > 1 && keys[j-2] > d; j -= 2 {
			keys[j], keys[j-1] = keys[j-1], keys[j-2]
			order[j], order[j-1] = order[j-1], order[j-2]
		}
		if j > 0 && keys[j-1] > d {
			keys[j] = keys[j-1]
			order[j] = order[j-1]
			j--
		}
		keys[j], order[j] = d, o
	}
}

// clearlyRounds reports whether a distance d known within e prints the
// same with four decimals (the distance times 10^4 rounded half to even)
// wherever it is in [d-e, d+e].
func clearlyRounds(d, e float64) bool {
	x := d * 10000
	return math.Abs(x-math.Floor(x)-0.5) > e*10000+1e-6
}

// load64 and load32 read the little-endian words at b[off:] (the caller
// has checked the bounds): WebAssembly is little-endian and loads
// unaligned words.
func load64(b []byte, off int) uint64 {
	return *(*uint64)(unsafe.Pointer(unsafe.SliceData(b[off:])))
}

func load32(b []byte, off int) uint32 {
	return *(*uint32)(unsafe.Pointer(unsafe.SliceData(b[off:])))
}
