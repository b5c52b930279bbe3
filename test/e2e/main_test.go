package e2e

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/config"
)

// env is built once per test binary by TestMain: the command modules
// compiled to WebAssembly, one backend (memory store and runtime) shared by
// every daemon, and a daemon with the default configuration.
var env struct {
	root      string
	modDir    string
	cacheDir  string // wazero's compilation cache
	families  []string
	buildErrs map[string]error
	backend   *Backend
	daemon    *Daemon
	logger    *slog.Logger

	redisOnce sync.Once
	redis     *Redis
	redisErr  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code, err := runTests(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		code = 1
	}
	os.Exit(code)
}

func runTests(m *testing.M) (int, error) {
	env.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	root, err := RepoRoot()
	if err != nil {
		return 1, err
	}
	env.root = root
	tmp, err := os.MkdirTemp("", "respike-e2e-")
	if err != nil {
		return 1, err
	}
	defer os.RemoveAll(tmp)
	env.modDir = filepath.Join(tmp, "commands")
	if err := os.Mkdir(env.modDir, 0o755); err != nil {
		return 1, err
	}
	if env.families, err = Families(root); err != nil {
		return 1, err
	}
	env.buildErrs = map[string]error{}
	start := time.Now()
	for _, f := range env.families {
		if err := BuildModule(root, f, env.modDir); err != nil {
			env.buildErrs[f] = err
			fmt.Fprintln(os.Stderr, "e2e:", err)
		}
	}
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "e2e: built %d modules in %v\n", len(env.families)-len(env.buildErrs), time.Since(start).Round(time.Millisecond))
	}

	ctx := context.Background()
	// wazero's compilation cache is keyed by module content, wazero version
	// and CPU, so a persistent one is safe to share between runs and saves
	// minutes of compiling under the race detector.
	cache := filepath.Join(tmp, "cache")
	if dir, err := os.UserCacheDir(); err == nil {
		cache = filepath.Join(dir, "respike", "e2e-wazero")
	}
	env.cacheDir = cache
	env.backend, err = NewBackend(ctx, env.modDir, cache, env.logger)
	if err != nil {
		return 1, fmt.Errorf("module runtime: %w", err)
	}
	defer env.backend.Close()
	env.daemon, err = StartDaemon(testConfig(), env.backend, env.logger)
	if err != nil {
		return 1, err
	}
	code := m.Run()
	if err := env.daemon.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stopping the daemon:", err)
		code = 1
	}
	if env.redis != nil {
		env.redis.Stop()
	}
	return code, nil
}

// testConfig is the default configuration with a port chosen at start.
func testConfig() config.Config {
	cfg := config.Defaults()
	cfg.Server.Listen = "127.0.0.1:0"
	return cfg
}

// needModules fails the test unless the families built and loaded.
func needModules(t *testing.T, families ...string) {
	t.Helper()
	for _, f := range families {
		if err := env.buildErrs[f]; err != nil {
			t.Fatalf("module %s did not build: %v", f, err)
		}
		if !slices.Contains(env.families, f) {
			t.Fatalf("commands/%s does not exist yet", f)
		}
		loaded := false
		for _, m := range env.backend.Runtime.Modules() {
			if m.Name == f && m.LastError == "" {
				loaded = true
			} else if m.Name == f {
				t.Fatalf("module %s refused: %s", f, m.LastError)
			}
		}
		if !loaded {
			t.Fatalf("module %s not loaded", f)
		}
	}
}

// redisServer returns the reference redis-server, starting it on first use.
func redisServer(t *testing.T) *Redis {
	t.Helper()
	env.redisOnce.Do(func() { env.redis, env.redisErr = StartRedis() })
	if env.redisErr != nil {
		t.Fatal(env.redisErr)
	}
	return env.redis
}

// newDaemon starts a daemon with a modified configuration on the shared
// backend; it stops when the test ends.
func newDaemon(t *testing.T, mutate func(*config.Config)) *Daemon {
	t.Helper()
	cfg := testConfig()
	mutate(&cfg)
	return serve(t, cfg, env.backend)
}

// serve starts a daemon with cfg on b; it stops when the test ends.
func serve(t *testing.T, cfg config.Config, b *Backend) *Daemon {
	t.Helper()
	d, err := StartDaemon(cfg, b, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("stopping the daemon: %v", err)
		}
	})
	return d
}

// client returns a go-redis client of addr, closed when the test ends.
func client(t *testing.T, addr string, mutate ...func(*redis.Options)) *redis.Client {
	t.Helper()
	opts := &redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, DialTimeout: 5 * time.Second,
		ReadTimeout: 20 * time.Second, WriteTimeout: 20 * time.Second}
	for _, f := range mutate {
		f(opts)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}

// raw returns a raw RESP connection to addr, closed when the test ends.
func raw(t *testing.T, addr string) *RawConn {
	t.Helper()
	c, err := DialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// do sends a command on c and returns the raw reply, failing the test on an
// I/O error.
func do(t *testing.T, c *RawConn, args ...string) string {
	t.Helper()
	r, err := c.Do(args...)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return r
}

// flushAll empties the shared store.
func flushAll(t *testing.T) {
	t.Helper()
	c := raw(t, env.daemon.Addr)
	if r := do(t, c, "FLUSHALL"); r != "+OK\r\n" {
		t.Fatalf("FLUSHALL: %q", r)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
