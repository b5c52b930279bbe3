package module

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/memory"
)

// BenchmarkExecGET measures a whole Exec of a GET: start message, guest
// call, store request (inline inside the guest call, or returned to the host
// and resumed), reply.
func BenchmarkExecGET(b *testing.B) {
	for _, m := range storeModes {
		b.Run(m.name, func(b *testing.B) {
			st := newFakeStore(m.inline)
			r := newRuntime(b, Config{NoInline: m.noInline}, st, "kv.wasm")
			do(b, r, "set", "key", "value")
			cmd := r.Lookup([]byte("get"))
			start := &codec.Start{Proto: 2, Args: [][]byte{[]byte("GET"), []byte("key")}}
			ctx := context.Background()
			var out []byte
			b.ReportAllocs()
			cpu := cpuNanos()
			for b.Loop() {
				out = r.Exec(ctx, cmd, start, out[:0])
			}
			reportCPU(b, cpu)
			if string(out) != "$5\r\nvalue\r\n" {
				b.Fatalf("get = %q", out)
			}
		})
	}
	b.Run("memory-store", func(b *testing.B) {
		st := memory.New(memory.Options{})
		defer st.Close()
		r := newRuntime(b, Config{}, st, "kv.wasm")
		do(b, r, "set", "key", "value")
		cmd := r.Lookup([]byte("get"))
		start := &codec.Start{Proto: 2, Args: [][]byte{[]byte("GET"), []byte("key")}}
		var out []byte
		b.ReportAllocs()
		cpu := cpuNanos()
		for b.Loop() {
			out = r.Exec(context.Background(), cmd, start, out[:0])
		}
		reportCPU(b, cpu)
		if string(out) != "$5\r\nvalue\r\n" {
			b.Fatalf("get = %q", out)
		}
	})
	b.Run("echo", func(b *testing.B) {
		r := newRuntime(b, Config{}, newFakeStore(true), "kv.wasm")
		cmd := r.Lookup([]byte("echo"))
		start := &codec.Start{Proto: 2, Args: [][]byte{[]byte("ECHO"), []byte("value")}}
		var out []byte
		b.ReportAllocs()
		cpu := cpuNanos()
		for b.Loop() {
			out = r.Exec(context.Background(), cmd, start, out[:0])
		}
		reportCPU(b, cpu)
	})
	b.Run("inline-parallel", func(b *testing.B) {
		r := newRuntime(b, Config{}, newFakeStore(true), "kv.wasm")
		do(b, r, "set", "key", "value")
		cmd := r.Lookup([]byte("get"))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			start := &codec.Start{Proto: 2, Args: [][]byte{[]byte("GET"), []byte("key")}}
			var out []byte
			for pb.Next() {
				out = r.Exec(context.Background(), cmd, start, out[:0])
			}
		})
	})
}

// stringsModule and zsetModule build commands/strings and commands/zset
// once per test binary run, for the benchmarks of real commands.
var (
	stringsModule = builtModule("strings")
	zsetModule    = builtModule("zset")
)

// builtModule returns a function that builds commands/<family> once.
func builtModule(family string) func() (string, error) {
	return sync.OnceValues(func() (string, error) { return buildFamily(family) })
}

// buildFamily builds commands/<family> to the test's module folder.
func buildFamily(family string) (string, error) {
	out := filepath.Join(modDir, family+".wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "../../commands/"+family)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s module: %v\n%s", family, err, msg)
	}
	return out, nil
}

// cModule builds examples/cstrings (the same GET, SET and INCR written in C
// against the ABI) with clang, or reports why it cannot.
var cModule = sync.OnceValues(func() (string, error) {
	for _, tool := range []string{"clang", "wasm-ld"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%s not found (apt-get install clang lld)", tool)
		}
	}
	out := filepath.Join(modDir, "cstrings.wasm")
	cmd := exec.Command("clang", "--target=wasm32", "-O2", "-mbulk-memory", "-nostdlib",
		"-Wl,--no-entry", "-o", out, "../../examples/cstrings/cstrings.c")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build examples/cstrings: %v\n%s", err, msg)
	}
	return out, nil
})

