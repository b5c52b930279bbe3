package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BZPOPMIN, BZPOPMAX and BZMPOP through go-redis on the main daemon: they
// answer at once when a set has members, time out with a nil reply, and a
// blocked client is served by a ZADD from another client, lowest or
// highest score as asked, FIFO among the blocked clients.
func TestZSetBlockingPops(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	k1, k2 := key(t, "a"), key(t, "b")
	c.Del(ctx, k1, k2)

	// Members present: no blocking, the first non-empty key in order.
	c.ZAdd(ctx, k2, redis.Z{Score: 2, Member: "two"}, redis.Z{Score: 1, Member: "one"})
	got, err := c.BZPopMin(ctx, time.Second, k1, k2).Result()
	if err != nil || got.Key != k2 || got.Member != "one" || got.Score != 1 {
		t.Fatalf("BZPOPMIN on a non-empty set: %+v, %v", got, err)
	}
	got, err = c.BZPopMax(ctx, time.Second, k1, k2).Result()
	if err != nil || got.Key != k2 || got.Member != "two" || got.Score != 2 {
		t.Fatalf("BZPOPMAX on a non-empty set: %+v, %v", got, err)
	}
	if n := c.Exists(ctx, k2).Val(); n != 0 {
		t.Fatalf("the emptied set still exists (EXISTS %d)", n)
	}

	// Nothing to pop: a timeout answers nil after at least the timeout.
	start := time.Now()
	if err := c.BZPopMin(ctx, 100*time.Millisecond, k1, k2).Err(); err != redis.Nil {
		t.Fatalf("BZPOPMIN timeout: %v, want redis.Nil", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("BZPOPMIN timed out after %v, before its 100ms", d)
	}
	if err := c.BZMPop(ctx, 100*time.Millisecond, "min", 1, k1).Err(); err != redis.Nil {
		t.Fatalf("BZMPOP timeout: %v, want redis.Nil", err)
	}

	// Two blocked clients, served in the order they blocked by two ZADDs.
	type popped struct {
		key, member string
		err         error
	}
	first, second := make(chan popped, 1), make(chan popped, 1)
	go func() {
		z, err := client(t, env.daemon.Addr).BZPopMin(ctx, 0, k1, k2).Result()
		if err != nil {
			first <- popped{err: err}
			return
		}
		first <- popped{key: z.Key, member: z.Member.(string)}
	}()
	awaitBlocked(t, c, 1)
	go func() {
		k, zs, err := client(t, env.daemon.Addr).BZMPop(ctx, 0, "max", 2, k1, k2).Result()
		if err != nil || len(zs) != 1 {
			second <- popped{err: err}
			return
		}
		second <- popped{key: k, member: zs[0].Member.(string)}
	}()
	awaitBlocked(t, c, 2)

	if err := c.ZAdd(ctx, k2, redis.Z{Score: 5, Member: "low"}, redis.Z{Score: 9, Member: "high"}).Err(); err != nil {
		t.Fatal(err)
	}
	if p := <-first; p.err != nil || p.key != k2 || p.member != "low" {
		t.Fatalf("first blocked client got %+v, want %s low", p, k2)
	}
	if p := <-second; p.err != nil || p.key != k2 || p.member != "high" {
		t.Fatalf("second blocked client got %+v, want %s high", p, k2)
	}
	if n := blockedClients(t, c); n != 0 {
		t.Fatalf("blocked_clients %d after both were served", n)
	}

	// Inside MULTI a blocking pop is its non-blocking form: nil at once.
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BZPopMin(ctx, 0, k1)
		return nil
	})
	if err != redis.Nil || len(cmds) != 1 || cmds[0].Err() != redis.Nil {
		t.Fatalf("BZPOPMIN in MULTI: %v, %v", cmds, err)
	}
}
