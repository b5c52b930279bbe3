package e2e

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestBitsWithGoRedis uses the bit commands as an application would
// through go-redis: a bitmap of feature flags, a bloom-style bitmap,
// counters packed in one string, and LCS.
func TestBitsWithGoRedis(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	if err := c.Del(ctx, "bits:flags", "bits:packed", "bits:and", "bits:a", "bits:b", "bits:ttl").Err(); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{3, 17, 1000, 999999} {
		if old, err := c.SetBit(ctx, "bits:flags", off, 1).Result(); err != nil || old != 0 {
			t.Fatalf("SETBIT %d: %d %v", off, old, err)
		}
	}
	if old, err := c.SetBit(ctx, "bits:flags", 17, 0).Result(); err != nil || old != 1 {
		t.Fatalf("SETBIT 17 0: %d %v", old, err)
	}
	if n, err := c.StrLen(ctx, "bits:flags").Result(); err != nil || n != 125000 {
		t.Fatalf("STRLEN: %d %v", n, err)
	}
	for off, want := range map[int64]int64{3: 1, 17: 0, 1000: 1, 999999: 1, 999998: 0, 1 << 30: 0} {
		if v, err := c.GetBit(ctx, "bits:flags", off).Result(); err != nil || v != want {
			t.Errorf("GETBIT %d: %d %v, want %d", off, v, err, want)
		}
	}
	if n, err := c.BitCount(ctx, "bits:flags", nil).Result(); err != nil || n != 3 {
		t.Errorf("BITCOUNT: %d %v", n, err)
	}
	if n, err := c.BitCount(ctx, "bits:flags", &redis.BitCount{Start: 0, End: 125, Unit: "BYTE"}).Result(); err != nil || n != 2 {
		t.Errorf("BITCOUNT 0 125 BYTE: %d %v", n, err)
	}
	if n, err := c.BitCount(ctx, "bits:flags", &redis.BitCount{Start: 999, End: 2000000, Unit: "BIT"}).Result(); err != nil || n != 2 {
		t.Errorf("BITCOUNT 999 2000000 BIT (past the end): %d %v", n, err)
	}
	if p, err := c.BitPos(ctx, "bits:flags", 1, 1).Result(); err != nil || p != 1000 {
		t.Errorf("BITPOS 1 1: %d %v", p, err)
	}
	if p, err := c.BitPosSpan(ctx, "bits:flags", 0, 0, 7, "bit").Result(); err != nil || p != 0 {
		t.Errorf("BITPOS 0 0 7 BIT: %d %v", p, err)
	}

	// BITOP over two bitmaps.
	c.SetBit(ctx, "bits:a", 1, 1)
	c.SetBit(ctx, "bits:a", 9, 1)
	c.SetBit(ctx, "bits:b", 9, 1)
	if n, err := c.BitOpAnd(ctx, "bits:and", "bits:a", "bits:b").Result(); err != nil || n != 2 {
		t.Fatalf("BITOP AND: %d %v", n, err)
	}
	if v, err := c.Get(ctx, "bits:and").Result(); err != nil || v != "\x00\x40" {
		t.Errorf("BITOP AND result %q %v", v, err)
	}

	// Counters packed in one string: four u8 counters, saturating.
	res, err := c.BitField(ctx, "bits:packed", "OVERFLOW", "SAT", "INCRBY", "u8", "#0", 200,
		"INCRBY", "u8", "#0", 100, "INCRBY", "u8", "#3", 7, "GET", "u32", 0).Result()
	if err != nil || len(res) != 4 || res[0] != 200 || res[1] != 255 || res[2] != 7 || res[3] != 0xff000007 {
		t.Fatalf("BITFIELD: %v %v", res, err)
	}
	// OVERFLOW FAIL answers nil for that operation only.
	vals, err := c.Do(ctx, "BITFIELD", "bits:packed", "OVERFLOW", "FAIL", "INCRBY", "u8", "#0", 1, "GET", "u8", "#0").Slice()
	if err != nil || len(vals) != 2 || vals[0] != nil || vals[1] != int64(255) {
		t.Fatalf("BITFIELD OVERFLOW FAIL: %#v %v", vals, err)
	}
	if res, err := c.BitFieldRO(ctx, "bits:packed", "u8", "#3").Result(); err != nil || len(res) != 1 || res[0] != 7 {
		t.Errorf("BITFIELD_RO: %v %v", res, err)
	}
	if err := c.Do(ctx, "BITFIELD_RO", "bits:packed", "SET", "u8", 0, 1).Err(); err == nil ||
		err.Error() != "ERR BITFIELD_RO only supports the GET subcommand" {
		t.Errorf("BITFIELD_RO SET: %v", err)
	}

	// Writes keep the TTL.
	c.Set(ctx, "bits:ttl", "x", 0)
	c.Expire(ctx, "bits:ttl", 1000e9)
	c.SetBit(ctx, "bits:ttl", 100, 1)
	c.BitField(ctx, "bits:ttl", "SET", "u8", 0, 65)
	if ttl, err := c.TTL(ctx, "bits:ttl").Result(); err != nil || ttl.Seconds() < 990 {
		t.Errorf("TTL after SETBIT and BITFIELD: %v %v", ttl, err)
	}

	// Offsets beyond 512 MB are Redis's error; beyond what respike
	// builds, a clear error that changes nothing.
	if err := c.SetBit(ctx, "bits:flags", 1<<32, 1).Err(); err == nil || err.Error() != "ERR bit offset is not an integer or out of range" {
		t.Errorf("SETBIT 2^32: %v", err)
	}
	if err := c.SetBit(ctx, "bits:flags", 1<<32-1, 1).Err(); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("SETBIT 2^32-1: %v", err)
	}
	// SETBIT at 12.5 MB: within what respike builds, beyond the store's
	// record size (8 MiB by default on both stores), which refuses the
	// store's grow. BITFIELD at 25 MB: refused by the module. (A BITFIELD
	// between the two would send the whole value to be refused: too slow a
	// test on a loaded machine.)
	for _, args := range [][]any{{"SETBIT", "bits:flags", 100_000_000, 1}, {"BITFIELD", "bits:flags", "SET", "u8", 200_000_000, 1}} {
		if err := c.Do(ctx, args...).Err(); err == nil || !strings.Contains(err.Error(), "too large for the store's record size limit (code 13)") {
			t.Errorf("%v: %v", args, err)
		}
	}
	if n, err := c.StrLen(ctx, "bits:flags").Result(); err != nil || n != 125000 {
		t.Errorf("STRLEN after the refused writes: %d %v", n, err)
	}

	// LCS.
	c.MSet(ctx, "bits:l1", "ohmytext", "bits:l2", "mynewtext")
	if m, err := c.LCS(ctx, &redis.LCSQuery{Key1: "bits:l1", Key2: "bits:l2"}).Result(); err != nil || m.MatchString != "mytext" {
		t.Errorf("LCS: %+v %v", m, err)
	}
	m, err := c.LCS(ctx, &redis.LCSQuery{Key1: "bits:l1", Key2: "bits:l2", Idx: true, MinMatchLen: 4, WithMatchLen: true}).Result()
	if err != nil || m.Len != 6 || len(m.Matches) != 1 || m.Matches[0].Key1 != (redis.LCSPosition{Start: 4, End: 7}) ||
		m.Matches[0].Key2 != (redis.LCSPosition{Start: 5, End: 8}) || m.Matches[0].MatchLen != 4 {
		t.Errorf("LCS IDX: %+v %v", m, err)
	}
}

