package e2e

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// casIncr adds 1 to the integer at k (absent counts as 0) with go-redis's
// optimistic-locking recipe: WATCH, GET, MULTI, SET, EXEC, retried while
// EXEC answers the null reply. It returns how many attempts failed.
func casIncr(ctx context.Context, c *redis.Client, k string) (int, error) {
	return optimisticIncr(ctx, c, k,
		func(tx *redis.Tx) *redis.StringCmd { return tx.Get(ctx, k) },
		func(p redis.Pipeliner, n int) { p.Set(ctx, k, n, 0) })
}

// hashIncr is casIncr on a field of a hash, read with HGET and written with
// HSET.
func hashIncr(ctx context.Context, c *redis.Client, k string) (int, error) {
	return optimisticIncr(ctx, c, k,
		func(tx *redis.Tx) *redis.StringCmd { return tx.HGet(ctx, k, "n") },
		func(p redis.Pipeliner, n int) { p.HSet(ctx, k, "n", n) })
}

// optimisticIncr watches k, reads a counter with get, queues its
// successor with set, and retries while EXEC fails; it returns how many
// attempts failed.
func optimisticIncr(ctx context.Context, c *redis.Client, k string, get func(*redis.Tx) *redis.StringCmd, set func(redis.Pipeliner, int)) (int, error) {
	for retries := 0; ; retries++ {
		err := c.Watch(ctx, func(tx *redis.Tx) error {
			n, err := get(tx).Int()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				set(p, n+1)
				return nil
			})
			return err
		}, k)
		if err == nil {
			return retries, nil
		}
		if !errors.Is(err, redis.TxFailedErr) {
			return retries, err
		}
	}
}

