package kit

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// MapScan is an HSCAN-style command over a map-valued type (HSCAN, SSCAN,
// ZSCAN): it pages through the map in key order. The cursor is the index of
// the next item, COUNT (default 10) the page size, and the cursor returned
// is 0 after the last page. MATCH filters a page after it is read, as in
// Redis, so a page may come back short or empty before the end.
//
// Guarantees under concurrent writes differ from Redis's: an item added
// before the cursor shifts later items up, so an item may be returned twice
// (Redis allows that too); an item removed before the cursor shifts later
// ones down, so one item present for the whole scan may be skipped (Redis
// never skips). Redis answers a small collection in one page whatever the
// COUNT; respike always pages by COUNT.
//
// Ctx.N: [0] cursor (uint64 bits), [1] count, [2] MATCH argument index or
// 0, [3] NOVALUES, [4] an option error to report once the key is known to
// exist (Redis checks the key before the options).
type MapScan struct {
	guard    string
	value    func(c *sdk.Ctx, v *codec.Value)
	novalues bool
	done     sdk.Step
}

// NewMapScan makes the scan of maps tagged guard. value writes an item's
// value after its key; nil answers keys only (SSCAN). novalues accepts
// Redis 7.4's NOVALUES option (HSCAN).
func NewMapScan(guard string, value func(c *sdk.Ctx, v *codec.Value), novalues bool) *MapScan {
	s := &MapScan{guard: guard, value: value, novalues: novalues}
	s.done = s.reply
	return s
}

// Run is the command's first step.
func (s *MapScan) Run(c *sdk.Ctx) {
	cursor, ok := ParseCursor(c.Arg(2))
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	o := ParseScanOpts(c, 3, s.novalues)
	c.N[0] = int64(cursor)
	c.N[1] = o.Count
	c.N[2] = o.Match
	if o.NoValues || s.value == nil {
		c.N[3] = 1
	}
	c.N[4] = o.Err
	ret := codec.ReturnKeyValue
	if s.value == nil {
		ret = codec.ReturnKey
	}
	c.Record(c.Arg(1)).Guard(s.guard).
		MapSize(codec.BinValue).
		MapGetByIndex(codec.BinValue, ret, int64(min(cursor, MaxScanIndex)), min(o.Count, MaxScanIndex))
	c.Exec(s.done)
}

func (s *MapScan) reply(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		EmptyScan(c)
		return
	default:
		GuardFailed(c, r)
		return
	}
	if msg := ScanOptError(c.N[4]); msg != "" {
		c.Error(msg)
		return
	}
	items := r.Value(1).List
	st := 2
	if s.value == nil {
		st = 1
	}
	next := NextCursor(uint64(c.N[0]), uint64(c.N[1]), IntOf(r.Value(0)))
	var pattern []byte
	if c.N[2] != 0 {
		pattern = c.Arg(int(c.N[2]))
	}
	n := 0
	for i := 0; i+st <= len(items); i += st {
		if pattern == nil || Match(pattern, items[i].Bytes) {
			n++
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
	for i := 0; i+st <= len(items); i += st {
		if pattern == nil || Match(pattern, items[i].Bytes) {
			w.Bulk(items[i].Bytes)
			if withValues {
				s.value(c, &items[i+1])
			}
		}
	}
}
