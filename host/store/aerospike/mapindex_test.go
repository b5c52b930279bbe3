package aerospike

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/storetest"
)

// bigMapCmd is one command of BenchmarkBigMaps on a map of one kind: call
// returns its i-th call on key, fresh being a new member's name for this
// run (the same for the two halves of a pair).
type bigMapCmd struct {
	name string
	kind int
	call func(key []byte, i int, fresh codec.Value) codec.Call
}

// bigMapKinds are the three map layouts of the built-in modules: a set
// (member → 1, key ordered), a hash (field → value, key ordered) and a
// sorted set (member → float score, key-value ordered).
var bigMapKinds = []struct {
	name, tag string
	order     uint32
	value     func(i int) codec.Value
}{
	{"set", codec.TypeSet, codec.MapOrderKey, func(int) codec.Value { return codec.Int(1) }},
	{"hash", codec.TypeHash, codec.MapOrderKey, func(int) codec.Value { return codec.Bytes([]byte("xxx")) }},
	{"zset", codec.TypeZSet, codec.MapOrderKeyValue, func(i int) codec.Value { return codec.Float(float64(rand.IntN(100000))) }},
}

// bigMember is redis-benchmark's member name for -r 100000
// ("element:" and 12 digits).
func bigMember(i int) codec.Value { return codec.Bytes(fmt.Appendf(nil, "element:%012d", i)) }

// bigMapKey names the record of one kind, size and layout.
func bigMapKey(kind string, size int, indexed bool) []byte {
	layout := "plain"
	if indexed {
		layout = "indexed"
	}
	return []byte("bigmap:" + kind + ":" + strconv.Itoa(size) + ":" + layout)
}

// fillBigMap (re)writes key as a map of kind with members 0…size-1 (every
// second name, so that odd names are new members), through s so that the
// map gets s's layout, in puts of 500 members.
func fillBigMap(tb testing.TB, s *Store, key []byte, kind int, size int) {
	tb.Helper()
	k := bigMapKinds[kind]
	exec(tb, s, codec.Call{Key: key, Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
	for lo := 0; lo < size; lo += 500 {
		kv := make([]codec.Value, 0, 1000)
		for i := lo; i < min(lo+500, size); i++ {
			kv = append(kv, bigMember(2*i), k.value(i))
		}
		exec(tb, s, codec.Call{Key: key, Policy: codec.Policy{Guard: k.tag}, Ops: []codec.Op{
			{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(k.tag)},
			{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: k.order, Values: kv}}}, codec.OK)
	}
}

// exec runs one call on s and fails tb unless its result code is one of
// want; it returns the result.
func exec(tb testing.TB, s *Store, call codec.Call, want ...codec.Code) codec.Result {
	tb.Helper()
	var resp codec.Response
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}, &resp)
	if resp.Code != codec.OK {
		tb.Fatalf("request: code %d %s", resp.Code, resp.Msg)
	}
	r := resp.Results[0]
	for _, w := range want {
		if r.Code == w {
			return r
		}
	}
	tb.Fatalf("call on %q: code %d %s, want %v", call.Key, r.Code, r.Msg, want)
	return r
}

// recordSize reads a record's size as the server reports it (the
// expression record_size: its storage size on a namespace on a device).
func recordSize(tb testing.TB, s *Store, key []byte) int64 {
	tb.Helper()
	k, err := as.NewKey(s.cfg.Namespace, s.set(0), key)
	if err != nil {
		tb.Fatal(err)
	}
	rec, err := s.client.Load().Operate(nil, k, as.ExpReadOp("size", as.ExpRecordSize(), as.ExpReadFlagDefault))
	if err != nil {
		tb.Fatalf("record size of %q: %v", key, err)
	}
	n, _ := rec.Bins["size"].(int)
	return int64(n)
}

