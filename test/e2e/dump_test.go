package e2e

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// dumpCase is a value built by commands, with the redis-server
// configuration that gives it the encoding under test.
type dumpCase struct {
	name     string
	config   map[string]string // CONFIG SET on redis-server before building
	encoding string            // OBJECT ENCODING redis-server reports
	same     bool              // respike's DUMP is redis-server's, byte for byte
	build    func(ctx context.Context, c *redis.Client, key string) error
	// use, when set, is a command on the value whose answer must be the
	// same on the restored value (PFCOUNT of an HLL, GEOPOS of a geo set).
	use []any
}

// dumpDefaults are redis-server 7.0's defaults of the settings the cases
// change.
var dumpDefaults = map[string]string{
	"hash-max-listpack-entries": "512", "hash-max-listpack-value": "64",
	"set-max-intset-entries": "512", "zset-max-listpack-entries": "128",
	"zset-max-listpack-value": "64", "list-max-listpack-size": "-2",
	"list-compress-depth": "0",
}

func words(prefix string, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i)
	}
	return out
}

func dumpCases() []dumpCase {
	rng := rand.New(rand.NewSource(1))
	noise := make([]byte, 300)
	rng.Read(noise)
	long := strings.Repeat("v", 100)
	do := func(args ...any) func(ctx context.Context, c *redis.Client, key string) error {
		return func(ctx context.Context, c *redis.Client, key string) error {
			return c.Do(ctx, append([]any{args[0], key}, args[1:]...)...).Err()
		}
	}
	zmembers := func(n int) []any {
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, float64(i)/3-20, "m"+strconv.Itoa(i))
		}
		return out
	}
	return []dumpCase{
		{name: "string-int", encoding: "int", same: true, build: do("set", "-123456")},
		{name: "string-int64", encoding: "int", same: true, build: do("set", "-9223372036854775808")},
		{name: "string-embstr", encoding: "embstr", same: true, build: do("set", "hello")},
		{name: "string-lzf", encoding: "raw", same: true, build: do("set", strings.Repeat("respike ", 500))},
		{name: "string-noise", encoding: "raw", same: true, build: do("set", string(noise))},
		{name: "string-empty", encoding: "embstr", same: true, build: do("set", "")},
		{name: "hll-sparse", encoding: "raw", same: true, build: do(append([]any{"pfadd"}, words("e", 50)...)...),
			use: []any{"pfcount"}},
		{name: "hll-dense", encoding: "raw", same: true, build: do(append([]any{"pfadd"}, words("e", 5000)...)...),
			use: []any{"pfcount"}},
		{name: "hash-listpack", encoding: "listpack", same: true, build: do("hset", "a", "1", "b", "x", "c", "-5", "d", "2.5")},
		{name: "hash-long-value", encoding: "hashtable", build: do("hset", "a", long, "b", "2")},
		{name: "hash-many", encoding: "hashtable", build: do(append([]any{"hset"}, words("f", 1200)...)...)},
		{name: "hash-forced", encoding: "hashtable", config: map[string]string{"hash-max-listpack-entries": "0"},
			build: do("hset", "a", "1", "b", "2")},
		{name: "set-intset", encoding: "intset", same: true, build: do("sadd", 5, -70000, 3, 9000000000)},
		{name: "set-strings", encoding: "hashtable", build: do("sadd", "a", "b", "c", 1)},
		{name: "set-many-ints", encoding: "hashtable", build: do(append([]any{"sadd"}, words("", 600)...)...)},
		{name: "set-forced", encoding: "hashtable", config: map[string]string{"set-max-intset-entries": "1"},
			build: do("sadd", 1, 2, 3)},
		{name: "zset-listpack", encoding: "listpack", same: true, build: do(append([]any{"zadd"}, zmembers(20)...)...)},
		{name: "zset-skiplist", encoding: "skiplist", same: true, build: do(append([]any{"zadd"}, zmembers(300)...)...)},
		{name: "zset-long-member", encoding: "skiplist", same: true, build: do("zadd", 1, long, 2, "b", "+inf", "c")},
		{name: "zset-forced", encoding: "skiplist", config: map[string]string{"zset-max-listpack-entries": "0"},
			build: do("zadd", 1, "a", 2.5, "b")},
		{name: "geo", encoding: "listpack", same: true, build: do("geoadd", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"),
			use: []any{"geosearch", "fromlonlat", 15, 37, "byradius", 200, "km", "asc", "withdist", "withcoord"}},
		{name: "list-small", encoding: "quicklist", same: true, build: do("rpush", "a", "b", 1, -2)},
		{name: "list-nodes", encoding: "quicklist", same: true, build: do(append([]any{"rpush"}, words("element-", 5000)...)...)},
		{name: "list-big-elements", encoding: "quicklist", same: true, build: do("rpush", strings.Repeat("x", 5000), strings.Repeat("y", 5000), "z")},
		{name: "list-count-fill", encoding: "quicklist", config: map[string]string{"list-max-listpack-size": "3"},
			build: do(append([]any{"rpush"}, words("", 10)...)...)},
		{name: "list-compressed", encoding: "quicklist", config: map[string]string{"list-compress-depth": "1"},
			build: do(append([]any{"rpush"}, words("compressible-element-", 5000)...)...)},
	}
}