// BenchmarkExecStrings measures whole Execs of the commands/strings module's
// hot commands on the embedded memory store (inline, as the daemon runs
// them), and ECHO of the kv test module for the bare cost of a command
// that makes no store request. CGET, CSET and CINCR are the same commands
// in C (examples/cstrings), when clang is there to build them: the same
// host path with a guest that is not Go-compiled.
//
//	go test -run '^$' -bench BenchmarkExecStrings -benchtime 20000x ./host/module
func BenchmarkExecStrings(b *testing.B) {
	path, err := stringsModule()
	if err != nil {
		b.Fatal(err)
	}
	st := memory.New(memory.Options{})
	defer st.Close()
	kv := newRuntime(b, Config{}, st, "kv.wasm")
	r := newRuntime(b, Config{}, st)
	if _, err := r.Load(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	rWait := newRuntime(b, Config{NoInline: true}, st)
	if _, err := rWait.Load(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	do(b, r, "set", "key", "value")
	do(b, r, "set", "n", "1")
	cPath, cErr := cModule()
	if cErr == nil {
		for _, rt := range []*Runtime{r, rWait} {
			if _, err := rt.Load(context.Background(), cPath); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // reply prefix
	}{
		{"ECHO", []string{"ECHO", "value"}, "$5\r\nvalue\r\n"}, // kv
		{"GET", []string{"GET", "key"}, "$5\r\nvalue\r\n"},
		{"SET", []string{"SET", "key", "value"}, "+OK\r\n"},
		{"SET-EX", []string{"SET", "key", "value", "EX", "100"}, "+OK\r\n"},
		{"INCR", []string{"INCR", "n"}, ":"},
		{"CGET", []string{"CGET", "key"}, "$"},
		{"CSET", []string{"CSET", "key", "value"}, "+OK\r\n"},
		{"CINCR", []string{"CINCR", "n"}, ":"},
	} {
		if strings.HasPrefix(tc.name, "C") && cErr != nil { // the C module's commands
			b.Run(tc.name, func(b *testing.B) { b.Skip(cErr) })
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			rt := r
			if tc.name == "ECHO" {
				rt = kv
			}
			benchExec(b, rt, st, tc.args, tc.want)
		})
		// The path of a store that waits: the request returned to the
		// host, then the reply by the command's recipe (a final answer:
		// GET, SET, INCR) or from a resumed guest call.
		if tc.name != "ECHO" {
			b.Run(tc.name+"-wait", func(b *testing.B) { benchExec(b, rWait, st, tc.args, tc.want) })
		}
		// Where the store waits, pipelined 16 deep on 16 distinct keys
		// (redis-benchmark -P 16 -r): an overlap window, whose commands
		// start in one guest call and hand over their final answers
		// mid-batch (beginBatch), or, in the -nobatch row, start one
		// guest call each (as before ABI 8). An op is one command.
		if tc.name != "ECHO" && len(tc.args) > 1 {
			for _, batch := range []bool{true, false} {
				name := tc.name + "-wait-P16"
				if !batch {
					name += "-nobatch"
				}
				b.Run(name, func(b *testing.B) {
					const depth = 16
					tmpls := make([]Item, depth)
					for j := range tmpls {
						args := slices.Clone(tc.args)
						args[1] += strconv.Itoa(j)
						tmpls[j] = items(b, rWait, args)[0]
					}
					its := make([]Item, depth)
					saved := batchFinals
					batchFinals = batch
					defer func() { batchFinals = saved }()
					ctx := context.Background()
					var out []byte
					b.ReportAllocs()
					cpu := cpuNanos()
					for i := 0; i < b.N; i += depth {
						copy(its, tmpls)
						out = rWait.ExecBatch(ctx, its, out[:0], nil)
					}
					reportCPU(b, cpu)
					if !strings.HasPrefix(string(out), tc.want[:1]) {
						b.Fatalf("%s = %q", tc.name, out)
					}
				})
			}
		}
		// The same command pipelined 16 deep, as redis-benchmark -P 16
		// sends it: ExecBatch runs the 16 in one guest call. An op is one
		// command.
		b.Run(tc.name+"-P16", func(b *testing.B) {
			rt := r
			if tc.name == "ECHO" {
				rt = kv
			}
			const depth = 16
			its := make([]Item, depth)
			tmpl := items(b, rt, tc.args)[0]
			ctx := context.Background()
			var out []byte
			b.ReportAllocs()
			cpu := cpuNanos()
			for i := 0; i < b.N; i += depth {
				for j := range its {
					its[j] = tmpl
				}
				out = rt.ExecBatch(ctx, its, out[:0], nil)
			}
			reportCPU(b, cpu)
			if !strings.HasPrefix(string(out), tc.want) {
				b.Fatalf("%s = %q", tc.name, out)
			}
		})
	}
}

// recordingStore passes requests to a store and keeps a copy of the last.
type recordingStore struct {
	store.Store
	last []byte // the last request, encoded
}

func (s *recordingStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	s.last = codec.AppendRequest(s.last[:0], req)
	s.Store.Exec(ctx, db, req, resp)
}

// storeOnly measures the CPU the store itself spends per run of cmd: it
// records the requests of one run and replays the last natively. 0 for a
// command without a store request.
func storeOnly(b *testing.B, rt *Runtime, cmd *Command, start *codec.Start, st store.Store) float64 {
	rec := &recordingStore{Store: st}
	saved := rt.st
	rt.st = rec
	rt.Exec(context.Background(), cmd, start, nil)
	rt.st = saved
	if rec.last == nil {
		return 0
	}
	var d codec.Decoder
	var req codec.Request
	var resp codec.Response
	if err := d.DecodeRequest(rec.last, &req); err != nil {
		b.Fatal(err)
	}
	const n = 20000
	cpu := cpuNanos()
	for range n {
		st.Exec(context.Background(), 0, &req, &resp)
	}
	return float64(cpuNanos()-cpu) / n
}

// BenchmarkDeadlineMechanism compares the ways of keeping a guest stoppable
// on raw wazero instances of the kv module: none at all, wazero's
// WithCloseOnContextDone, and the loop fuel this package uses (instrument.go,
// with a no-op tick). "abi" is a trivial call; "echo" a whole ECHO command in
// the guest, which shows the cost of the loop checks inside Go-compiled wasm.
func BenchmarkDeadlineMechanism(b *testing.B) {
	raw, err := os.ReadFile(mod("kv.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	fueled, err := instrument(raw)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	echo := &codec.Start{Proto: 2, Args: [][]byte{[]byte("echo"), []byte("value")}}
	size := len(codec.AppendStart(nil, 0, echo))
	for _, mech := range []struct {
		name        string
		closeOnDone bool
		bin         []byte
	}{{"none", false, raw}, {"closeOnContextDone", true, raw}, {"fuel", false, fueled}} {
		cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
		if err != nil {
			b.Fatal(err)
		}
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
			WithCloseOnContextDone(mech.closeOnDone).WithCompilationCache(cache))
		defer rt.Close(ctx)
		wasi_snapshot_preview1.MustInstantiate(ctx, rt)
		noop := func(context.Context, api.Module, []uint64) {}
		zero := func(_ context.Context, _ api.Module, s []uint64) { s[0] = 0 }
		if _, err := rt.NewHostModuleBuilder("respike").
			NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(zero), i32s(4), i32s(1)).Export("exec").
			NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(zero), i32s(2), i32s(1)).Export("take").
			NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(noop), nil, nil).Export("tick").
			Instantiate(ctx); err != nil {
			b.Fatal(err)
		}
		cm, err := rt.CompileModule(ctx, mech.bin)
		if err != nil {
			b.Fatal(err)
		}
		m, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
		if err != nil {
			b.Fatal(err)
		}
		stack := make([]uint64, 2)
		stack[0] = uint64(size)
		if err := m.ExportedFunction("respike_buf").CallWithStack(ctx, stack); err != nil {
			b.Fatal(err)
		}
		m.Memory().Write(uint32(stack[0]), codec.AppendStart(nil, stack[0], echo))
		for _, call := range []struct {
			name string
			fn   string
			arg  uint64
		}{{"abi", "respike_abi", 0}, {"echo", "respike_start", uint64(size)}} {
			f := m.ExportedFunction(call.fn)
			b.Run(mech.name+"/"+call.name, func(b *testing.B) {
				b.ReportAllocs()
				cpu := cpuNanos()
				for b.Loop() {
					stack[0] = call.arg
					if err := f.CallWithStack(ctx, stack); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}

// BenchmarkMemoryPerInflight holds 10,000 GETs in a slow store and reports
// what each costs while it waits: the host's call state plus the
// continuation in the guest's linear memory (on the Go heap), and the
// caller's goroutine stack (a connection's, in the daemon). Target: 4 KiB
// of heap. Run with -benchtime 1x.
func BenchmarkMemoryPerInflight(b *testing.B) {
	for b.Loop() {
		heap, stack := holdInflight(b, 10000)
		b.ReportMetric(heap, "heapB/inflight")
		b.ReportMetric(stack, "stackB/inflight")
	}
}

// TestManyInflightCommandsComplete holds many commands in a slow store at
// once and checks that every one of them replies once the store answers,
// and that each costs at most the 4 KiB of heap docs/performance.md
// promises. 10,000 commands, as BenchmarkMemoryPerInflight holds: the
// guest's linear memory grows in steps of megabytes, so fewer commands
// would measure the step, not the command. (A recipe kept as an array of
// every rule a recipe may have once took each command past the target.)
func TestManyInflightCommandsComplete(t *testing.T) {
	heap, stack := holdInflight(t, 10000)
	t.Logf("per in-flight command: heap %.0f B, goroutine stack %.0f B", heap, stack)
	if heap > 4096 {
		t.Errorf("heap per in-flight command %.0f B, want at most 4096", heap)
	}
}

// holdInflight runs n GETs that all wait in the store at once, measures the
// memory they hold, releases them and checks their replies.
func holdInflight(tb testing.TB, n int) (heap, stack float64) {
	st := newFakeStore(false)
	r := newRuntime(tb, Config{}, st, "kv.wasm")
	for range 100 {
		do(tb, r, "get", "warm")
	}
	var inStore sync.WaitGroup
	inStore.Add(n)
	gate := make(chan struct{})
	st.setHook(func(ctx context.Context, req *codec.Request) {
		inStore.Done()
		<-gate
	})
	starts := make([]*codec.Start, n)
	for i := range starts {
		starts[i] = &codec.Start{Proto: 2, Args: [][]byte{[]byte("get"), fmt.Appendf(nil, "key:%06d", i)}}
	}
	replies := make([][]byte, n)
	for i := range replies {
		replies[i] = make([]byte, 0, 16)
	}
	cmd := r.Lookup([]byte("get"))
	var done sync.WaitGroup
	done.Add(n)
	before := memStats()
	for i := range n {
		go func() {
			defer done.Done()
			replies[i] = r.Exec(context.Background(), cmd, starts[i], replies[i])
		}()
	}
	inStore.Wait()
	after := memStats()
	close(gate)
	done.Wait()
	for i, reply := range replies {
		if string(reply) != "$-1\r\n" {
			tb.Fatalf("get %d = %q", i, reply)
		}
	}
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n), float64(after.StackInuse-before.StackInuse) / float64(n)
}

// reportCPU reports the process's CPU time per op since cpu, all threads
// included (wazero's per-call goroutine runs on another).
func reportCPU(b *testing.B, cpu int64) {
	if cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/op")
	}
}

func memStats() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func i32s(n int) []api.ValueType {
	ts := make([]api.ValueType, n)
	for i := range ts {
		ts[i] = api.ValueTypeI32
	}
	return ts
}

// BenchmarkExecZSet measures whole Execs of the sorted-set commands that
// scripts/bench.sh runs against redis-server, on the embedded store: ZADD,
// ZPOPMIN, and ZRANGE 0 99 WITHSCORES and ZRANGEBYSCORE (100 members) on a
// set of 10,000 members; store-cpu-ns/op is the store's share.
//
//	go test -run '^$' -bench BenchmarkExecZSet -benchtime 20000x ./host/module
func BenchmarkExecZSet(b *testing.B) {
	path, err := zsetModule()
	if err != nil {
		b.Fatal(err)
	}
	st := memory.New(memory.Options{})
	defer st.Close()
	r := newRuntime(b, Config{}, st)
	if _, err := r.Load(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	load := []string{"ZADD", "big"}
	for i := range 10000 {
		load = append(load, strconv.Itoa(i), fmt.Sprintf("member:%05d", i))
	}
	do(b, r, load...)
	for _, tc := range []struct {
		name string
		args []string
		want string // reply prefix
	}{
		{"ZADD", []string{"ZADD", "z", "1", "m"}, ":"},
		{"ZPOPMIN", []string{"ZPOPMIN", "empty"}, "*0"},
		{"ZRANGE100", []string{"ZRANGE", "big", "0", "99", "WITHSCORES"}, "*200"},
		{"ZRANGEBYSCORE100", []string{"ZRANGEBYSCORE", "big", "5000", "5099", "WITHSCORES"}, "*200"},
	} {
		b.Run(tc.name, func(b *testing.B) { benchExec(b, r, st, tc.args, tc.want) })
	}
}

// benchExec measures whole Execs of one command on rt, checks that the
// reply starts with want, and reports the CPU per op and the store's own
// share of it (store-cpu-ns/op: what the wasm path adds is the rest).
func benchExec(b *testing.B, rt *Runtime, st store.Store, args []string, want string) {
	cmd := rt.Lookup([]byte(args[0]))
	start := &codec.Start{Proto: 2}
	for _, a := range args {
		start.Args = append(start.Args, []byte(a))
	}
	ctx := context.Background()
	var out []byte
	b.ReportAllocs()
	cpu := cpuNanos()
	for b.Loop() {
		out = rt.Exec(ctx, cmd, start, out[:0])
	}
	reportCPU(b, cpu)
	if !strings.HasPrefix(string(out), want) {
		b.Fatalf("%s = %.60q", args[0], out)
	}
	if ns := storeOnly(b, rt, cmd, start, st); ns > 0 {
		b.ReportMetric(ns, "store-cpu-ns/op")
	}
}
