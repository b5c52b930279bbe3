// Command geocg runs bench.sh's GEOSEARCH, or its GEOADD of new members,
// N times in process on the embedded store, for repeatable instruction
// counts under callgrind on a machine whose timings are noise (see
// scripts/cg-geo.sh, which runs it at two counts and divides the
// difference):
//
//	geocg search|addnew N module.wasm [print]
//
// What would make a count depend on time is off: the store's timed sweeps,
// and the load's garbage collections in the guest (Go's pacer in the guest
// reads the clock, which valgrind stretches): the 10,000 members are loaded
// by one runtime and measured by a fresh one.
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
		fmt.Fprintln(os.Stderr, "usage: geocg search|addnew N module.wasm [print]")
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
	load := [][]byte{[]byte("GEOADD"), []byte("bench:geo")}
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		load = append(load, strconv.AppendFloat(nil, lon, 'f', 6, 64), strconv.AppendFloat(nil, lat, 'f', 6, 64), fmt.Appendf(nil, "geo:%05d", i))
	}
	if out := r.Exec(ctx, r.Lookup(load[0]), &codec.Start{Proto: 2, Args: load}, nil); string(out) != ":10000\r\n" {
		fail(fmt.Errorf("load: %q", out))
	}
	_ = r.Close(ctx)
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
	case "addnew":
		for i := range starts {
			starts[i] = &codec.Start{Proto: 2, Args: [][]byte{[]byte("GEOADD"), []byte("bench:geoadd"),
				[]byte("13.361389"), []byte("38.115556"), fmt.Appendf(nil, "member:%012d", i*7919%100000)}}
		}
	default:
		fail(fmt.Errorf("unknown benchmark %q", which))
	}
	var out []byte
	for _, s := range starts {
		out = r.Exec(ctx, r.Lookup(s.Args[0]), s, out[:0])
	}
	if len(os.Args) > 4 {
		os.Stdout.Write(out)
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
