package main

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "visit", Arity: 2, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1,
		Group: "module", Summary: "Counts a visit to key and replies with the count so far.",
		Run: visit,
	})
}

// typeVisits is what TYPE reports for the keys VISIT writes.
const typeVisits = "visits"

// Values used on every call, built once: codec.Str allocates.
var (
	tagVisits = codec.Str(typeVisits)
	one       = codec.Int(1)
)

// visit is the first step: one atomic call on the record at key. The guard
// refuses a key of another type; the ops tag the record, add 1 to the
// counter (a missing bin counts as 0) and read it back.
func visit(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(typeVisits).
		Put(codec.BinType, tagVisits).
		Add(codec.BinValue, one).
		Get(codec.BinValue)
	c.Exec(visited)
}

// visited is the second step: it runs with the call's result.
func visited(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(r.Value(2).Int) // op 2 is the Get
	case codec.FilteredOut:
		c.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.Error("ERR respike: store error (code " + strconv.Itoa(int(r.Code)) + "): " + r.Msg)
	}
}
