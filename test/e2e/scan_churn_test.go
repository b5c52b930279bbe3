package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

// churnPools are the member sets of the SCAN guarantee tests: short
// members, members sharing a prefix longer than a cursor position (8
// bytes), and binary members with the empty member among them.
var churnPools = []struct {
	name   string
	member func(i int) string
}{
	{"short", func(i int) string { return fmt.Sprintf("m%d", i) }},
	{"prefix", func(i int) string { return fmt.Sprintf("session:user:%06d", i) }},
	// Runs of up to 16 members at one cursor position (their first 8 bytes).
	{"runs", func(i int) string { return fmt.Sprintf("%07d:%d", i/16, i) }},
	{"binary", func(i int) string {
		if i == 0 {
			return ""
		}
		return string([]byte{byte(i * 37), 0, 0xff, byte(i), 0, byte(i >> 8)})
	}},
}

// churner removes and adds members of a pool on its own connection until
// stopped, and records every member it removed. After each write it offers
// a tick, so the scanner can wait for at least one write between pages.
type churner struct {
	mu      sync.Mutex
	removed map[string]bool
	tick    chan struct{}
	stop    chan struct{}
	done    chan error
	ops     atomic.Int64
}

func startChurner(ctx context.Context, c *redis.Client, seed uint64, pool int, member func(int) string,
	remove, add func(m string) error) *churner {
	ch := &churner{removed: map[string]bool{}, tick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		rng := rand.New(rand.NewPCG(seed, 99))
		for {
			select {
			case <-ch.stop:
				ch.done <- nil
				return
			default:
			}
			m := member(rng.IntN(pool))
			var err error
			if rng.IntN(2) == 0 {
				ch.mu.Lock()
				ch.removed[m] = true // before the write: a page may see it gone at once
				ch.mu.Unlock()
				err = remove(m)
			} else {
				err = add(m)
			}
			if err != nil {
				ch.done <- err
				return
			}
			ch.ops.Add(1)
			select {
			case ch.tick <- struct{}{}:
			default:
			}
		}
	}()
	return ch
}

// wait blocks until the churner has written since the last wait.
func (ch *churner) wait(t *testing.T) {
	select {
	case <-ch.tick:
	case err := <-ch.done:
		t.Fatalf("churner: %v", err)
	}
}

func (ch *churner) finish(t *testing.T) map[string]bool {
	close(ch.stop)
	if err := <-ch.done; err != nil {
		t.Fatalf("churner: %v", err)
	}
	return ch.removed
}

