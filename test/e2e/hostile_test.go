package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/block"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/server"
	"github.com/respike/respike/host/store/memory"
)

// The hostile-module suite: modules that misbehave in every way a module
// can (test/e2e/testdata/hostile, written with the SDK, and
// test/e2e/testdata/rawabi, which speaks the ABI by hand) loaded beside
// the strings module. Each misdeed must cost only its own command, a clear
// error reply, while the proxy keeps serving, other modules keep their
// latency, and the proxy's memory stays bounded.

// Hostile runtime limits: a short deadline keeps the suite fast.
const (
	hostileLimitMiB = 64
	hostileRecycle  = 32
	hostileInsts    = 4
)

// hostileEnv starts a daemon serving strings, hostile and rawabi from a
// folder of their own, with the limits above.
// hostileDeadline is the suite's deadline: short, to keep it fast, but
// long enough for the well-behaved commands (an 8 MiB reply) on a busy
// machine under the race detector.
func hostileDeadline() time.Duration {
	if raceEnabled {
		return 2 * time.Second
	}
	return 500 * time.Millisecond
}

func hostileEnv(t *testing.T) (*Daemon, *module.Runtime) {
	t.Helper()
	needModules(t, "strings")
	dir := t.TempDir()
	for _, m := range []string{"hostile", "rawabi"} {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, m+".wasm"), "./test/e2e/testdata/"+m)
		cmd.Dir = env.root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", m, err, b)
		}
	}
	bin, err := os.ReadFile(filepath.Join(env.modDir, "strings.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "strings.wasm"), bin, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := memory.New(memory.Options{Databases: 16})
	reg := block.New(st, block.Options{Logger: env.logger})
	rt, err := module.New(ctx, module.Config{
		Dir:            dir,
		CacheDir:       env.cacheDir,
		Instances:      hostileInsts,
		Deadline:       hostileDeadline(),
		MemoryLimitMiB: hostileLimitMiB,
		RecycleMiB:     hostileRecycle,
		Reserved:       server.IsBuiltin,
		Databases:      16,
		Logger:         env.logger,
	}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.LoadDir(ctx); err != nil {
		t.Fatal(err)
	}
	b := &Backend{Store: reg, Runtime: rt}
	t.Cleanup(b.Close)
	for _, m := range rt.Modules() {
		if m.LastError != "" {
			t.Fatalf("module %s refused: %s", m.Name, m.LastError)
		}
	}
	d, err := StartDaemon(testConfig(), b, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("stopping the daemon: %v", err)
		}
	})
	return d, rt
}

// hostileCase is a misbehaving command and the errors it may answer.
type hostileCase struct {
	args []any
	want []string // the error reply's text, or a prefix ending in "…"
}

// hostileKilled is the error of a command the deadline stopped. A command
// that allocates or recurses without bound runs out of memory (the Go
// runtime's fatal error) unless the deadline comes first on a busy machine.
const (
	hostileKilled = "ERR module hostile: command exceeded the deadline" // with the deadline after "the"
	hostileOOM    = "ERR module hostile: fatal error: out of memory (wasm error: unreachable)"
)

var hostileCases = []hostileCase{
	{[]any{"hloop"}, []string{hostileKilled}},
	{[]any{"hoom"}, []string{hostileOOM, hostileKilled}},
	{[]any{"hrecurse"}, []string{"ERR module hostile: fatal error: stack overflow…", hostileOOM, hostileKilled}},
	{[]any{"hhuge", "100"}, []string{hostileOOM, hostileKilled}},
	{[]any{"htrap"}, []string{"ERR module hostile: respike.log of bytes outside guest memory"}},
	{[]any{"hexit"}, []string{"ERR module hostile: module exited with code 3"}},
	{[]any{"rawbadanswer"}, []string{"ERR module rawabi: malformed answer from the module"}},
	{[]any{"rawbadstatus"}, []string{"ERR module rawabi: malformed answer from the module"}},
	{[]any{"rawshortpending"}, []string{"ERR module rawabi: malformed answer from the module"}},
	{[]any{"rawbadrequest"}, []string{"ERR module rawabi: malformed store request"}},
}

// check reports whether err is an error c allows.
func (c hostileCase) check(err error) error {
	if err == nil {
		return fmt.Errorf("%v answered no error, want %q", c.args, c.want)
	}
	got := err.Error()
	for _, w := range c.want {
		if w == hostileKilled {
			w = fmt.Sprintf("ERR module hostile: command exceeded the %v deadline", hostileDeadline())
		}
		if p, ok := strings.CutSuffix(w, "…"); ok && strings.HasPrefix(got, p) || got == w {
			return nil
		}
	}
	return fmt.Errorf("%v = %q, want one of %q", c.args, got, c.want)
}

// TestHostileModules runs the suite on one daemon: each misdeed alone,
// then all of them under load.
func TestHostileModules(t *testing.T) {
	d, rt := hostileEnv(t)
	t.Run("each", func(t *testing.T) { hostileEach(t, d, rt) })
	t.Run("load", func(t *testing.T) { hostileLoad(t, d, rt) })
}

