package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The hot-swap tests run their own daemon on a runtime that a watcher keeps
// in step with a folder of their own, as cmd/respike wires it, and write
// builds of test/e2e/testdata/hotswap into that folder the way an operator
// would.

// hotswapBuilds are the builds of the hot-swap module, by name: A and B
// answer with their tag, badmanifest declares a command the host refuses,
// inittrap panics while it initialises.
var hotswapBuilds = map[string]string{
	"A":           "-X main.reply=A -X main.version=1.0.0",
	"B":           "-X main.reply=B -X main.version=2.0.0",
	"badmanifest": "-X main.mode=badmanifest",
	"inittrap":    "-X main.mode=inittrap",
}

var hotswap struct {
	once sync.Once
	bins map[string][]byte
	err  error
}

// hotswapBins builds the hot-swap module's variants once per test binary.
func hotswapBins(t *testing.T) map[string][]byte {
	t.Helper()
	hotswap.once.Do(func() {
		// Under TestMain's folder, which it removes at the end.
		dir := filepath.Join(filepath.Dir(env.modDir), "hotswap-builds")
		hotswap.bins = map[string][]byte{}
		for name, flags := range hotswapBuilds {
			out := filepath.Join(dir, name+".wasm")
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "-ldflags="+flags, "./test/e2e/testdata/hotswap")
			cmd.Dir = env.root
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if b, err := cmd.CombinedOutput(); err != nil {
				hotswap.err = fmt.Errorf("building the hot-swap module %s: %v\n%s", name, err, b)
				return
			}
			if hotswap.bins[name], hotswap.err = os.ReadFile(out); hotswap.err != nil {
				return
			}
		}
	})
	if hotswap.err != nil {
		t.Fatal(hotswap.err)
	}
	return hotswap.bins
}

// warmCacheDir is where compiled hot-swap modules are cached across runs
// (cmd/respike's tests share it): compiling one takes half a minute under
// -race.
func warmCacheDir(t *testing.T) string {
	base, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	return filepath.Join(base, "respike", "hotswap-test-wazero")
}

// swapEnv is a daemon whose runtime serves the modules of dir.
type swapEnv struct {
	t       *testing.T
	dir     string
	backend *Backend
	daemon  *Daemon
	c       *redis.Client // one connection: probes and checks
}

// newSwapEnv starts a daemon on a fresh store and runtime (compilations
// cached in cacheDir) watching an empty folder; it stops when the test ends.
func newSwapEnv(t *testing.T, cacheDir string) *swapEnv {
	t.Helper()
	ctx := context.Background()
	e := &swapEnv{t: t, dir: t.TempDir()}
	var err error
	if e.backend, err = NewBackend(ctx, e.dir, cacheDir, env.logger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.backend.Close)
	stop, err := WatchModules(ctx, e.backend, e.dir, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("watcher: %v", err)
		}
	})
	cfg := testConfig()
	cfg.Server.EnableModuleCommand = "yes"
	if e.daemon, err = StartDaemon(cfg, e.backend, env.logger); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.daemon.Stop(); err != nil {
			t.Errorf("stopping the daemon: %v", err)
		}
	})
	e.c = client(t, e.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1 })
	return e
}

// place puts bin into the folder as name the way an operator should: write
// a hidden temporary file in the same folder, then rename it into place. It
// returns the time just before the rename (so that a latency measured from
// it can only err on the long side).
func (e *swapEnv) place(name string, bin []byte) time.Time {
	e.t.Helper()
	tmp := filepath.Join(e.dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, bin, 0o644); err != nil {
		e.t.Fatal(err)
	}
	at := time.Now()
	if err := os.Rename(tmp, filepath.Join(e.dir, name)); err != nil {
		e.t.Fatal(err)
	}
	return at
}

