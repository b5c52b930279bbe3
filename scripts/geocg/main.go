// Command geocg runs one of bench.sh's GEO benchmarks N times in process
// on the embedded store, for repeatable instruction counts under callgrind
// on a machine whose timings are noise (see scripts/cg-geo.sh, which runs
// it at two counts and divides the difference):
//
//	geocg search|addnew|addbig|addold N geo.wasm [print]
//	geocg pfadd|pfcount|pfcount2 N hll.wasm [print]
//
// search is bench.sh's GEOSEARCH, addnew its GEOADD of new members;
// addbig is addnew into a set of 100,000 other members first (what the
// set's size costs), addold GEOADD of members that set already holds at the
// same place (nothing changes: the lookup and the rest); pfadd
// is its PFADD of random elements to a dense HLL (here one of 20,000
// elements first, as bench:hlladd is after a few thousand requests),
// pfcount PFCOUNT of one dense HLL (its cached cardinality), pfcount2 the
// union of two.
//
// What would make a count depend on time is off: the store's timed sweeps,
// and the load's garbage collections in the guest (Go's pacer in the guest
// reads the clock, which valgrind stretches): the data is loaded by one
// runtime and measured by a fresh one. GEOCG_CACHE is the compilation
// cache; GEOCG_FRESH=1 compiles the measuring runtime without it, for a
// build with wazero's perfmap tag, which names guest code in
// /tmp/perf-PID.map only when it compiles.
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

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: geocg search|addnew|addbig|addold|pfadd|pfcount|pfcount2 N module.wasm [print]")
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
	r := runtime(ctx, st, wasm)
	if which == "pfadd" || which == "pfcount" || which == "pfcount2" {
		loadHLL(ctx, r)
	} else {
		loadGeo(ctx, r)
	}
	if which == "addbig" || which == "addold" {
		loadBig(ctx, r, which == "addold")
	}
	_ = r.Close(ctx)
	if os.Getenv("GEOCG_FRESH") != "" {
		// A perfmap build names guest code only when it compiles it.
		os.Setenv("GEOCG_CACHE", "")
	}
	r = runtime(ctx, st, wasm)
	starts := make([]*codec.Start, n)
	switch which {
	case "search":
		s := &codec.Start{Proto: 2}
		for _, a := range []string{"GEOSEARCH", "bench:geo", "FROMLONLAT", "13.9", "37.4", "BYRADIUS", "5", "km", "COUNT", "10", "ASC", "WITHDIST"} {
			s.Args = append(s.Args, []byte(a))
		}
		for i := range starts {
			starts[i] = s
		}
	case "addnew", "addbig", "addold":
		for i := range starts {
			starts[i] = &codec.Start{Proto: 2, Args: [][]byte{[]byte("GEOADD"), []byte("bench:geoadd"),
				[]byte("13.361389"), []byte("38.115556"), fmt.Appendf(nil, "member:%012d", i*7919%100000)}}
		}
	case "pfadd":
		for i := range starts {
			starts[i] = &codec.Start{Proto: 2, Args: [][]byte{[]byte("PFADD"), []byte("bench:hlladd"),
				fmt.Appendf(nil, "element:%012d", i*7919%1000000)}}
		}
	case "pfcount", "pfcount2":
		s := &codec.Start{Proto: 2, Args: [][]byte{[]byte("PFCOUNT"), []byte("bench:hll")}}
		if which == "pfcount2" {
			s.Args = append(s.Args, []byte("bench:hll2"))
		}
		for i := range starts {
			starts[i] = s
		}
	default:
		fail(fmt.Errorf("unknown benchmark %q", which))
	}
	var out []byte
	for i, s := range starts {
		if i == 1 {
			measure() // after the first command, which instantiates the module
		}
		out = r.Exec(ctx, r.Lookup(s.Args[0]), s, out[:0])
	}
	if len(os.Args) > 4 {
		os.Stdout.Write(out)
	}
}

// measure marks where the measured commands start, after the first: a
// profile (cg-geo.sh with PROFILE) has callgrind zero its counts when it
// is called (--zero-before=main.measure), so that it holds N-1 commands
// and neither the load nor the compilation.
//
//go:noinline
func measure() { sink++ }

var sink int

// loadGeo loads bench.sh's geo set: 10,000 members over Sicily.
func loadGeo(ctx context.Context, r *module.Runtime) {
	load := [][]byte{[]byte("GEOADD"), []byte("bench:geo")}
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		load = append(load, strconv.AppendFloat(nil, lon, 'f', 6, 64), strconv.AppendFloat(nil, lat, 'f', 6, 64), fmt.Appendf(nil, "geo:%05d", i))
	}
	exec(ctx, r, load, ":10000\r\n")
}

// loadBig loads bench:geoadd with 100,000 members at addnew's point:
// pre:0 to pre:99999, or addnew's own names when old.
func loadBig(ctx context.Context, r *module.Runtime, old bool) {
	for b := 0; b < 100000; b += 10000 {
		load := [][]byte{[]byte("GEOADD"), []byte("bench:geoadd")}
		for i := b; i < b+10000; i++ {
			m := fmt.Appendf(nil, "pre:%d", i)
			if old {
				m = fmt.Appendf(nil, "member:%012d", i)
			}
			load = append(load, []byte("13.361389"), []byte("38.115556"), m)
		}
		exec(ctx, r, load, ":10000\r\n")
	}
}

// loadHLL loads bench.sh's HLLs (bench:hll of 0..19999, bench:hll2 of
// x10000..x19999), bench:hlladd as dense as bench.sh's is after a few
// thousand requests, and counts bench:hll once, which caches its
// cardinality as bench.sh's first PFCOUNT does.
func loadHLL(ctx context.Context, r *module.Runtime) {
	hll := [][]byte{[]byte("PFADD"), []byte("bench:hll")}
	hll2 := [][]byte{[]byte("PFADD"), []byte("bench:hll2")}
	add := [][]byte{[]byte("PFADD"), []byte("bench:hlladd")}
	for i := range 20000 {
		hll = append(hll, strconv.AppendInt(nil, int64(i), 10))
		if i >= 10000 {
			hll2 = append(hll2, fmt.Appendf(nil, "x%d", i))
		}
		add = append(add, fmt.Appendf(nil, "element:%012d", 1000000+i))
	}
	exec(ctx, r, hll, ":1\r\n")
	exec(ctx, r, hll2, ":1\r\n")
	exec(ctx, r, add, ":1\r\n")
	exec(ctx, r, [][]byte{[]byte("PFCOUNT"), []byte("bench:hll")}, "")
}

// exec runs one command and checks its reply when want is not empty.
func exec(ctx context.Context, r *module.Runtime, args [][]byte, want string) {
	out := r.Exec(ctx, r.Lookup(args[0]), &codec.Start{Proto: 2, Args: args}, nil)
	if want != "" && string(out) != want {
		fail(fmt.Errorf("load %s %s: %q", args[0], args[1], out))
	}
}

// runtime is a runtime with the module loaded, guest calls unbounded in
// time (valgrind runs them ~50 times slower).
func runtime(ctx context.Context, st *memory.Store, wasm string) *module.Runtime {
	r, err := module.New(ctx, module.Config{CacheDir: os.Getenv("GEOCG_CACHE"), Instances: 1, MemoryLimitMiB: 256, Deadline: time.Hour}, st)
	if err != nil {
		fail(err)
	}
	if _, err := r.Load(ctx, wasm); err != nil {
		fail(err)
	}
	return r
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "geocg:", err)
	os.Exit(1)
}
