package main

import (
	"math"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// ZSCAN pages through the map in key (member) order by position, as HSCAN and
// SSCAN do (kit.MapScan says what that means under concurrent writes),
// answering members and their scores. ZRANDMEMBER samples uniformly as
// HRANDFIELD does (kit.Sample); WITHSCORES answers each member's score.
var (
	zscan       = kit.NewMapScan(codec.TypeZSet, replyScanScore, false)
	zrandmember = kit.NewSample(codec.TypeZSet, "withscores", replyStored)
)

func init() {
	sdk.Register(sdk.Command{
		Name: "zscan", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "sorted_set", Since: "2.8.0",
		Summary: "Iterates over members and scores of a sorted set.",
		Run:     zscan.Run,
	}, sdk.Command{
		Name: "zrandmember", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "sorted_set", Since: "6.2.0",
		Summary: "Returns one or more random members from a sorted set.",
		Run:     zrandmember.Run,
	})
}

// replyScanScore writes a stored score as ZSCAN does: a bulk string in
// RESP3 too (Redis's scan replies are lists of strings), in the form a
// small Redis sorted set stores it (d2string: an integral score within
// ±2^62 as an integer, else %.17g), which ZSCAN returns as stored.
func replyScanScore(c *sdk.Ctx, v *codec.Value) {
	var tmp [32]byte
	f := codec.ScoreOf(v)
	if f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f) {
		c.Reply().Bulk(strconv.AppendInt(tmp[:0], int64(f), 10))
		return
	}
	c.Reply().Bulk(codec.AppendScore(tmp[:0], f))
}
