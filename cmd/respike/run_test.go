package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/config"
)

// daemon is run() serving on a free port, with a signal channel the test
// writes to.
type daemon struct {
	t    *testing.T
	sigs chan os.Signal
	done chan error
	c    *redis.Client
}

// startRun runs the daemon with cfg and waits until it serves.
func startRun(t *testing.T, cfg config.Config) *daemon {
	t.Helper()
	cfg.Server.Listen = "127.0.0.1:0"
	d := &daemon{t: t, sigs: make(chan os.Signal, 1), done: make(chan error, 1)}
	addrs := make(chan string, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { d.done <- run(cfg, log, d.sigs, func(addr string) { addrs <- addr }) }()
	select {
	case addr := <-addrs:
		d.c = redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, ReadTimeout: 20 * time.Second})
		t.Cleanup(func() { d.c.Close() })
	case err := <-d.done:
		t.Fatalf("run ended before serving: %v", err)
	case <-time.After(5 * time.Minute): // a cold compilation under -race takes half a minute
		t.Fatal("the daemon did not serve within 5 minutes")
	}
	return d
}

// stop sends SIGTERM and checks that run returns nil.
func (d *daemon) stop() {
	d.t.Helper()
	d.sigs <- syscall.SIGTERM
	select {
	case err := <-d.done:
		if err != nil {
			d.t.Fatalf("run after SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		d.t.Fatal("run did not return within 30s of SIGTERM")
	}
}

// eventually polls cond until it holds, failing the test after a bounded
// wait: the watcher reacts to files asynchronously and has no other event
// to wait on from outside.
func (d *daemon) eventually(what string, cond func() bool) {
	d.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: not within 2 minutes", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// infoInt reads a number from INFO modules.
func (d *daemon) infoInt(key string) int {
	d.t.Helper()
	info, err := d.c.Info(context.Background(), "modules").Result()
	if err != nil {
		d.t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + key + `:(\d+)\r$`).FindStringSubmatch(info)
	if m == nil {
		d.t.Fatalf("INFO modules lacks %s: %q", key, info)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// moduleList returns MODULE LIST as one map per module.
func (d *daemon) moduleList() map[string]map[string]any {
	d.t.Helper()
	mods, err := d.c.Do(context.Background(), "MODULE", "LIST").Slice()
	if err != nil {
		d.t.Fatal(err)
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

// buildHotswap compiles the end-to-end tests' hot-swap module, build A,
// into dir/hotswap.wasm.
func buildHotswap(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", filepath.Join(dir, "hotswap.wasm"),
		"-ldflags=-X main.reply=A -X main.version=1.0.0", "./test/e2e/testdata/hotswap")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the hotswap test module: %v\n%s", err, out)
	}
}

func TestRunWatchesAndReconcilesOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	buildHotswap(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "bad.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults()
	cfg.Commands.Dir = dir
	// The end-to-end hot-swap tests cache the same build here: a warm
	// cache spares half a minute of compilation under -race.
	if base, err := os.UserCacheDir(); err == nil {
		cfg.Commands.CacheDir = filepath.Join(base, "respike", "hotswap-test-wazero")
	}
	d := startRun(t, cfg)
	ctx := context.Background()

	if got, err := d.c.Do(ctx, "HSVER").Text(); err != nil || got != "A" {
		t.Fatalf("hsver = %q %v", got, err)
	}
	mods := d.moduleList()
	hs, bad := mods["hotswap"], mods["bad"]
	if hs == nil || hs["last_error"] != "" || hs["swaps"] != int64(0) || hs["ver"] != int64(10000) {
		t.Fatalf("MODULE LIST hotswap: %v", hs)
	}
	if bad == nil || !strings.Contains(bad["last_error"].(string), "bad.wasm") {
		t.Fatalf("MODULE LIST bad: %v", bad)
	}
	if n := d.infoInt("module_refusals"); n != 1 {
		t.Fatalf("module_refusals = %d, want 1", n)
	}

	// SIGHUP retries the refused file and leaves the unchanged module alone.
	d.sigs <- syscall.SIGHUP
	d.eventually("SIGHUP retries bad.wasm", func() bool { return d.infoInt("module_refusals") == 2 })
	if now := d.moduleList()["hotswap"]; now["loaded_at"] != hs["loaded_at"] || now["swaps"] != int64(0) {
		t.Fatalf("SIGHUP reloaded the unchanged module: %v, was %v", now, hs)
	}
	if n := d.infoInt("module_loads"); n != 1 {
		t.Fatalf("module_loads = %d after SIGHUP, want 1", n)
	}

	// The folder is watched: a removed file unloads its module.
	if err := os.Remove(filepath.Join(dir, "hotswap.wasm")); err != nil {
		t.Fatal(err)
	}
	d.eventually("hotswap unloaded", func() bool {
		err := d.c.Do(ctx, "HSVER").Err()
		return err != nil && strings.HasPrefix(err.Error(), "ERR unknown command 'HSVER'")
	})
	if n := d.infoInt("module_unloads"); n != 1 {
		t.Fatalf("module_unloads = %d, want 1", n)
	}
	d.stop()
}

func TestRunWithoutCommandsFolder(t *testing.T) {
	cfg := config.Defaults()
	cfg.Commands.Dir = filepath.Join(t.TempDir(), "missing")
	cfg.Commands.CacheDir = "none"
	d := startRun(t, cfg)
	if got, err := d.c.Ping(context.Background()).Result(); err != nil || got != "PONG" {
		t.Fatalf("PING = %q %v", got, err)
	}
	d.sigs <- syscall.SIGHUP // still nothing to load, and no harm done
	if mods := d.moduleList(); len(mods) != 0 {
		t.Fatalf("MODULE LIST = %v", mods)
	}
	d.stop()
}

// With [metrics] listen set, run serves /readyz, which says not ready while
// no module command is loaded (here the commands folder is missing).
func TestRunServesMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := config.Defaults()
	cfg.Commands.Dir = filepath.Join(t.TempDir(), "missing")
	cfg.Commands.CacheDir = "none"
	cfg.Metrics.Listen = addr
	d := startRun(t, cfg)
	defer d.stop()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no module command") {
		t.Fatalf("/readyz without modules: %d %q", code, body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "respike_connected_clients ") {
		t.Fatalf("/metrics: %d %.200q", code, body)
	}
}

// syncBuffer is a bytes.Buffer safe for the logger's and the test's
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// With [log] format = "json", every line is a JSON object, the Aerospike
// backend's own (an unreachable cluster) included.
func TestRunLogsJSON(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String() // nothing listens there once closed
	ln.Close()
	cfg := config.Defaults()
	cfg.Server.Listen = "127.0.0.1:0"
	cfg.Commands.Dir = filepath.Join(t.TempDir(), "missing")
	cfg.Commands.CacheDir = "none"
	cfg.Store.Backend = "aerospike"
	cfg.Aerospike.Hosts = []string{closed}
	cfg.Log.Format = "json"
	var out syncBuffer
	log := newLogger(cfg.Log, &out)
	sigs := make(chan os.Signal, 1)
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- run(cfg, log, sigs, func(addr string) { ready <- addr }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("run ended: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(strings.ToLower(out.String()), "aerospike") {
		if time.Now().After(deadline) {
			t.Fatalf("no Aerospike line within a minute: %q", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the log for the backend's line
	}
	sigs <- syscall.SIGTERM
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil || obj["level"] == nil || obj["msg"] == nil {
			t.Fatalf("not a JSON log line: %q (%v)", line, err)
		}
	}
}
