package sdk_test

import (
	"fmt"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// A module registers its commands from init functions. This one defines
// GREET name, which needs no store, and REMEMBER key value / RECALL key, which
// do: each store request ends a step, and the next step reads its result.
func init() {
	sdk.Module("example", "1.0.0")
	sdk.Register(
		sdk.Command{
			Name: "greet", Arity: 2, Flags: []string{"fast"}, Group: "example",
			Summary: "Greets by name.",
			Run: func(c *sdk.Ctx) {
				w := c.Reply()
				w.Bulk(append([]byte("hello, "), c.Arg(1)...))
			},
		},
		sdk.Command{
			Name: "remember", Arity: 3, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "example", Summary: "Stores a string.",
			Run: remember,
		},
		sdk.Command{
			Name: "recall", Arity: 2, Flags: []string{"readonly"}, FirstKey: 1, LastKey: 1, Step: 1,
			Group: "example", Summary: "Reads a string stored by REMEMBER.",
			Run: recall,
		},
	)
}

func remember(c *sdk.Ctx) {
	// One atomic operation on one record: refuse other types (WRONGTYPE),
	// never expire, write the type tag and the value.
	c.Record(c.Arg(1)).Guard(codec.TypeString).Exists(codec.ExistsReplace).TTLNever().
		Put(codec.BinType, codec.Str(codec.TypeString)).
		Put(codec.BinValue, codec.Bytes(c.Arg(2)))
	c.Exec(remembered)
}

func remembered(c *sdk.Ctx) {
	switch r := c.Result(0); r.Code {
	case codec.OK:
		c.Reply().OK()
	case codec.FilteredOut:
		c.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.Error(fmt.Sprintf("ERR store code %d: %s", r.Code, r.Msg))
	}
}

func recall(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get(codec.BinType).Get(codec.BinValue)
	c.Exec(recalled)
}

func recalled(c *sdk.Ctx) {
	r := c.Result(0)
	switch {
	case r.Code == codec.NotFound:
		c.Reply().Null()
	case r.Code != codec.OK:
		c.Error(fmt.Sprintf("ERR store code %d", r.Code))
	case string(r.Value(0).Bytes) != codec.TypeString:
		c.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.Reply().Bulk(r.Value(1).Bytes)
	}
}

// Commands run natively against the embedded store with sdktest: no wasm
// build and no daemon are needed to test a command's logic.
func Example() {
	h := sdktest.New()
	fmt.Println(h.Do("GREET", "Ada"))
	fmt.Println(h.Do("RECALL", "k"))
	fmt.Println(h.Do("REMEMBER", "k", "v1"))
	fmt.Println(h.Do("RECALL", "k"))
	// Output:
	// "hello, Ada"
	// (nil)
	// OK
	// "v1"
}

// The same command replies in the connection's protocol: the reply writer
// produces RESP3 types when the client negotiated HELLO 3.
func ExampleCtx_Reply() {
	h := sdktest.New()
	h.Proto = 3
	fmt.Println(h.Do("RECALL", "missing"))
	// Output:
	// (nil)
}

// A client's pipeline runs as the daemon runs it: several commands per
// guest call, each reply in order, a command that fails answering in its
// place while the rest go on.
func ExampleCtx_pipeline() {
	h := sdktest.New()
	for _, reply := range h.Pipeline(
		[]string{"REMEMBER", "k", "v2"},
		[]string{"RECALL", "k"},
		[]string{"GREET", "Grace"},
		[]string{"RECALL", "nothing"},
	) {
		fmt.Println(reply)
	}
	// Output:
	// OK
	// "v2"
	// "hello, Grace"
	// (nil)
}

// Commands of different clients can run in step, their store requests
// reaching the store together in every round as a remote store's batch
// call gathers them; races between multi-step commands are tested so.
// Here RECALL's read is in the same round as REMEMBER's write and, listed
// after it, sees the new value.
func ExampleCtx_lockstep() {
	h := sdktest.New()
	fmt.Println(h.Lockstep(
		[]string{"REMEMBER", "k", "v3"},
		[]string{"RECALL", "k"},
	))
	// Output:
	// [OK "v3"]
}
