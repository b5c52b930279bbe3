package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/server"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/aerospike"
	"github.com/respike/respike/host/store/memory"
)

// buildCStrings compiles examples/cstrings, the module written in C against
// the ABI, with Debian's clang and wasm-ld (.ci/run installs them).
func buildCStrings(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"clang", "wasm-ld"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: building examples/cstrings needs clang and lld (apt-get install clang lld); CI installs them", tool)
		}
	}
	out := filepath.Join(t.TempDir(), "cstrings.wasm")
	cmd := exec.Command("clang", "--target=wasm32", "-O2", "-mbulk-memory", "-nostdlib",
		"-Wall", "-Wextra", "-pedantic", "-Werror", "-Wl,--no-entry", "-o", out, "examples/cstrings/cstrings.c")
	cmd.Dir = env.root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building examples/cstrings: %v\n%s", err, b)
	}
	return out
}

// cScript is GET, SET and INCR as Redis documents them, run as CGET, CSET
// and CINCR on respike: every reply must equal redis-server's byte for
// byte, in RESP2 and RESP3, one at a time and pipelined.
var cScript = [][]string{
	{"GET", "s"},
	{"SET", "s", "hello"},
	{"GET", "s"},
	{"SET", "s", ""},
	{"GET", "s"},
	{"SET", "bin", "a\x00b\r\nc\xff"},
	{"GET", "bin"},
	{"SET", "key with spaces", "v"},
	{"GET", "key with spaces"},
	{"INCR", "s"},
	{"INCR", "n"},
	{"INCR", "n"},
	{"GET", "n"},
	{"SET", "n", "-5"},
	{"INCR", "n"},
	{"GET", "n"},
	{"SET", "n", "007"},
	{"INCR", "n"},
	{"GET", "n"},
	{"SET", "n", "9223372036854775806"},
	{"INCR", "n"},
	{"INCR", "n"},
	{"GET", "n"},
	{"SET", "n", "-9223372036854775808"},
	{"INCR", "n"},
	{"SET", "n", "12 "},
	{"INCR", "n"},
	{"HSET", "h", "f", "v"},
	{"GET", "h"},
	{"INCR", "h"},
	{"SET", "h", "now a string"},
	{"GET", "h"},
	{"TYPE", "h"},
	{"SADD", "st", "m"},
	{"INCR", "st"},
	{"GET", "missing"},
	{"SET", "x", "1"},
	{"GET", "x"},
	// Larger than every buffer the module starts with: it grows them, and
	// the response comes through exec's "grow and take" path.
	{"SET", "big", strings.Repeat("0123456789", 30000)},
	{"GET", "big"},
	{"GET", "big"},
}

// cName is the respike name of a script command: GET, SET and INCR run
// as the C module's commands, the rest (HSET, TYPE, ...) as they are.
func cName(args []string) []string {
	switch strings.ToUpper(args[0]) {
	case "GET", "SET", "INCR":
		return append([]string{"C" + args[0]}, args[1:]...)
	}
	return args
}

