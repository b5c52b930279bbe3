package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// ZADD GT/LT/NX/CH and ZINCRBY stay exact when several clients write the
// same members at once: every GT leaves the highest score offered, LT the
// lowest, NX adds each member exactly once (the replies add up to the
// members), and no increment is lost. (On the embedded store the window
// between a read-modify-write's read and write is microseconds wide; the
// retry itself is tested deterministically in commands/zset, by writing
// in between.)
func TestZSetConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	const workers, rounds, members = 8, 200, 3
	c := client(t, env.daemon.Addr)
	c.Del(ctx, "cz:gt", "cz:lt", "cz:nx", "cz:incr")
	var wg sync.WaitGroup
	var mu sync.Mutex
	maxOf, minOf := map[string]float64{}, map[string]float64{}
	var nxAdded int64
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cw := client(t, env.daemon.Addr)
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range rounds {
				m := fmt.Sprintf("m%d", r.IntN(members))
				s := float64(r.IntN(100000)) / 4
				pair := redis.Z{Score: s, Member: m}
				if _, err := cw.ZAddArgs(ctx, "cz:gt", redis.ZAddArgs{GT: true, Ch: true, Members: []redis.Z{pair}}).Result(); err != nil {
					errs <- fmt.Errorf("ZADD GT: %w", err)
					return
				}
				if _, err := cw.ZAddArgs(ctx, "cz:lt", redis.ZAddArgs{LT: true, Members: []redis.Z{pair, {Score: s + 1, Member: "x" + m}}}).Result(); err != nil {
					errs <- fmt.Errorf("ZADD LT: %w", err)
					return
				}
				n, err := cw.ZAddArgs(ctx, "cz:nx", redis.ZAddArgs{NX: true, Members: []redis.Z{{Score: float64(w), Member: fmt.Sprintf("n%d", i%40)}}}).Result()
				if err != nil {
					errs <- fmt.Errorf("ZADD NX: %w", err)
					return
				}
				if err := cw.ZIncrBy(ctx, "cz:incr", 0.5, "m").Err(); err != nil {
					errs <- fmt.Errorf("ZINCRBY: %w", err)
					return
				}
				mu.Lock()
				if v, ok := maxOf[m]; !ok || s > v {
					maxOf[m] = s
				}
				if v, ok := minOf[m]; !ok || s < v {
					minOf[m] = s
				}
				nxAdded += n
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for m, want := range maxOf {
		if got := c.ZScore(ctx, "cz:gt", m).Val(); got != want {
			t.Errorf("GT: %s = %v, want the highest offered %v", m, got, want)
		}
		if got := c.ZScore(ctx, "cz:lt", m).Val(); got != minOf[m] {
			t.Errorf("LT: %s = %v, want the lowest offered %v", m, got, minOf[m])
		}
	}
	if nxAdded != 40 || c.ZCard(ctx, "cz:nx").Val() != 40 {
		t.Errorf("NX: replies add up to %d, the set has %d members; want 40", nxAdded, c.ZCard(ctx, "cz:nx").Val())
	}
	if got, want := c.ZScore(ctx, "cz:incr", "m").Val(), float64(workers*rounds)/2; got != want {
		t.Errorf("ZINCRBY: %v, want %v", got, want)
	}
}
