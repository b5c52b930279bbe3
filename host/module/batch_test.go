package module

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// items builds a pipeline for ExecBatch; every command must be loaded.
func items(t testing.TB, r *Runtime, cmds ...[]string) []Item {
	t.Helper()
	its := make([]Item, len(cmds))
	for i, args := range cmds {
		its[i].Cmd = r.Lookup([]byte(args[0]))
		if its[i].Cmd == nil {
			t.Fatalf("command %q not found", args[0])
		}
		its[i].Start = codec.Start{Proto: 2, ClientID: 1}
		for _, a := range args {
			its[i].Start.Args = append(its[i].Start.Args, []byte(a))
		}
	}
	return its
}

// replies runs a pipeline and splits the output at each item's End.
func replies(t testing.TB, r *Runtime, its []Item) []string {
	t.Helper()
	out := r.ExecBatch(context.Background(), its, []byte("before"), nil)
	var got []string
	prev := len("before")
	for i, it := range its {
		if it.End < prev || it.End > len(out) {
			t.Fatalf("item %d ends at %d, after %d, output %d bytes", i, it.End, prev, len(out))
		}
		got = append(got, string(out[prev:it.End]))
		prev = it.End
	}
	if prev != len(out) {
		t.Fatalf("output has %q after the last reply", out[prev:])
	}
	return got
}

func checkReplies(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("replies\n%q\nwant\n%q", got, want)
	}
}

// TestExecBatch runs a pipeline that mixes modules, a panic and store
// requests, on every store path: each command answers in order, the effects
// are in order, and commands of one module share guest calls.
func TestExecBatch(t *testing.T) {
	for _, m := range storeModes {
		t.Run(m.name, func(t *testing.T) {
			r := newRuntime(t, Config{Instances: 1, NoInline: m.noInline}, newFakeStore(m.inline), "kv.wasm", "trap.wasm")
			before := r.Stats()
			got := replies(t, r, items(t, r,
				[]string{"set", "a", "1"},
				[]string{"get", "a"},
				[]string{"getset", "a", "2"},
				[]string{"panic"},
				[]string{"get", "a"},
				[]string{"lecho", "other module"},
				[]string{"echo", "x"},
				[]string{"echo", "y"},
				[]string{"tget", "nokey"},
				[]string{"get", "a"},
			))
			checkReplies(t, got, []string{
				"+OK\r\n", "$1\r\n1\r\n", "$1\r\n1\r\n", "-ERR module panic: boom\r\n", "$1\r\n2\r\n",
				"$12\r\nother module\r\n", "$1\r\nx\r\n", "$1\r\ny\r\n", "$-1\r\n", "$1\r\n2\r\n",
			})
			// Batches of two or more: echo, echo on every path; inline,
			// kv's first five too.
			want := int64(1)
			if m.inline && !m.noInline {
				want = 2
			}
			if n := r.Stats().Batches - before.Batches; n != want {
				t.Errorf("%d batches, want %d", n, want)
			}
		})
	}
}

// TestExecBatchUsesOneCall checks that a pipeline of one module's commands
// that never wait runs in one guest call.
func TestExecBatchUsesOneCall(t *testing.T) {
	r := newRuntime(t, Config{Instances: 1}, newFakeStore(true), "kv.wasm")
	cmds := make([][]string, codec.MaxBatch+3)
	want := make([]string, len(cmds))
	for i := range cmds {
		cmds[i] = []string{"set", "k", strings.Repeat("v", i)}
		want[i] = "+OK\r\n"
		if i%2 == 1 {
			cmds[i] = []string{"get", "k"}
			want[i] = "$" + strconv.Itoa(i-1) + "\r\n" + strings.Repeat("v", i-1) + "\r\n"
		}
	}
	before := r.Stats()
	checkReplies(t, replies(t, r, items(t, r, cmds...)), want)
	st := r.Stats()
	if b, n := st.Batches-before.Batches, st.Batched-before.Batched; b != 2 || n != int64(len(cmds)) {
		t.Fatalf("%d batches of %d commands, want 2 of %d (MaxBatch %d, then the rest)", b, n, len(cmds), codec.MaxBatch)
	}
}

