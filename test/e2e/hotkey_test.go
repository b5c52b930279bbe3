package e2e

import (
	"context"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHotKeyReadModifyWritesPipelined runs read-modify-write commands from
// 50 clients, each pipelining 16 at a time, on one key: the load under
// which, on Aerospike, a quarter of the INCRBYFLOATs ran out of retries
// and answered "the key kept changing" (every loser of a generation race
// read and wrote again, so the work per success grew with the contenders),
// before the runtime queued the losers behind a per-key gate
// (host/module/gate.go). Every command must succeed and none may be lost:
// the final value is exact. It runs on the test store (the embedded one,
// or Aerospike when RESPIKE_TEST_AEROSPIKE is set), on the embedded store
// with every request waiting outside the guest call as on Aerospike (the
// pipeline windows and the gate's waits), and with the clients split
// between two proxies on one store, whose gates are their own: the
// generation checks keep them exact. RESPIKE_HOTKEY_ROUNDS sets the
// pipelines per client (default 2).
func TestHotKeyReadModifyWritesPipelined(t *testing.T) {
	needModules(t, "strings", "hash", "list", "zset", "keys")
	ctx := context.Background()
	t.Run("store", func(t *testing.T) { hotKeyRMW(t, env.daemon.Addr) })
	if os.Getenv("RESPIKE_TEST_AEROSPIKE") == "" {
		t.Run("resume", func(t *testing.T) {
			b, err := NewResumeBackend(ctx, env.modDir, env.cacheDir, env.logger)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(b.Close)
			hotKeyRMW(t, serve(t, testConfig(), b).Addr)
		})
	}
	t.Run("two proxies", func(t *testing.T) {
		b, err := env.backend.NewProxy(ctx, env.modDir, env.cacheDir, env.logger, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		hotKeyRMW(t, env.daemon.Addr, serve(t, testConfig(), b).Addr)
	})
}

// hotKeyRMW runs TestHotKeyReadModifyWritesPipelined's commands with the
// clients spread over the proxies at addrs.
func hotKeyRMW(t *testing.T, addrs ...string) {
	const clients, depth = 50, 16
	rounds := 2
	if s := os.Getenv("RESPIKE_HOTKEY_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RESPIKE_HOTKEY_ROUNDS=%q", s)
		}
		rounds = n
	}
	total := clients * depth * rounds
	ctx := context.Background()
	admin := client(t, addrs[0])
	// One connection per client, so that the 50 pipelines are in flight
	// together.
	conns := make([]*redis.Client, clients)
	for i := range conns {
		conns[i] = client(t, addrs[i%len(addrs)], func(o *redis.Options) { o.PoolSize = 1 })
	}
	rotation := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, tc := range []struct {
		name  string
		keys  []string
		setup func(t *testing.T)
		cmd   func(i, j int) []any // client i's j-th command
		check func(t *testing.T)
	}{
		{
			name: "INCRBYFLOAT", keys: []string{"hot:f"},
			cmd: func(int, int) []any { return []any{"INCRBYFLOAT", "hot:f", "0.5"} },
			check: func(t *testing.T) {
				want := strconv.FormatFloat(0.5*float64(total), 'f', -1, 64)
				if got, err := admin.Get(ctx, "hot:f").Result(); err != nil || got != want {
					t.Errorf("GET hot:f = %q (%v), want %s", got, err, want)
				}
			},
		},
		{
			name: "HINCRBYFLOAT", keys: []string{"hot:h"},
			cmd: func(int, int) []any { return []any{"HINCRBYFLOAT", "hot:h", "f", "0.5"} },
			check: func(t *testing.T) {
				want := strconv.FormatFloat(0.5*float64(total), 'f', -1, 64)
				if got, err := admin.HGet(ctx, "hot:h", "f").Result(); err != nil || got != want {
					t.Errorf("HGET hot:h f = %q (%v), want %s", got, err, want)
				}
			},
		},
		{
			// BITFIELD reads the bytes it touches, computes, and writes
			// them back under the generation it read.
			name: "BITFIELD", keys: []string{"hot:b"},
			cmd: func(int, int) []any { return []any{"BITFIELD", "hot:b", "INCRBY", "u32", "8", "1"} },
			check: func(t *testing.T) {
				got, err := admin.BitField(ctx, "hot:b", "GET", "u32", "8").Result()
				if err != nil || len(got) != 1 || got[0] != int64(total) {
					t.Errorf("BITFIELD GET = %v (%v), want [%d]", got, err, total)
				}
			},
		},
		{
			// A rotation reads the end item, then pops it and pushes it
			// at the other end on condition that the end is still that
			// item (OpExpectListItem).
			name: "LMOVE", keys: []string{"hot:l"},
			setup: func(t *testing.T) {
				if err := admin.RPush(ctx, "hot:l", toAny(rotation)...).Err(); err != nil {
					t.Fatal(err)
				}
			},
			cmd: func(int, int) []any { return []any{"LMOVE", "hot:l", "hot:l", "LEFT", "RIGHT"} },
			check: func(t *testing.T) {
				n := total % len(rotation)
				want := append(slices.Clone(rotation[n:]), rotation[:n]...)
				if got, err := admin.LRange(ctx, "hot:l", 0, -1).Result(); err != nil || !slices.Equal(got, want) {
					t.Errorf("LRANGE hot:l = %v (%v), want %v", got, err, want)
				}
			},
		},
		{
			// A *STORE whose destination is also a source: each command
			// adds 1 to the member's score through the destination's
			// generation-guarded write (kit.DestStore).
			name: "ZUNIONSTORE", keys: []string{"hot:z", "hot:zsrc"},
			setup: func(t *testing.T) {
				if err := admin.ZAdd(ctx, "hot:zsrc", redis.Z{Score: 1, Member: "m"}).Err(); err != nil {
					t.Fatal(err)
				}
			},
			cmd: func(int, int) []any { return []any{"ZUNIONSTORE", "hot:z", "2", "hot:z", "hot:zsrc"} },
			check: func(t *testing.T) {
				if got, err := admin.ZScore(ctx, "hot:z", "m").Result(); err != nil || got != float64(total) {
					t.Errorf("ZSCORE hot:z m = %v (%v), want %d", got, err, total)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := admin.Del(ctx, tc.keys...).Err(); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(t)
			}
			waits0 := gateWaits(t, admin)
			var mu sync.Mutex
			errs := map[string]int{}
			together(conns, func(i int, c *redis.Client) {
				for r := range rounds {
					pipe := c.Pipeline()
					cmds := make([]*redis.Cmd, depth)
					for k := range cmds {
						cmds[k] = pipe.Do(ctx, tc.cmd(i, r*depth+k)...)
					}
					_, _ = pipe.Exec(ctx) // each command's error is counted below
					mu.Lock()
					for _, cmd := range cmds {
						if err := cmd.Err(); err != nil {
							errs[err.Error()]++
						}
					}
					mu.Unlock()
				}
			})
			n := reportErrors(t, errs)
			t.Logf("%d clients × %d pipelined × %d rounds: %d error replies; %d requests queued behind the gate of the first proxy",
				clients, depth, rounds, n, gateWaits(t, admin)-waits0)
			tc.check(t)
		})
	}
}

// gateWaits reads INFO's module_gate_waits from c's proxy.
func gateWaits(t *testing.T, c *redis.Client) int64 {
	t.Helper()
	return clientInfo(t, c, "modules", "module_gate_waits")
}