// concurrentIncrements runs workers goroutines, each adding each times
// through incr on clients of addrs in turn, and checks that no increment
// is lost: the write of a transaction whose watched key changed must not
// apply.
func concurrentIncrements(t *testing.T, addrs []string, k string, incr func(context.Context, *redis.Client, string) (int, error), get func(*redis.Client) (int, error)) {
	t.Helper()
	ctx := context.Background()
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	var mu sync.Mutex
	retries := 0
	for w := 0; w < workers; w++ {
		c := client(t, addrs[w%len(addrs)])
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r, err := incr(ctx, c, k)
				mu.Lock()
				retries += r
				mu.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := get(client(t, addrs[0]))
	if err != nil {
		t.Fatal(err)
	}
	if got != workers*each {
		t.Fatalf("counter = %d after %d increments (%d retries): increments were lost", got, workers*each, retries)
	}
	t.Logf("%d increments by %d clients: %d retries", workers*each, workers, retries)
}

func TestWatchConcurrentIncrement(t *testing.T) {
	needModules(t, "strings", "hash")
	addr := env.daemon.Addr
	t.Run("string", func(t *testing.T) {
		k := key(t, "n")
		concurrentIncrements(t, []string{addr}, k, casIncr, func(c *redis.Client) (int, error) {
			return c.Get(context.Background(), k).Int()
		})
	})
	t.Run("hash", func(t *testing.T) {
		k := key(t, "h")
		concurrentIncrements(t, []string{addr}, k, hashIncr, func(c *redis.Client) (int, error) {
			return c.HGet(context.Background(), k, "n").Int()
		})
	})
	// Two proxies with runtimes of their own on one store: a watch sees
	// the other proxy's writes through the record generations only.
	t.Run("two proxies", func(t *testing.T) {
		b, err := env.backend.NewProxy(context.Background(), env.modDir, env.cacheDir, env.logger, 10*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		other := serve(t, testConfig(), b).Addr
		k := key(t, "n")
		concurrentIncrements(t, []string{addr, other}, k, casIncr, func(c *redis.Client) (int, error) {
			return c.Get(context.Background(), k).Int()
		})
	})
}

// TestWatchChanges checks that EXEC fails (go-redis: TxFailedErr) for
// every kind of change another client makes to a watched key between WATCH
// and EXEC, writes nothing then, and succeeds when nothing changed.
func TestWatchChanges(t *testing.T) {
	needModules(t, "strings", "keys", "hash")
	ctx := context.Background()
	addr := env.daemon.Addr
	b, err := env.backend.NewProxy(ctx, env.modDir, env.cacheDir, env.logger, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	otherAddr := serve(t, testConfig(), b).Addr
	c, other := client(t, addr), client(t, otherAddr)
	// An exact expiry in the middle of a second, an hour ahead: a record
	// created again one millisecond later is another record.
	pxat := time.Now().Add(time.Hour).Truncate(time.Second).UnixMilli() + 400
	for _, tc := range []struct {
		name   string
		before func(k string) error // sets the key up before WATCH
		change func(k string) error // another client, between WATCH and EXEC; nil: no change
		queue  func(p redis.Pipeliner, k string)
		want   string // k's value after the transaction, "" for absent
	}{
		{name: "unchanged",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:   "mine"},
		{name: "unchanged absent",
			queue: func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:  "mine"},
		{name: "written",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error { return other.Set(ctx, k, "theirs", 0).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:   "theirs"},
		{name: "written the same value",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error { return other.Set(ctx, k, "a", 0).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:   "a"},
		{name: "created",
			change: func(k string) error { return other.Set(ctx, k, "theirs", 0).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:   "theirs"},
		{name: "created, then SET XX",
			change: func(k string) error { return other.Set(ctx, k, "theirs", 0).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.SetXX(ctx, k, "mine", 0) },
			want:   "theirs"},
		{name: "deleted",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error { return other.Del(ctx, k).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:   ""},
		{name: "deleted, then SET NX",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error { return other.Del(ctx, k).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.SetNX(ctx, k, "mine", 0) },
			want:   ""},
		{name: "deleted and created again at the same generation, expiring",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error {
				if err := other.Del(ctx, k).Err(); err != nil {
					return err
				}
				return other.Set(ctx, k, "theirs", time.Hour).Err()
			},
			queue: func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:  "theirs"},
		{name: "deleted and created again at the same generation, a millisecond later",
			before: func(k string) error { return c.Do(ctx, "SET", k, "a", "PXAT", pxat).Err() },
			change: func(k string) error {
				if err := other.Del(ctx, k).Err(); err != nil {
					return err
				}
				return other.Do(ctx, "SET", k, "theirs", "PXAT", pxat+1).Err()
			},
			queue: func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:  "theirs"},
		{name: "expiry changed",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error { return other.Expire(ctx, k, time.Hour).Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k, "mine", 0) },
			want:   "a"},
		{name: "hash field added",
			before: func(k string) error { return c.HSet(ctx, k, "f", "1").Err() },
			change: func(k string) error { return other.HSet(ctx, k, "g", "2").Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Del(ctx, k) },
			want:   "<hash>"},
		{name: "other key written, watched key changed",
			before: func(k string) error { return c.Set(ctx, k, "a", 0).Err() },
			change: func(k string) error { return other.Append(ctx, k, "b").Err() },
			queue:  func(p redis.Pipeliner, k string) { p.Set(ctx, k+":other", "mine", 0) },
			want:   "ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := key(t, "k")
			if tc.before != nil {
				if err := tc.before(k); err != nil {
					t.Fatal(err)
				}
			}
			err := c.Watch(ctx, func(tx *redis.Tx) error {
				if tc.change != nil {
					if err := tc.change(k); err != nil {
						t.Fatal(err)
					}
				}
				_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
					tc.queue(p, k)
					return nil
				})
				return err
			}, k)
			if tc.change == nil && err != nil {
				t.Fatalf("EXEC without a change: %v", err)
			}
			if tc.change != nil && !errors.Is(err, redis.TxFailedErr) {
				t.Fatalf("EXEC after a change: %v, want %v", err, redis.TxFailedErr)
			}
			typ, err := c.Type(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			switch typ {
			case "string":
				got = c.Get(ctx, k).Val()
			case "hash":
				got = "<hash>"
			}
			if got != tc.want {
				t.Errorf("after the transaction %s = %q, want %q", k, got, tc.want)
			}
			if n := c.Exists(ctx, k+":other").Val(); tc.change != nil && n != 0 {
				t.Errorf("a failed transaction wrote another key")
			}
		})
	}
}

// TestWatchExpired checks that a watched key that expires before EXEC
// makes it fail, as in Redis 7.0.
func TestWatchExpired(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	c, other := client(t, env.daemon.Addr), client(t, env.daemon.Addr)
	k := key(t, "k")
	if err := c.Set(ctx, k, "a", time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		// Wait for the key to be gone, as another client sees it.
		deadline := time.Now().Add(10 * time.Second)
		for other.Exists(ctx, k).Val() == 1 {
			if time.Now().After(deadline) {
				t.Fatal("the key did not expire")
			}
			time.Sleep(20 * time.Millisecond)
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, k, "mine", 0)
			return nil
		})
		return err
	}, k)
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("EXEC after the watched key expired: %v, want %v", err, redis.TxFailedErr)
	}
	if n := c.Exists(ctx, k).Val(); n != 0 {
		t.Errorf("the failed transaction wrote the key")
	}
}

