package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestSPopUnderContention pops one set from 50 clients at once, each
// pipelining 16 SPOPs per round, as a job queue drained by many workers
// does (redis-benchmark's SPOP test at -P 16 is the same load): every pop
// must answer a member or, once the set is empty, nil; no member may be
// answered twice or lost; and no error reply may come back. On Aerospike a
// SPOP conditional on the generation it read failed a third of these
// (ERR respike: the key kept changing...); in Redis none fails.
func TestSPopUnderContention(t *testing.T) {
	needModules(t, "set", "keys")
	const clients, pipeline, rounds = 50, 16, 3
	const members = clients * pipeline * rounds * 3 / 4 // the last round finds it empty
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	key := "contended:spop"
	if err := admin.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	all := make([]any, members)
	for i := range all {
		all[i] = fmt.Sprintf("job:%05d", i)
	}
	for i := 0; i < members; i += 1000 {
		if err := admin.SAdd(ctx, key, all[i:min(i+1000, members)]...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu     sync.Mutex
		errs   = map[string]int{}
		popped = map[string]int{}
		nils   int
	)
	together(singleConns(t, env.daemon.Addr, clients), func(_ int, c *redis.Client) {
		for range rounds {
			cmds, _ := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for range pipeline {
					p.SPop(ctx, key)
				}
				return nil
			})
			mu.Lock()
			for _, cmd := range cmds {
				v, err := cmd.(*redis.StringCmd).Result()
				switch {
				case err == redis.Nil:
					nils++
				case err != nil:
					errs[err.Error()]++
				default:
					popped[v]++
				}
			}
			mu.Unlock()
		}
	})
	reportErrors(t, errs)
	for m, n := range popped {
		if n > 1 {
			t.Errorf("%s popped %d times", m, n)
		}
	}
	if len(popped) != members {
		t.Errorf("%d distinct members popped, want all %d", len(popped), members)
	}
	if want := clients*pipeline*rounds - members; nils != want {
		t.Errorf("%d nil replies, want %d (the pops after the set emptied)", nils, want)
	}
	if n, err := admin.Exists(ctx, key).Result(); err != nil || n != 0 {
		t.Errorf("EXISTS after the last member was popped: %d, %v; want 0", n, err)
	}
}
