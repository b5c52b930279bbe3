package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestMoveAcrossDatabases moves values of every type to another database
// and back: the value, its type and its exact expiry go along, the source
// is gone, and a key that exists in the target stays where it is.
func TestMoveAcrossDatabases(t *testing.T) {
	needModules(t, "keys", "strings", "hash", "list", "set", "zset")
	flushAll(t)
	ctx := context.Background()
	db0 := client(t, env.daemon.Addr)
	db2 := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = 2 })
	at := time.UnixMilli(4102444800123)
	db0.Set(ctx, "s", "v", 0)
	db0.PExpireAt(ctx, "s", at)
	db0.HSet(ctx, "h", "f", "1", "g", "x")
	db0.RPush(ctx, "l", "a", "b")
	db0.SAdd(ctx, "set", "m")
	db0.ZAdd(ctx, "z", redis.Z{Score: 2.5, Member: "m"})
	for _, k := range []string{"s", "h", "l", "set", "z"} {
		if n, err := db0.Move(ctx, k, 2).Result(); err != nil || !n {
			t.Fatalf("MOVE %s 2 = %v, %v", k, n, err)
		}
	}
	if n, _ := db0.Exists(ctx, "s", "h", "l", "set", "z").Result(); n != 0 {
		t.Fatalf("%d sources left in db 0", n)
	}
	if v, _ := db2.Get(ctx, "s").Result(); v != "v" {
		t.Fatalf("db2 s = %q", v)
	}
	if got, _ := db2.PExpireTime(ctx, "s").Result(); got != time.Duration(at.UnixMilli())*time.Millisecond {
		t.Fatalf("expiry after MOVE: %v", got)
	}
	if m, _ := db2.HGetAll(ctx, "h").Result(); len(m) != 2 || m["f"] != "1" || m["g"] != "x" {
		t.Fatalf("db2 h = %v", m)
	}
	if n, err := db2.HIncrBy(ctx, "h", "f", 1).Result(); err != nil || n != 2 {
		t.Fatalf("HINCRBY on the moved hash: %d, %v", n, err)
	}
	if l, _ := db2.LRange(ctx, "l", 0, -1).Result(); fmt.Sprint(l) != "[a b]" {
		t.Fatalf("db2 l = %v", l)
	}
	if ok, _ := db2.SIsMember(ctx, "set", "m").Result(); !ok {
		t.Fatal("db2 set lost its member")
	}
	if s, _ := db2.ZScore(ctx, "z", "m").Result(); s != 2.5 {
		t.Fatalf("db2 z score %v", s)
	}
	if ty, _ := db2.Type(ctx, "z").Result(); ty != "zset" {
		t.Fatalf("TYPE z in db2 = %q", ty)
	}

	// A key in the target database stays; the source stays too.
	db0.Set(ctx, "s", "other", 0)
	if n, _ := db0.Move(ctx, "s", 2).Result(); n {
		t.Fatal("MOVE over an existing key answered 1")
	}
	if v, _ := db0.Get(ctx, "s").Result(); v != "other" {
		t.Fatalf("source after refused MOVE = %q", v)
	}
	if v, _ := db2.Get(ctx, "s").Result(); v != "v" {
		t.Fatalf("target after refused MOVE = %q", v)
	}
	if err := db0.Move(ctx, "s", 16).Err(); err == nil || err.Error() != "ERR DB index is out of range" {
		t.Fatalf("MOVE to db 16: %v", err)
	}
	if err := db0.Move(ctx, "s", 0).Err(); err == nil || err.Error() != "ERR source and destination objects are the same" {
		t.Fatalf("MOVE to its own db: %v", err)
	}

	// COPY ... DB: both copies live on, each with the expiry.
	if n, err := db2.Copy(ctx, "s", "s", 0, false).Result(); err != nil || n != 0 {
		t.Fatalf("COPY onto an existing key: %d, %v", n, err)
	}
	if n, err := db2.Copy(ctx, "s", "s", 0, true).Result(); err != nil || n != 1 {
		t.Fatalf("COPY ... DB 0 REPLACE: %d, %v", n, err)
	}
	if v, _ := db0.Get(ctx, "s").Result(); v != "v" {
		t.Fatalf("db0 s after COPY REPLACE = %q", v)
	}
	if got, _ := db0.PExpireTime(ctx, "s").Result(); got != time.Duration(at.UnixMilli())*time.Millisecond {
		t.Fatalf("expiry after COPY DB: %v", got)
	}
	if n, _ := db2.Exists(ctx, "s").Result(); n != 1 {
		t.Fatal("COPY took the source away")
	}
	if err := db2.Copy(ctx, "s", "x", 16, false).Err(); err == nil || err.Error() != "ERR DB index is out of range" {
		t.Fatalf("COPY to db 16: %v", err)
	}
}