// BenchmarkBigMaps measures the commands of redis-benchmark's default
// suite that hit one big map (SADD, SPOP, HSET, ZADD, ZPOPMIN) and a few
// reads, on maps of RESPIKE_BENCH_SIZES members (default 1000 and 26000,
// what myset/myzset reach at -n 30000), with the maps respike created
// before 2026-12-03 (plain) and with a persisted map index (indexed). Each
// op is the call the module sends, one operate at a time on the server
// named by RESPIKE_TEST_AEROSPIKE; with RESPIKE_TEST_AEROSPIKE_PID it
// reports the server's CPU per op (asd-us/op, 10 ms ticks: use
// -benchtime=2000x or more) and the record's size (rec-bytes). The writes
// come in pairs that leave the size as it was (ZADD then ZPOPMIN, SADD then
// SPOP, HSET then HDEL of the same fields) when both run with the same
// -benchtime=Nx; -count interleaves the layouts. Skipped without
// RESPIKE_TEST_AEROSPIKE.
func BenchmarkBigMaps(b *testing.B) {
	stores := map[bool]*Store{false: benchStore(b), true: benchStore(b)}
	stores[false].tr = newTranslatorIndexed(false)
	stores[true].tr = newTranslatorIndexed(true)
	sizes := []int{1000, 26000}
	if v := os.Getenv("RESPIKE_BENCH_SIZES"); v != "" {
		sizes = sizes[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	only := os.Getenv("RESPIKE_BENCH_CMDS") // e.g. "ZADD,ZPOPMIN"
	setKind, hashKind, zsetKind := 0, 1, 2
	existing := func(size int) codec.Value { return bigMember(2 * rand.IntN(size)) }
	var size int
	cmds := []bigMapCmd{
		{"ZADD", zsetKind, func(key []byte, i int, fresh codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet}, Ops: []codec.Op{
				{Code: codec.OpMapSize, Bin: codec.BinValue},
				{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKeyValue, Values: []codec.Value{fresh, codec.Float(float64(rand.IntN(100000)))}},
				{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeZSet)}}}
		}},
		{"ZSCORE", zsetKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet}, Ops: []codec.Op{
				{Code: codec.OpMapGetByKeys, Bin: codec.BinValue, Return: codec.ReturnValue, Values: []codec.Value{existing(size)}}}}
		}},
		{"ZRANK", zsetKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet}, Ops: []codec.Op{
				{Code: codec.OpMapGetByKeys, Bin: codec.BinValue, Return: codec.ReturnRank, Values: []codec.Value{existing(size)}}}}
		}},
		{"ZRANGE0-10", zsetKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet}, Ops: []codec.Op{
				{Code: codec.OpMapGetByRank, Bin: codec.BinValue, Return: codec.ReturnKeyValue, Index: 0, Count: 11}}}
		}},
		{"ZPOPMIN", zsetKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet, Exists: codec.ExistsUpdateOnly, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
				{Code: codec.OpMapRemoveByRank, Bin: codec.BinValue, Return: codec.ReturnKeyValue, Index: 0, Count: 1}}}
		}},
		// Without the size before the put, and without the checks for
		// an emptied set: what those cost the server (not what the
		// commands send).
		{"ZADD-nosize", zsetKind, func(key []byte, i int, fresh codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet}, Ops: []codec.Op{
				{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKeyValue, Values: []codec.Value{fresh, codec.Float(float64(rand.IntN(100000)))}},
				{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeZSet)}}}
		}},
		{"ZPOPMIN-noempty", zsetKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeZSet}, Ops: []codec.Op{
				{Code: codec.OpMapRemoveByRank, Bin: codec.BinValue, Return: codec.ReturnKeyValue, Index: 0, Count: 1}}}
		}},
		{"SADD", setKind, func(key []byte, i int, fresh codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeSet}, Ops: []codec.Op{
				{Code: codec.OpMapSize, Bin: codec.BinValue},
				{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeSet)},
				{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKey | codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial, Values: []codec.Value{fresh, codec.Int(1)}}}}
		}},
		{"SISMEMBER", setKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeSet}, Ops: []codec.Op{
				{Code: codec.OpMapGetByKeys, Bin: codec.BinValue, Return: codec.ReturnCount, Values: []codec.Value{existing(size)}}}}
		}},
		// SPOP is two calls: the size, then a removal by a random index.
		{"SPOP-size", setKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeSet}, Ops: []codec.Op{
				{Code: codec.OpMapSize, Bin: codec.BinValue}}}
		}},
		{"SPOP", setKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeSet, Exists: codec.ExistsUpdateOnly, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
				{Code: codec.OpMapRemoveByIndex, Bin: codec.BinValue, Return: codec.ReturnKey, Index: int64(rand.IntN(size)), Count: 1}}}
		}},
		{"HSET", hashKind, func(key []byte, i int, fresh codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeHash}, Ops: []codec.Op{
				{Code: codec.OpMapSize, Bin: codec.BinValue},
				{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeHash)},
				{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKey, Values: []codec.Value{fresh, codec.Bytes([]byte("xxx"))}}}}
		}},
		{"HGET", hashKind, func(key []byte, i int, _ codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeHash}, Ops: []codec.Op{
				{Code: codec.OpMapGetByKeys, Bin: codec.BinValue, Return: codec.ReturnValue, Values: []codec.Value{existing(size)}}}}
		}},
		{"HDEL", hashKind, func(key []byte, i int, fresh codec.Value) codec.Call {
			return codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeHash, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
				{Code: codec.OpMapRemoveByKeys, Bin: codec.BinValue, Return: codec.ReturnCount, Values: []codec.Value{fresh}}}}
		}},
	}
	// fresh names the i-th new member of a run: odd numbers, which the
	// fill never uses, distinct per run so that HDEL removes what HSET
	// added.
	run := 0
	fresh := func(i int) codec.Value { return bigMember(2*(run*1_000_000+i) + 1) }
	rounds := envInt("RESPIKE_BENCH_ROUNDS", 1)
	for round := 0; round < rounds; round++ {
		for _, n := range sizes {
			for _, indexed := range []bool{false, true} {
				bigMapRound(b, stores[indexed], n, indexed, cmds, only, &size, &run, fresh)
			}
		}
	}
}

