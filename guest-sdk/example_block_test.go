package sdk_test

import (
	"fmt"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// TAKE key timeout is a blocking command, as BLPOP is for lists: it takes
// a string stored by REMEMBER, deleting it, or waits up to timeout seconds
// (0: for ever) for one to be stored.
func init() {
	sdk.Register(sdk.Command{
		Name: "take", Arity: 3, Flags: []string{"write", "blocking"}, FirstKey: 1, LastKey: 1, Step: 1,
		Group: "example", Summary: "Takes a string, waiting for one if there is none.",
		Run: take,
	})
}

func take(c *sdk.Ctx) {
	// Check the arguments before looking at the store, as Redis does.
	timeout, msg, ok := c.ParseTimeout(c.Arg(2))
	if !ok {
		c.Error(msg)
		return
	}
	c.N[0] = int64(timeout)
	// Read and delete in one atomic call: two clients never take the same
	// value.
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue).Delete()
	c.Exec(taken)
}

func taken(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Bulk(r.Value(0).Bytes)
	case codec.NotFound:
		// Nothing to take: write the reply the client gets if the timeout
		// passes, then block on the key. A write to it runs TAKE again.
		c.Reply().Null()
		c.Block(c.Args()[1:2], sdk.Duration(c.N[0]))
	case codec.FilteredOut:
		c.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.Error(fmt.Sprintf("ERR store code %d", r.Code))
	}
}

// A command blocks by calling Block instead of replying. Natively, sdktest
// reports what the command blocks on and returns the reply the client gets
// if the timeout passes; the daemon parks the client instead, with no
// module instance held, and runs the command again once the key is written.
func ExampleCtx_Block() {
	h := sdktest.New()
	fmt.Println(h.Do("TAKE", "job", "0.5"))
	fmt.Println(h.Blocked.Keys, h.Blocked.Timeout)

	// Another client stores a job: the daemon runs the blocked TAKE again.
	fmt.Println(h.Do("REMEMBER", "job", "build"))
	fmt.Println(h.Do("TAKE", "job", "0.5"))
	fmt.Println(h.Blocked == nil)

	fmt.Println(h.Do("TAKE", "job", "-1"))
	// Output:
	// (nil)
	// [job] 500ms
	// OK
	// "build"
	// true
	// (error) ERR timeout is negative
}