// eventually polls cond until it holds and returns how long that took; it
// fails the test after limit. The watcher works asynchronously and gives
// no event to wait on from outside.
func (e *swapEnv) eventually(what string, limit time.Duration, cond func() bool) time.Duration {
	e.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			e.t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

// ver is hsver's reply, or the error's text.
func (e *swapEnv) ver() string {
	v, err := e.c.Do(context.Background(), "hsver").Text()
	if err != nil {
		return "error: " + err.Error()
	}
	return v
}

// modules returns MODULE LIST as one map per module name.
func (e *swapEnv) modules() map[string]map[string]any {
	e.t.Helper()
	mods, err := e.c.Do(context.Background(), "MODULE", "LIST").Slice()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, m := range mods {
		f := m.([]any)
		fields := map[string]any{}
		for i := 0; i+1 < len(f); i += 2 {
			fields[f[i].(string)] = f[i+1]
		}
		out[fields["name"].(string)] = fields
	}
	return out
}

// infoModules returns the INFO modules section.
func (e *swapEnv) infoModules() string {
	e.t.Helper()
	info, err := e.c.Info(context.Background(), "modules").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

// infoCount reads one of INFO modules' totals.
func (e *swapEnv) infoCount(key string) int64 {
	e.t.Helper()
	info := e.infoModules()
	m := regexp.MustCompile(`(?m)^` + key + `:(\d+)\r$`).FindStringSubmatch(info)
	if m == nil {
		e.t.Fatalf("INFO modules lacks %s: %q", key, info)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// infoModule returns the INFO modules line of a module, "" if none.
func (e *swapEnv) infoModule(name string) string {
	e.t.Helper()
	for _, l := range strings.Split(e.infoModules(), "\r\n") {
		if strings.HasPrefix(l, "module:name="+name+",") {
			return l
		}
	}
	return ""
}

// swapLoad is several go-redis clients running the hot-swap module's
// commands in a loop, each on its own key, checking every reply: every
// reply must come from build A or B and be right, and with forwardOnly a
// client that saw B never sees A again (no proxy swaps back).
type swapLoad struct {
	forwardOnly bool
	stop        atomic.Bool
	wg          sync.WaitGroup
	mu          sync.Mutex
	failures    []string
	replies     map[string]int // tag → replies
}

func startSwapLoad(t *testing.T, addr string, clients int) *swapLoad {
	return startSwapLoadOn(t, []string{addr}, clients, false)
}

// startSwapLoadOn starts perAddr clients on each of addrs.
func startSwapLoadOn(t *testing.T, addrs []string, perAddr int, forwardOnly bool) *swapLoad {
	l := &swapLoad{replies: map[string]int{}, forwardOnly: forwardOnly}
	for a, addr := range addrs {
		for i := range perAddr {
			c := client(t, addr, func(o *redis.Options) { o.PoolSize = 1 })
			key := "hotswap:" + strconv.Itoa(a) + ":" + strconv.Itoa(i)
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				l.run(c, key)
			}()
		}
	}
	return l
}

func (l *swapLoad) fail(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) < 20 {
		l.failures = append(l.failures, fmt.Sprintf(format, args...))
	}
}

// run sends pipelines of hsset, hsget and hsver on key until stopped.
func (l *swapLoad) run(c *redis.Client, key string) {
	ctx := context.Background()
	counts := map[string]int{}
	defer func() {
		l.mu.Lock()
		for k, v := range counts {
			l.replies[k] += v
		}
		l.mu.Unlock()
	}()
	sawB := false
	for n := 0; !l.stop.Load(); n++ {
		val := strconv.Itoa(n)
		cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "hsset", key, val)
			p.Do(ctx, "hsget", key)
			p.Do(ctx, "hsver")
			return nil
		})
		if err != nil {
			l.fail("%s: %v", key, err)
			return
		}
		for i, cmd := range cmds {
			got, err := cmd.(*redis.Cmd).Text()
			tag, rest, _ := strings.Cut(got, ":")
			want := []string{"OK", val, ""}[i]
			if err != nil || (tag != "A" && tag != "B") || rest != want {
				l.fail("%s: %v = %q, %v; want a tag and %q", key, cmd.Args(), got, err, want)
				return
			}
			if l.forwardOnly && tag == "A" && sawB {
				l.fail("%s: %v answered A after B", key, cmd.Args())
				return
			}
			sawB = sawB || tag == "B"
			counts[tag]++
		}
	}
}

// end stops the load and returns the replies by tag, failing the test on
// any failed command.
func (l *swapLoad) end(t *testing.T) map[string]int {
	t.Helper()
	l.stop.Store(true)
	l.wg.Wait()
	if len(l.failures) > 0 {
		t.Errorf("%d+ failed commands under swaps:\n%s", len(l.failures), strings.Join(l.failures, "\n"))
	}
	return l.replies
}

