package main

import (
	"encoding/binary"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "keys", Arity: 2, Flags: []string{"readonly"},
		Group: "generic", Since: "1.0.0",
		Summary: "Returns all key names that match a pattern.",
		Run:     keysPage,
	})
}

// keysPageSize is the scan page size KEYS asks for.
const keysPageSize = 1000

// keysPage scans the whole database page by page, one step per page,
// collecting matching keys in Ctx.B as (4-byte length, bytes) records;
// Ctx.N[0] is the cursor, N[1] the number of keys collected. Like Redis's
// KEYS it is O(database size) and meant for debugging; unlike Redis it is
// not a snapshot: keys written during the scan may or may not appear.
func keysPage(c *sdk.Ctx) {
	c.Scan(codec.ScanArgs{Cursor: uint64(c.N[0]), Count: keysPageSize}, keysCollect)
}

func keysCollect(c *sdk.Ctx) {
	p := c.Page()
	for _, k := range p.Keys {
		if kit.Match(c.Arg(1), k) {
			c.B = binary.LittleEndian.AppendUint32(c.B, uint32(len(k)))
			c.B = append(c.B, k...)
			c.N[1]++
		}
	}
	if p.Cursor != 0 {
		c.N[0] = int64(p.Cursor)
		keysPage(c)
		return
	}
	w := c.Reply()
	w.Array(int(c.N[1]))
	for b := c.B; len(b) >= 4; {
		n := binary.LittleEndian.Uint32(b)
		w.Bulk(b[4 : 4+n])
		b = b[4+n:]
	}
}
