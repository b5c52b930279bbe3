package module

import (
	"context"
	"strconv"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// doProto runs a command in RESP version proto and returns its raw reply.
func doProto(t testing.TB, r *Runtime, proto uint8, args ...string) string {
	t.Helper()
	cmd := r.Lookup([]byte(args[0]))
	if cmd == nil {
		t.Fatalf("command %q not found", args[0])
	}
	start := &codec.Start{Proto: proto, ClientID: 1}
	for _, a := range args {
		start.Args = append(start.Args, []byte(a))
	}
	return string(r.Exec(context.Background(), cmd, start, nil))
}

// TestFinalAnswer runs a command that ends with a final answer where the
// store waits (the host replies by its recipe, with no second guest call)
// and where it runs requests inline (the guest's next step replies): the
// replies are the same, in RESP2 and RESP3, and only the waiting store
// counts final answers, and no resumes.
func TestFinalAnswer(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run("inline="+strconv.FormatBool(inline), func(t *testing.T) {
			st := newFakeStore(inline)
			r := newRuntime(t, Config{Instances: 1, NoInline: !inline}, st, "kv.wasm", "trap.wasm")
			do(t, r, "set", "k", "v")
			before := r.Stats()
			for _, c := range []struct {
				proto uint8
				key   string
				want  string
			}{
				{2, "k", "$1\r\nv\r\n"},
				{3, "k", "$1\r\nv\r\n"},
				{2, "missing", "$-1\r\n"},
				{3, "missing", "_\r\n"},
			} {
				if got := doProto(t, r, c.proto, "fget", c.key); got != c.want {
					t.Errorf("RESP%d FGET %s = %q, want %q", c.proto, c.key, got, c.want)
				}
			}
			after := r.Stats()
			finals, waits := after.Finals-before.Finals, after.Waits-before.Waits
			if inline && finals != 0 || !inline && finals != 4 || waits != 0 {
				t.Errorf("final answers %d, store waits %d; want %d and 0", finals, waits, map[bool]int{true: 0, false: 4}[inline])
			}
		})
	}
}

// TestFinalAnswerInPipelines runs final answers in a pipeline of commands
// with declared keys (the overlap windows) and without (respike_batch,
// where a final answer ends the guest call): every reply is in order.
func TestFinalAnswerInPipelines(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{Instances: 2, NoInline: true}, st, "kv.wasm", "trap.wasm")
	do(t, r, "set", "a", "1")
	do(t, r, "set", "b", "2")
	before := r.Stats().Finals
	got := replies(t, r, items(t, r,
		[]string{"fget", "a"}, []string{"fget", "b"}, []string{"fget", "c"},
		[]string{"fgetnk", "a"}, []string{"lecho", "x"}, []string{"fgetnk", "c"}, []string{"fgetnk", "b"},
		[]string{"set", "a", "3"}, []string{"fget", "a"}, []string{"frestart", "c"}, []string{"fget", "b"}))
	checkReplies(t, got, []string{"$1\r\n1\r\n", "$1\r\n2\r\n", "$-1\r\n",
		"$1\r\n1\r\n", "$1\r\nx\r\n", "$-1\r\n", "$1\r\n2\r\n",
		"+OK\r\n", "$1\r\n3\r\n", "$9\r\nrestarted\r\n", "$1\r\n2\r\n"})
	if n := r.Stats().Finals - before; n != 9 {
		t.Errorf("final answers %d, want 9", n)
	}
}

// TestMalformedRecipe sends recipes that are malformed in every way the
// host checks: each answers an error, the request does not run, and the
// instance goes on serving.
func TestMalformedRecipe(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{Instances: 1, NoInline: true}, st, "kv.wasm", "trap.wasm")
	do(t, r, "set", "k", "v")
	for n := range 10 {
		execs := st.execs.Load()
		if got, want := do(t, r, "badrecipe", strconv.Itoa(n)), "-ERR module trap: malformed recipe in a final answer\r\n"; got != want {
			t.Errorf("recipe %d: %q, want %q", n, got, want)
		}
		if st.execs.Load() != execs {
			t.Errorf("recipe %d: the request ran", n)
		}
	}
	if got := do(t, r, "fget", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("FGET after malformed recipes = %q", got)
	}
	for _, m := range r.Modules() {
		if m.Traps != 0 {
			t.Errorf("module %s: %d traps", m.Name, m.Traps)
		}
	}
}