// readValue reads a key's value through its type's commands, in a form
// that compares equal between the servers: hashes as maps, sets sorted.
func readValue(ctx context.Context, t *testing.T, c *redis.Client, key string) any {
	t.Helper()
	typ, err := c.Type(ctx, key).Result()
	if err != nil {
		t.Fatalf("TYPE %s: %v", key, err)
	}
	var v any
	switch typ {
	case "string":
		v, err = c.Get(ctx, key).Result()
	case "hash":
		v, err = c.HGetAll(ctx, key).Result()
	case "set":
		var m []string
		m, err = c.SMembers(ctx, key).Result()
		sort.Strings(m)
		v = m
	case "zset":
		v, err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
	case "list":
		v, err = c.LRange(ctx, key, 0, -1).Result()
	default:
		t.Fatalf("%s: type %q", key, typ)
	}
	if err != nil {
		t.Fatalf("reading %s: %v", key, err)
	}
	return []any{typ, v}
}

// setConfig applies a case's redis-server settings, and the defaults for
// the others.
func setConfig(ctx context.Context, t *testing.T, c *redis.Client, cfg map[string]string) {
	t.Helper()
	for k, def := range dumpDefaults {
		v := def
		if x, ok := cfg[k]; ok {
			v = x
		}
		if err := c.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", k, v, err)
		}
	}
}

