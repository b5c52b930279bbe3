package module

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Test modules are built once per test binary run into modDir; compiled code
// is cached in cacheDir so that each runtime a test creates loads it fast.
var (
	modDir   string
	cacheDir string
)

// builds are the Go test modules: output file (module name = base name) and
// source folder under testdata. faulty is loaded under two names; the copies
// are identical, so wazero compiles it once.
var builds = []struct{ out, src string }{
	{"kv.wasm", "kv"},
	{"trap.wasm", "faulty"},
	{"loop.wasm", "faulty"},
}

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "respike-module-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	modDir = filepath.Join(tmp, "modules")
	// Compiled code is cached across runs: compiling a Go module takes
	// seconds, and half a minute under -race. wazero keys its cache by the
	// module's hash, its own version and the CPU, so reuse is safe.
	cacheDir = filepath.Join(tmp, "cache")
	if dir, err := os.UserCacheDir(); err == nil {
		cacheDir = filepath.Join(dir, "respike", "module-test-wazero")
	}
	if err := buildModules(modDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func buildModules(dir string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(builds))
	sem := make(chan struct{}, 2)
	for i, b := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out := filepath.Join(dir, b.out)
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./testdata/"+b.src)
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if msg, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("build %s: %v\n%s", b.out, err, msg)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// mod returns the path of a built test module.
func mod(name string) string { return filepath.Join(modDir, name) }

// writeModule writes a module binary into dir and returns its path.
func writeModule(t testing.TB, dir, name string, bin []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// kvV2 is a second version of kv: same commands, and every one answers "2".
func kvV2() []byte {
	return fake{
		abi:      codec.ABIVersion,
		manifest: manifest("2", "echo", "get", "getset", "panic", "set", "ver"),
		reply:    doneReply("$1\r\n2\r\n"),
	}.wasm()
}

// newRuntime returns a runtime on st with the given modules loaded.
func newRuntime(t testing.TB, cfg Config, st store.Store, modules ...string) *Runtime {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = cacheDir
	}
	if cfg.Instances == 0 {
		cfg.Instances = 2
	}
	if cfg.MemoryLimitMiB == 0 {
		cfg.MemoryLimitMiB = 256
	}
	r, err := New(context.Background(), cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(context.Background()) })
	for _, m := range modules {
		if _, err := r.Load(context.Background(), mod(m)); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// do runs a command and returns its raw RESP reply.
func do(t testing.TB, r *Runtime, args ...string) string {
	t.Helper()
	return doCtx(t, context.Background(), r, args...)
}

func doCtx(t testing.TB, ctx context.Context, r *Runtime, args ...string) string {
	t.Helper()
	cmd := r.Lookup([]byte(args[0]))
	if cmd == nil {
		t.Errorf("command %q not found", args[0])
		return ""
	}
	start := &codec.Start{Proto: 2, ClientID: 1}
	for _, a := range args {
		start.Args = append(start.Args, []byte(a))
	}
	return string(r.Exec(ctx, cmd, start, nil))
}

// fakeStore is a store of one bin per key, enough for the test modules'
// get and put. hook, when set, runs at the start of every Exec: tests use it
// to hold a command in the store.
type fakeStore struct {
	inline bool
	mu     sync.Mutex
	data   map[string][]byte
	hook   atomic.Pointer[func(ctx context.Context, req *codec.Request)]
	execs  atomic.Int64
}

func newFakeStore(inline bool) *fakeStore {
	return &fakeStore{inline: inline, data: map[string][]byte{}}
}

func (s *fakeStore) Inline() bool { return s.inline }
func (s *fakeStore) Close() error { return nil }

func (s *fakeStore) setHook(f func(ctx context.Context, req *codec.Request)) {
	if f == nil {
		s.hook.Store(nil)
		return
	}
	s.hook.Store(&f)
}

func (s *fakeStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	s.execs.Add(1)
	if h := s.hook.Load(); h != nil {
		(*h)(ctx, req)
	}
	resp.Code, resp.Msg = codec.OK, ""
	if err := ctx.Err(); err != nil {
		resp.Code, resp.Msg = codec.Timeout, err.Error()
		return
	}
	if req.Kind != codec.ReqRecords {
		resp.Code, resp.Msg = codec.InvalidOperation, "fake store: records only"
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resp.Results = resp.Results[:0]
	for i := range req.Calls {
		call := &req.Calls[i]
		if len(resp.Results) < cap(resp.Results) {
			resp.Results = resp.Results[:len(resp.Results)+1]
		} else {
			resp.Results = append(resp.Results, codec.Result{})
		}
		res := &resp.Results[len(resp.Results)-1]
		*res = codec.Result{Values: res.Values[:0]}
		for _, op := range call.Ops {
			switch op.Code {
			case codec.OpGet:
				v, ok := s.data[string(call.Key)]
				if !ok {
					res.Code = codec.NotFound
					res.Values = append(res.Values, codec.Nil)
					continue
				}
				res.Values = append(res.Values, codec.Bytes(v))
			case codec.OpPut:
				s.data[string(call.Key)] = bytes.Clone(op.Value.Bytes)
				res.Values = append(res.Values, codec.Nil)
			default:
				res.Code, res.Msg = codec.InvalidOperation, "fake store: get and put only"
			}
		}
	}
}

// raceEnabled is set by race_test.go.
var raceEnabled bool

func gomaxprocs() int { return runtime.GOMAXPROCS(0) }
