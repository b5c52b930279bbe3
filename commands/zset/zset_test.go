package main

import (
	"math"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// Test-only stand-ins for commands of other modules, so scripts here can
// make keys of another type and observe TTLs and existence.
func init() {
	sdk.Register(cmdtest.WriterStandIns()...)
	sdk.Register(cmdtest.ObserverStandIns()...)
}

const wrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"

// putScore sets member's score in zset key directly in the store, as
// another client would.
func putScore(t *testing.T, st store.Store, key, member string, score float64) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Put(codec.BinType, codec.Str(codec.TypeZSet)).
		MapPut(codec.BinValue, codec.MapOrderKeyValue, []codec.Value{codec.Bytes([]byte(member)), codec.Float(score)})
	if r := cmdtest.Exec(t, st, call); r.Code != codec.OK {
		t.Fatalf("putScore: code %d", r.Code)
	}
}

// The manifest describes every command as Redis 7.0's COMMAND INFO does
// (name, arity, key positions).
func TestManifest(t *testing.T) {
	cmdtest.CheckManifest(t, "zset", "sorted_set", map[string]cmdtest.Spec{
		"zadd": {-4, 1, 1}, "zincrby": {4, 1, 1}, "zcard": {2, 1, 1}, "zscore": {3, 1, 1},
		"zmscore": {-3, 1, 1}, "zrank": {3, 1, 1}, "zrevrank": {3, 1, 1}, "zcount": {4, 1, 1},
		"zlexcount": {4, 1, 1}, "zrange": {-4, 1, 1}, "zrangestore": {-5, 1, 2}, "zrevrange": {-4, 1, 1},
		"zrangebyscore": {-4, 1, 1}, "zrevrangebyscore": {-4, 1, 1}, "zrangebylex": {-4, 1, 1},
		"zrevrangebylex": {-4, 1, 1}, "zrem": {-3, 1, 1}, "zremrangebyrank": {4, 1, 1},
		"zremrangebyscore": {4, 1, 1}, "zremrangebylex": {4, 1, 1}, "zpopmin": {-2, 1, 1},
		"zpopmax": {-2, 1, 1}, "zmpop": {-4, 0, 0}, "zrandmember": {-2, 1, 1}, "zunion": {-3, 0, 0},
		"zinter": {-3, 0, 0}, "zdiff": {-3, 0, 0}, "zunionstore": {-4, 1, 1}, "zinterstore": {-4, 1, 1},
		"zdiffstore": {-4, 1, 1}, "zintercard": {-3, 0, 0}, "zscan": {-3, 1, 1},
	})
}

