package kit

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// MapScan is an HSCAN-style command over a map-valued type (HSCAN, SSCAN,
// ZSCAN): it pages through the map in key order. The cursor is a position
// in key space (CursorStart, CursorAfter), COUNT (default 10) the page
// size, and the cursor returned is 0 after the last page. MATCH filters a
// page after it is read, as in Redis, so a page may come back short or
// empty before the end.
//
// As in Redis, a full iteration returns every item present from its start
// to its end, whatever is added or removed meanwhile: an item is skipped
// only if a page ended past it, and a page ends only after the whole run
// of keys at its last key's position, which it read in one atomic call.
// An item added or removed during the iteration may or may not be
// returned; an item is returned at most once unless it is removed and
// added again. COUNT is a hint, as in Redis: a page that ends among keys
// sharing their first 8 bytes extends to the last of them, so it can be
// larger (a map whose members mostly share a prefix of 8 bytes or more
// answers in larger pages). Redis answers a small collection in one page
// whatever the COUNT; respike pages by COUNT.
//
// Keys that are not blobs (only another application writes them) sort
// before every blob; the first page returns all of them.
//
// Ctx.N: [0] cursor (uint64 bits), [1] count, [2] MATCH argument index or
// 0, [3] NOVALUES, [4] an option error to report once the key is known to
// exist (Redis checks the key before the options), [5] the next cursor of
// an extended page.
type MapScan struct {
	guard    string
	value    func(c *sdk.Ctx, v *codec.Value)
	novalues bool
	first    sdk.Step
	extended sdk.Step
}

// NewMapScan makes the scan of maps tagged guard. value writes an item's
// value after its key; nil answers keys only (SSCAN). novalues accepts
// Redis 7.4's NOVALUES option (HSCAN).
func NewMapScan(guard string, value func(c *sdk.Ctx, v *codec.Value), novalues bool) *MapScan {
	s := &MapScan{guard: guard, value: value, novalues: novalues}
	s.first, s.extended = s.page, s.extendedPage
	return s
}

func (s *MapScan) ret() codec.MapReturn {
	if s.value == nil {
		return codec.ReturnKey
	}
	return codec.ReturnKeyValue
}

// stride is how many list entries one item takes in a result.
func (s *MapScan) stride() int {
	if s.value == nil {
		return 1
	}
	return 2
}

// Run is the command's first step: it reads COUNT+1 items from the
// cursor's position (and, at the start, the keys that are not blobs); the
// extra item tells whether the page ends between two positions.
func (s *MapScan) Run(c *sdk.Ctx) {
	cursor, ok := ParseCursor(c.Arg(2))
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	o := ParseScanOpts(c, 3, s.novalues)
	c.N[0] = int64(cursor)
	c.N[1] = min(o.Count, MaxScanIndex)
	c.N[2] = o.Match
	if o.NoValues || s.value == nil {
		c.N[3] = 1
	}
	c.N[4] = o.Err
	call := c.Record(c.Arg(1)).Guard(s.guard)
	if cursor == 0 {
		call.MapGetByKeyRange(codec.BinValue, s.ret(), codec.Nil, codec.Bytes(nil))
	}
	var tmp [8]byte
	call.MapGetByKeyRelIndex(codec.BinValue, s.ret(), codec.Bytes(CursorStart(tmp[:0], cursor)), 0, c.N[1]+1)
	c.Exec(s.first)
}

// page answers the first read, or reads the page again up to the end of
// its last key's position when the extra item shares that position.
func (s *MapScan) page(c *sdk.Ctx) {
	r := c.Result(0)
	if !s.found(c, r) {
		return
	}
	cursor := uint64(c.N[0])
	var others []codec.Value
	if cursor == 0 {
		others = r.Value(0).List
	}
	blobs := r.Value(len(r.Values) - 1).List
	st, count := s.stride(), int(c.N[1])
	if len(blobs) <= count*st {
		s.reply(c, 0, others, blobs)
		return
	}
	last, extra := blobs[(count-1)*st].Bytes, blobs[count*st].Bytes
	next := CursorAfter(last)
	if !SamePos(last, extra) {
		s.reply(c, next, others, blobs[:count*st])
		return
	}
	// The page would end inside a run of keys at one position: read it
	// again, in one call, from the cursor to the end of that run.
	c.N[5] = int64(next)
	var b, e [8]byte
	begin, end := codec.Nil, codec.Nil
	if cursor != 0 {
		begin = codec.Bytes(CursorStart(b[:0], cursor))
	}
	if next != 0 {
		end = codec.Bytes(CursorStart(e[:0], next))
	}
	c.Record(c.Arg(1)).Guard(s.guard).MapGetByKeyRange(codec.BinValue, s.ret(), begin, end)
	c.Exec(s.extended)
}

// extendedPage answers the page read again to the end of a position.
func (s *MapScan) extendedPage(c *sdk.Ctx) {
	r := c.Result(0)
	if !s.found(c, r) {
		return
	}
	s.reply(c, uint64(c.N[5]), nil, r.Value(0).List)
}

// found handles a read that found no map: a missing key is an empty scan,
// another type WRONGTYPE. Then the option error, if any.
func (s *MapScan) found(c *sdk.Ctx, r *codec.Result) bool {
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		EmptyScan(c)
		return false
	default:
		GuardFailed(c, r)
		return false
	}
	if msg := ScanOptError(c.N[4]); msg != "" {
		c.Error(msg)
		return false
	}
	return true
}

// reply writes the cursor next and the items of the lists that MATCH
// selects.
func (s *MapScan) reply(c *sdk.Ctx, next uint64, lists ...[]codec.Value) {
	st := s.stride()
	var pattern []byte
	if c.N[2] != 0 {
		pattern = c.Arg(int(c.N[2]))
	}
	n := 0
	for _, items := range lists {
		for i := 0; i+st <= len(items); i += st {
			if pattern == nil || Match(pattern, items[i].Bytes) {
				n++
			}
		}
	}
	w := c.Reply()
	w.Array(2)
	var tmp [20]byte
	w.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	withValues := c.N[3] == 0
	if withValues {
		w.Array(2 * n)
	} else {
		w.Array(n)
	}
	for _, items := range lists {
		for i := 0; i+st <= len(items); i += st {
			if pattern == nil || Match(pattern, items[i].Bytes) {
				w.Bulk(items[i].Bytes)
				if withValues {
					s.value(c, &items[i+1])
				}
			}
		}
	}
}
