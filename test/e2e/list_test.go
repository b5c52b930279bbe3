package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The list commands through go-redis: the main behaviours a queue, a
// capped feed and a rotating work list rely on.
func TestListsWithGoRedis(t *testing.T) {
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr)

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	if n, err := c.RPush(ctx, "q", "a", "b", "c").Result(); err != nil || n != 3 {
		t.Fatalf("RPUSH = %d, %v", n, err)
	}
	if n, _ := c.LPush(ctx, "q", "z", "y").Result(); n != 5 {
		t.Fatalf("LPUSH = %d", n)
	}
	if got, _ := c.LRange(ctx, "q", 0, -1).Result(); !slices.Equal(got, []string{"y", "z", "a", "b", "c"}) {
		t.Fatalf("LRANGE = %q", got)
	}
	if v, _ := c.LPop(ctx, "q").Result(); v != "y" {
		t.Fatalf("LPOP = %q", v)
	}
	if vs, _ := c.RPopCount(ctx, "q", 2).Result(); !slices.Equal(vs, []string{"c", "b"}) {
		t.Fatalf("RPOP 2 = %q", vs)
	}
	if _, err := c.LPop(ctx, "missing").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("LPOP of a missing key: %v", err)
	}
	if v, _ := c.LIndex(ctx, "q", -1).Result(); v != "a" {
		t.Fatalf("LINDEX -1 = %q", v)
	}
	must(c.LSet(ctx, "q", 0, "Z").Err())
	if n, _ := c.LInsertAfter(ctx, "q", "Z", "m").Result(); n != 3 {
		t.Fatalf("LINSERT = %d", n)
	}
	if p, _ := c.LPos(ctx, "q", "a", redis.LPosArgs{}).Result(); p != 2 {
		t.Fatalf("LPOS = %d", p)
	}
	if n, _ := c.LLen(ctx, "q").Result(); n != 3 {
		t.Fatalf("LLEN = %d", n)
	}

	// A capped feed: push, then trim to the newest 3.
	for i := range 10 {
		must(c.LPush(ctx, "feed", strconv.Itoa(i)).Err())
		must(c.LTrim(ctx, "feed", 0, 2).Err())
	}
	if got, _ := c.LRange(ctx, "feed", 0, -1).Result(); !slices.Equal(got, []string{"9", "8", "7"}) {
		t.Fatalf("capped feed = %q", got)
	}

	// Types, keyspace commands and TTLs.
	if ty, _ := c.Type(ctx, "feed").Result(); ty != "list" {
		t.Fatalf("TYPE = %q", ty)
	}
	keys, _, err := c.ScanType(ctx, 0, "*", 1000, "list").Result()
	must(err)
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"feed", "q"}) {
		t.Fatalf("SCAN TYPE list = %q", keys)
	}
	must(c.Expire(ctx, "feed", time.Hour).Err())
	must(c.RPush(ctx, "feed", "6").Err())
	must(c.LPop(ctx, "feed").Err())
	if ttl, _ := c.TTL(ctx, "feed").Result(); ttl < 59*time.Minute {
		t.Fatalf("TTL after writes = %v", ttl)
	}
	must(c.Copy(ctx, "feed", "feed2", 0, false).Err())
	must(c.Rename(ctx, "feed2", "feed3").Err())
	if got, _ := c.LRange(ctx, "feed3", 0, -1).Result(); !slices.Equal(got, []string{"8", "7", "6"}) {
		t.Fatalf("copied and renamed = %q", got)
	}
	must(c.RPush(ctx, "feed3", "5").Err())
	if err := c.Set(ctx, "str", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.LPush(ctx, "str", "x").Err(); err == nil || err.Error() != "WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Fatalf("LPUSH on a string: %v", err)
	}

	// Rotation and moves.
	if v, _ := c.LMove(ctx, "feed3", "feed3", "LEFT", "RIGHT").Result(); v != "8" {
		t.Fatalf("rotation = %q", v)
	}
	if v, _ := c.RPopLPush(ctx, "feed3", "other").Result(); v != "8" {
		t.Fatalf("RPOPLPUSH = %q", v)
	}
	key, vals, err := c.LMPop(ctx, "right", 5, "none", "feed3").Result()
	must(err)
	if key != "feed3" || !slices.Equal(vals, []string{"5", "6", "7"}) {
		t.Fatalf("LMPOP = %q %q", key, vals)
	}
	if n, _ := c.Exists(ctx, "feed3").Result(); n != 0 {
		t.Fatal("emptied list still exists")
	}
}

// Producers and consumers on one queue: every element is delivered exactly
// once.
func TestListQueueConcurrency(t *testing.T) {
	flushAll(t)
	ctx := context.Background()
	const producers, perProducer, consumers = 4, 250, 4
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t, env.daemon.Addr)
			for i := range perProducer {
				if err := c.RPush(ctx, "jobs", fmt.Sprintf("%d:%d", p, i)).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{})
	var cwg sync.WaitGroup
	for range consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			c := client(t, env.daemon.Addr)
			for {
				// Whether the producers had finished must be read before
				// the pop: read after an empty pop, it could count a push
				// that landed after the pop as done, and stop with that
				// element still queued.
				finished := false
				select {
				case <-done:
					finished = true
				default:
				}
				vs, err := c.LPopCount(ctx, "jobs", 3).Result()
				if errors.Is(err, redis.Nil) {
					if finished {
						// Every push had answered before this pop found
						// nothing: the queue is drained.
						return
					}
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, v := range vs {
					seen[v]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(done)
	cwg.Wait()
	if len(seen) != producers*perProducer {
		t.Fatalf("%d distinct elements delivered, want %d", len(seen), producers*perProducer)
	}
	for v, n := range seen {
		if n != 1 {
			t.Fatalf("%s delivered %d times", v, n)
		}
	}
}

// Clients moving elements between two lists at once never lose one; an
// element is duplicated only when a move answered an error saying so.
func TestListMovesConcurrently(t *testing.T) {
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	const n = 50
	var all []any
	for i := range n {
		all = append(all, strconv.Itoa(i))
	}
	if err := c.RPush(ctx, "a", all...).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := 0
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t, env.daemon.Addr)
			from, to := "a", "b"
			if w%2 == 1 {
				from, to = "b", "a"
			}
			for range 200 {
				err := c.LMove(ctx, from, to, "RIGHT", "LEFT").Err()
				if err != nil && !errors.Is(err, redis.Nil) {
					mu.Lock()
					errs++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	a, _ := c.LRange(ctx, "a", 0, -1).Result()
	b, _ := c.LRange(ctx, "b", 0, -1).Result()
	count := map[string]int{}
	for _, v := range append(a, b...) {
		count[v]++
	}
	extra := 0
	for _, v := range all {
		switch k := count[v.(string)]; {
		case k == 0:
			t.Fatalf("element %s lost", v)
		case k > 1:
			extra += k - 1
		}
	}
	if len(count) != n || extra > errs {
		t.Fatalf("%d distinct elements, %d duplicates, %d error replies", len(count), extra, errs)
	}
}