// TestSetBitConcurrent sets distinct bits of one key from many clients at
// once, on a value stored as bytes (one atomic call each) and on one that
// starts as an integer (read-modify-writes guarded by the generation): no
// bit may be lost and no client may fail.
func TestSetBitConcurrent(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	for _, start := range []string{"", "12"} {
		key := "bits:conc" + start
		admin.Del(ctx, key)
		if start != "" {
			admin.Set(ctx, key, start, 0)
		}
		const clients, per = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, clients*per)
		for i := range clients {
			c := client(t, env.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1 })
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range per {
					// Bits 100.. so the integer's own bits stay apart.
					if err := c.SetBit(ctx, key, int64(100+i*per+j), 1).Err(); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("%s: %v", key, err)
		}
		want := int64(clients * per)
		if start == "12" {
			want += 6 // "12" is 0x31 0x32: three bits each
		}
		if n, err := admin.BitCount(ctx, key, nil).Result(); err != nil || n != want {
			t.Errorf("%s: BITCOUNT %d %v, want %d", key, n, err, want)
		}
	}
}

// TestBitFieldConcurrent increments one packed counter from many clients
// at once: every BITFIELD is a read-modify-write guarded by the
// generation, so no increment may be lost.
func TestBitFieldConcurrent(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	admin.Del(ctx, "bits:bfconc")
	const clients, per = 8, 20
	var wg sync.WaitGroup
	errs := make(chan error, clients*per)
	for range clients {
		c := client(t, env.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1 })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				if err := c.BitField(ctx, "bits:bfconc", "INCRBY", "u32", "#1", 1).Err(); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if res, err := admin.BitField(ctx, "bits:bfconc", "GET", "u32", "#1").Result(); err != nil || len(res) != 1 || res[0] != clients*per {
		t.Errorf("counter %v %v, want %d", res, err, clients*per)
	}
}

// TestBitsPipelined sends the store-op forms of SETBIT, GETBIT and
// BITCOUNT pipelined on distinct keys, which the Aerospike store gathers
// into batch operates, and checks every reply.
func TestBitsPipelined(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	c := client(t, env.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1 })
	const n = 40
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "bits:pipe:" + strconv.Itoa(i)
	}
	if err := c.Del(ctx, keys...).Err(); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		p := c.Pipeline()
		sets := make([]*redis.IntCmd, n)
		gets := make([]*redis.IntCmd, n)
		counts := make([]*redis.IntCmd, n)
		for i, k := range keys {
			sets[i] = p.SetBit(ctx, k, int64(i*3), 1)
			gets[i] = p.GetBit(ctx, k, int64(i*3))
			counts[i] = p.BitCount(ctx, k, &redis.BitCount{Start: 0, End: int64(i * 3), Unit: "BIT"})
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			if v, err := sets[i].Result(); err != nil || v != int64(round) {
				t.Errorf("round %d: SETBIT %s: %d %v", round, keys[i], v, err)
			}
			if v, err := gets[i].Result(); err != nil || v != 1 {
				t.Errorf("round %d: GETBIT %s: %d %v", round, keys[i], v, err)
			}
			if v, err := counts[i].Result(); err != nil || v != 1 {
				t.Errorf("round %d: BITCOUNT %s: %d %v", round, keys[i], v, err)
			}
		}
	}
}