// TestScanGuaranteeUnderChurn: a full HSCAN, SSCAN or ZSCAN returns every
// member present from its start to its end while another client removes
// and adds members all along, with small and default COUNTs, members
// sharing long prefixes, binary members and the empty member.
func TestScanGuaranteeUnderChurn(t *testing.T) {
	needModules(t, "hash", "set", "zset")
	ctx := context.Background()
	const pool = 400
	types := []struct {
		name string
		add  func(c *redis.Client, key, m string) error
		rem  func(c *redis.Client, key, m string) error
		scan func(c *redis.Client, key string, cursor uint64, count int64) ([]string, uint64, error)
		step int // reply entries per member
	}{
		{"hash", func(c *redis.Client, key, m string) error { return c.HSet(ctx, key, m, "v:"+m).Err() },
			func(c *redis.Client, key, m string) error { return c.HDel(ctx, key, m).Err() },
			func(c *redis.Client, key string, cur uint64, n int64) ([]string, uint64, error) {
				return c.HScan(ctx, key, cur, "", n).Result()
			}, 2},
		{"set", func(c *redis.Client, key, m string) error { return c.SAdd(ctx, key, m).Err() },
			func(c *redis.Client, key, m string) error { return c.SRem(ctx, key, m).Err() },
			func(c *redis.Client, key string, cur uint64, n int64) ([]string, uint64, error) {
				return c.SScan(ctx, key, cur, "", n).Result()
			}, 1},
		{"zset", func(c *redis.Client, key, m string) error {
			return c.ZAdd(ctx, key, redis.Z{Score: float64(len(m)), Member: m}).Err()
		},
			func(c *redis.Client, key, m string) error { return c.ZRem(ctx, key, m).Err() },
			func(c *redis.Client, key string, cur uint64, n int64) ([]string, uint64, error) {
				return c.ZScan(ctx, key, cur, "", n).Result()
			}, 2},
	}
	for _, ty := range types {
		for pi, p := range churnPools {
			for _, count := range []int64{1, 4, 10} {
				t.Run(fmt.Sprintf("%s/%s/count=%d", ty.name, p.name, count), func(t *testing.T) {
					scanner, writer := client(t, env.daemon.Addr), client(t, env.daemon.Addr)
					key := fmt.Sprintf("churn:%s:%s:%d", ty.name, p.name, count)
					if err := scanner.Del(ctx, key).Err(); err != nil {
						t.Fatal(err)
					}
					initial := map[string]bool{}
					rng := rand.New(rand.NewPCG(uint64(pi), uint64(count)))
					for len(initial) < pool/2 {
						m := p.member(rng.IntN(pool))
						if len(initial) == 0 {
							m = p.member(0)
						}
						if err := ty.add(scanner, key, m); err != nil {
							t.Fatal(err)
						}
						initial[m] = true
					}
					ch := startChurner(ctx, writer, uint64(pi)*7+uint64(count), pool, p.member,
						func(m string) error { return ty.rem(writer, key, m) },
						func(m string) error { return ty.add(writer, key, m) })
					seen := map[string]bool{}
					var cursor uint64
					pages := 0
					for {
						ch.wait(t) // at least one write between any two pages
						items, next, err := ty.scan(scanner, key, cursor, count)
						if err != nil {
							ch.finish(t)
							t.Fatalf("scan at cursor %d: %v", cursor, err)
						}
						for i := 0; i < len(items); i += ty.step {
							seen[items[i]] = true
							if ty.name == "hash" && items[i+1] != "v:"+items[i] {
								t.Errorf("field %q has value %q", items[i], items[i+1])
							}
						}
						pages++
						if cursor = next; cursor == 0 {
							break
						}
						if pages > 20*pool {
							ch.finish(t)
							t.Fatal("the scan does not end")
						}
					}
					removed := ch.finish(t)
					missed := 0
					for m := range initial {
						if !removed[m] && !seen[m] {
							missed++
							t.Errorf("member %q present throughout was not returned", m)
						}
					}
					t.Logf("%d pages, %d members returned, %d writes meanwhile, %d missed", pages, len(seen), ch.ops.Load(), missed)
					scanner.Del(ctx, key)
				})
			}
		}
	}
}

// TestKeyspaceScanGuaranteeUnderChurn: a full SCAN returns every key
// present from its start to its end while another client deletes and
// creates keys all along (a page holds whole partitions of the keyspace on
// both stores; a key never changes partition).
func TestKeyspaceScanGuaranteeUnderChurn(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	const pool = 600
	db := func(o *redis.Options) { o.DB = 11 }
	scanner, writer := client(t, env.daemon.Addr, db), client(t, env.daemon.Addr, db)
	if err := scanner.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { scanner.FlushDB(ctx) })
	for _, p := range churnPools {
		for _, count := range []int64{1, 10} {
			t.Run(fmt.Sprintf("%s/count=%d", p.name, count), func(t *testing.T) {
				key := func(i int) string { return "k:" + p.member(i) }
				initial := map[string]bool{}
				rng := rand.New(rand.NewPCG(uint64(count), 5))
				for len(initial) < pool/2 {
					k := key(rng.IntN(pool))
					if err := scanner.Set(ctx, k, "v", 0).Err(); err != nil {
						t.Fatal(err)
					}
					initial[k] = true
				}
				ch := startChurner(ctx, writer, uint64(count), pool, key,
					func(k string) error { return writer.Del(ctx, k).Err() },
					func(k string) error { return writer.Set(ctx, k, "v", 0).Err() })
				seen := map[string]bool{}
				var cursor uint64
				pages := 0
				for {
					ch.wait(t)
					keys, next, err := scanner.Scan(ctx, cursor, "k:*", count).Result()
					if err != nil {
						ch.finish(t)
						t.Fatalf("SCAN %d: %v", cursor, err)
					}
					for _, k := range keys {
						seen[k] = true
					}
					pages++
					if cursor = next; cursor == 0 {
						break
					}
					if pages > 10000 {
						ch.finish(t)
						t.Fatal("the scan does not end")
					}
				}
				removed := ch.finish(t)
				for k := range initial {
					if !removed[k] && !seen[k] {
						t.Errorf("key %q present throughout was not returned", k)
					}
				}
				t.Logf("%d pages, %d keys returned, %d writes meanwhile", pages, len(seen), ch.ops.Load())
				if err := scanner.FlushDB(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
