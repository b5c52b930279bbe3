package module

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"

	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/memory"
)

var (
	geoModule = builtModule("geo")
	hllModule = builtModule("hll")
)

// moduleOnMemory is a runtime over a fresh embedded store with the module
// build makes loaded; both close when the benchmark ends.
func moduleOnMemory(b *testing.B, build func() (string, error)) (*Runtime, store.Store) {
	path, err := build()
	if err != nil {
		b.Fatal(err)
	}
	st := memory.New(memory.Options{})
	b.Cleanup(func() { st.Close() })
	r := newRuntime(b, Config{}, st)
	if _, err := r.Load(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	return r, st
}

// BenchmarkExecGeo measures GEOADD and GEOSEARCH (a 5 km radius in a
// 10,000-member set spread over Sicily: 123 members in Redis's cells, 20
// inside), as scripts/bench.sh runs them, without the network.
func BenchmarkExecGeo(b *testing.B) {
	r, st := moduleOnMemory(b, geoModule)
	load := []string{"GEOADD", "geo"}
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		load = append(load, strconv.FormatFloat(lon, 'f', 6, 64), strconv.FormatFloat(lat, 'f', 6, 64), "geo:"+strconv.Itoa(i))
	}
	do(b, r, load...)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"GEOADD", []string{"GEOADD", "g", "13.361389", "38.115556", "m"}, ":"},
		{"GEOSEARCH", []string{"GEOSEARCH", "geo", "FROMLONLAT", "13.9", "37.4", "BYRADIUS", "5", "km", "COUNT", "10", "ASC", "WITHDIST"}, "*"},
	} {
		b.Run(tc.name, func(b *testing.B) { benchExec(b, r, st, tc.args, tc.want) })
	}
	// GEOADD of new members to one growing key, as scripts/bench.sh runs
	// it (-r 100000): the key grows to tens of thousands of members.
	b.Run("GEOADDnew", func(b *testing.B) {
		cmd := r.Lookup([]byte("GEOADD"))
		starts := make([]*codec.Start, 100000)
		for i := range starts {
			starts[i] = &codec.Start{Proto: 2, Args: [][]byte{[]byte("GEOADD"), []byte("bench:geoadd"),
				[]byte("13.361389"), []byte("38.115556"), fmt.Appendf(nil, "member:%012d", i*7919%100000)}}
		}
		ctx := context.Background()
		var out []byte
		b.ReportAllocs()
		cpu := cpuNanos()
		i := 0
		for b.Loop() {
			out = r.Exec(ctx, cmd, starts[i%len(starts)], out[:0])
			i++
		}
		reportCPU(b, cpu)
		if len(out) == 0 || out[0] != ':' {
			b.Fatalf("GEOADD = %q", out)
		}
	})
}

// randKeys counts the keys of BenchmarkExecHLL/PFADDrandom.
var randKeys int

// BenchmarkExecHLL measures PFADD (no register changed) and PFCOUNT of
// one and two dense HLLs.
func BenchmarkExecHLL(b *testing.B) {
	r, st := moduleOnMemory(b, hllModule)
	for _, key := range []string{"h1", "h2"} {
		load := []string{"PFADD", key}
		for i := range 20000 {
			load = append(load, key+strconv.Itoa(i))
		}
		do(b, r, load...)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"PFADD", []string{"PFADD", "h1", "h15"}, ":"},
		{"PFCOUNT", []string{"PFCOUNT", "h1"}, ":"},
		{"PFCOUNT2", []string{"PFCOUNT", "h1", "h2"}, ":"},
	} {
		b.Run(tc.name, func(b *testing.B) { benchExec(b, r, st, tc.args, tc.want) })
	}
	// PFADDrandom is scripts/bench.sh's PFADD: a random element of a
	// million to one key that starts empty (sparse, then dense, fewer and
	// fewer registers rising); -benchtime 2000x measures the sparse phase,
	// 50000x a round of bench.sh.
	b.Run("PFADDrandom", func(b *testing.B) {
		randKeys++
		key := "rand" + strconv.Itoa(randKeys) // empty: a key of its own
		cmd := r.Lookup([]byte("PFADD"))
		start := &codec.Start{Proto: 2, Args: [][]byte{[]byte("PFADD"), []byte(key), nil}}
		rng := rand.New(rand.NewPCG(1, 2))
		var out []byte
		ctx := context.Background()
		cpu := cpuNanos()
		for b.Loop() {
			start.Args[2] = fmt.Appendf(start.Args[2][:0], "element:%012d", rng.IntN(1_000_000))
			out = r.Exec(ctx, cmd, start, out[:0])
		}
		reportCPU(b, cpu)
		if !strings.HasPrefix(string(out), ":") {
			b.Fatalf("PFADD = %.60q", out)
		}
	})
}