// TestCModuleMatchesRedis loads examples/cstrings into daemons whose store
// answers inside the guest call (the embedded store's fast path) and
// outside it (the guest waits and is resumed, as on Aerospike), and
// compares its GET, SET and INCR with redis-server's.
func TestCModuleMatchesRedis(t *testing.T) {
	needModules(t, "strings", "hash", "set", "keys")
	wasm := buildCStrings(t)
	rs := redisServer(t)
	type cMode struct {
		name     string
		noInline bool
		as       string // Aerospike's address, where every request waits
	}
	modes := []cMode{{"inline", false, ""}, {"waiting", true, ""}}
	if addr := os.Getenv("RESPIKE_TEST_AEROSPIKE"); addr != "" {
		modes = append(modes, cMode{"aerospike", true, addr})
	} else {
		t.Log("RESPIKE_TEST_AEROSPIKE not set: the C module runs on the embedded store only")
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			d := cDaemon(t, wasm, mode.noInline, mode.as)
			for _, proto := range []string{"2", "3"} {
				for _, pipelined := range []bool{false, true} {
					name := "resp" + proto
					if pipelined {
						name += "/pipelined"
					}
					t.Run(name, func(t *testing.T) {
						want := runC(t, rs.Addr, proto, pipelined, false)
						got := runC(t, d.Addr, proto, pipelined, true)
						for i := range cScript {
							if got[i] != want[i] {
								t.Errorf("%q: respike %q, redis %q", cName(cScript[i]), got[i], want[i])
							}
						}
					})
				}
			}
			// The store path the mode names was the one taken.
			c := raw(t, d.Addr)
			waits, batched := infoInt(t, c, "module_store_waits"), infoInt(t, c, "module_batched_commands")
			if mode.noInline && waits == 0 {
				t.Error("module_store_waits = 0: no command waited on the store")
			}
			if !mode.noInline && (waits != 0 || batched == 0) {
				t.Errorf("module_store_waits = %d, module_batched_commands = %d: want inline store calls and batches", waits, batched)
			}

			// The C module and the Go module read each other's writes.
			do(t, c, "FLUSHDB")
			do(t, c, "CSET", "k", "from C")
			if r := do(t, c, "GET", "k"); r != "$6\r\nfrom C\r\n" {
				t.Errorf("GET of a CSET value = %q", r)
			}
			do(t, c, "SET", "k", "41")
			if r := do(t, c, "CINCR", "k"); r != ":42\r\n" {
				t.Errorf("CINCR of a SET value = %q", r)
			}
			if r := do(t, c, "CGET", "k"); r != "$2\r\n42\r\n" {
				t.Errorf("CGET after CINCR = %q", r)
			}
			// A write the store refuses reads the same from both modules.
			if mode.as == "" {
				huge := strings.Repeat("x", cMaxRecord+1)
				want, got := do(t, c, "SET", "huge", huge), do(t, c, "CSET", "huge", huge)
				if !strings.HasPrefix(want, "-ERR respike: the value is too large") || got != want {
					t.Errorf("CSET over the record size limit = %q, SET = %q", got, want)
				}
			}
		})
	}
}

// infoInt returns the integer field name of INFO modules.
func infoInt(t *testing.T, c *RawConn, name string) int64 {
	t.Helper()
	return infoValue(t, do(t, c, "INFO", "modules"), "modules", name)
}

// runC flushes the database at addr, runs cScript there (as C commands
// when cmod) and returns the raw replies.
func runC(t *testing.T, addr, proto string, pipelined, cmod bool) []string {
	t.Helper()
	c := raw(t, addr)
	do(t, c, "HELLO", proto)
	do(t, c, "FLUSHDB")
	cmds := make([][]string, len(cScript))
	for i, args := range cScript {
		cmds[i] = args
		if cmod {
			cmds[i] = cName(args)
		}
	}
	replies := make([]string, len(cmds))
	if !pipelined {
		for i, args := range cmds {
			replies[i] = do(t, c, args...)
		}
		return replies
	}
	var b []byte
	for _, args := range cmds {
		b = append(b, Encode(args...)...)
	}
	if err := c.Send(b); err != nil {
		t.Fatal(err)
	}
	for i := range replies {
		r, err := c.Reply()
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		replies[i] = r
	}
	return replies
}

// cMaxRecord is the record size limit of cDaemon's embedded store.
const cMaxRecord = 1 << 20

// cDaemon serves the command modules and the C module on a store of its
// own: the embedded one, or the Aerospike cluster at asAddr when that is
// set. noInline makes every store request wait outside the guest call.
func cDaemon(t *testing.T, wasm string, noInline bool, asAddr string) *Daemon {
	t.Helper()
	ctx := context.Background()
	var st store.Store = memory.New(memory.Options{Databases: 16, MaxRecordBytes: cMaxRecord})
	if asAddr != "" {
		as, err := aerospike.New(ctx, aerospike.Config{Hosts: []string{asAddr}, Namespace: "test", Set: "respike_e2e_c"}, env.logger)
		if err != nil {
			t.Fatalf("aerospike at %s: %v", asAddr, err)
		}
		st = as
	}
	rt, err := module.New(ctx, module.Config{
		Dir:            env.modDir,
		CacheDir:       env.cacheDir,
		Deadline:       5 * time.Second,
		MemoryLimitMiB: 64,
		NoInline:       noInline,
		Reserved:       server.IsBuiltin,
		Logger:         env.logger,
	}, st)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	b := &Backend{Store: st, Runtime: rt}
	t.Cleanup(b.Close)
	if err := rt.LoadDir(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Load(ctx, wasm); err != nil {
		t.Fatalf("loading examples/cstrings: %v", err)
	}
	return serve(t, testConfig(), b)
}
