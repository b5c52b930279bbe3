package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestModuleClock checks the wall clock the built-in modules read through
// WASI themselves (commands/internal/kit, clock_wasip1.go: not package
// time, which would make each module a tenth larger) against the host's:
// a pending-rename mark (bin "p", Unix milliseconds) written a minute ago
// is ignored at once, and one written now makes DUMP wait for it and give
// up after kit.RetryFor (2 s, counted from the command's start by the
// host's clock), neither at once nor never.
func TestModuleClock(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	mark := func(key string, ms int64) {
		t.Helper()
		if err := c.Set(ctx, key, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		var call codec.Call
		call.Key = []byte(key)
		call.Put("p", codec.Int(ms)) // kit.PendingBin
		req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}
		var resp codec.Response
		env.backend.Store.Exec(ctx, 0, &req, &resp)
		if resp.Code != codec.OK || len(resp.Results) != 1 || resp.Results[0].Code != codec.OK {
			t.Fatalf("write the mark: %d %s", resp.Code, resp.Msg)
		}
	}
	mark("clock:stale", time.Now().Add(-time.Minute).UnixMilli())
	start := time.Now()
	if err := c.Dump(ctx, "clock:stale").Err(); err != nil {
		t.Fatalf("DUMP of a key with a stale mark: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("DUMP of a key with a stale mark took %v: the module's clock is behind", took)
	}

	mark("clock:fresh", time.Now().UnixMilli())
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	start = time.Now()
	err := c.Dump(dctx, "clock:fresh").Err()
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "kept changing") {
		t.Fatalf("DUMP of a key with a fresh mark = %v after %v, want the contention error", err, took)
	}
	if took < 1500*time.Millisecond || took > 5*time.Second {
		t.Errorf("DUMP of a key with a fresh mark gave up after %v, want about 2 s", took)
	}
}