// writeInPlace rewrites path in place with bin, in chunks with a pause
// after each, as a slow copy would. halfway runs when half is written.
func writeInPlace(t *testing.T, path string, bin []byte, chunk int, pause time.Duration, halfway func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	half := false
	for off := 0; off < len(bin); off += chunk {
		if _, err := f.Write(bin[off:min(off+chunk, len(bin))]); err != nil {
			t.Fatal(err)
		}
		if !half && off+chunk >= len(bin)/2 {
			half = true
			halfway()
		}
		time.Sleep(pause) // the pace of a slow writer, not synchronisation
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHotSwapUnderLoad replaces a module 20 times while clients run its
// commands: no command may fail, every reply comes from the old or the new
// build, and each new build answers within a bounded time. The compilation
// cache starts empty, so the first load and the first swap are cold and
// the others warm.
func TestHotSwapUnderLoad(t *testing.T) {
	bins := hotswapBins(t)
	e := newSwapEnv(t, t.TempDir())
	path := filepath.Join(e.dir, "hotswap.wasm")
	const coldLimit, warmLimit = 5 * time.Minute, 2 * time.Minute

	at := e.place("hotswap.wasm", bins["A"])
	e.eventually("build A serves", coldLimit, func() bool { return e.ver() == "A" })
	coldAdd := time.Since(at)
	t.Logf("cold cache: new module renamed into place → first reply in %v (load %dµs)",
		coldAdd.Round(time.Millisecond), e.modules()["hotswap"]["load_usec"])

	load := startSwapLoad(t, e.daemon.Addr, 4)
	const swaps = 20
	var warm []time.Duration
	var coldSwap time.Duration
	for i := 1; i <= swaps; i++ {
		from, to := "A", "B"
		if i%2 == 0 {
			from, to = "B", "A"
		}
		var at time.Time
		if i == swaps/2 {
			// Rewritten in place, slowly. Half way the writer stalls until
			// the watcher has tried the partial file: it is refused and the
			// old build keeps serving. The rest arrives in chunks closer
			// together than the debounce period.
			refusals := e.infoCount("module_refusals")
			writeInPlace(t, path, bins[to], 256<<10, 10*time.Millisecond, func() {
				e.eventually("the half-written file is refused", warmLimit, func() bool {
					return e.infoCount("module_refusals") > refusals
				})
				if got := e.ver(); got != from {
					t.Errorf("hsver with a half-written file in place = %q, want %q", got, from)
				}
				if m := e.modules()["hotswap"]; m["last_error"] == "" || m["version"] != map[string]string{"A": "1.0.0", "B": "2.0.0"}[from] {
					t.Errorf("MODULE LIST with a half-written file in place: %v", m)
				}
				if l := e.infoModule("hotswap"); !strings.Contains(l, ",last_error=") {
					t.Errorf("INFO modules with a half-written file in place: %q", l)
				}
			})
			at = time.Now()
			t.Logf("swap %d written in place: %d refusal(s) of partial content", i, e.infoCount("module_refusals")-refusals)
		} else {
			at = e.place("hotswap.wasm", bins[to])
		}
		limit := warmLimit
		if i == 1 {
			limit = coldLimit
		}
		e.eventually(fmt.Sprintf("swap %d to build %s", i, to), limit, func() bool { return e.ver() == to })
		took := time.Since(at)
		m := e.modules()["hotswap"]
		t.Logf("swap %2d → %s: first reply from the new build %v after the file was in place (load %dµs)",
			i, to, took.Round(time.Millisecond), m["load_usec"])
		if m["last_error"] != "" {
			t.Errorf("swap %d: last_error %q after a good build", i, m["last_error"])
		}
		if i == 1 {
			coldSwap = took
		} else {
			warm = append(warm, took)
		}
	}
	replies := load.end(t)
	if replies["A"] == 0 || replies["B"] == 0 {
		t.Errorf("replies by build = %v, want both builds to have answered", replies)
	}

	// Every swap counted once; the old builds drained and closed.
	m := e.modules()["hotswap"]
	if n := m["swaps"].(int64); n < swaps {
		t.Errorf("MODULE LIST swaps = %d, want at least %d", n, swaps)
	}
	if n := e.infoCount("module_swaps"); n != m["swaps"].(int64) {
		t.Errorf("module_swaps = %d, MODULE LIST swaps = %v", n, m["swaps"])
	}
	e.eventually("old versions drain", warmLimit, func() bool { return e.infoCount("module_versions_draining") == 0 })

	slices.Sort(warm)
	t.Logf("%d commands answered (by build: %v), none failed", replies["A"]+replies["B"], replies)
	t.Logf("swap latency, file in place → first reply from the new build: cold cache add %v, cold cache swap %v; "+
		"warm cache swaps (%d): min %v, median %v, max %v; swaps counted %v",
		coldAdd.Round(time.Millisecond), coldSwap.Round(time.Millisecond), len(warm),
		warm[0].Round(time.Millisecond), warm[len(warm)/2].Round(time.Millisecond), warm[len(warm)-1].Round(time.Millisecond), m["swaps"])
}

// TestHotSwapAddRemoveAndRefusals adds a module, feeds it files that must
// be refused, replaces it and removes it, and checks what clients see:
// commands, COMMAND, COMMAND DOCS, MODULE LIST and INFO.
func TestHotSwapAddRemoveAndRefusals(t *testing.T) {
	bins := hotswapBins(t)
	e := newSwapEnv(t, warmCacheDir(t))
	ctx := context.Background()
	const limit = 3 * time.Minute
	unknown := "error: ERR unknown command 'hsver', with args beginning with: "
	if got := e.ver(); got != unknown {
		t.Fatalf("hsver before the module exists = %q", got)
	}
	before, err := e.c.Do(ctx, "COMMAND", "COUNT").Int()
	if err != nil {
		t.Fatal(err)
	}

	// Adding a module adds its commands.
	e.place("hotswap.wasm", bins["A"])
	e.eventually("the module serves", limit, func() bool { return e.ver() == "A" })
	if n, err := e.c.Do(ctx, "COMMAND", "COUNT").Int(); err != nil || n != before+3 {
		t.Errorf("COMMAND COUNT = %d %v, want %d", n, err, before+3)
	}
	info, err := e.c.Do(ctx, "COMMAND", "INFO", "hsget").Slice()
	if err != nil || len(info) != 1 || info[0] == nil || info[0].([]any)[1] != int64(2) {
		t.Errorf("COMMAND INFO hsget = %#v %v", info, err)
	}
	docs, err := e.c.Do(ctx, "COMMAND", "DOCS", "hsget").Slice()
	if err != nil || len(docs) != 2 || !strings.Contains(fmt.Sprint(docs[1]), "module hotswap") {
		t.Errorf("COMMAND DOCS hsget = %#v %v", docs, err)
	}
	if l := e.infoModule("hotswap"); !strings.HasPrefix(l, "module:name=hotswap,ver=10000,version=1.0.0,") || strings.Contains(l, "last_error") {
		t.Errorf("INFO modules: %q", l)
	}

	// Files that must be refused leave build A serving, and say why.
	garbage := make([]byte, 64<<10)
	_, _ = rand.Read(garbage)
	for _, tc := range []struct {
		name string
		bin  []byte
		want string
	}{
		{"truncated", bins["B"][:len(bins["B"])/3], ""},
		{"random bytes", garbage, ""},
		{"bad manifest", bins["badmanifest"], `command "hsbad" has arity 0`},
		{"trap in initialisation", bins["inittrap"], "instantiate"},
	} {
		refusals := e.infoCount("module_refusals")
		e.place("hotswap.wasm", tc.bin)
		// A periodic rescan may refuse the previous file once more before
		// this one is read: wait for this file's own reason.
		e.eventually(tc.name+" refused", limit, func() bool {
			lastErr, _ := e.modules()["hotswap"]["last_error"].(string)
			return e.infoCount("module_refusals") > refusals && strings.Contains(lastErr, tc.want)
		})
		if got := e.ver(); got != "A" {
			t.Errorf("%s: hsver = %q, want build A still serving", tc.name, got)
		}
		m := e.modules()["hotswap"]
		lastErr, _ := m["last_error"].(string)
		if m["version"] != "1.0.0" || len(m["commands"].([]any)) != 3 ||
			!strings.Contains(lastErr, filepath.Join(e.dir, "hotswap.wasm")) || !strings.Contains(lastErr, tc.want) {
			t.Errorf("%s: MODULE LIST entry %v, want version 1.0.0 still serving and last_error containing %q", tc.name, m, tc.want)
		}
		if l := e.infoModule("hotswap"); !strings.Contains(l, ",version=1.0.0,") || !strings.Contains(l, ",last_error=") {
			t.Errorf("%s: INFO modules: %q", tc.name, l)
		}
		t.Logf("%s: refused with %q", tc.name, lastErr)
	}

	// A second module claiming a served command is refused.
	refusals := e.infoCount("module_refusals")
	e.place("twin.wasm", bins["A"])
	e.eventually("twin refused", limit, func() bool { return e.infoCount("module_refusals") > refusals })
	twin := e.modules()["twin"]
	if twin == nil || len(twin["commands"].([]any)) != 0 ||
		!strings.Contains(twin["last_error"].(string), `is already served by module hotswap`) {
		t.Errorf("MODULE LIST twin: %v", twin)
	}
	if got := e.ver(); got != "A" {
		t.Errorf("hsver after twin was refused = %q", got)
	}

	// A good build replaces the module and clears the error.
	e.place("hotswap.wasm", bins["B"])
	e.eventually("build B serves", limit, func() bool { return e.ver() == "B" })
	if m := e.modules()["hotswap"]; m["last_error"] != "" || m["ver"] != int64(20000) || m["swaps"] != int64(1) {
		t.Errorf("MODULE LIST after a good build: %v", m)
	}

	// Removing the file removes the commands.
	if err := os.Remove(filepath.Join(e.dir, "hotswap.wasm")); err != nil {
		t.Fatal(err)
	}
	e.eventually("hsver unknown", limit, func() bool { return e.ver() == unknown })
	if err := e.c.Do(ctx, "hsget", "k").Err(); err == nil || err.Error() != "ERR unknown command 'hsget', with args beginning with: 'k' " {
		t.Errorf("hsget after removal: %v", err)
	}
	if n, err := e.c.Do(ctx, "COMMAND", "COUNT").Int(); err != nil || n != before {
		t.Errorf("COMMAND COUNT after removal = %d %v, want %d", n, err, before)
	}
	if info, err := e.c.Do(ctx, "COMMAND", "INFO", "hsget").Slice(); err != nil || len(info) != 1 || info[0] != nil {
		t.Errorf("COMMAND INFO hsget after removal = %#v %v", info, err)
	}
	if docs, err := e.c.Do(ctx, "COMMAND", "DOCS", "hsget").Slice(); err != nil || len(docs) != 0 {
		t.Errorf("COMMAND DOCS hsget after removal = %#v %v", docs, err)
	}
	if _, ok := e.modules()["hotswap"]; ok || e.infoModule("hotswap") != "" {
		t.Errorf("hotswap still listed after removal: %v", e.modules())
	}

	// The refused twin is not retried on its own; MODULE LOAD loads it now
	// that nothing else claims its commands, and MODULE UNLOAD removes it.
	if err := e.c.Do(ctx, "MODULE", "LOAD", filepath.Join(e.dir, "twin.wasm")).Err(); err != nil {
		t.Fatalf("MODULE LOAD twin: %v", err)
	}
	if got := e.ver(); got != "A" {
		t.Errorf("hsver served by twin = %q", got)
	}
	if err := e.c.Do(ctx, "MODULE", "UNLOAD", "twin").Err(); err != nil {
		t.Fatalf("MODULE UNLOAD twin: %v", err)
	}
	if got := e.ver(); got != unknown {
		t.Errorf("hsver after MODULE UNLOAD = %q", got)
	}
	if s := e.backend.Runtime.Stats(); s.Loads != 2 || s.Swaps != 1 || s.Unloads != 2 || s.Refusals != 5 {
		t.Errorf("runtime stats = %+v, want 2 loads, 1 swap, 2 unloads, 5 refusals", s)
	}
}
