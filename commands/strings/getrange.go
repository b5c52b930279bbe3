package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "getrange", Arity: 4, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns a substring of the string stored at a key.",
		Run:     runGetRange,
	}, sdk.Command{
		Name: "substr", Arity: 4, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Returns a substring from a string value.",
		Run:     runGetRange,
	})
}

// runGetRange: GETRANGE key start end (SUBSTR is its old name). Indexes are
// parsed before the key is looked up, as in Redis.
func runGetRange(c *sdk.Ctx) {
	start, ok1 := kit.ParseInt(c.Arg(2))
	end, ok2 := kit.ParseInt(c.Arg(3))
	if !ok1 || !ok2 {
		c.Error(kit.NotInt)
		return
	}
	c.N[0], c.N[1] = start, end
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(getRangeDone)
}

// getRangeDone slices as Redis's getrangeCommand does: negative indexes
// count from the end, the range is clamped, and a missing key or empty
// range is the empty string.
func getRangeDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Bulk(nil)
		return
	case codec.FilteredOut:
		c.Error(kit.WrongType)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	var tmp [32]byte
	s := r.Value(0).Bytes
	if k := r.Value(0).Kind; k == codec.KindInt || k == codec.KindFloat {
		s = kit.AppendStr(tmp[:0], r.Value(0))
	}
	start, end, n := c.N[0], c.N[1], int64(len(s))
	if start < 0 && end < 0 && start > end {
		c.Reply().Bulk(nil)
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		c.Reply().Bulk(nil)
		return
	}
	c.Reply().Bulk(s[start : end+1])
}
