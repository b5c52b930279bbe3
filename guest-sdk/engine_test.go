package sdk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

func init() {
	sdk.Register(
		sdk.Command{Name: "t.panic", Arity: 1, Run: func(c *sdk.Ctx) { panic("boom") }},
		sdk.Command{Name: "t.silent", Arity: 1, Run: func(c *sdk.Ctx) {}},
		sdk.Command{Name: "t.twice", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.Exec(func(c *sdk.Ctx) {})
			c.Count(func(c *sdk.Ctx) {})
		}},
		sdk.Command{Name: "t.chain", Arity: 2, Run: chain1},
		sdk.Command{Name: "t.late-panic", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.Exec(func(c *sdk.Ctx) { panic("after the store") })
		}},
	)
}

// chain1..3 increment a counter three times in three requests, keeping the
// step count in Ctx.N, to prove state survives across steps on both paths.
func chain1(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Add(codec.BinValue, codec.Int(1))
	c.Exec(chainN)
}

func chainN(c *sdk.Ctx) {
	c.N[0]++
	if c.N[0] < 3 {
		c.Record(c.Arg(1)).Add(codec.BinValue, codec.Int(1)).Get(codec.BinValue)
		c.Exec(chainN)
		return
	}
	c.Reply().Int(c.Result(0).Value(1).Int)
}

func bothPaths(t *testing.T, f func(t *testing.T, h *sdktest.Host)) {
	for _, inline := range []bool{false, true} {
		name := "resume"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			h := sdktest.New()
			h.Inline = inline
			f(t, h)
		})
	}
}

func TestPanicsBecomeErrors(t *testing.T) {
	bothPaths(t, func(t *testing.T, h *sdktest.Host) {
		if got := h.Do("T.PANIC"); got != "(error) ERR module panic: boom" {
			t.Fatalf("got %s", got)
		}
		if got := h.Do("t.late-panic", "k"); got != "(error) ERR module panic: after the store" {
			t.Fatalf("got %s", got)
		}
		if got := h.Do("t.twice", "k"); !strings.Contains(got, "two requests in one step") {
			t.Fatalf("got %s", got)
		}
		// The module keeps serving after panics.
		if got := h.Do("greet", "x"); got != `"hello, x"` {
			t.Fatalf("got %s", got)
		}
	})
}

func TestCommandWithoutReplyIsAnError(t *testing.T) {
	h := sdktest.New()
	if got := h.Do("t.silent"); !strings.HasPrefix(got, "(error) ERR") {
		t.Fatalf("got %s", got)
	}
}

func TestStateSurvivesSteps(t *testing.T) {
	bothPaths(t, func(t *testing.T, h *sdktest.Host) {
		for i, want := range []string{"(integer) 3", "(integer) 6"} {
			if got := h.Do("t.chain", "counter"); got != want {
				t.Fatalf("run %d: got %s, want %s", i, got, want)
			}
		}
	})
}

func TestArgsAreBinarySafe(t *testing.T) {
	bothPaths(t, func(t *testing.T, h *sdktest.Host) {
		key, val := []byte("k\x00 \r\n"), []byte("\x00\xff\r\n")
		if got := sdktest.Format(h.DoRaw([]byte("remember"), key, val)); got != "OK" {
			t.Fatalf("got %s", got)
		}
		if got := string(h.DoRaw([]byte("recall"), key)); got != "$4\r\n\x00\xff\r\n\r\n" {
			t.Fatalf("got %q", got)
		}
	})
}

// down is a store whose backend is unreachable.
type down struct{}

func (down) Exec(_ context.Context, _ int, _ *codec.Request, resp *codec.Response) {
	resp.Code, resp.Msg, resp.Results = codec.BackendUnavail, "no nodes", resp.Results[:0]
}
func (down) Inline() bool { return false }
func (down) Close() error { return nil }

var _ store.Store = down{}

