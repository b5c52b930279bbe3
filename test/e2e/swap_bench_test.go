package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkWarmSwap measures the time from a module build renamed into the
// commands folder to the first reply of that build through a real client
// (go-redis over TCP), with its compiled code in the cache; it reports the
// minimum and median over b.N swaps (docs/operations.md):
//
//	go test ./test/e2e -run '^$' -bench WarmSwap -benchtime 20x
//
// swap replaces a serving module by the other of two builds, which this
// process has compiled before; new-process loads a build into a fresh
// runtime, as a restarted proxy (or another proxy of a fleet) would, with
// the compiled code only in the cache folder; both rename the build the
// moment it is written (cp && mv). new-process-staged renames it a second
// after it was written (an upload, then a rename: scp and ssh mv, a CI
// step), the time the watcher's speculative compilation of the staged
// file needs to put the compiled module in memory before the rename.
func BenchmarkWarmSwap(b *testing.B) {
	bins := swapBenchBins(b)
	cache := filepath.Join(b.TempDir(), "cache")
	if base, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(base, "respike", "hotswap-test-wazero")
	}
	b.Run("swap", func(b *testing.B) {
		dir := b.TempDir()
		c := swapBenchDaemon(b, dir, cache)
		swapBenchPlace(b, dir, bins["A"])
		swapBenchWait(b, c, "A", 5*time.Minute)
		var took []time.Duration
		for i := 0; b.Loop(); i++ {
			tag := []string{"B", "A"}[i%2]
			at := swapBenchPlace(b, dir, bins[tag])
			swapBenchWait(b, c, tag, 5*time.Minute)
			took = append(took, time.Since(at))
		}
		swapBenchReport(b, took)
	})
	b.Run("new-process", func(b *testing.B) {
		var took []time.Duration
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			c := swapBenchDaemon(b, dir, cache)
			b.StartTimer()
			at := swapBenchPlace(b, dir, bins["B"])
			swapBenchWait(b, c, "B", 5*time.Minute)
			took = append(took, time.Since(at))
		}
		swapBenchReport(b, took)
	})
	b.Run("new-process-staged", func(b *testing.B) {
		var took []time.Duration
		for b.Loop() {
			b.StopTimer()
			dir := b.TempDir()
			c := swapBenchDaemon(b, dir, cache)
			tmp := swapBenchStage(b, dir, bins["B"])
			time.Sleep(time.Second) // the operator's gap between upload and rename
			b.StartTimer()
			at := time.Now()
			if err := os.Rename(tmp, filepath.Join(dir, "hotswap.wasm")); err != nil {
				b.Fatal(err)
			}
			swapBenchWait(b, c, "B", 5*time.Minute)
			took = append(took, time.Since(at))
		}
		swapBenchReport(b, took)
	})
}

// swapBenchBins builds the hot-swap module's builds A and B.
func swapBenchBins(b *testing.B) map[string][]byte {
	b.Helper()
	dir := b.TempDir()
	bins := map[string][]byte{}
	for _, tag := range []string{"A", "B"} {
		out := filepath.Join(dir, tag+".wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "-ldflags="+hotswapBuilds[tag], "./test/e2e/testdata/hotswap")
		cmd.Dir = env.root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", tag, err, msg)
		}
		bin, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		bins[tag] = bin
	}
	return bins
}

// swapBenchDaemon starts a daemon whose runtime a watcher keeps in step
// with dir; it stops when the benchmark ends.
func swapBenchDaemon(b *testing.B, dir, cache string) *redis.Client {
	b.Helper()
	ctx := context.Background()
	be, err := NewBackend(ctx, dir, cache, env.logger)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(be.Close)
	stop, err := WatchModules(ctx, be, dir, env.logger)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stop() })
	d, err := StartDaemon(testConfig(), be, env.logger)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Stop() })
	c := redis.NewClient(&redis.Options{Addr: d.Addr, Protocol: 2, PoolSize: 1, MaxRetries: -1})
	b.Cleanup(func() { c.Close() })
	return c
}

// swapBenchPlace renames bin into dir as hotswap.wasm, as an operator
// should, and returns the time just before the rename.
func swapBenchPlace(b *testing.B, dir string, bin []byte) time.Time {
	b.Helper()
	tmp := swapBenchStage(b, dir, bin)
	at := time.Now()
	if err := os.Rename(tmp, filepath.Join(dir, "hotswap.wasm")); err != nil {
		b.Fatal(err)
	}
	return at
}

// swapBenchStage writes bin under the hidden name an operator stages a
// build under, and returns its path.
func swapBenchStage(b *testing.B, dir string, bin []byte) string {
	b.Helper()
	tmp := filepath.Join(dir, ".hotswap.wasm.tmp")
	if err := os.WriteFile(tmp, bin, 0o644); err != nil {
		b.Fatal(err)
	}
	return tmp
}

// swapBenchWait polls hsver until build tag answers. The watcher works on
// its own and gives no event to wait on from outside.
func swapBenchWait(b *testing.B, c *redis.Client, tag string, limit time.Duration) {
	b.Helper()
	start := time.Now()
	for {
		if v, err := c.Do(context.Background(), "hsver").Text(); err == nil && v == tag {
			return
		}
		if time.Since(start) > limit {
			b.Fatalf("build %s does not serve within %v", tag, limit)
		}
		time.Sleep(500 * time.Microsecond)
	}
}

func swapBenchReport(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(took[0]), "min-ms")
	b.ReportMetric(ms(took[len(took)/2]), "median-ms")
	b.ReportMetric(ms(took[len(took)-1]), "max-ms")
	b.Logf("%d runs: %s", len(took), fmt.Sprint(took))
}
