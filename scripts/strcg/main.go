// Command strcg runs redis-benchmark's unpipelined GET, SET or INCR N times
// in process on the embedded store, through module.Runtime.Exec as the
// server runs a command that arrives alone, for repeatable instruction
// counts under callgrind (scripts/cg-str.sh):
//
//	strcg get|set|incr N strings.wasm [print]
//
// The keys are redis-benchmark's (key:%012d, counter:%012d), 10,000 of
// them, loaded first by one runtime and measured by a fresh one, so that
// the guest's garbage collections of the load (its pacer reads the clock,
// which valgrind stretches) do not move the count; the store's timed
// sweeps are off. The commands are built before the loop, whatever N is,
// and 200 of them run before it (the first instantiates the module).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/store/memory"
)

const keys = 10000

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: strcg get|set|incr N strings.wasm [print]")
		os.Exit(2)
	}
	which, wasm := os.Args[1], os.Args[3]
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	st := memory.New(memory.Options{SweepInterval: -1})
	defer st.Close()
	starts := make([]codec.Start, keys)
	var load []codec.Start
	for i := range starts {
		// redis-benchmark -r 100000 draws keys from the whole range.
		k := i * 7919 % 100000
		s := &starts[i]
		s.Proto = 2
		switch which {
		case "get":
			key := fmt.Appendf(nil, "key:%012d", k)
			s.Args = [][]byte{[]byte("GET"), key}
			load = append(load, codec.Start{Proto: 2, Args: [][]byte{[]byte("SET"), key, []byte("xxx")}})
		case "set":
			key := fmt.Appendf(nil, "key:%012d", k)
			s.Args = [][]byte{[]byte("SET"), key, []byte("xxx")}
			load = append(load, codec.Start{Proto: 2, Args: [][]byte{[]byte("SET"), key, []byte("xxx")}})
		case "incr":
			key := fmt.Appendf(nil, "counter:%012d", k)
			s.Args = [][]byte{[]byte("INCR"), key}
			load = append(load, codec.Start{Proto: 2, Args: [][]byte{[]byte("INCR"), key}})
		default:
			fail(fmt.Errorf("unknown benchmark %q", which))
		}
	}
	r := runtime(ctx, st, wasm)
	var out []byte
	for i := range load {
		out = r.Exec(ctx, r.Lookup(load[i].Args[0]), &load[i], out[:0])
	}
	if os.Getenv("STRCG_ONE") == "" {
		// (A profile keeps the one runtime: compiled without the cache, so
		// that wazero writes its perf map, and compiled once.)
		_ = r.Close(ctx)
		r = runtime(ctx, st, wasm)
	}
	cmd := r.Lookup(starts[0].Args[0])
	// Warm up: the first command instantiates the module.
	for i := range 200 {
		out = r.Exec(ctx, cmd, &starts[keys-1-i], out[:0])
	}
	measure()
	for i := range n {
		s := &starts[i%keys]
		s.Now = 0 // as the server: a new time per command (Exec reads the clock)
		out = r.Exec(ctx, cmd, s, out[:0])
	}
	if len(os.Args) > 4 {
		os.Stdout.Write(out)
	}
}

// measure marks where the measured loop starts: cg-str.sh has callgrind
// zero its counts when it is called (--zero-before=main.measure), so that
// a profile holds the loop only, not the load or the compilation.
//
//go:noinline
func measure() { sink++ }

var sink int

// runtime is a runtime with the module loaded, guest calls unbounded in
// time (valgrind runs them ~50 times slower).
func runtime(ctx context.Context, st *memory.Store, wasm string) *module.Runtime {
	r, err := module.New(ctx, module.Config{CacheDir: os.Getenv("STRCG_CACHE"), Instances: 1, MemoryLimitMiB: 256, Deadline: time.Hour}, st)
	if err != nil {
		fail(err)
	}
	if _, err := r.Load(ctx, wasm); err != nil {
		fail(err)
	}
	return r
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "strcg:", err)
	os.Exit(1)
}
