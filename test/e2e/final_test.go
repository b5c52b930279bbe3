package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// finalScript is what TestFinalAnswersThroughGoRedis runs: every outcome
// of the commands that end with a final answer (GET, SET, the INCR
// family, HLEN, HEXISTS, SCARD, SISMEMBER, LLEN, HGET, HMGET, HSTRLEN,
// STRLEN, EXISTS and TOUCH of one key), which on a store that waits the
// host replies by a recipe.
var finalScript = [][]any{
	{"GET", "fin:missing"},
	{"SET", "fin:s", "abc"}, {"GET", "fin:s"}, {"SET", "fin:s", "x", "NX"}, {"SET", "fin:none", "x", "XX"},
	{"SET", "fin:e", "v", "EX", "100"}, {"SET", "fin:e", "v", "PX", "100000", "XX"},
	{"APPEND", "fin:a", "10"}, {"INCR", "fin:a"}, {"GET", "fin:a"}, {"DECRBY", "fin:a", "3"},
	{"APPEND", "fin:big", "9223372036854775807"}, {"INCR", "fin:big"},
	{"SET", "fin:m", "9223372036854775807"}, {"INCR", "fin:m"}, {"INCRBY", "fin:m", "1"},
	{"HSET", "fin:h", "f", "v"}, {"GET", "fin:h"}, {"INCR", "fin:h"}, {"SET", "fin:h", "x"}, {"GET", "fin:h"},
	{"INCR", "fin:new"}, {"DECR", "fin:new"}, {"INCRBY", "fin:new", "5"},
	{"SET", "fin:f", "1.5"}, {"INCR", "fin:f"}, {"APPEND", "fin:c", "abc"}, {"INCR", "fin:c"},
	{"HLEN", "fin:h"}, {"HEXISTS", "fin:h", "f"}, {"HEXISTS", "fin:h", "g"}, {"HLEN", "fin:none"}, {"HLEN", "fin:s"},
	{"SADD", "fin:set", "a"}, {"SCARD", "fin:set"}, {"SISMEMBER", "fin:set", "a"}, {"SISMEMBER", "fin:set", "b"},
	{"SCARD", "fin:none"}, {"SISMEMBER", "fin:h", "a"}, {"RPUSH", "fin:l", "a"}, {"LLEN", "fin:l"}, {"LLEN", "fin:none"},
	{"LLEN", "fin:set"},
	{"HSET", "fin:h2", "f", "v", "n", "-12", "e", ""}, {"HINCRBYFLOAT", "fin:h2", "fl", "1.5"},
	{"HGET", "fin:h2", "f"}, {"HGET", "fin:h2", "n"}, {"HGET", "fin:h2", "fl"}, {"HGET", "fin:h2", "e"}, {"HGET", "fin:h2", "nope"},
	{"HGET", "fin:none", "f"}, {"HGET", "fin:s", "f"},
	{"HMGET", "fin:h2", "f", "nope", "fl", "n", "f"}, {"HMGET", "fin:none", "a", "b"}, {"HMGET", "fin:s", "f"},
	{"HSTRLEN", "fin:h2", "f"}, {"HSTRLEN", "fin:h2", "n"}, {"HSTRLEN", "fin:h2", "fl"}, {"HSTRLEN", "fin:h2", "nope"},
	{"HSTRLEN", "fin:none", "f"}, {"HSTRLEN", "fin:set", "f"},
	{"STRLEN", "fin:s"}, {"STRLEN", "fin:a"}, {"STRLEN", "fin:f"}, {"STRLEN", "fin:none"}, {"STRLEN", "fin:h"}, {"STRLEN", "fin:h2"},
	{"EXISTS", "fin:s"}, {"EXISTS", "fin:none"}, {"TOUCH", "fin:h2"}, {"TOUCH", "fin:none"},
}