func TestBackendFailureRepliesWithoutRunningTheNextStep(t *testing.T) {
	h := sdktest.New()
	h.Store = down{}
	if got := h.Do("recall", "k"); got != "(error) ERR backend unavailable: no nodes" {
		t.Fatalf("got %s", got)
	}
}

func TestManifestListsRegisteredCommands(t *testing.T) {
	m := sdktest.Manifest()
	if m.Module != "example" || m.Version != "1.0.0" {
		t.Fatalf("module %q %q", m.Module, m.Version)
	}
	var found bool
	for _, c := range m.Commands {
		if c.Name == "remember" {
			found = c.Arity == 3 && c.FirstKey == 1 && c.Flags[0] == "write"
		}
	}
	if !found {
		t.Fatalf("remember missing or wrong in %+v", m.Commands)
	}
}

// TestPipelineBatches runs commands as the host batches a pipeline: a
// panic, a command that waits on the store, an unknown name and a silent
// command each answer in place, and the commands after them still run.
func TestPipelineBatches(t *testing.T) {
	bothPaths(t, func(t *testing.T, h *sdktest.Host) {
		got := h.Pipeline(
			[]string{"t.chain", "k"},
			[]string{"t.panic"},
			[]string{"t.chain", "k"},
			[]string{"t.nosuch"},
			[]string{"t.late-panic", "k"},
			[]string{"t.silent"},
			[]string{"t.chain", "k"},
		)
		want := []string{
			"(integer) 3",
			"(error) ERR module panic: boom",
			"(integer) 6",
			"(error) ERR unknown command 't.nosuch', with args beginning with: ",
			"(error) ERR module panic: after the store",
			"(error) ERR respike: command wrote no reply",
			"(integer) 9",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("replies:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// TestPipelineLongerThanABatch runs more commands than one batch carries.
func TestPipelineLongerThanABatch(t *testing.T) {
	h := sdktest.New()
	h.Inline = true
	cmds := make([][]string, 3*codec.MaxBatch+5)
	for i := range cmds {
		cmds[i] = []string{"t.chain", "n"}
	}
	got := h.Pipeline(cmds...)
	if len(got) != len(cmds) || got[len(got)-1] != fmt.Sprintf("(integer) %d", 3*len(cmds)) {
		t.Fatalf("%d replies, last %q", len(got), got[len(got)-1])
	}
}

func init() {
	sdk.Register(
		sdk.Command{Name: "t.dirty", Arity: 2, Run: func(c *sdk.Ctx) {
			for i := range c.N {
				c.N[i] = int64(i + 1)
			}
			c.B = append(c.B, "scratch"...)
			c.Record(c.Arg(1)).Get(codec.BinValue)
			c.ExecFinal(dirtyRecipe, func(c *sdk.Ctx) { c.Reply().Simple("OK") })
		}},
		sdk.Command{Name: "t.clean", Arity: 1, Run: func(c *sdk.Ctx) {
			var n int64
			for _, v := range c.N {
				n += v
			}
			c.Reply().Simple(fmt.Sprintf("N=%d B=%d results=%d", n, len(c.B), len(c.Results())))
		}},
	)
}

var dirtyRecipe = codec.NewRecipe(0).OK(codec.OK).OK(codec.NotFound)

// TestEachCommandStartsClean checks that a command starts with nothing of
// the one before it on the same Ctx: N zeroed, B empty, no results. A
// command that arrives alone is started and released by the engine's fast
// path (start), one that waited by begin and release; both must leave the
// same state, including past the release that checks buffer sizes.
func TestEachCommandStartsClean(t *testing.T) {
	bothPaths(t, func(t *testing.T, h *sdktest.Host) {
		for i := range 40 {
			if got := h.Do("t.dirty", "k"); got != "OK" {
				t.Fatalf("run %d: t.dirty: %s", i, got)
			}
			if got := h.Do("t.clean"); got != "N=0 B=0 results=0" {
				t.Fatalf("run %d: t.clean after t.dirty: %s", i, got)
			}
		}
	})
}
