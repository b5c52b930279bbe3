package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestExamplesLoadIntoARunningDaemon builds every examples/<name> module as an
// outside author would, loads it into the running daemon with MODULE LOAD,
// and drives its commands through go-redis.
func TestExamplesLoadIntoARunningDaemon(t *testing.T) {
	flushAll(t)
	ctx := context.Background()
	// MODULE LOAD compiles the module before answering: minutes under the
	// race detector on a busy machine.
	c := client(t, env.daemon.Addr, func(o *redis.Options) { o.ReadTimeout = 10 * time.Minute })
	dir := t.TempDir()
	names := []string{"hello", "throttle", "cappedlist", "cas"}
	for _, name := range names {
		out := filepath.Join(dir, name+".wasm")
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "./examples/"+name)
		cmd.Dir = env.root
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building examples/%s: %v\n%s", name, err, b)
		}
		if err := c.Do(ctx, "MODULE", "LOAD", out).Err(); err != nil {
			t.Fatalf("MODULE LOAD %s: %v", name, err)
		}
		t.Cleanup(func() { c.Do(context.Background(), "MODULE", "UNLOAD", name) })
	}

	if got, err := c.Do(ctx, "GREET", "Ada").Text(); err != nil || got != "hello, Ada" {
		t.Fatalf("GREET = %q, %v", got, err)
	}

	// CL.THROTTLE key max_burst count period: a burst of 3 then limited.
	for i := 0; i < 3; i++ {
		r, err := c.Do(ctx, "CL.THROTTLE", "user:1", "2", "1", "60").Int64Slice()
		if err != nil || len(r) != 5 || r[0] != 0 || r[1] != 3 {
			t.Fatalf("throttle %d = %v, %v", i, r, err)
		}
	}
	r, err := c.Do(ctx, "CL.THROTTLE", "user:1", "2", "1", "60").Int64Slice()
	if err != nil || r[0] != 1 || r[2] != 0 || r[3] <= 0 {
		t.Fatalf("fourth throttle = %v, %v; want limited with a retry time", r, err)
	}
	if err := c.Do(ctx, "CL.THROTTLE", "user:1", "x", "1", "60").Err(); err == nil {
		t.Fatal("CL.THROTTLE with a bad burst succeeded")
	}

	// CAPPED.ADD keeps the newest N atomically.
	for i, m := range []string{"a", "b", "c", "d"} {
		if err := c.Do(ctx, "CAPPED.ADD", "log", "2", strings.Repeat("1", i+1), m).Err(); err != nil {
			t.Fatalf("CAPPED.ADD %s: %v", m, err)
		}
	}
	items, err := c.Do(ctx, "CAPPED.RANGE", "log").StringSlice()
	if err != nil || len(items) != 2 {
		t.Fatalf("CAPPED.RANGE = %v, %v; want the newest 2", items, err)
	}

	// CAS on a string written by the built-in SET.
	if err := c.Set(ctx, "cfg", "v1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, "CAS", "cfg", "v0", "v2").Int(); err != nil || n != 0 {
		t.Fatalf("CAS with a stale expectation = %d, %v", n, err)
	}
	if n, err := c.Do(ctx, "CAS", "cfg", "v1", "v2").Int(); err != nil || n != 1 {
		t.Fatalf("CAS = %d, %v", n, err)
	}
	if got := c.Get(ctx, "cfg").Val(); got != "v2" {
		t.Fatalf("GET after CAS = %q", got)
	}

	// MODULE UNLOAD removes the commands again.
	if err := c.Do(ctx, "MODULE", "UNLOAD", "hello").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "GREET", "Ada").Err(); err == nil || !strings.Contains(err.Error(), "unknown command") {
		t.Fatalf("GREET after unload: %v", err)
	}
}
