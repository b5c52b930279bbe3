// Package e2e tests respike end to end: the command modules built to
// WebAssembly, the daemon's server, runtime and memory store running
// in-process, real clients (go-redis and raw RESP), and a real redis-server
// to compare replies with byte for byte.
//
// This file holds the harness; the tests are in *_test.go.
package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/respike/respike/host/block"
	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/server"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/aerospike"
	"github.com/respike/respike/host/store/memory"
	"github.com/respike/respike/host/watch"
)

// RedisServerPath is where the Debian redis-server package installs the
// reference server.
const RedisServerPath = "/usr/bin/redis-server"

// RepoRoot finds the module root (the folder holding go.mod) above the
// working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Families lists the command module folders: commands/<family> holding a
// main package.
func Families(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, "commands"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(root, "commands", e.Name(), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err == nil && (strings.HasPrefix(string(b), "package main\n") || strings.Contains(string(b), "\npackage main\n")) {
				out = append(out, e.Name())
				break
			}
		}
	}
	return out, nil
}

// BuildModule compiles commands/<family> to out/<family>.wasm as the
// Makefile does.
func BuildModule(root, family, out string) error {
	cmd := exec.Command("go", "build", "-buildmode=c-shared",
		"-o", filepath.Join(out, family+".wasm"), "./commands/"+family)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building commands/%s: %v\n%s", family, err, b)
	}
	return nil
}

// Backend is a store and a module runtime serving the modules of a folder;
// several daemons may share it: they are then one proxy with several
// listeners. Store is the registry of blocked clients (host/block) over
// the store, as cmd/respike wires it.
type Backend struct {
	Store   store.Store
	Runtime *module.Runtime

	// shared is set on a backend over another's store (NewProxy): closing
	// it leaves the store open.
	shared bool
}

// NewBackend opens a store and loads every module in dir, caching
// compilations in cacheDir. The store is the embedded one, or the Aerospike
// cluster at RESPIKE_TEST_AEROSPIKE=host:port when that is set (namespace
// "test", set "respike_e2e" or RESPIKE_TEST_AEROSPIKE_SET), so every
// end-to-end and differential test can run against a real server.
func NewBackend(ctx context.Context, dir, cacheDir string, logger *slog.Logger) (*Backend, error) {
	var st store.Store = memory.New(memory.Options{Databases: 16})
	if addr := os.Getenv("RESPIKE_TEST_AEROSPIKE"); addr != "" {
		set := "respike_e2e"
		if s := os.Getenv("RESPIKE_TEST_AEROSPIKE_SET"); s != "" {
			set = s // a set of its own: another run's FLUSHALL truncates only its set
		}
		as, err := aerospike.New(ctx, aerospike.Config{Hosts: []string{addr}, Namespace: "test", Set: set}, logger)
		if err != nil {
			return nil, fmt.Errorf("aerospike at %s: %w", addr, err)
		}
		st = as
	}
	b, err := newBackendOn(ctx, st, dir, cacheDir, logger, block.DefaultPollInterval, false)
	if err != nil {
		st.Close()
		return nil, err
	}
	return b, nil
}

// NewResumeBackend is NewBackend on a fresh embedded store whose requests
// never run inside the guest call: every store request ends a guest call
// and resumes the command afterwards, as on Aerospike. Commands of several
// steps then interleave with other clients' commands between their steps
// far more often than inline, which the race tests need.
func NewResumeBackend(ctx context.Context, dir, cacheDir string, logger *slog.Logger) (*Backend, error) {
	st := memory.New(memory.Options{Databases: 16})
	b, err := newBackendOn(ctx, st, dir, cacheDir, logger, block.DefaultPollInterval, true)
	if err != nil {
		st.Close()
		return nil, err
	}
	return b, nil
}

// NewProxy returns a second proxy on b's store: a runtime of its own
// loading the modules of dir (compilations cached in cacheDir), and a registry of blocked clients of its
// own, polling every poll, which sees the other proxy's writes only
// through the store, as a proxy in another process would.
func (b *Backend) NewProxy(ctx context.Context, dir, cacheDir string, logger *slog.Logger, poll time.Duration) (*Backend, error) {
	st := b.Store
	if reg, ok := st.(*block.Registry); ok {
		st = reg.Store()
	}
	nb, err := newBackendOn(ctx, st, dir, cacheDir, logger, poll, false)
	if nb != nil {
		nb.shared = true
	}
	return nb, err
}

// newBackendOn loads every module in dir on a runtime over st; with
// noInline its store requests never run inside the guest call.
func newBackendOn(ctx context.Context, st store.Store, dir, cacheDir string, logger *slog.Logger, poll time.Duration, noInline bool) (*Backend, error) {
	reg := block.New(st, block.Options{PollInterval: poll, Logger: logger})
	rt, err := module.New(ctx, module.Config{
		Dir:            dir,
		CacheDir:       cacheDir,
		Deadline:       5 * time.Second,
		MemoryLimitMiB: 64,
		Reserved:       server.IsBuiltin,
		Databases:      16, // the server's default
		// RESPIKE_TEST_NOINLINE=1 makes the embedded store's requests wait
		// and resume, as Aerospike's do: pipelines then take the overlapped
		// path (host/module/overlap.go) without a cluster.
		NoInline: noInline || os.Getenv("RESPIKE_TEST_NOINLINE") != "",
		Logger:   logger,
	}, reg)
	if err != nil {
		return nil, err
	}
	if err := rt.LoadDir(ctx); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &Backend{Store: reg, Runtime: rt}, nil
}

