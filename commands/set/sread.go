package main

import (
	"bytes"
	"github.com/respike/respike/commands/internal/kit"
	"slices"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "scard", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Returns the number of members in a set.",
		Run:     runSCard,
	}, sdk.Command{
		Name: "sismember", Arity: 3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Determines whether a member belongs to a set.",
		Run:     runSIsMember,
	}, sdk.Command{
		Name: "smismember", Arity: -3, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "6.2.0",
		Summary: "Determines whether multiple members belong to a set.",
		Run:     runSMIsMember,
	}, sdk.Command{
		Name: "smembers", Arity: 2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "1.0.0",
		Summary: "Returns all members of a set.",
		Run:     runSMembers,
	})
}

func runSCard(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).MapSize(codec.BinValue)
	c.ExecFinal(kit.IntRecipe, kit.IntDone)
}

func runSIsMember(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByKeys(codec.BinValue, codec.ReturnCount, keys(c, 2))
	c.ExecFinal(kit.IntRecipe, kit.IntDone)
}

// runSMIsMember reads which of the members exist; the store answers them in
// its own order, so each requested member is looked up in that answer.
func runSMIsMember(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByKeys(codec.BinValue, codec.ReturnKey, keys(c, 2))
	c.Exec(smismemberDone)
}

func smismemberDone(c *sdk.Ctx) {
	found, ok := kit.ReadItems(c, c.Result(0))
	if !ok {
		return
	}
	sortValues(found)
	w := c.Reply()
	w.Array(c.NArg() - 2)
	for i := 2; i < c.NArg(); i++ {
		if contains(found, c.Arg(i)) {
			w.Int(1)
		} else {
			w.Int(0)
		}
	}
}

func runSMembers(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeSet).MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)
	c.Exec(smembersDone)
}

func smembersDone(c *sdk.Ctx) {
	ms, ok := kit.ReadItems(c, c.Result(0))
	if !ok {
		return
	}
	w := c.Reply()
	w.Set(len(ms))
	for i := range ms {
		w.Bulk(ms[i].Bytes)
	}
}

// sortValues sorts members bytewise. The stores answer in key order
// already, which makes this linear; sorting here keeps the algorithms
// independent of how a backend orders keys.
func sortValues(vs []codec.Value) {
	if !slices.IsSortedFunc(vs, cmpValue) {
		slices.SortFunc(vs, cmpValue)
	}
}

func cmpValue(a, b codec.Value) int { return bytes.Compare(a.Bytes, b.Bytes) }

// contains reports whether sorted vs holds m.
func contains(vs []codec.Value, m []byte) bool {
	_, ok := slices.BinarySearchFunc(vs, m, func(v codec.Value, m []byte) int { return bytes.Compare(v.Bytes, m) })
	return ok
}