// TestBatchTrapMidway: a command that kills its instance in the middle of
// a batch answers the trap; the commands before it keep their replies and
// the ones after it run on a fresh instance.
func TestBatchTrapMidway(t *testing.T) {
	for _, m := range storeModes[:2] {
		t.Run(m.name, func(t *testing.T) {
			r := newRuntime(t, Config{Instances: 1}, newFakeStore(m.inline), "trap.wasm")
			got := replies(t, r, items(t, r,
				[]string{"lecho", "a"},
				[]string{"tget", "k"},
				[]string{"exit"},
				[]string{"lecho", "b"},
				[]string{"oom"},
				[]string{"tget", "k"},
				[]string{"lecho", "c"},
			))
			checkReplies(t, got, []string{
				"$1\r\na\r\n", "$-1\r\n", "-ERR module trap: module exited with code 3\r\n", "$1\r\nb\r\n",
				"-ERR module trap: fatal error: out of memory (wasm error: unreachable)\r\n", "$-1\r\n", "$1\r\nc\r\n",
			})
		})
	}
}

// TestBatchDeadlineMidway: a command that loops in a batch costs that
// command the deadline error, not its neighbours.
func TestBatchDeadlineMidway(t *testing.T) {
	const deadline = 300 * time.Millisecond
	r := newRuntime(t, Config{Instances: 1, Deadline: deadline}, newFakeStore(true), "loop.wasm")
	t0 := time.Now()
	got := replies(t, r, items(t, r,
		[]string{"lecho", "a"},
		[]string{"spin"},
		[]string{"lecho", "b"},
		[]string{"spinafter", "k"},
		[]string{"lecho", "c"},
	))
	took := time.Since(t0)
	dl := "-ERR module loop: command exceeded the 300ms deadline\r\n"
	checkReplies(t, got, []string{"$1\r\na\r\n", dl, "$1\r\nb\r\n", dl, "$1\r\nc\r\n"})
	if took < 2*deadline || took > 2*deadline+2*time.Second {
		t.Errorf("two deadlines took %v", took)
	}
}

// TestHostileBatch loads handmade modules that misuse respike.reply: more
// replies than the batch has commands, fewer, or a reply outside a batch.
// Each costs an error reply, never a hang or a lost reply.
func TestHostileBatch(t *testing.T) {
	dir := t.TempDir()
	r := newRuntime(t, Config{}, newFakeStore(true), "kv.wasm")
	load := func(name string, f fake) {
		t.Helper()
		f.abi, f.manifest = codec.ABIVersion, manifest("1", name)
		if f.reply == nil {
			f.reply = doneReply("+R\r\n")
		}
		if _, err := r.Load(context.Background(), writeModule(t, dir, name+".wasm", f.wasm())); err != nil {
			t.Fatal(err)
		}
	}
	load("toomany", fake{batch: 5})
	load("toofew", fake{batch: 1})
	load("outside", fake{replyInStart: true})
	load("empty", fake{batch: 3, reply: doneReply("")})

	three := func(name string) []Item { return items(t, r, []string{name}, []string{name}, []string{name}) }
	checkReplies(t, replies(t, r, three("toomany")), []string{"+R\r\n", "+R\r\n", "+R\r\n"})
	checkReplies(t, replies(t, r, three("toofew")), []string{"+R\r\n", "-ERR module toofew: malformed answer from the module\r\n", "+R\r\n"})
	if got := do(t, r, "outside"); !strings.Contains(got, "respike.reply called outside a batch") {
		t.Errorf("reply outside a batch: %q", got)
	}
	checkReplies(t, replies(t, r, three("empty")), []string{
		"-ERR module empty: command wrote no reply\r\n", "-ERR module empty: command wrote no reply\r\n", "-ERR module empty: command wrote no reply\r\n"})
	if got := do(t, r, "echo", "still"); got != "$5\r\nstill\r\n" {
		t.Fatalf("echo after hostile modules: %q", got)
	}
}

