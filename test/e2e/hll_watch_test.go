package e2e

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestPFAddWatch: a PFADD that changes no register touches nothing in
// Redis, so a transaction watching the key still runs; one that raises a
// register makes EXEC fail. Sparse and dense HLLs, on respike (where a
// dense PFADD is the store's in-place raise, codec.OpHLLRaise) and on
// redis-server alike.
func TestPFAddWatch(t *testing.T) {
	needModules(t, "hll", "strings", "keys")
	ctx := context.Background()
	for _, srv := range []struct{ name, addr string }{{"respike", env.daemon.Addr}, {"redis", redisServer(t).Addr}} {
		t.Run(srv.name, func(t *testing.T) {
			c, other := client(t, srv.addr), client(t, srv.addr)
			for _, size := range []int{10, 4000} { // sparse, dense
				k := "pfwatch:" + strconv.Itoa(size)
				c.Del(ctx, k)
				var elems []any
				for i := range size {
					elems = append(elems, "e"+strconv.Itoa(i))
				}
				for i := 0; i < size; i += 500 {
					if err := c.PFAdd(ctx, k, elems[i:min(i+500, size)]...).Err(); err != nil {
						t.Fatal(err)
					}
				}
				enc, err := c.Do(ctx, "PFDEBUG", "ENCODING", k).Text()
				if want := map[int]string{10: "sparse", 4000: "dense"}[size]; err != nil || enc != want {
					t.Fatalf("%s: encoding %q (%v), want %s", k, enc, err, want)
				}
				// The transaction queues a SET of a second key, which
				// shows whether EXEC ran.
				tx := func(between func() error) error {
					flag := k + ":ran"
					c.Del(ctx, flag)
					err := c.Watch(ctx, func(tx *redis.Tx) error {
						if err := between(); err != nil {
							return err
						}
						_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
							p.Set(ctx, flag, "1", 0)
							return nil
						})
						return err
					}, k)
					ran := c.Exists(ctx, flag).Val() == 1
					if ran != (err == nil) {
						t.Errorf("%s: EXEC error %v but the queued SET ran = %v", k, err, ran)
					}
					return err
				}
				// Elements already counted: PFADD answers 0, EXEC runs.
				err = tx(func() error {
					n, err := other.PFAdd(ctx, k, "e1", "e7", "e3").Result()
					if err == nil && n != 0 {
						t.Errorf("%s: PFADD of counted elements = %d, want 0", k, n)
					}
					return err
				})
				if err != nil {
					t.Errorf("%s: a PFADD that changed nothing failed the transaction: %v", k, err)
				}
				// New elements until one raises a register: EXEC fails.
				err = tx(func() error {
					for i := 0; ; i++ {
						n, err := other.PFAdd(ctx, k, "new"+strconv.Itoa(i)).Result()
						if err != nil || n == 1 {
							return err
						}
					}
				})
				if !errors.Is(err, redis.TxFailedErr) {
					t.Errorf("%s: after a PFADD that raised a register, EXEC = %v, want the null reply", k, err)
				}
			}
		})
	}
}