// TestDumpRestoreWithRedis moves values of every encoding between
// redis-server and respike with DUMP and RESTORE, both ways, and reads
// them back with each type's commands.
func TestDumpRestoreWithRedis(t *testing.T) {
	needModules(t, "keys", "strings", "hash", "set", "zset", "list", "hll", "geo")
	ctx := context.Background()
	rs := client(t, redisServer(t).Addr)
	rp := client(t, env.daemon.Addr)
	t.Cleanup(func() { setConfig(ctx, t, rs, nil) })
	for _, tc := range dumpCases() {
		t.Run(tc.name, func(t *testing.T) {
			key := "dumpe2e:" + tc.name
			back := key + ":back"
			t.Cleanup(func() {
				rs.Del(ctx, key, back)
				rp.Del(ctx, key, back)
			})
			rs.Del(ctx, key, back)
			rp.Del(ctx, key, back)
			setConfig(ctx, t, rs, tc.config)
			if err := tc.build(ctx, rs, key); err != nil {
				t.Fatalf("building on redis-server: %v", err)
			}
			if enc := rs.ObjectEncoding(ctx, key).Val(); enc != tc.encoding {
				t.Fatalf("redis-server encoded the value as %s, want %s", enc, tc.encoding)
			}
			want := readValue(ctx, t, rs, key)

			// redis-server → respike.
			payload, err := rs.Dump(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := rp.Restore(ctx, key, 0, payload).Err(); err != nil {
				t.Fatalf("RESTORE of redis-server's payload (%d bytes): %v", len(payload), err)
			}
			if got := readValue(ctx, t, rp, key); !reflect.DeepEqual(got, want) {
				t.Fatalf("restored in respike:\n  got  %.300v\n  want %.300v", got, want)
			}

			if tc.use != nil {
				use := func(c *redis.Client) any {
					v, err := c.Do(ctx, append([]any{tc.use[0], key}, tc.use[1:]...)...).Result()
					if err != nil {
						t.Fatalf("%v: %v", tc.use, err)
					}
					return v
				}
				if got, want := use(rp), use(rs); !reflect.DeepEqual(got, want) {
					t.Fatalf("%v on the restored value: respike %v, redis-server %v", tc.use[0], got, want)
				}
				// PFCOUNT caches the count in the HLL's header, on both
				// servers alike.
				want = readValue(ctx, t, rs, key)
				if got := readValue(ctx, t, rp, key); !reflect.DeepEqual(got, want) {
					t.Fatalf("after %v:\n  respike      %.300q\n  redis-server %.300q", tc.use[0], got, want)
				}
				payload = rs.Dump(ctx, key).Val()
			}

			// respike → redis-server, from respike's own DUMP of the value.
			setConfig(ctx, t, rs, nil)
			ours, err := rp.Dump(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := rs.Restore(ctx, back, 0, ours).Err(); err != nil {
				t.Fatalf("redis-server refused respike's payload: %v", err)
			}
			if got := readValue(ctx, t, rs, back); !reflect.DeepEqual(got, want) {
				t.Fatalf("restored in redis-server:\n  got  %.300v\n  want %.300v", got, want)
			}
			if tc.same && ours != payload {
				t.Errorf("respike's DUMP differs from redis-server's:\n  redis:   %.200q\n  respike: %.200q", payload, ours)
			}
			// The value respike built itself dumps the same.
			if err := tc.build(ctx, rp, back); err != nil {
				t.Fatalf("building on respike: %v", err)
			}
			if tc.use != nil {
				if err := rp.Do(ctx, append([]any{tc.use[0], back}, tc.use[1:]...)...).Err(); err != nil {
					t.Fatal(err)
				}
			}
			built, err := rp.Dump(ctx, back).Result()
			if err != nil {
				t.Fatal(err)
			}
			if built != ours {
				t.Errorf("DUMP of the value built by commands differs from DUMP of the restored one")
			}
		})
	}
}

// TestRestoreExpiry checks RESTORE's TTL forms through go-redis.
func TestRestoreExpiry(t *testing.T) {
	needModules(t, "keys", "strings")
	ctx := context.Background()
	rp := client(t, env.daemon.Addr)
	const k = "dumpe2e:ttl"
	t.Cleanup(func() { rp.Del(ctx, k, k+"2") })
	rp.Set(ctx, k, "v", 0)
	payload := rp.Dump(ctx, k).Val()
	if err := rp.Restore(ctx, k, 0, payload).Err(); err == nil || !strings.HasPrefix(err.Error(), "BUSYKEY") {
		t.Fatalf("RESTORE over an existing key: %v", err)
	}
	if err := rp.RestoreReplace(ctx, k, 1500*time.Millisecond, payload).Err(); err != nil {
		t.Fatal(err)
	}
	if pttl := rp.PTTL(ctx, k).Val(); pttl <= 0 || pttl > 1500*time.Millisecond {
		t.Fatalf("PTTL after RESTORE 1500 ms: %v", pttl)
	}
	at := time.Now().Add(time.Hour).UnixMilli()
	if err := rp.Do(ctx, "restore", k+"2", at, payload, "absttl").Err(); err != nil {
		t.Fatal(err)
	}
	if got := rp.PExpireTime(ctx, k+"2").Val(); got != time.Duration(at)*time.Millisecond {
		t.Fatalf("PEXPIRETIME after ABSTTL %d: %v", at, got)
	}
	// A payload whose expiry has passed deletes the key it replaces.
	if err := rp.Do(ctx, "restore", k+"2", 1, payload, "absttl", "replace").Err(); err != nil {
		t.Fatal(err)
	}
	if n := rp.Exists(ctx, k+"2").Val(); n != 0 {
		t.Fatalf("expired RESTORE ... REPLACE left the key")
	}
}

// TestRestoreTooBig restores redis-server's payload of a value larger than
// a store record (9 MiB; the payload is small, LZF): the store's error,
// and no key.
func TestRestoreTooBig(t *testing.T) {
	needModules(t, "keys")
	ctx := context.Background()
	rs := client(t, redisServer(t).Addr)
	rp := client(t, env.daemon.Addr)
	const k = "dumpe2e:big"
	t.Cleanup(func() { rs.Del(ctx, k); rp.Del(ctx, k) })
	if err := rs.Set(ctx, k, strings.Repeat("big value ", 900_000), 0).Err(); err != nil {
		t.Fatal(err)
	}
	payload := rs.Dump(ctx, k).Val()
	err := rp.Restore(ctx, k, 0, payload).Err()
	if err == nil || !strings.Contains(err.Error(), "record size limit (code 13)") {
		t.Fatalf("RESTORE of 9 MB (payload %d bytes): %v", len(payload), err)
	}
	if n := rp.Exists(ctx, k).Val(); n != 0 {
		t.Fatal("a refused RESTORE created the key")
	}
}

// TestDumpRandomWithRedis builds random values with the same commands on
// redis-server and respike and compares their DUMP payloads byte for byte
// (values of the kinds whose payload respike reproduces: strings, sets of
// integers, sorted sets with arbitrary scores, lists built by RPUSH, hashes
// written in field order), then restores each server's payload in the
// other and compares what the type's commands read.
func TestDumpRandomWithRedis(t *testing.T) {
	needModules(t, "keys", "strings", "hash", "set", "zset", "list")
	ctx := context.Background()
	rs := client(t, redisServer(t).Addr)
	rp := client(t, env.daemon.Addr)
	setConfig(ctx, t, rs, nil)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	seed := rng.Int63()
	rng.Seed(seed)
	t.Logf("seed %d", seed)
	// elem is a random element: integers of every width, short and long
	// strings, repetitive ones (LZF) and binary.
	elem := func() string {
		switch rng.Intn(6) {
		case 0:
			return strconv.FormatInt(rng.Int63n(200)-100, 10)
		case 1:
			return strconv.FormatInt(rng.Int63()>>uint(rng.Intn(63))*int64(1-2*rng.Intn(2)), 10)
		case 2:
			return strings.Repeat(string(rune('a'+rng.Intn(26))), rng.Intn(80))
		case 3:
			b := make([]byte, rng.Intn(70))
			rng.Read(b)
			return string(b)
		default:
			return "e" + strconv.Itoa(rng.Intn(1000))
		}
	}
	score := func() float64 {
		switch rng.Intn(5) {
		case 0:
			return float64(rng.Intn(1000) - 500)
		case 1:
			return rng.NormFloat64() * math.Pow(10, float64(rng.Intn(40)-20))
		case 2:
			return float64(rng.Int63() >> uint(rng.Intn(63)))
		case 3:
			return math.Float64frombits(rng.Uint64()&^(0x7FF<<52) | uint64(rng.Intn(2046)+1)<<52) // any finite
		default:
			return float64(rng.Intn(100)) / 8
		}
	}
	const rounds = 150
	for i := 0; i < rounds; i++ {
		key := fmt.Sprintf("dumprand:%d", i)
		var args []any
		kind := rng.Intn(5)
		n := 1 + rng.Intn([]int{1, 40, 600, 200, 3000}[rng.Intn(5)])
		switch kind {
		case 0:
			args = []any{"set", key, elem()}
			if rng.Intn(3) == 0 {
				args[2] = strings.Repeat(elem(), rng.Intn(50)+1)
			}
		case 1: // sets of integers (intsets, and beyond 512 hashtables: round trip only)
			args = []any{"sadd", key}
			for j := 0; j < n; j++ {
				args = append(args, rng.Int63n(1<<uint(1+rng.Intn(62)))-(1<<uint(rng.Intn(40))))
			}
		case 2:
			args = []any{"zadd", key}
			for j := 0; j < n; j++ {
				args = append(args, score(), elem())
			}
		case 3:
			args = []any{"rpush", key}
			for j := 0; j < n; j++ {
				args = append(args, elem())
			}
		case 4: // fields in byte order: Redis's listpack keeps insertion order
			fields := map[string]bool{}
			for j := 0; j < n; j++ {
				fields[elem()] = true
			}
			var sorted []string
			for f := range fields {
				sorted = append(sorted, f)
			}
			sort.Strings(sorted)
			args = []any{"hset", key}
			for _, f := range sorted {
				args = append(args, f, elem())
			}
		}
		for _, c := range []*redis.Client{rs, rp} {
			c.Del(ctx, key, key+":back")
			if err := c.Do(ctx, args...).Err(); err != nil {
				t.Fatalf("%s %.80v: %v", key, args, err)
			}
		}
		theirs, ours := rs.Dump(ctx, key).Val(), rp.Dump(ctx, key).Val()
		enc := rs.ObjectEncoding(ctx, key).Val()
		if enc != "hashtable" && theirs != ours {
			t.Errorf("%s (%s, %d elements): DUMP differs\n  redis:   %.300q\n  respike: %.300q", key, enc, n, theirs, ours)
		}
		want := readValue(ctx, t, rs, key)
		if err := rp.Restore(ctx, key+":back", 0, theirs).Err(); err != nil {
			t.Fatalf("%s: respike refused redis-server's payload: %v", key, err)
		}
		if err := rs.Restore(ctx, key+":back", 0, ours).Err(); err != nil {
			t.Fatalf("%s: redis-server refused respike's payload: %v", key, err)
		}
		for name, c := range map[string]*redis.Client{"respike": rp, "redis-server": rs} {
			if got := readValue(ctx, t, c, key+":back"); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: restored in %s:\n  got  %.300v\n  want %.300v", key, name, got, want)
			}
			c.Del(ctx, key, key+":back")
		}
	}
}
