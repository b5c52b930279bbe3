package main

import (
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hscan", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.8.0",
		Summary: "Iterates over fields and values of a hash.",
		Run:     runHScan,
	})
}

// HSCAN pages through the key-ordered map: the cursor is the index of the
// next item, COUNT (default 10) the page size, and the cursor returned is 0
// after the last page. MATCH filters a page after it is read, as in Redis,
// so a page may come back short or empty before the end.
//
// Guarantees under concurrent writes differ from Redis's: a field added
// before the cursor shifts later items up, so an item may be returned
// twice (Redis allows that too); a field removed before the cursor shifts
// later items down, so one item present for the whole scan may be skipped
// (Redis never skips). Redis answers a small hash in one page whatever the
// COUNT; respike always pages by COUNT. NOVALUES (Redis 7.4) is supported.
//
// Ctx.N: [0] cursor (uint64 bits), [1] count, [2] MATCH argument index or
// 0, [3] NOVALUES, [4] an option error to report once the key is known to
// exist (Redis checks the key before the options).
func runHScan(c *sdk.Ctx) {
	cursor, ok := kit.ParseCursor(c.Arg(2))
	if !ok {
		c.Error("ERR invalid cursor")
		return
	}
	o := kit.ParseScanOpts(c, 3, true)
	c.N[0] = int64(cursor)
	c.N[1] = o.Count
	c.N[2] = o.Match
	if o.NoValues {
		c.N[3] = 1
	}
	c.N[4] = o.Err
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		MapSize(codec.BinValue).
		MapGetByIndex(codec.BinValue, codec.ReturnKeyValue, int64(min(cursor, kit.MaxScanIndex)), min(o.Count, kit.MaxScanIndex))
	c.Exec(hscanDone)
}

func hscanDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		kit.EmptyScan(c)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	if msg := kit.ScanOptError(c.N[4]); msg != "" {
		c.Error(msg)
		return
	}
	items := r.Value(1).List
	next := kit.NextCursor(uint64(c.N[0]), uint64(c.N[1]), kit.IntOf(r.Value(0)))
	var pattern []byte
	if c.N[2] != 0 {
		pattern = c.Arg(int(c.N[2]))
	}
	n := 0
	for i := 0; i+1 < len(items); i += 2 {
		if pattern == nil || kit.Match(pattern, items[i].Bytes) {
			n++
		}
	}
	w := c.Reply()
	w.Array(2)
	var tmp [20]byte
	w.Bulk(strconv.AppendUint(tmp[:0], next, 10))
	if c.N[3] != 0 {
		w.Array(n)
	} else {
		w.Array(2 * n)
	}
	for i := 0; i+1 < len(items); i += 2 {
		if pattern == nil || kit.Match(pattern, items[i].Bytes) {
			w.Bulk(items[i].Bytes)
			if c.N[3] == 0 {
				kit.ReplyStr(c, &items[i+1])
			}
		}
	}
}
