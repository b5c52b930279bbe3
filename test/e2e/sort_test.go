package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSortWithGoRedis sorts as an application would: users by a score
// kept in their hashes, with their names, a page at a time, and a stored
// leaderboard.
func TestSortWithGoRedis(t *testing.T) {
	needModules(t, "keys", "list", "set", "hash", "strings")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	c.Del(ctx, "sort:users", "sort:board", "sort:u:1", "sort:u:2", "sort:u:3")
	c.SAdd(ctx, "sort:users", 1, 2, 3)
	c.HSet(ctx, "sort:u:1", "name", "ann", "score", 50)
	c.HSet(ctx, "sort:u:2", "name", "bob", "score", 70)
	c.HSet(ctx, "sort:u:3", "name", "cid", "score", 60)
	got, err := c.Sort(ctx, "sort:users", &redis.Sort{By: "sort:u:*->score", Order: "DESC",
		Get: []string{"#", "sort:u:*->name"}, Offset: 0, Count: 2}).Result()
	if want := []string{"2", "bob", "3", "cid"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("SORT BY hash field DESC LIMIT 0 2: %q %v, want %q", got, err, want)
	}
	got, err = c.SortRO(ctx, "sort:users", &redis.Sort{By: "sort:u:*->name", Alpha: true, Get: []string{"sort:u:*->score"}}).Result()
	if want := []string{"50", "70", "60"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("SORT_RO BY name ALPHA: %q %v, want %q", got, err, want)
	}
	c.Set(ctx, "sort:board", "old", time.Hour)
	n, err := c.SortStore(ctx, "sort:users", "sort:board", &redis.Sort{By: "sort:u:*->score", Get: []string{"sort:u:*->name"}}).Result()
	if err != nil || n != 3 {
		t.Fatalf("SORT STORE: %d %v", n, err)
	}
	if got, err := c.LRange(ctx, "sort:board", 0, -1).Result(); err != nil || !slices.Equal(got, []string{"ann", "cid", "bob"}) {
		t.Errorf("stored list: %q %v", got, err)
	}
	if ttl, err := c.TTL(ctx, "sort:board").Result(); err != nil || ttl != -1 {
		t.Errorf("TTL of the stored list: %v %v (STORE clears it)", ttl, err)
	}
	if err := c.Do(ctx, "SORT_RO", "sort:users", "STORE", "x").Err(); err == nil || err.Error() != "ERR syntax error" {
		t.Errorf("SORT_RO STORE: %v", err)
	}
}
