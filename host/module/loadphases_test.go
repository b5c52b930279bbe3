package module

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkLoadPhases times the phases of loading a module file new to a
// runtime whose compilation cache folder already holds its native code
// (a restarted proxy, a fleet deploy, a build compiled by another
// process): read, hash, compile (wazero decodes and validates every
// function, then finds the native code in its cache), instantiate (the Go
// runtime's _initialize), the ABI and manifest calls, the first command.
// RESPIKE_LOAD_WASM names the file; the kv test module by default:
//
//	RESPIKE_LOAD_WASM=/tmp/x.wasm go test ./host/module -run '^$' -bench LoadPhases -benchtime 20x
func BenchmarkLoadPhases(b *testing.B) {
	ctx := context.Background()
	path := os.Getenv("RESPIKE_LOAD_WASM")
	if path == "" {
		path = filepath.Join(modDir, "kv.wasm")
	}
	cache := cacheDir // persistent: the first run fills it
	warm := newRuntime(b, Config{CacheDir: cache}, newFakeStore(true))
	if _, err := warm.Load(ctx, path); err != nil {
		b.Fatal(err)
	}
	var read, hash, compile, inst, calls, total time.Duration
	for b.Loop() {
		b.StopTimer()
		r := newRuntime(b, Config{CacheDir: cache}, newFakeStore(true))
		b.StartTimer()
		t0 := time.Now()
		bin, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		sum := sha256.Sum256(bin)
		t2 := time.Now()
		fueled := r.readFueled(sum)
		cm, err := r.wrt.CompileModule(ctx, fueled)
		if err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		mod, err := r.wrt.InstantiateModule(ctx, cm, r.modCfg)
		if err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		if _, err := mod.ExportedFunction("respike_abi").Call(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := mod.ExportedFunction("respike_manifest").Call(ctx); err != nil {
			b.Fatal(err)
		}
		t5 := time.Now()
		read += t1.Sub(t0)
		hash += t2.Sub(t1)
		compile += t3.Sub(t2)
		inst += t4.Sub(t3)
		calls += t5.Sub(t4)
		b.StopTimer()
		_ = mod.Close(ctx)
		_ = cm.Close(ctx)
		t6 := time.Now()
		if _, err := r.Load(ctx, path); err != nil {
			b.Fatal(err)
		}
		total += time.Since(t6)
		b.StartTimer()
	}
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(read)/n, "read-ms")
	b.ReportMetric(float64(hash)/n, "sha-ms")
	b.ReportMetric(float64(compile)/n, "compile-ms")
	b.ReportMetric(float64(inst)/n, "instantiate-ms")
	b.ReportMetric(float64(calls)/n, "abi+manifest-ms")
	b.ReportMetric(float64(total)/n, "Load-ms")
}
