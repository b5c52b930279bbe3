package sdk_test

import (
	"encoding/binary"
	"strings"
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/internal/hook"
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

// TestFinalAnswersMidBatch runs a batch with codec.BatchFinals where the
// store waits: each command that ends with a final answer hands it to the
// host as its reply (status byte first) and the batch goes on; without the
// flag the batch ends at the first one, as before ABI 8.
func TestFinalAnswersMidBatch(t *testing.T) {
	sdktest.New() // the engine's hooks
	hook.SetInline(nil)
	var got [][]byte
	hook.SetReply(func(b []byte) { got = append(got, append([]byte(nil), b...)) })
	defer hook.SetReply(nil)
	var starts []codec.Start
	for _, args := range [][]string{{"fetch", "a"}, {"greet", "you"}, {"fetchorrestart", "b"}, {"fetch", "c"}} {
		st := codec.Start{Proto: 2, ClientID: 1}
		for _, a := range args {
			st.Args = append(st.Args, []byte(a))
		}
		starts = append(starts, st)
	}
	msg := codec.NewBatch(starts)
	if ans := hook.Batch(msg); len(ans) == 0 || ans[0] != codec.StatusFinal || len(got) != 0 {
		t.Fatalf("without BatchFinals: answer %q after %d replies, want the first final answer", ans, len(got))
	}
	binary.LittleEndian.PutUint32(msg, uint32(len(starts))|codec.BatchFinals)
	if ans := hook.Batch(msg); ans != nil {
		t.Fatalf("with BatchFinals: the batch ended with %q", ans)
	}
	if len(got) != 4 {
		t.Fatalf("%d replies, want 4", len(got))
	}
	for i, final := range []bool{true, false, true, true} {
		if (got[i][0] == codec.StatusFinal) != final {
			t.Errorf("reply %d = %q, final answer %v", i, got[i], final)
		}
	}
	if string(got[1]) != "$10\r\nhello, you\r\n" {
		t.Errorf("GREET = %q", got[1])
	}
}