// TestWatchTransactionReplies checks EXEC's replies when the watch holds:
// every queued command's reply, errors included, and several writes to the
// watched key in one transaction (each conditional on the generation the
// previous one left).
func TestWatchTransactionReplies(t *testing.T) {
	needModules(t, "strings")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	k := key(t, "k")
	if err := c.Set(ctx, k, "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	var cmds []redis.Cmder
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		var err error
		cmds, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, k)
			p.Incr(ctx, k)
			p.Append(ctx, k, "x")
			p.Incr(ctx, k) // not an integer any more: an error inside EXEC
			p.Set(ctx, k, "10", 0)
			p.IncrBy(ctx, k, 5)
			return nil
		})
		return err
	}, k)
	if err == nil || err.Error() != "ERR value is not an integer or out of range" {
		t.Fatalf("EXEC: %v, want the error of the failed INCR", err)
	}
	var got []string
	for _, cmd := range cmds {
		if cmd.Err() != nil {
			got = append(got, "err")
			continue
		}
		switch v := cmd.(type) {
		case *redis.IntCmd:
			got = append(got, strconv.FormatInt(v.Val(), 10))
		case *redis.StatusCmd:
			got = append(got, v.Val())
		}
	}
	want := []string{"2", "3", "2", "err", "OK", "15"}
	if len(got) != len(want) {
		t.Fatalf("replies %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("replies %q, want %q", got, want)
		}
	}
	if v := c.Get(ctx, k).Val(); v != "15" {
		t.Errorf("%s = %q, want 15", k, v)
	}
}

// BenchmarkWatch measures one client's optimistic increment through
// go-redis (WATCH, GET, MULTI, SET, EXEC: casIncr) against the plain
// round trips it is made of (GET then SET, no watch), without contention:
// what WATCH and EXEC's check cost.
func BenchmarkWatch(b *testing.B) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: env.daemon.Addr, Protocol: 2})
	defer c.Close()
	b.Run("cas", func(b *testing.B) {
		for b.Loop() {
			if _, err := casIncr(ctx, c, "bench:watch"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get+set", func(b *testing.B) {
		for b.Loop() {
			n, _ := c.Get(ctx, "bench:plain").Int()
			if err := c.Set(ctx, "bench:plain", n+1, 0).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestWatchSeveralKeys checks a transaction writing several watched keys,
// some in one batch (MSET), then writing and reading them again: each
// write's generation becomes the next one's condition, so nothing aborts
// when no other client writes.
func TestWatchSeveralKeys(t *testing.T) {
	needModules(t, "strings", "hash")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	a, b, h := key(t, "a"), key(t, "b"), key(t, "h")
	if err := c.Set(ctx, a, "0", 0).Err(); err != nil {
		t.Fatal(err)
	}
	err := c.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.MSet(ctx, a, "1", b, "2")
			p.Incr(ctx, a)
			p.Get(ctx, b)
			p.HSet(ctx, h, "f", "v")
			p.HIncrBy(ctx, h, "n", 3)
			p.MGet(ctx, a, b)
			p.Del(ctx, b)
			p.SetNX(ctx, b, "again", 0)
			return nil
		})
		return err
	}, a, b, h)
	if err != nil {
		t.Fatalf("EXEC: %v", err)
	}
	if v := c.MGet(ctx, a, b).Val(); len(v) != 2 || v[0] != "2" || v[1] != "again" {
		t.Errorf("after the transaction %s, %s = %v, want 2, again", a, b, v)
	}
	if v := c.HGet(ctx, h, "n").Val(); v != "3" {
		t.Errorf("after the transaction %s.n = %q, want 3", h, v)
	}
}
