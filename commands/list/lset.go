package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lset", Arity: 4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "1.0.0",
		Summary: "Sets the value of an element in a list by its index.",
		Run:     runLSet,
	})
}

// runLSet replaces one item in one operate on an existing record; the
// store refuses an index outside the list.
func runLSet(c *sdk.Ctx) {
	i, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		badIndex(c)
		return
	}
	c.Record(c.Arg(1)).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).
		ListSet(bin, clampIndex(i), codec.Bytes(c.Arg(3)))
	c.Exec(lsetDone)
}

const errNoKey = "ERR no such key"

func lsetDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().OK()
	case codec.NotFound:
		c.Error(errNoKey)
	case codec.OpNotApplicable, codec.ParameterError:
		// Aerospike answers an index past the tail with OP_NOT_APPLICABLE
		// (INSERT_BOUNDED) and may answer one before the head with
		// PARAMETER_ERROR.
		c.Error("ERR index out of range")
	default:
		failed(c, r)
	}
}