// TestFinalAnswersThroughGoRedis runs finalScript through go-redis v9 over
// TCP, in RESP2 and RESP3, against redis-server and against respike where
// the store waits — the shared daemon on Aerospike (RESPIKE_TEST_AEROSPIKE),
// and always a daemon whose embedded store never runs requests inline —
// and fails on any reply that differs, or when the recipes did not answer.
func TestFinalAnswersThroughGoRedis(t *testing.T) {
	needModules(t, "strings", "hash", "set", "list", "keys")
	ctx := context.Background()
	rs := redisServer(t)
	b, err := NewResumeBackend(ctx, env.modDir, env.cacheDir, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	targets := map[string]string{"resume": serve(t, testConfig(), b).Addr, "shared": env.daemon.Addr}
	for name, addr := range targets {
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/RESP%d", name, proto), func(t *testing.T) {
				ref := client(t, rs.Addr, func(o *redis.Options) { o.Protocol = proto })
				c := client(t, addr, func(o *redis.Options) { o.Protocol = proto })
				for _, cc := range []*redis.Client{ref, c} {
					keys := []string{}
					for _, args := range finalScript {
						keys = append(keys, args[1].(string))
					}
					if err := cc.Del(ctx, keys...).Err(); err != nil {
						t.Fatal(err)
					}
				}
				before := clientInfo(t, c, "modules", "module_final_answers")
				for _, args := range finalScript {
					want, wantErr := ref.Do(ctx, args...).Result()
					got, gotErr := c.Do(ctx, args...).Result()
					if fmt.Sprintf("%#v %v", got, gotErr) != fmt.Sprintf("%#v %v", want, wantErr) {
						t.Errorf("%v: respike %#v, %v; redis-server %#v, %v", args, got, gotErr, want, wantErr)
					}
				}
				// A pipeline: its commands on distinct keys overlap where
				// the store waits (host/module/overlap.go).
				for _, cc := range []*redis.Client{ref, c} {
					cc.Del(ctx, "fin:p1", "fin:p2", "fin:p3")
					cc.Append(ctx, "fin:p3", "41")
				}
				pipe := func(cc *redis.Client) string {
					cmds, _ := cc.Pipelined(ctx, func(p redis.Pipeliner) error {
						p.Get(ctx, "fin:p1")
						p.Set(ctx, "fin:p1", "v", 0)
						p.Incr(ctx, "fin:p2")
						p.Incr(ctx, "fin:p3")
						p.Get(ctx, "fin:p1")
						p.HSet(ctx, "fin:p2h", "f", "v")
						p.Get(ctx, "fin:p2h")
						p.HGet(ctx, "fin:p2h", "f")
						p.HMGet(ctx, "fin:p2h", "f", "g")
						p.Exists(ctx, "fin:p1")
						p.Del(ctx, "fin:p2h")
						return nil
					})
					return fmt.Sprint(cmds)
				}
				if got, want := pipe(c), pipe(ref); got != want {
					t.Errorf("pipeline: respike\n%s\nredis-server\n%s", got, want)
				}
				// The bytes too: go-redis reads RESP3's null and RESP2's
				// $-1 alike.
				rref, rc := raw(t, rs.Addr), raw(t, addr)
				do(t, rref, "HELLO", strconv.Itoa(proto))
				do(t, rc, "HELLO", strconv.Itoa(proto))
				for _, args := range finalScript {
					words := make([]string, len(args))
					for i, a := range args {
						words[i] = a.(string)
					}
					switch words[0] {
					case "GET", "SET", "INCR", "HLEN", "SCARD", "SISMEMBER", "LLEN", "HGET", "HMGET", "HSTRLEN", "STRLEN", "EXISTS":
						if got, want := do(t, rc, words...), do(t, rref, words...); got != want {
							t.Errorf("%v: respike %q, redis-server %q", words, got, want)
						}
					}
				}
				if name == "resume" || os.Getenv("RESPIKE_TEST_AEROSPIKE") != "" || os.Getenv("RESPIKE_TEST_NOINLINE") != "" {
					if after := clientInfo(t, c, "modules", "module_final_answers"); after-before < int64(len(finalScript))/2 {
						t.Errorf("module_final_answers went from %d to %d: the recipes did not answer", before, after)
					}
				}
			})
		}
	}
}