// WatchModules keeps b's runtime in step with dir as the daemon does: it
// reconciles dir once (so its modules serve when it returns), then watches
// it (host/watch) until stop is called; stop returns the watcher's error.
func WatchModules(ctx context.Context, b *Backend, dir string, logger *slog.Logger) (stop func() error, err error) {
	w := watch.New(dir, b.Runtime, logger, 0)
	if err := w.Rescan(ctx); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return func() error {
		cancel()
		return <-done
	}, nil
}

// Close releases the runtime and the store (not a store it shares).
func (b *Backend) Close() {
	b.Runtime.Close(context.Background())
	if !b.shared {
		b.Store.Close()
	}
}

// Daemon is a respike server running in-process on a loopback port.
type Daemon struct {
	Addr   string
	Server *server.Server
	done   chan error
}

// StartDaemon serves backend with cfg on a free loopback port.
func StartDaemon(cfg config.Config, b *Backend, logger *slog.Logger) (*Daemon, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg.Server.Listen = ln.Addr().String()
	d := &Daemon{Addr: ln.Addr().String(), Server: server.New(cfg, b.Runtime, b.Store, logger), done: make(chan error, 1)}
	go func() { d.done <- d.Server.Serve(ln) }()
	return d, nil
}

// Stop closes the daemon gracefully.
func (d *Daemon) Stop() error {
	err := d.Server.Close()
	if serr := <-d.done; err == nil {
		err = serr
	}
	return err
}

// Redis is a redis-server child process.
type Redis struct {
	Addr string
	cmd  *exec.Cmd
	dir  string
}

// StartRedis starts the reference redis-server on a free loopback port,
// without persistence, and waits until it answers.
func StartRedis() (*Redis, error) {
	if _, err := os.Stat(RedisServerPath); err != nil {
		return nil, fmt.Errorf("%s not found: the differential tests compare respike with a real Redis; "+
			"install it with `apt-get install redis-server`", RedisServerPath)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		r, err := startRedisOnce()
		if err == nil {
			return r, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startRedisOnce() (*Redis, error) {
	// Take a free port, then hand it to redis-server; another process
	// could take it in between, hence the retries in StartRedis.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir, err := os.MkdirTemp("", "respike-e2e-redis-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(RedisServerPath, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	r := &Redis{Addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd, dir: dir}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			os.RemoveAll(dir)
			return nil, fmt.Errorf("redis-server exited: %s", stderr.String())
		default:
		}
		if c, err := DialRaw(r.Addr); err == nil {
			reply, err := c.Do("PING")
			c.Close()
			if err == nil && reply == "+PONG\r\n" {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("redis-server did not answer on %s: %s", r.Addr, stderr.String())
		}
		// Waiting for another process to start: there is no event to wait on.
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the redis-server and removes its folder.
func (r *Redis) Stop() {
	_ = r.cmd.Process.Kill()
	os.RemoveAll(r.dir)
}

// RawConn is a RESP client that returns replies as the raw bytes received.
type RawConn struct {
	nc net.Conn
	br *bufio.Reader
}

// DialRaw connects to addr.
func DialRaw(addr string) (*RawConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &RawConn{nc: nc, br: bufio.NewReader(nc)}, nil
}

// Close closes the connection.
func (c *RawConn) Close() error { return c.nc.Close() }

// Encode returns args as a RESP multibulk command.
func Encode(args ...string) []byte {
	b := []byte("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, "\r\n"...)
		b = append(b, a...)
		b = append(b, "\r\n"...)
	}
	return b
}

// Send writes raw bytes.
func (c *RawConn) Send(b []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(20 * time.Second))
	_, err := c.nc.Write(b)
	return err
}

// Do sends one command and reads its reply.
func (c *RawConn) Do(args ...string) (string, error) {
	if err := c.Send(Encode(args...)); err != nil {
		return "", err
	}
	return c.Reply()
}

// Reply reads one complete reply.
func (c *RawConn) Reply() (string, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	return ReadReply(c.br)
}

// Closed reports whether the peer has closed the connection: the next read
// ends with EOF (or a reset) rather than data.
func (c *RawConn) Closed() (bool, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := c.br.ReadByte()
	if err == nil {
		return false, fmt.Errorf("unexpected byte %q", b)
	}
	return errors.Is(err, io.EOF) || strings.Contains(err.Error(), "reset"), nil
}

// ReadReply reads one RESP2 or RESP3 reply and returns its raw bytes.
func ReadReply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return line, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return line, fmt.Errorf("malformed reply line %q", line)
	}
	n, _ := strconv.Atoi(line[1 : len(line)-2])
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return line, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return line, err
		}
		return line + string(buf), nil
	case '*', '~', '>', '%', '|':
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		out := line
		for i := 0; i < n; i++ {
			s, err := ReadReply(br)
			out += s
			if err != nil {
				return out, err
			}
		}
		if line[0] == '|' { // an attribute comes before the reply it annotates
			s, err := ReadReply(br)
			return out + s, err
		}
		return out, nil
	}
	return line, nil
}