// TestMoveRaces moves one key back and forth between two databases from
// many clients at once: at every moment the key lives in exactly one
// database, so the answers of 1 alternate, and at the end the value is in
// one database only, with its expiry.
func TestMoveRaces(t *testing.T) {
	needModules(t, "keys", "strings")
	flushAll(t)
	ctx := context.Background()
	db0 := client(t, env.daemon.Addr)
	db1 := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = 1 })
	at := time.UnixMilli(4102444800777)
	db0.Set(ctx, "k", "payload", 0)
	db0.PExpireAt(ctx, "k", at)
	const workers, rounds = 8, 100
	var wg sync.WaitGroup
	var mu sync.Mutex
	moved := [2]int{} // successful moves out of db 0 and out of db 1
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			from := w % 2
			c := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = from })
			for range rounds {
				ok, err := c.Move(ctx, "k", 1-from).Result()
				if err != nil {
					errs <- err
					return
				}
				if ok {
					mu.Lock()
					moved[from]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n0, _ := db0.Exists(ctx, "k").Result()
	n1, _ := db1.Exists(ctx, "k").Result()
	if n0+n1 != 1 {
		t.Fatalf("the key is in %d databases (db0 %d, db1 %d)", n0+n1, n0, n1)
	}
	// Moves alternate: out of db 0 exactly as often as out of db 1, or
	// once more when it ended in db 1.
	if moved[0]-moved[1] != int(n1) {
		t.Fatalf("moves out of db0 %d, out of db1 %d, key in db1: %d", moved[0], moved[1], n1)
	}
	c := db0
	if n1 == 1 {
		c = db1
	}
	if v, _ := c.Get(ctx, "k").Result(); v != "payload" {
		t.Fatalf("value %q", v)
	}
	if got, _ := c.PExpireTime(ctx, "k").Result(); got != time.Duration(at.UnixMilli())*time.Millisecond {
		t.Fatalf("expiry after the races: %v", got)
	}
	t.Logf("moves out of db0 %d, out of db1 %d", moved[0], moved[1])
}

// TestMoveTouchesWatchOfTargetDB: MOVE writes a key of another database;
// a transaction watching it there fails, as in Redis.
func TestMoveTouchesWatchOfTargetDB(t *testing.T) {
	needModules(t, "keys", "strings")
	flushAll(t)
	ctx := context.Background()
	db0 := client(t, env.daemon.Addr)
	db3 := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = 3 })
	db0.Set(ctx, "w", "v", 0)
	err := db3.Watch(ctx, func(tx *redis.Tx) error {
		if n, err := db0.Move(ctx, "w", 3).Result(); err != nil || !n {
			t.Fatalf("MOVE w 3: %v %v", n, err)
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "w", "mine", 0)
			return nil
		})
		return err
	}, "w")
	if err != redis.TxFailedErr {
		t.Fatalf("EXEC after a MOVE into the watched key: %v", err)
	}
	if v, _ := db3.Get(ctx, "w").Result(); v != "v" {
		t.Fatalf("w in db3 = %q", v)
	}
}

// TestMoveWakesBlockedPop: a list MOVEd into the database a BLPOP waits
// in serves it, as a push there would.
func TestMoveWakesBlockedPop(t *testing.T) {
	needModules(t, "keys", "list")
	flushAll(t)
	ctx := context.Background()
	db0 := client(t, env.daemon.Addr)
	db4 := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = 4 })
	db0.RPush(ctx, "q", "job")
	got := make(chan []string, 1)
	go func() {
		v, _ := db4.BLPop(ctx, 10*time.Second, "q").Result()
		got <- v
	}()
	awaitBlocked(t, db0, 1)
	if n, err := db0.Move(ctx, "q", 4).Result(); err != nil || !n {
		t.Fatalf("MOVE q 4: %v %v", n, err)
	}
	select {
	case v := <-got:
		if fmt.Sprint(v) != "[q job]" {
			t.Fatalf("BLPOP in db 4 = %v", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the MOVE did not wake the BLPOP in the target database")
	}
}
