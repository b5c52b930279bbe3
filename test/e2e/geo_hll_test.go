package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestDifferentialResume plays the geo and hll scripts against a daemon
// whose embedded store answers every request after the guest call
// returns, as Aerospike does: a command that kept an argument from before
// a store wait (which the host's next message overwrites) fails here
// without an Aerospike cluster.
func TestDifferentialResume(t *testing.T) {
	needModules(t, "geo", "hll")
	redisServer(t)
	b, err := NewResumeBackend(context.Background(), env.modDir, env.cacheDir, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	addr := serve(t, testConfig(), b).Addr
	for _, name := range []string{"geo.redis", "hll.redis"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "diff", name))
			if err != nil {
				t.Fatal(err)
			}
			lines, err := parseScript(name, data)
			if err != nil {
				t.Fatal(err)
			}
			runScriptOn(t, addr, lines, false)
			runScriptOn(t, addr, lines, true)
		})
	}
}