// TestExecBatchKeepsEachDatabase: items of one module in different
// databases never share a guest call's database.
func TestExecBatchKeepsEachDatabase(t *testing.T) {
	st := memory.New(memory.Options{Databases: 4})
	defer st.Close()
	r := newRuntime(t, Config{Instances: 1}, st, "kv.wasm")
	its := items(t, r, []string{"set", "k", "one"}, []string{"get", "k"}, []string{"get", "k"}, []string{"set", "k", "zero"}, []string{"get", "k"})
	its[0].Start.DB, its[1].Start.DB = 1, 1
	checkReplies(t, replies(t, r, its), []string{"+OK\r\n", "$3\r\none\r\n", "$-1\r\n", "+OK\r\n", "$4\r\nzero\r\n"})
}

// TestExecBatchMatchesSequential runs random pipelines of two modules'
// commands (reads, writes, multi-step commands, panics, traps, two
// databases) through ExecBatch on one runtime and one at a time through
// Exec on another: the replies must be the same, byte for byte.
func TestExecBatchMatchesSequential(t *testing.T) {
	for _, m := range storeModes {
		t.Run(m.name, func(t *testing.T) {
			newRT := func() *Runtime {
				st := memory.New(memory.Options{Databases: 2})
				t.Cleanup(func() { st.Close() })
				// The embedded store always runs inline: "remote" waits and
				// resumes as noinline does.
				return newRuntime(t, Config{Instances: 2, NoInline: !m.inline || m.noInline}, st, "kv.wasm", "trap.wasm")
			}
			batched, single := newRT(), newRT()
			rng := rand.New(rand.NewPCG(1, uint64(len(m.name))))
			keys := []string{"a", "b", "c"}
			for round := range 30 {
				var cmds [][]string
				var dbs []uint16
				for range 1 + rng.IntN(40) {
					k, v := keys[rng.IntN(len(keys))], strconv.Itoa(rng.IntN(100))
					var args []string
					switch n := rng.IntN(20); {
					case n < 5:
						args = []string{"get", k}
					case n < 9:
						args = []string{"set", k, v}
					case n < 12:
						args = []string{"getset", k, v}
					case n < 14:
						args = []string{"echo", v}
					case n < 16:
						args = []string{"tget", k}
					case n < 18:
						args = []string{"lecho", v}
					case n < 19:
						args = []string{"panic"}
					default:
						args = []string{"exit"}
					}
					cmds = append(cmds, args)
					dbs = append(dbs, uint16(rng.IntN(2)))
				}
				its := items(t, batched, cmds...)
				for i := range its {
					its[i].Start.DB = dbs[i]
				}
				got := replies(t, batched, its)
				for i, args := range cmds {
					one := items(t, single, args)[0]
					one.Start.DB = dbs[i]
					want := string(single.Exec(context.Background(), one.Cmd, &one.Start, nil))
					if got[i] != want {
						t.Fatalf("round %d, command %d %q (db %d): batched %q, one at a time %q", round, i, args, dbs[i], got[i], want)
					}
				}
			}
		})
	}
}

