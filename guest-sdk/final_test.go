package sdk_test

import (
	"strings"
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func init() {
	// fetchorrestart reads a key; a missing key restarts the command,
	// whose second run replies "restarted".
	sdk.Register(sdk.Command{
		Name: "fetchorrestart", Arity: 2, Flags: []string{"readonly"}, FirstKey: 1, LastKey: 1, Step: 1,
		Run: func(c *sdk.Ctx) {
			if c.Restarted() {
				c.Reply().Bulk([]byte("restarted"))
				return
			}
			c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
			c.ExecFinal(restartRecipe, func(c *sdk.Ctx) {
				if r := c.Result(0); r.Code == codec.OK {
					c.Reply().Bulk(r.Value(0).Bytes)
					return
				}
				c.Reply().Bulk([]byte("restarted")) // as the restarted run replies
			})
		},
	})
}

var restartRecipe = codec.NewRecipe(0).Value(codec.OK, 0).Restart(codec.NotFound)

func seed(h *sdktest.Host, key, val string) {
	call := codec.Call{Key: []byte(key)}
	call.Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte(val)))
	h.Exec(call)
}

// TestExecFinalPaths runs commands that end with a final answer one by
// one, in a batch (where a final answer ends the guest call) and in
// lockstep, on both paths: the replies agree, and a restart runs the
// command again from the start.
func TestExecFinalPaths(t *testing.T) {
	for _, inline := range []bool{true, false} {
		h := sdktest.New()
		h.Inline = inline
		seed(h, "a", "1")
		seed(h, "b", "2")
		if got := h.Do("FETCHORRESTART", "nope"); got != `"restarted"` {
			t.Errorf("inline=%v: restart: %s", inline, got)
		}
		cmds := [][]string{{"fetch", "a"}, {"fetch", "nope"}, {"fetchorrestart", "b"}, {"fetchorrestart", "x"}, {"fetch", "b"}}
		want := `"1" (nil) "2" "restarted" "2"`
		if got := strings.Join(h.Pipeline(cmds...), " "); got != want {
			t.Errorf("inline=%v: pipeline %s, want %s", inline, got, want)
		}
		if got := strings.Join(h.Lockstep(cmds...), " "); got != want {
			t.Errorf("inline=%v: lockstep %s, want %s", inline, got, want)
		}
	}
}
