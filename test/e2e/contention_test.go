package e2e

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestFloatCountersUnderContention runs INCRBYFLOAT and HINCRBYFLOAT from
// 16 clients on one key at once: a popular counter must not fail (no
// "the key kept changing" errors) and must lose no increment.
// RESPIKE_CONTENTION_CALLS sets the calls per client (default 40).
func TestFloatCountersUnderContention(t *testing.T) {
	needModules(t, "strings", "hash", "keys")
	calls := 40
	if s := os.Getenv("RESPIKE_CONTENTION_CALLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RESPIKE_CONTENTION_CALLS=%q", s)
		}
		calls = n
	}
	const clients = 16
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	for _, tc := range []struct {
		name string
		cmd  []any
		read func() (string, error)
	}{
		{"INCRBYFLOAT", []any{"INCRBYFLOAT", "contended:f", "0.5"},
			func() (string, error) { return admin.Get(ctx, "contended:f").Result() }},
		{"HINCRBYFLOAT", []any{"HINCRBYFLOAT", "contended:h", "f", "0.5"},
			func() (string, error) { return admin.HGet(ctx, "contended:h", "f").Result() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := admin.Del(ctx, "contended:f", "contended:h").Err(); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			errs := map[string]int{}
			together(singleConns(t, env.daemon.Addr, clients), func(_ int, c *redis.Client) {
				for range calls {
					if err := c.Do(ctx, tc.cmd...).Err(); err != nil {
						mu.Lock()
						errs[err.Error()]++
						mu.Unlock()
					}
				}
			})
			n := reportErrors(t, errs)
			got, err := tc.read()
			want := strconv.FormatFloat(0.5*clients*float64(calls), 'f', -1, 64)
			t.Logf("%d clients × %d calls: %d error replies, final %s", clients, calls, n, got)
			if err != nil || got != want {
				t.Errorf("final value %q (%v), want %s", got, err, want)
			}
		})
	}
}

// singleConns opens n clients of addr with one connection each: n
// contenders, as n application processes are.
func singleConns(t *testing.T, addr string, n int) []*redis.Client {
	conns := make([]*redis.Client, n)
	for i := range conns {
		conns[i] = client(t, addr, func(o *redis.Options) { o.PoolSize = 1 })
	}
	return conns
}

// together runs run for every client at once, each on its own goroutine,
// started together so that they contend, and returns when all have ended.
func together(conns []*redis.Client, run func(i int, c *redis.Client)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			run(i, c)
		}()
	}
	close(start)
	wg.Wait()
}

// reportErrors fails t with each error reply counted in errs (text →
// count) and returns how many there were.
func reportErrors(t *testing.T, errs map[string]int) int {
	t.Helper()
	n := 0
	for msg, k := range errs {
		t.Errorf("%d × %s", k, msg)
		n += k
	}
	return n
}
