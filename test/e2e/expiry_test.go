package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// untilPast waits until the wall clock is past the Unix time atMs: the
// proxy's clock, which decides expiries, is this machine's.
func untilPast(t *testing.T, atMs int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().UnixMilli() <= atMs {
		if time.Now().After(deadline) {
			t.Fatalf("the clock never passed %d", atMs)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestExpiryMillisecondsEveryCommand gives a key of each type a 100 ms
// expiry and checks, once its expiry millisecond has passed, that every
// command sees it absent: reads answer as for a missing key, writes start
// from nothing (no old value, no old type, no old expiry).
func TestExpiryMillisecondsEveryCommand(t *testing.T) {
	needModules(t, "strings", "keys", "hash", "list", "set", "zset")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	c.FlushAll(ctx)
	type check struct {
		name  string
		setup func(k string) error
		after func(k string) error
	}
	str := func(k string) error { return c.Set(ctx, k, "old", 100*time.Millisecond).Err() }
	hash := func(k string) error {
		if err := c.HSet(ctx, k, "f", "old", "g", "old").Err(); err != nil {
			return err
		}
		return c.PExpire(ctx, k, 100*time.Millisecond).Err()
	}
	list := func(k string) error {
		if err := c.RPush(ctx, k, "old1", "old2").Err(); err != nil {
			return err
		}
		return c.PExpire(ctx, k, 100*time.Millisecond).Err()
	}
	want := func(what string, got, want any) error {
		if got != want {
			return fmt.Errorf("%s: got %v, want %v", what, got, want)
		}
		return nil
	}
	checks := []check{
		{"GET", str, func(k string) error { return want("GET", c.Get(ctx, k).Err(), redis.Nil) }},
		{"EXISTS", str, func(k string) error { return want("EXISTS", c.Exists(ctx, k).Val(), int64(0)) }},
		{"TYPE", hash, func(k string) error { return want("TYPE", c.Type(ctx, k).Val(), "none") }},
		{"TTL", str, func(k string) error { return want("PTTL", c.PTTL(ctx, k).Val(), time.Duration(-2)) }},
		{"STRLEN", str, func(k string) error { return want("STRLEN", c.StrLen(ctx, k).Val(), int64(0)) }},
		{"INCR", str, func(k string) error {
			if err := want("INCR", c.Incr(ctx, k).Val(), int64(1)); err != nil {
				return err
			}
			return want("TTL after INCR", c.TTL(ctx, k).Val(), time.Duration(-1))
		}},
		{"APPEND", str, func(k string) error { return want("APPEND", c.Append(ctx, k, "x").Val(), int64(1)) }},
		{"SETNX", str, func(k string) error { return want("SETNX", c.SetNX(ctx, k, "new", 0).Val(), true) }},
		{"SET NX GET", str, func(k string) error {
			return want("SET NX GET", c.Do(ctx, "SET", k, "new", "NX", "GET").Err(), redis.Nil)
		}},
		{"SET XX", str, func(k string) error { return want("SET XX", c.SetXX(ctx, k, "new", 0).Val(), false) }},
		{"SET KEEPTTL", str, func(k string) error {
			if err := c.Do(ctx, "SET", k, "new", "KEEPTTL").Err(); err != nil {
				return err
			}
			return want("PTTL after SET KEEPTTL", c.PTTL(ctx, k).Val(), time.Duration(-1))
		}},
		{"GETSET", str, func(k string) error { return want("GETSET", c.GetSet(ctx, k, "new").Err(), redis.Nil) }},
		{"GETDEL", str, func(k string) error { return want("GETDEL", c.GetDel(ctx, k).Err(), redis.Nil) }},
		{"GETEX", str, func(k string) error { return want("GETEX", c.GetEx(ctx, k, time.Hour).Err(), redis.Nil) }},
		{"EXPIRE", str, func(k string) error { return want("EXPIRE", c.Expire(ctx, k, time.Hour).Val(), false) }},
		{"PERSIST", str, func(k string) error { return want("PERSIST", c.Persist(ctx, k).Val(), false) }},
		{"DEL", str, func(k string) error { return want("DEL", c.Del(ctx, k).Val(), int64(0)) }},
		{"RENAME", str, func(k string) error {
			return want("RENAME", errString(c.Rename(ctx, k, k+":to").Err()), "ERR no such key")
		}},
		{"COPY", str, func(k string) error { return want("COPY", c.Copy(ctx, k, k+":to", 0, true).Val(), int64(0)) }},
		{"HSET on an expired string", str, func(k string) error {
			if err := want("HSET", c.HSet(ctx, k, "f", "v").Val(), int64(1)); err != nil {
				return err
			}
			return want("HLEN", c.HLen(ctx, k).Val(), int64(1))
		}},
		{"HGET", hash, func(k string) error { return want("HGET", c.HGet(ctx, k, "f").Err(), redis.Nil) }},
		{"HLEN", hash, func(k string) error { return want("HLEN", c.HLen(ctx, k).Val(), int64(0)) }},
		{"HSET", hash, func(k string) error {
			if err := want("HSET", c.HSet(ctx, k, "f", "new").Val(), int64(1)); err != nil {
				return err
			}
			return want("HLEN after", c.HLen(ctx, k).Val(), int64(1))
		}},
		{"HINCRBY", hash, func(k string) error { return want("HINCRBY", c.HIncrBy(ctx, k, "n", 2).Val(), int64(2)) }},
		{"LPUSH", list, func(k string) error {
			if err := want("LPUSH", c.LPush(ctx, k, "new").Val(), int64(1)); err != nil {
				return err
			}
			return want("LRANGE", strings.Join(c.LRange(ctx, k, 0, -1).Val(), ","), "new")
		}},
		{"LRANGE", list, func(k string) error { return want("LLEN", c.LLen(ctx, k).Val(), int64(0)) }},
		{"RPOP", list, func(k string) error { return want("RPOP", c.RPop(ctx, k).Err(), redis.Nil) }},
		{"SADD on an expired list", list, func(k string) error { return want("SADD", c.SAdd(ctx, k, "m").Val(), int64(1)) }},
		{"ZADD on an expired hash", hash, func(k string) error {
			return want("ZADD", c.ZAdd(ctx, k, redis.Z{Score: 1, Member: "m"}).Val(), int64(1))
		}},
	}
	keys := make([]string, len(checks))
	var last int64
	for i, ch := range checks {
		keys[i] = "exp:" + strconv.Itoa(i)
		if err := ch.setup(keys[i]); err != nil {
			t.Fatalf("%s: setup: %v", ch.name, err)
		}
		// The expiry was set before now, by this machine's clock, which
		// is the proxy's: it is at most 100 ms from now.
		last = max(last, time.Now().UnixMilli()+100)
	}
	untilPast(t, last)
	for i, ch := range checks {
		if err := ch.after(keys[i]); err != nil {
			t.Errorf("%s on a key whose 100 ms expiry passed: %v", ch.name, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestExpiryExactReadings checks that PTTL and PEXPIRETIME are exact to
// the millisecond (not whole seconds × 1000), a sub-second key lives until
// its millisecond and no longer, and expiries far beyond Aerospike's
// ten-year TTL are accepted and read back exactly.
func TestExpiryExactReadings(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	c.FlushAll(ctx)

	at := time.Now().UnixMilli() + 60_123
	c.Do(ctx, "SET", "k", "v", "PXAT", at)
	if got, _ := c.Do(ctx, "PEXPIRETIME", "k").Int64(); got != at {
		t.Errorf("PEXPIRETIME after SET PXAT %d = %d", at, got)
	}
	before := time.Now().UnixMilli()
	pttl := c.PTTL(ctx, "k").Val().Milliseconds()
	after := time.Now().UnixMilli()
	if pttl > at-before || pttl < at-after {
		t.Errorf("PTTL = %d, want %d..%d (the ms left while it ran)", pttl, at-after, at-before)
	}
	c.Do(ctx, "SET", "k", "w", "KEEPTTL")
	if got, _ := c.Do(ctx, "PEXPIRETIME", "k").Int64(); got != at {
		t.Errorf("PEXPIRETIME after SET KEEPTTL = %d, want %d", got, at)
	}
	c.Copy(ctx, "k", "k2", 0, false)
	c.Rename(ctx, "k", "k3")
	for _, k := range []string{"k2", "k3"} {
		if got, _ := c.Do(ctx, "PEXPIRETIME", k).Int64(); got != at {
			t.Errorf("PEXPIRETIME of %s (COPY/RENAME) = %d, want %d", k, got, at)
		}
	}

	// PX 250: present before its millisecond, absent from it on.
	c.Set(ctx, "short", "v", 250*time.Millisecond)
	end, _ := c.Do(ctx, "PEXPIRETIME", "short").Int64()
	before = time.Now().UnixMilli()
	if p := c.PTTL(ctx, "short").Val().Milliseconds(); p > 250 || (p < 0 && before < end) || (p >= 0 && p < end-time.Now().UnixMilli()) {
		t.Errorf("PTTL of a PX 250 key = %d ms", p)
	}
	seenAfter := false
	for {
		now := time.Now().UnixMilli()
		v, err := c.Get(ctx, "short").Result()
		after := time.Now().UnixMilli()
		switch {
		case err == nil && now > end:
			t.Fatalf("GET at %d answered %q after the expiry %d", now, v, end)
		case err == redis.Nil && after < end:
			t.Fatalf("GET at %d..%d found no key before its expiry %d", now, after, end)
		case err == redis.Nil:
			seenAfter = true
		case err != nil && err != redis.Nil:
			t.Fatal(err)
		}
		if seenAfter || now > end+5000 {
			break
		}
	}
	if !seenAfter {
		t.Errorf("the PX 250 key never expired")
	}

	// Year 2100: beyond Aerospike's ten years.
	c.Set(ctx, "far", "v", 0)
	if ok := c.ExpireAt(ctx, "far", time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)).Val(); !ok {
		t.Fatal("EXPIREAT 2100 refused")
	}
	if got, _ := c.Do(ctx, "EXPIRETIME", "far").Int64(); got != 4102444800 {
		t.Errorf("EXPIRETIME = %d, want 4102444800", got)
	}
	want := 4102444800 - time.Now().Unix()
	if got := int64(c.TTL(ctx, "far").Val().Seconds()); got < want-2 || got > want+1 {
		t.Errorf("TTL = %d, want about %d", got, want)
	}
	if got := c.Get(ctx, "far").Val(); got != "v" {
		t.Errorf("GET far = %q", got)
	}
}

// TestExpiryRandomAgainstRedis plays random commands with expiries in the
// mix (sub-second, relative, far-future absolute, past) on keys of several
// types against redis-server and respike and compares the replies. A
// command that gives a key a sub-second expiry is followed by a wait until
// both servers report the key gone, so that what follows is deterministic;
// TTL readings compare exactly when -1 or -2 and within 2 s (TTL,
// EXPIRETIME) or 2000 ms (PTTL, PEXPIRETIME) otherwise, as time passes
// between the two servers. RESPIKE_EXPIRY_SEED replays a seed.
func TestExpiryRandomAgainstRedis(t *testing.T) {
	needModules(t, "strings", "keys", "hash", "list", "set")
	seed := uint64(rand.Int64())
	if s := os.Getenv("RESPIKE_EXPIRY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RESPIKE_EXPIRY_SEED: %v", err)
		}
		seed = n
	}
	steps := 3000
	if testing.Short() {
		steps = 800
	}
	redisServer(t)
	flushBoth(t)
	d := &diffConn{t: t}
	d.connect()
	defer func() { d.close() }()
	g := &egen{r: rand.New(rand.NewPCG(seed, 0xe1))}
	var history []string
	mismatches, waits := 0, 0
	for i := range steps {
		args, short := g.command()
		history = append(history, strings.Join(quoteAll(args), " "))
		theirs, err1 := d.redis.Do(args...)
		ours, err2 := d.respike.Do(args...)
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d, step %d: %v / %v", seed, i, err1, err2)
		}
		if !sameExpiryReply(strings.ToUpper(args[0]), theirs, ours) {
			mismatches++
			from := max(0, len(history)-30)
			t.Fatalf("seed %d (RESPIKE_EXPIRY_SEED=%d replays it), step %d: %s\n  redis:   %q\n  respike: %q\nlast commands:\n  %s",
				seed, seed, i, history[len(history)-1], theirs, ours, strings.Join(history[from:], "\n  "))
		}
		if short != "" {
			waits++
			d.waitGone(short, seed, i)
		}
	}
	t.Logf("seed %d: %d commands, %d sub-second expiries waited out, %d mismatches", seed, steps, waits, mismatches)
}

// waitGone polls both servers until key is gone from each (its sub-second
// expiry has passed), unless the command did not give it one.
func (d *diffConn) waitGone(key string, seed uint64, step int) {
	d.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range []*RawConn{d.redis, d.respike} {
		for {
			r, err := c.Do("PTTL", key)
			if err != nil {
				d.t.Fatal(err)
			}
			if r == ":-2\r\n" {
				break
			}
			if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(r, ":"), "\r\n"), 10, 64); err == nil && (n == -1 || n > 1000) {
				// No sub-second expiry: the command did not set one (NX,
				// XX, WRONGTYPE); the replies agreed, so did the servers.
				break
			}
			if time.Now().After(deadline) {
				d.t.Fatalf("seed %d, step %d: %s still there: PTTL %q", seed, step, key, r)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// sameExpiryReply compares two raw replies, TTL readings within a tolerance.
func sameExpiryReply(cmd, a, b string) bool {
	if a == b {
		return true
	}
	tol := int64(0)
	switch cmd {
	case "TTL", "EXPIRETIME":
		tol = 2
	case "PTTL", "PEXPIRETIME":
		tol = 2000
	default:
		return false
	}
	x, err1 := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(a, ":"), "\r\n"), 10, 64)
	y, err2 := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(b, ":"), "\r\n"), 10, 64)
	if err1 != nil || err2 != nil || x < 0 || y < 0 {
		return false
	}
	return x-y <= tol && y-x <= tol
}

// egen draws random commands with expiries.
type egen struct{ r *rand.Rand }

var (
	eStrKeys = []string{"s1", "s2", "s3"}
	eAllKeys = []string{"s1", "s2", "s3", "h1", "l1", "t1"}
)

func (g *egen) pick(s []string) string { return s[g.r.IntN(len(s))] }

// far is an absolute time in seconds far ahead (2100 and later, beyond
// Aerospike's ten years) or long past.
func (g *egen) farSeconds() string {
	if g.r.IntN(5) == 0 {
		return strconv.Itoa(1 + g.r.IntN(1000)) // long past: deletes
	}
	return strconv.FormatInt(4102444800+int64(g.r.IntN(1000)), 10)
}

func (g *egen) farMillis() string {
	if g.r.IntN(5) == 0 {
		return strconv.Itoa(1 + g.r.IntN(1_000_000))
	}
	return strconv.FormatInt(4102444800000+int64(g.r.IntN(1_000_000)), 10)
}

func (g *egen) shortMs() string { return strconv.Itoa(1 + g.r.IntN(80)) }

// command returns a command and, when it may give its key a sub-second
// expiry, that key.
func (g *egen) command() (args []string, short string) {
	k := g.pick(eAllKeys)
	s := g.pick(eStrKeys)
	switch n := g.r.IntN(100); {
	case n < 12:
		args = []string{"SET", s, strconv.Itoa(g.r.IntN(100))}
		switch g.r.IntN(7) {
		case 0:
			args = append(args, "PX", g.shortMs())
			short = s
		case 1:
			args = append(args, "EX", strconv.Itoa(100+g.r.IntN(1000)))
		case 2:
			args = append(args, "PXAT", g.farMillis())
		case 3:
			args = append(args, "EXAT", g.farSeconds())
		case 4:
			args = append(args, "KEEPTTL")
		}
		if g.r.IntN(4) == 0 {
			args = append(args, g.pick([]string{"NX", "XX", "GET"}))
		}
		return args, short
	case n < 17:
		return []string{"GET", s}, ""
	case n < 20:
		return []string{"INCR", s}, ""
	case n < 22:
		return []string{"APPEND", s, "x"}, ""
	case n < 25:
		args = []string{"GETEX", s}
		switch g.r.IntN(5) {
		case 0:
			args = append(args, "PX", g.shortMs())
			short = s
		case 1:
			args = append(args, "EX", strconv.Itoa(100+g.r.IntN(1000)))
		case 2:
			args = append(args, "PXAT", g.farMillis())
		case 3:
			args = append(args, "PERSIST")
		}
		return args, short
	case n < 27:
		return []string{"PSETEX", s, g.shortMs(), "v"}, s
	case n < 29:
		return []string{"SETEX", s, strconv.Itoa(100 + g.r.IntN(1000)), "v"}, ""
	case n < 33:
		return []string{"HSET", "h1", g.pick([]string{"a", "b", "c"}), "v"}, ""
	case n < 35:
		return []string{"HGET", "h1", g.pick([]string{"a", "b", "c"})}, ""
	case n < 37:
		return []string{"HLEN", "h1"}, ""
	case n < 40:
		return []string{g.pick([]string{"LPUSH", "RPUSH"}), "l1", g.pick([]string{"x", "y"})}, ""
	case n < 42:
		return []string{"LRANGE", "l1", "0", "-1"}, ""
	case n < 44:
		return []string{"SADD", "t1", g.pick([]string{"m", "n", "o"})}, ""
	case n < 46:
		return []string{"SCARD", "t1"}, ""
	case n < 52:
		switch g.r.IntN(4) {
		case 0:
			return []string{"PEXPIRE", k, g.shortMs()}, k
		case 1:
			args = []string{"EXPIRE", k, strconv.Itoa(100 + g.r.IntN(1000))}
			if g.r.IntN(2) == 0 {
				args = append(args, g.pick([]string{"NX", "XX"}))
			}
			return args, ""
		case 2:
			args = []string{"EXPIREAT", k, g.farSeconds()}
		default:
			args = []string{"PEXPIREAT", k, g.farMillis()}
		}
		if g.r.IntN(2) == 0 {
			args = append(args, g.pick([]string{"NX", "XX", "GT", "LT"}))
		}
		return args, ""
	case n < 54:
		return []string{"EXPIRE", k, strconv.Itoa(-g.r.IntN(3))}, ""
	case n < 57:
		return []string{"PERSIST", k}, ""
	case n < 67:
		return []string{g.pick([]string{"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"}), k}, ""
	case n < 71:
		return []string{g.pick([]string{"EXISTS", "TYPE"}), k}, ""
	case n < 74:
		return []string{"DEL", k}, ""
	case n < 77:
		return []string{"RENAME", s, g.pick(eStrKeys)}, ""
	case n < 80:
		args = []string{"COPY", s, g.pick(eStrKeys)}
		if g.r.IntN(2) == 0 {
			args = append(args, "REPLACE")
		}
		return args, ""
	case n < 82:
		return []string{"SETNX", s, "v"}, ""
	case n < 84:
		return []string{"GETDEL", s}, ""
	case n < 86:
		return []string{"GETSET", s, "g"}, ""
	default:
		return []string{g.pick([]string{"TTL", "PEXPIRETIME"}), k}, ""
	}
}
