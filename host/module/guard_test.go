package module

import (
	"context"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// testGuard records the requests it sees, conditions writes on an
// impossible generation when fail is set, and refuses every request when
// refuse is set.
type testGuard struct {
	fail, refuse  bool
	before, after int
	keys          []string
}

func (g *testGuard) Before(_ int, rq *codec.Request) bool {
	g.before++
	for i := range rq.Calls {
		g.keys = append(g.keys, string(rq.Calls[i].Key))
		if g.fail {
			rq.Calls[i].Policy.Generation = 1 << 16
		}
	}
	return !g.refuse
}

func (g *testGuard) After(_ int, _ *codec.Request, _ *codec.Response) { g.after++ }

// TestGuard checks that a Guard attached with WithGuard sees every store
// request of Exec and ExecBatch, on the inline path and through resume,
// that the conditions it adds reach the store, and that a refused request
// is never run.
func TestGuard(t *testing.T) {
	for _, noInline := range []bool{false, true} {
		st := memory.New(memory.Options{})
		defer st.Close()
		r := newRuntime(t, Config{NoInline: noInline}, st, "kv.wasm")

		g := &testGuard{}
		ctx := WithGuard(context.Background(), g)
		if got := doCtx(t, ctx, r, "set", "k", "v1"); got != "+OK\r\n" {
			t.Fatalf("noInline=%v: guarded set = %q", noInline, got)
		}
		if g.before != 1 || g.after != 1 || len(g.keys) != 1 || g.keys[0] != "k" {
			t.Errorf("noInline=%v: the guard saw %+v, want one request on k", noInline, g)
		}

		// A condition the guard adds makes the write fail.
		g = &testGuard{fail: true}
		doCtx(t, WithGuard(context.Background(), g), r, "set", "k", "v2")
		if got := do(t, r, "get", "k"); got != "$2\r\nv1\r\n" {
			t.Errorf("noInline=%v: a write failing the guard's condition applied: k = %q", noInline, got)
		}

		// A refused request does not run; the command answers an error.
		g = &testGuard{refuse: true}
		if got := doCtx(t, WithGuard(context.Background(), g), r, "set", "k", "v3"); !strings.HasPrefix(got, "-") {
			t.Errorf("noInline=%v: a refused set answered %q", noInline, got)
		}
		if g.before != 1 || g.after != 0 {
			t.Errorf("noInline=%v: refused: before=%d after=%d", noInline, g.before, g.after)
		}
		if got := do(t, r, "get", "k"); got != "$2\r\nv1\r\n" {
			t.Errorf("noInline=%v: a refused write applied: k = %q", noInline, got)
		}

		// A batch: every command's requests go through the guard.
		g = &testGuard{}
		cmd := r.Lookup([]byte("set"))
		var items []Item
		for _, k := range []string{"a", "b", "c"} {
			items = append(items, Item{Cmd: cmd, Start: codec.Start{Proto: 2, ClientID: 1,
				Args: [][]byte{[]byte("set"), []byte(k), []byte("x")}}})
		}
		out := r.ExecBatch(WithGuard(context.Background(), g), items, nil, nil)
		if string(out) != "+OK\r\n+OK\r\n+OK\r\n" || strings.Join(g.keys, ",") != "a,b,c" {
			t.Errorf("noInline=%v: guarded batch answered %q, guard saw %q", noInline, out, g.keys)
		}
	}
}

// TestGuardedBatchRunsSerially checks that on a store that waits, where a
// pipeline's commands on distinct keys would be in flight together, a
// guarded batch runs them one after another, in order, through the guard
// (which need not be safe for concurrent use).
func TestGuardedBatchRunsSerially(t *testing.T) {
	r := newRuntime(t, Config{}, newFakeStore(false), "kv.wasm")
	g := &testGuard{}
	cmd := r.Lookup([]byte("set"))
	var items []Item
	var want []string
	for i := 0; i < 8; i++ {
		k := string(rune('a' + i))
		want = append(want, k)
		items = append(items, Item{Cmd: cmd, Start: codec.Start{Proto: 2, ClientID: 1,
			Args: [][]byte{[]byte("set"), []byte(k), []byte("x")}}})
	}
	out := r.ExecBatch(WithGuard(context.Background(), g), items, nil, nil)
	if string(out) != strings.Repeat("+OK\r\n", 8) || strings.Join(g.keys, ",") != strings.Join(want, ",") {
		t.Errorf("guarded batch answered %q, guard saw %q", out, g.keys)
	}
}