// TestFinalRestart restarts a command by its recipe: it runs again from
// the start and sees Restarted; one that would restart for ever is
// stopped with an error.
func TestFinalRestart(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{Instances: 1, NoInline: true}, st, "kv.wasm", "trap.wasm")
	do(t, r, "set", "k", "v")
	before := r.Stats().Restarts
	if got := do(t, r, "frestart", "k"); got != "$1\r\nv\r\n" {
		t.Errorf("FRESTART of a present key = %q", got)
	}
	if got := do(t, r, "frestart", "missing"); got != "$9\r\nrestarted\r\n" {
		t.Errorf("FRESTART of a missing key = %q", got)
	}
	if n := r.Stats().Restarts - before; n != 1 {
		t.Errorf("restarts %d, want 1", n)
	}
	if got, want := do(t, r, "floop", "missing"), "-ERR module trap: a final answer restarted the command too often\r\n"; got != want {
		t.Errorf("FLOOP = %q, want %q", got, want)
	}
	if got := do(t, r, "frestart", "missing"); got != "$9\r\nrestarted\r\n" {
		t.Errorf("FRESTART after FLOOP = %q", got)
	}
}

// TestFinalAnswerNeedsABI7 gives a final answer from a module of ABI 6,
// which cannot have meant one: it is a malformed answer.
func TestFinalAnswerNeedsABI7(t *testing.T) {
	dir := t.TempDir()
	for _, abi := range []int{6, 7} {
		ans := []byte{codec.StatusFinal, 0xff, 0xff, 0xff, 0x00}
		ans = append(ans, codec.NewRecipe(0).Null(codec.OK).Bytes()...)
		p := writeModule(t, dir, "fake"+strconv.Itoa(abi)+".wasm", fake{abi: abi, manifest: manifest("1", "f"+strconv.Itoa(abi)), reply: ans}.wasm())
		r := newRuntime(t, Config{Instances: 1, NoInline: true}, newFakeStore(false))
		if _, err := r.Load(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		want := "-ERR module fake" + strconv.Itoa(abi) + ": malformed answer from the module\r\n"
		if abi == 7 {
			want = "-ERR module fake7: malformed store request\r\n" // an address outside its memory
		}
		if got := do(t, r, "f"+strconv.Itoa(abi)); got != want {
			t.Errorf("ABI %d: %q, want %q", abi, got, want)
		}
	}
}

// TestFinalAnswersMidBatch runs windows of commands on distinct keys
// (a pipeline where the store waits): a module of ABI 8 starts them in one
// guest call, each final answer handed over mid-batch (codec.BatchFinals).
// A restart, a malformed recipe, a command that waits in its instance and
// a trap each take their own way, and every reply comes in order.
func TestFinalAnswersMidBatch(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{Instances: 1, NoInline: true}, st, "kv.wasm", "trap.wasm")
	do(t, r, "set", "a", "1")
	do(t, r, "set", "b", "2")
	before := r.Stats()
	got := replies(t, r, items(t, r,
		[]string{"fget", "a"}, []string{"fget", "b"}, []string{"frestartk", "c"}, []string{"badrecipek", "1"},
		[]string{"fget", "missing"}, []string{"tgetk", "a2"}, []string{"fget", "d"}, []string{"frestartk", "b2"},
		[]string{"set", "a", "3"}, []string{"fget", "a"}))
	checkReplies(t, got, []string{"$1\r\n1\r\n", "$1\r\n2\r\n", "$9\r\nrestarted\r\n",
		"-ERR module trap: malformed recipe in a final answer\r\n", "$-1\r\n", "$-1\r\n", "$-1\r\n",
		"$9\r\nrestarted\r\n", "+OK\r\n", "$1\r\n3\r\n"})
	after := r.Stats()
	if n := after.Finals - before.Finals; n != 8 {
		t.Errorf("final answers %d, want 8", n)
	}
	if n := after.Restarts - before.Restarts; n != 2 {
		t.Errorf("restarts %d, want 2", n)
	}
	// fget a … fget missing handed over in one call, which ends at
	// tgetk a2 (it waits in its instance); fget d and frestartk b2 in
	// another.
	if n := after.Batched - before.Batched; n != 7 {
		t.Errorf("batched commands %d, want 7", n)
	}

	// A trap after two final answers were handed over: those two answer
	// by their recipes, the command that trapped answers the failure, and
	// the one after it runs on a fresh instance.
	got = replies(t, r, items(t, r, []string{"fget", "a"}, []string{"fget", "b"}, []string{"exitk", "z"}, []string{"fget", "c"}))
	checkReplies(t, got, []string{"$1\r\n3\r\n", "$1\r\n2\r\n", "-ERR module trap: module exited with code 3\r\n", "$-1\r\n"})
	if got := do(t, r, "fget", "b"); got != "$1\r\n2\r\n" {
		t.Errorf("FGET after the trap = %q", got)
	}
}