// naiveRanks is Redis's index sanitising of ZRANGE (genericZrangebyrank):
// the ranks, lowest first, that start..end select in a set of size items.
func naiveRanks(start, end int64, rev bool, size int64) []int64 {
	if start < 0 {
		start += size
	}
	if end < 0 {
		end += size
	}
	start = max(start, 0)
	if start > end || start >= size {
		return nil
	}
	end = min(end, size-1)
	var out []int64
	for i := start; i <= end; i++ {
		if rev {
			out = append(out, size-1-i)
		} else {
			out = append(out, i)
		}
	}
	if rev {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// storeRanks is what the store's rank selection (Aerospike's rules, as
// host/store/memory implements them) returns for rank, count, inverted.
func storeRanks(rank, count int64, inv bool, size int64) []int64 {
	in := map[int64]bool{}
	idx := rank
	if idx < 0 {
		idx += size
	}
	c := count
	if c < 0 {
		c = math.MaxInt32
	}
	if idx < 0 {
		c += idx
		idx = 0
	}
	for i := idx; i < size && i < idx+c && c > 0; i++ {
		in[i] = true
	}
	var out []int64
	for i := range size {
		if in[i] != inv {
			out = append(out, i)
		}
	}
	return out
}

// rankSpan's store ranges select exactly what Redis's indexes do, for
// every start and end around sets of every small size, with the size
// known or not.
func TestRankSpan(t *testing.T) {
	for size := int64(1); size <= 7; size++ {
		for start := int64(-10); start <= 10; start++ {
			for end := int64(-10); end <= 10; end++ {
				for _, rev := range []bool{false, true} {
					want := naiveRanks(start, end, rev, size)
					for _, known := range []int64{-1, size} {
						rank, count, inv, empty, ok := rankSpan(start, end, rev, known)
						if !ok {
							if known >= 0 {
								t.Fatalf("rankSpan(%d, %d, %v, %d) needs the size it was given", start, end, rev, known)
							}
							continue
						}
						var got []int64
						if !empty {
							got = storeRanks(rank, count, inv, size)
						}
						w := want // the store answers ranks lowest first
						if len(got) != len(w) {
							t.Fatalf("size %d, %d..%d rev=%v known=%d: store ranks %v, Redis %v", size, start, end, rev, known, got, w)
						}
						for i := range got {
							if got[i] != w[i] {
								t.Fatalf("size %d, %d..%d rev=%v known=%d: store ranks %v, Redis %v", size, start, end, rev, known, got, w)
							}
						}
					}
				}
			}
		}
	}
}

func TestParseScore(t *testing.T) {
	for _, c := range []struct {
		s  string
		f  float64
		ok bool
	}{
		{"1", 1, true}, {"-2.5", -2.5, true}, {"inf", math.Inf(1), true}, {"+inf", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true}, {"0x10", 16, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"4e-320", 4e-320, true}, {"-0", 0, true},
		{"", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"nan", 0, false}, {"1e400", 0, false},
		{"1e-400", 0, false}, {"0x1p-2000", 0, false}, {"1_0", 0, false}, {"0x", 0, false}, {"1\x002", 0, false},
	} {
		f, ok := kit.ParseDouble([]byte(c.s))
		if ok != c.ok || (ok && f != c.f) {
			t.Errorf("kit.ParseDouble(%q) = %v, %v; want %v, %v", c.s, f, ok, c.f, c.ok)
		}
	}
	for _, c := range []struct {
		s    string
		f    float64
		excl bool
		ok   bool
	}{
		{"(1", 1, true, true}, {"", 0, false, true}, {"(", 0, true, true}, {" 2", 2, false, true},
		{"1e400", math.Inf(1), false, true}, {"1e-400", 0, false, true}, {"1\x00junk", 1, false, true},
		{"  ", 0, false, false}, {"nan", 0, false, false}, {"[1", 0, false, false}, {"1x", 0, false, false},
	} {
		f, excl, ok := parseBound([]byte(c.s))
		if ok != c.ok || (ok && (f != c.f || excl != c.excl)) {
			t.Errorf("parseBound(%q) = %v, %v, %v; want %v, %v, %v", c.s, f, excl, ok, c.f, c.excl, c.ok)
		}
	}
}

// The store lays out the replies of plain ranges (a reply return type)
// and the module those of LIMIT pages: both must answer the same bytes, in
// RESP2 and RESP3, forward and reversed, whatever the scores.
func TestStoreAndModuleRepliesAgree(t *testing.T) {
	for _, proto := range []int{2, 3} {
		h := sdktest.New()
		h.Proto = proto
		h.Do("zadd", "z", "1.1", "a", "0.1", "b", "3", "c", "-2.25", "d", "1e20", "e", "-inf", "f",
			"+inf", "g", "123456789012345678", "h", "1.5e-7", "i", "-0", "j", "7", "member-with-a-long-name")
		putScore(t, h.Store, "z", "foreign", 42)
		for _, c := range [][2][]string{
			{{"zrange", "z", "0", "-1", "withscores"}, {"zrangebyscore", "z", "-inf", "+inf", "withscores", "limit", "0", "100"}},
			{{"zrange", "z", "0", "-1"}, {"zrangebyscore", "z", "-inf", "+inf", "limit", "0", "100"}},
			{{"zrevrange", "z", "0", "-1", "withscores"}, {"zrevrangebyscore", "z", "+inf", "-inf", "withscores", "limit", "0", "100"}},
			{{"zrange", "z", "+inf", "-inf", "byscore", "rev", "withscores"}, {"zrevrangebyscore", "z", "+inf", "-inf", "withscores", "limit", "0", "-1"}},
			{{"zrangebylex", "z", "-", "+"}, {"zrangebylex", "z", "-", "+", "limit", "0", "100"}},
		} {
			store, module := h.DoRaw(raw(c[0])...), h.DoRaw(raw(c[1])...)
			if string(store) != string(module) {
				t.Errorf("RESP%d: %v answered\n%q\n%v answered\n%q", proto, c[0], store, c[1], module)
			}
		}
	}
}

func raw(args []string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

func TestCommands(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			zadd z 1 a 2 b 3 c => (integer) 3
			zadd z ch 1 a 5 b 4 d => (integer) 2
			zrange z 0 -1 withscores => ["a" "1" "c" "3" "d" "4" "b" "5"]
			zrangebyscore z (1 4 limit 1 5 => ["d"]
			zrevrangebyscore z +inf -inf limit 1 2 => ["d" "c"]
			zrank z d => (integer) 2
			zrevrank z d => (integer) 1
			zincrby z -0.5 a => "0.5"
			zadd z gt ch 0 a 6 b => (integer) 1
			zscore z b => "6"
			zpopmax z => ["b" "6"]
			zremrangebyrank z 1 -2 => (integer) 1
			zrange z 0 -1 => ["a" "d"]
			expire z 100 => (integer) 1
			zadd z 9 e => (integer) 1
			zrem z a => (integer) 1
			ttl z => (integer) 100
			zrem z d e => (integer) 2
			exists z => (integer) 0
			set s v => OK
			zadd s 1 a => `+wrongType+`
			zrange s 0 -1 => `+wrongType+`
			zunion 1 s => `+wrongType+`
		`)
	})
}

// rmwWrite reports whether a request is the write of a read-modify-write:
// a map put checked against a generation or create-only.
func rmwWrite(req *codec.Request) bool {
	for _, c := range req.Calls {
		if c.Policy.Generation == 0 && c.Policy.Exists != codec.ExistsCreateOnly {
			continue
		}
		for _, o := range c.Ops {
			if o.Code == codec.OpMapPut || o.Code == codec.OpMapRemoveByRank {
				return true
			}
		}
	}
	return false
}

// ZADD GT compares with the score another client wrote between its read
// and its write, never with the one it read first.
func TestZAddGTRetries(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		base := h.Store
		putScore(t, base, "z", "a", 1)
		once := true
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if rmwWrite(req) && once {
				once = false
				putScore(t, base, "z", "a", 10)
			}
		}}
		cmdtest.Script(t, h, `
			zadd z gt ch 5 a => (integer) 0
			zscore z a => "10"
		`)
		if once {
			t.Fatal("the write was not intercepted")
		}
		// A key that keeps changing ends in an error, never a lost update.
		putScore(t, base, "z", "a", 1)
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if rmwWrite(req) {
				putScore(t, base, "z", "a", 1)
			}
		}}
		cmdtest.Script(t, h, `zadd z gt 5 a => (error) ERR respike: the key kept changing during a read-modify-write; try again`)
		// Created by another client after a read found nothing.
		once = true
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if rmwWrite(req) && once {
				once = false
				putScore(t, base, "new", "a", 7)
			}
		}}
		cmdtest.Script(t, h, `
			zadd new lt ch 3 a 4 b => (integer) 2
			zrange new 0 -1 withscores => ["a" "3" "b" "4"]
		`)
	})
}

// ZREMRANGEBYRANK with ends of different signs removes under the
// generation its size came from, and starts again when it changed.
func TestZRemRangeByRankRetries(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d")
		base := h.Store
		once := true
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if rmwWrite(req) && once {
				once = false
				putScore(t, base, "z", "e", 5)
			}
		}}
		cmdtest.Script(t, h, `
			zremrangebyrank z 1 -2 => (integer) 3
			zrange z 0 -1 => ["a" "e"]
		`)
		if once {
			t.Fatal("the removal was not intercepted")
		}
	})
}

// Range reads ask the store for the page they answer, not the whole set.
func TestRangesReadOnlyThePage(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		args := []string{"zadd", "z"}
		for i := range 300 {
			args = append(args, "1", string(rune('0'+i%10))+string(rune('a'+i%26))+string(rune('A'+i/26)))
		}
		h.Do(args...)
		base := h.Store
		var read []codec.Op
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			read = append(read[:0], req.Calls[0].Ops...)
		}}
		for _, c := range []struct {
			cmd   []string
			code  codec.OpCode
			count int64
		}{
			{[]string{"zrange", "z", "0", "99", "withscores"}, codec.OpMapGetByRank, 100},
			{[]string{"zrangebyscore", "z", "-inf", "+inf", "limit", "10", "20"}, codec.OpMapGetByValueRelRank, 20},
			{[]string{"zrevrangebyscore", "z", "(5", "-inf", "limit", "10", "20"}, codec.OpMapGetByValueRelRank, 20},
			{[]string{"zrangebylex", "z", "[5", "+", "limit", "5", "7"}, codec.OpMapGetByKeyRelIndex, 7},
			{[]string{"zrevrange", "z", "0", "9"}, codec.OpMapGetByRank, 10},
		} {
			got := h.Do(c.cmd...)
			if len(read) != 2 || read[1].Code != c.code || read[1].Count != c.count {
				t.Errorf("%v read %+v, want op %d with count %d", c.cmd, read, c.code, c.count)
			}
			if n := len(cmdtest.SplitReply(got)); n != int(c.count) && n != 2*int(c.count) {
				t.Errorf("%v answered %d items: %s", c.cmd, n, got)
			}
		}
	})
}