// hostileEach runs every misbehaving command through a real client and
// checks its error, that the module it belongs to serves again at once,
// that other modules answer right, and that huge replies and log floods
// cost only their command.
func hostileEach(t *testing.T, d *Daemon, rt *module.Runtime) {
	ctx := context.Background()
	c := client(t, d.Addr)
	if err := c.Set(ctx, "hostile:k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, hc := range hostileCases {
		if err := hc.check(c.Do(ctx, hc.args...).Err()); err != nil {
			t.Error(err)
		}
		for _, ok := range []string{"hok", "rawok"} {
			if got, err := c.Do(ctx, ok).Text(); err != nil || got != "OK" {
				t.Errorf("%s after %v = %q, %v", ok, hc.args, got, err)
			}
		}
		if got, err := c.Get(ctx, "hostile:k").Result(); err != nil || got != "v" {
			t.Errorf("GET after %v = %q, %v", hc.args, got, err)
		}
	}

	// A huge reply within the memory limit is served whole.
	// (Smaller under the race detector, where guest allocation is slow.)
	mib := 8
	if raceEnabled {
		mib = 2
	}
	got, err := c.Do(ctx, "hhuge", mib).Text()
	if err != nil || len(got) != mib<<20 || strings.Trim(got, "h") != "" {
		t.Errorf("hhuge %d: %d bytes, %v", mib, len(got), err)
	}

	// A log flood: the command succeeds, the rate limit drops the excess.
	if got, err := c.Do(ctx, "hlog", "20000").Text(); err != nil || got != "OK" {
		t.Errorf("hlog 20000 = %q, %v", got, err)
	}
	for _, m := range rt.Modules() {
		if m.Name != "hostile" {
			continue
		}
		if m.LogDropped < 15000 || m.LogLines > 1000 {
			t.Errorf("after a flood of 20000 lines: %d logged, %d dropped", m.LogLines, m.LogDropped)
		}
		// hloop, hoom, hrecurse, hhuge 100, htrap and hexit each lost
		// their instance.
		if m.DeadlineKills < 1 || m.DeadlineKills+m.Traps != 6 {
			t.Errorf("hostile: %d deadline kills, %d traps; want 6 instances lost, one at least to the deadline", m.DeadlineKills, m.Traps)
		}
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("PING after the suite: %v", err)
	}
}

// hostileLoad hammers the hostile commands from several clients while one
// client measures GET through the strings module, then the same GET
// without the hostile load: every hostile command answers its error, no
// GET fails, and the hostile modules' memory stays within their limits.
// The latency figures are logged (docs/operations.md reports them).
func hostileLoad(t *testing.T, d *Daemon, rt *module.Runtime) {
	ctx := context.Background()
	g := client(t, d.Addr, func(o *redis.Options) { o.PoolSize = 1 })
	if err := g.Set(ctx, "hostile:k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	measure := func(dur time.Duration) []time.Duration {
		var lat []time.Duration
		for end := time.Now().Add(dur); time.Now().Before(end); {
			at := time.Now()
			if v, err := g.Get(ctx, "hostile:k").Result(); err != nil || v != "v" {
				t.Fatalf("GET = %q, %v", v, err)
			}
			lat = append(lat, time.Since(at))
		}
		return lat
	}
	const window = time.Second
	quiet := measure(window)
	// A first deadline kill makes the module suspect (host/module/suspect.go):
	// from then on at most half as many of its commands as there are CPUs
	// run at once (one on 2 CPUs). Before it, as many
	// commands as it has instances spin together for one deadline.
	if err := hostileCases[0].check(g.Do(ctx, "hloop").Err()); err != nil {
		t.Fatal(err)
	}

	// The hostile load: two clients run the SDK module's misdeeds in
	// turn, two the raw module's (which fail fast without a trap).
	var sdkCases, rawCases []hostileCase
	for _, hc := range hostileCases {
		if strings.HasPrefix(hc.args[0].(string), "raw") {
			rawCases = append(rawCases, hc)
		} else {
			sdkCases = append(sdkCases, hc)
		}
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var hostileDone atomic.Int64
	for i := range 4 {
		hc := client(t, d.Addr, func(o *redis.Options) { o.PoolSize = 1 })
		wg.Add(1)
		go func() {
			defer wg.Done()
			cases := [][]hostileCase{sdkCases, rawCases}[i%2]
			for n := i; !stop.Load(); n++ {
				cs := cases[n%len(cases)]
				if err := cs.check(hc.Do(ctx, cs.args...).Err()); err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				}
				hostileDone.Add(1)
			}
		}()
	}
	loaded := measure(window)
	stop.Store(true)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d hostile commands answered wrong, first: %s", len(failures), failures[0])
	}

	pct := func(lat []time.Duration, p float64) time.Duration {
		s := slices.Clone(lat)
		slices.Sort(s)
		return s[min(len(s)-1, int(p*float64(len(s))))]
	}
	t.Logf("GET alone: %d calls, p50 %v, p99 %v, max %v", len(quiet), pct(quiet, .5), pct(quiet, .99), pct(quiet, 1))
	t.Logf("GET beside %d hostile commands from 4 clients: %d calls, p50 %v, p99 %v, max %v",
		hostileDone.Load(), len(loaded), pct(loaded, .5), pct(loaded, .99), pct(loaded, 1))

	// Bounded memory: each instance within the limit, and over the
	// recycling threshold none once its call ended.
	for _, m := range rt.Modules() {
		if m.Instances > hostileInsts || m.MemoryBytes > int64(m.Instances)*hostileRecycle<<20 {
			t.Errorf("module %s: %d instances, %d bytes of memory: over %d instances of %d MiB",
				m.Name, m.Instances, m.MemoryBytes, hostileInsts, hostileRecycle)
		}
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("after the hostile load: Go heap in use %d MiB; instances: %s", ms.HeapInuse>>20, instanceSummary(rt))
}

func instanceSummary(rt *module.Runtime) string {
	var b strings.Builder
	for _, m := range rt.Modules() {
		fmt.Fprintf(&b, "%s %d (%d MiB, %d traps, %d kills, %d recycled) ", m.Name, m.Instances, m.MemoryBytes>>20, m.Traps, m.DeadlineKills, m.MemoryRecycles)
	}
	return b.String()
}