// bigMapRound runs BenchmarkBigMaps's commands once on the maps of one
// size and layout, filling them first when their size is not n.
func bigMapRound(b *testing.B, s *Store, n int, indexed bool, cmds []bigMapCmd, only string, size, run *int, fresh func(int) codec.Value) {
	layout := map[bool]string{false: "plain", true: "indexed"}[indexed]
	for kind := range bigMapKinds {
		key := bigMapKey(bigMapKinds[kind].name, n, indexed)
		r := exec(b, s, codec.Call{Key: key, Ops: []codec.Op{{Code: codec.OpMapSize, Bin: codec.BinValue}}}, codec.OK, codec.NotFound)
		if r.Code != codec.OK || r.IntAt(0) != int64(n) {
			fillBigMap(b, s, key, kind, n)
		}
	}
	for _, c := range cmds {
		if only != "" && !strings.Contains(","+only+",", ","+c.name+",") {
			continue
		}
		key := bigMapKey(bigMapKinds[c.kind].name, n, indexed)
		b.Run(fmt.Sprintf("%s/%d/%s", c.name, n, layout), func(b *testing.B) {
			// The adds take new names; HDEL removes the ones the HSET
			// before it added.
			if c.name == "ZADD" || c.name == "ZADD-nosize" || c.name == "SADD" || c.name == "HSET" {
				*run++
			}
			*size = n
			calls := make([]codec.Call, b.N)
			for i := range calls {
				calls[i] = c.call(key, i, fresh(i))
			}
			c0 := serverCPU()
			b.ResetTimer()
			overloads := 0
			for i := range calls {
				for try := 0; ; try++ {
					r := exec(b, s, calls[i], codec.OK, codec.BackendError)
					if r.Code == codec.OK {
						break
					}
					// Every write rewrites the whole record: at a
					// thousand writes of a megabyte a second the device
					// queue of a namespace on a file overflows (DEVICE_OVERLOAD).
					if !strings.Contains(r.Msg, "(Aerospike code 18)") || try == 100 {
						b.Fatalf("call on %q: %s", key, r.Msg)
					}
					overloads++
					time.Sleep(20 * time.Millisecond)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(overloads)/float64(b.N), "overloads/op")
			if c0 >= 0 {
				b.ReportMetric((serverCPU()-c0)*1e6/float64(b.N), "asd-us/op")
			}
			b.ReportMetric(float64(recordSize(b, s, key)), "rec-bytes")
		})
	}
}

// TestMapIndexOnServer checks on the server named by RESPIKE_TEST_AEROSPIKE
// that the maps respike creates carry a persisted index and that maps
// without one keep working: a set, a hash and a sorted set of 300 members
// written by a store with the index are bigger than the same maps written
// without it (the server strips the index from what it returns, so the
// record's size is where it shows), by at least the offset index (2 bytes
// a member below 64 KiB of content) and, for the sorted set, the rank
// index (2 bytes a member below 65,536 members), give or take the 16 bytes
// the server rounds sizes to; then each store adds a
// member to the other's map and removes it again, and the map comes back to
// its own size: Aerospike keeps a map's layout whatever policy a write
// carries, so old maps stay as they were, and an older proxy serves the
// new ones. Skipped without RESPIKE_TEST_AEROSPIKE.
func TestMapIndexOnServer(t *testing.T) {
	indexed := openServer(t)
	defer indexed.Close()
	plain := openServer(t)
	defer plain.Close()
	plain.tr = newTranslatorIndexed(false)
	const n = 300
	for kind, k := range bigMapKinds {
		t.Run(k.name, func(t *testing.T) {
			ki, kp := bigMapKey(k.name, n, true), bigMapKey(k.name, n, false)
			fillBigMap(t, indexed, ki, kind, n)
			fillBigMap(t, plain, kp, kind, n)
			si, sp := recordSize(t, indexed, ki), recordSize(t, plain, kp)
			perMember := int64(2)
			if k.order == codec.MapOrderKeyValue {
				perMember = 4
			}
			t.Logf("%s of %d: %d bytes with the index, %d without", k.name, n, si, sp)
			// The server counts a record's size in 16-byte units.
			if si-sp <= perMember*n-16 {
				t.Fatalf("%s of %d: %d bytes with the index, %d without: want about %d more", k.name, n, si, sp, perMember*n)
			}
			for _, c := range []struct {
				s    *Store
				key  []byte
				size int64
			}{{indexed, kp, sp}, {plain, ki, si}} {
				mapRoundTrip(t, c.s, c.key, kind)
				if got := recordSize(t, c.s, c.key); got != c.size {
					t.Errorf("%q after adding and removing a member: %d bytes, want %d as before", c.key, got, c.size)
				}
			}
		})
	}
}

// mapRoundTrip adds a member to key's map of kind with the calls the
// modules send (the lowest score for a sorted set), checks that reads see
// it, and removes it again (ZPOPMIN for a sorted set).
func mapRoundTrip(t *testing.T, s *Store, key []byte, kind int) {
	t.Helper()
	k := bigMapKinds[kind]
	m := codec.Bytes([]byte("element:new"))
	put := codec.Op{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: k.order, Values: []codec.Value{m, k.value(0)}}
	if k.order == codec.MapOrderKeyValue {
		put.Values[1] = codec.Float(-1)
	}
	r := exec(t, s, codec.Call{Key: key, Policy: codec.Policy{Guard: k.tag}, Ops: []codec.Op{
		{Code: codec.OpMapSize, Bin: codec.BinValue}, {Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(k.tag)}, put}}, codec.OK)
	if added := r.IntAt(2) - r.IntAt(0); added != 1 {
		t.Fatalf("%q: added %d members, want 1", key, added)
	}
	if k.order == codec.MapOrderKeyValue {
		r = exec(t, s, codec.Call{Key: key, Policy: codec.Policy{Guard: k.tag}, Ops: []codec.Op{
			{Code: codec.OpMapGetByKeys, Bin: codec.BinValue, Return: codec.ReturnRank, Values: []codec.Value{m}}}}, codec.OK)
		if rank := r.IntAt(0); rank != 0 {
			t.Errorf("%q: ZRANK of the lowest score %d, want 0", key, rank)
		}
		r = exec(t, s, codec.Call{Key: key, Policy: codec.Policy{Guard: k.tag, Exists: codec.ExistsUpdateOnly, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
			{Code: codec.OpMapRemoveByRank, Bin: codec.BinValue, Return: codec.ReturnKeyValue, Index: 0, Count: 1}}}, codec.OK)
		if kv := r.Value(0).List; len(kv) != 2 || string(kv[0].Bytes) != "element:new" || kv[1].Float != -1 {
			t.Errorf("%q: ZPOPMIN %+v, want element:new -1", key, kv)
		}
		return
	}
	r = exec(t, s, codec.Call{Key: key, Policy: codec.Policy{Guard: k.tag}, Ops: []codec.Op{
		{Code: codec.OpMapGetByKeys, Bin: codec.BinValue, Return: codec.ReturnCount, Values: []codec.Value{m}}}}, codec.OK)
	if got := r.IntAt(0); got != 1 {
		t.Errorf("%q: the new member counted %d times, want 1", key, got)
	}
	r = exec(t, s, codec.Call{Key: key, Policy: codec.Policy{Guard: k.tag, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
		{Code: codec.OpMapRemoveByKeys, Bin: codec.BinValue, Return: codec.ReturnCount, Values: []codec.Value{m}}}}, codec.OK)
	if got := r.IntAt(0); got != 1 {
		t.Errorf("%q: removed %d members, want 1", key, got)
	}
}

// TestConformanceWithoutMapIndex runs the conformance suite with the maps
// created as before 2026-12-03, without a persisted index, as a cluster
// older than Aerospike 7.0 gets them. Skipped without
// RESPIKE_TEST_AEROSPIKE.
func TestConformanceWithoutMapIndex(t *testing.T) {
	s := openServer(t)
	defer s.Close()
	s.tr = newTranslatorIndexed(false)
	storetest.Run(t, func(t *testing.T) store.Store { return s })
}

// BenchmarkHotRows measures what the server spends per SADD when several
// clients' SADDs on one big set share a batch call: as rows of their own
// (what the coalescer sends: each row rewrites the whole record), or merged
// into one operate of all their ops (one rewrite). RESPIKE_BENCH_PER rows
// (default 8) of a new member each, on a set of RESPIKE_BENCH_SIZES[0]
// members (default 26000, growing by the SADDs) with a persisted index,
// RESPIKE_BENCH_ROUNDS rounds of the two shapes in turn; with
// RESPIKE_TEST_AEROSPIKE_PID it reports asd-us/op per SADD. Merging is not
// what the store does: this measures whether it would pay. Skipped without
// RESPIKE_TEST_AEROSPIKE.
func BenchmarkHotRows(b *testing.B) {
	s := benchStore(b)
	client := s.client.Load()
	per, n := envInt("RESPIKE_BENCH_PER", 8), 26000
	if v, err := strconv.Atoi(strings.Split(os.Getenv("RESPIKE_BENCH_SIZES"), ",")[0]); err == nil {
		n = v
	}
	key := []byte("bigmap:hotrows:" + strconv.Itoa(n))
	wp := as.NewBatchWritePolicy()
	wp.FilterExpression = packed(guardExp(codec.TypeSet))
	wp.SendKey = true
	ak, err := as.NewKey(s.cfg.Namespace, s.set(0), key)
	if err != nil {
		b.Fatal(err)
	}
	next := 0
	sadd := func() []*as.Operation {
		next++
		var p plan
		s.tr.translate(&codec.Call{Key: key, Policy: codec.Policy{Guard: codec.TypeSet}, Ops: []codec.Op{
			{Code: codec.OpMapSize, Bin: codec.BinValue},
			{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeSet)},
			{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKey | codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial,
				Values: []codec.Value{bigMember(2*(next+1_000_000) + 1), codec.Int(1)}}}}, &p, 0)
		return p.ops
	}
	fillBigMap(b, s, key, 0, n) // once: its rewrites leave the server defragmenting for a while
	for round := 0; round < envInt("RESPIKE_BENCH_ROUNDS", 1); round++ {
		for _, shape := range []string{"rows", "merged"} {
			hotRows(b, shape, per, client, ak, wp, sadd)
		}
	}
}

// hotRows is one run of BenchmarkHotRows's shape.
func hotRows(b *testing.B, shape string, per int, client *as.Client, ak *as.Key, wp *as.BatchWritePolicy, sadd func() []*as.Operation) {
	b.Run(shape, func(b *testing.B) {
		c0 := serverCPU()
		b.ResetTimer()
		for i := 0; i < b.N; i += per {
			var recs []as.BatchRecordIfc
			var merged []*as.Operation
			for j := 0; j < per; j++ {
				if shape == "rows" {
					recs = append(recs, as.NewBatchWrite(wp, ak, sadd()...))
				} else {
					merged = append(merged, sadd()...)
				}
			}
			if shape == "merged" {
				recs = append(recs, as.NewBatchWrite(wp, ak, merged...))
			}
			if err := client.BatchOperate(nil, recs); err != nil {
				b.Fatal(err)
			}
			for _, r := range recs {
				if r.BatchRec().ResultCode != 0 {
					b.Fatalf("result %v", r.BatchRec().ResultCode)
				}
			}
		}
		b.StopTimer()
		if c0 >= 0 {
			b.ReportMetric((serverCPU()-c0)*1e6/float64(b.N), "asd-us/op")
		}
	})
}