// TestABI3ModuleRunsOneCommandPerCall: a module built before batches
// (ABI 3, no respike_batch) still loads and serves a pipeline, one command
// per guest call.
func TestABI3ModuleRunsOneCommandPerCall(t *testing.T) {
	r := newRuntime(t, Config{}, newFakeStore(true))
	old := fake{abi: 3, manifest: manifest("1", "old"), reply: doneReply("+OLD\r\n")}
	if _, err := r.Load(context.Background(), writeModule(t, t.TempDir(), "old.wasm", old.wasm())); err != nil {
		t.Fatal(err)
	}
	before := r.Stats()
	checkReplies(t, replies(t, r, items(t, r, []string{"old"}, []string{"old"}, []string{"old"})), []string{"+OLD\r\n", "+OLD\r\n", "+OLD\r\n"})
	if n := r.Stats().Batches - before.Batches; n != 0 {
		t.Fatalf("%d batches on a module without respike_batch", n)
	}
}

// TestExecBatchClearsAReusedBlock: a Block handed in with an earlier
// command's block still in it (the server pools Blocks) comes back with
// Blocked false after a pipeline whose commands all replied, whichever
// path ran it. The overlapped path (a store that waits) left it set, and
// the server then parked the client in a wait nothing would end: a
// pipeline of INCRs after any blocking command hung on Aerospike.
func TestExecBatchClearsAReusedBlock(t *testing.T) {
	for _, m := range storeModes {
		t.Run(m.name, func(t *testing.T) {
			st := memory.New(memory.Options{})
			t.Cleanup(func() { st.Close() })
			r := newRuntime(t, Config{Instances: 2, NoInline: !m.inline || m.noInline}, st, "kv.wasm")
			its := items(t, r, []string{"set", "a", "1"}, []string{"set", "b", "2"}, []string{"get", "a"})
			blk := &Block{Blocked: true, Index: 1}
			out := r.ExecBatch(context.Background(), its, nil, blk)
			if blk.Blocked {
				t.Fatalf("Blocked still set after a pipeline that replied: %q", out)
			}
			if want := "+OK\r\n+OK\r\n$1\r\n1\r\n"; string(out) != want {
				t.Fatalf("replies %q, want %q", out, want)
			}
		})
	}
}

// TestItemEnded checks ExecBatch's Item.Ended, which the server takes for
// the end of an unpipelined command instead of reading the clock again: a
// command that ran alone and replied in a guest call (at once, or when
// resumed after the store) ended at that call's return, between the clock
// read before ExecBatch and the one after; a final answer replied by its
// recipe after the store answered, and commands of one batch call, have 0
// (unknown), also in a reused item.
func TestItemEnded(t *testing.T) {
	for _, m := range storeModes {
		t.Run(m.name, func(t *testing.T) {
			r := newRuntime(t, Config{Instances: 1, NoInline: m.noInline}, newFakeStore(m.inline), "kv.wasm", "trap.wasm")
			run := func(cmds ...[]string) []Item {
				its := items(t, r, cmds...)
				for i := range its {
					its[i].Ended = -1 // as a reused item would
				}
				before := Clock()
				r.ExecBatch(context.Background(), its, nil, nil)
				after := Clock()
				for i, it := range its {
					if it.Ended != 0 && (it.Ended < before || it.Ended > after) {
						t.Errorf("%s: item %d ended at %d, not within %d..%d", cmds[i][0], i, it.Ended, before, after)
					}
				}
				return its
			}
			for _, cmd := range [][]string{{"echo", "x"}, {"set", "k", "v"}, {"get", "k"}, {"panic"}} {
				if its := run(cmd); its[0].Ended == 0 {
					t.Errorf("%s alone: Ended is 0; want the end of its guest call", cmd[0])
				}
			}
			// fget ends with a final answer: where the store waits, the host
			// replies by its recipe after the guest call.
			its := run([]string{"fget", "k"})
			if waits := !m.inline || m.noInline; waits && its[0].Ended != 0 || !waits && its[0].Ended == 0 {
				t.Errorf("fget alone (store waits: %v): Ended %d", waits, its[0].Ended)
			}
			for i, it := range run([]string{"echo", "a"}, []string{"echo", "b"}) {
				if it.Ended != 0 {
					t.Errorf("batch item %d: Ended %d, want 0", i, it.Ended)
				}
			}
		})
	}
}
