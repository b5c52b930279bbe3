package memory

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Run("FreshStore", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s := New(Options{})
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("SharedStore", func(t *testing.T) {
		s := New(Options{})
		t.Cleanup(func() { s.Close() })
		storetest.Run(t, func(*testing.T) store.Store { return s })
	})
}

// clock is a fake clock that only moves when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Unix(1_700_000_000, 0)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// one runs a single call and returns its result.
func one(t *testing.T, s *Store, db int, c *codec.Call) codec.Result {
	t.Helper()
	var resp codec.Response
	s.Exec(context.Background(), db, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*c}}, &resp)
	if resp.Code != codec.OK || len(resp.Results) != 1 {
		t.Fatalf("request failed: %d %s", resp.Code, resp.Msg)
	}
	return resp.Results[0]
}

func count(t *testing.T, s *Store, db int) int64 {
	t.Helper()
	var resp codec.Response
	s.Exec(context.Background(), db, &codec.Request{Kind: codec.ReqCount}, &resp)
	return resp.Count
}

// stored counts the records held in memory, expired or not.
func stored(s *Store, db int) int {
	n := 0
	for i := range s.dbs[db].shards {
		sh := &s.dbs[db].shards[i]
		sh.mu.Lock()
		n += sh.n
		sh.mu.Unlock()
	}
	return n
}

func key(i int) []byte { return []byte("key:" + strconv.Itoa(i)) }

func TestExpiryLazy(t *testing.T) {
	clk := newClock()
	s := New(Options{Now: clk.Now, SweepInterval: -1})
	defer s.Close()
	one(t, s, 0, (&codec.Call{Key: key(1)}).Expire(10).Put(codec.BinValue, codec.Int(1)))
	one(t, s, 0, (&codec.Call{Key: key(2)}).Put(codec.BinValue, codec.Int(2)))

	clk.advance(9*time.Second + 999*time.Millisecond)
	if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Get(codec.BinValue)); r.Code != codec.OK || r.TTL != 1 {
		t.Fatalf("just before expiry: code %d TTL %d", r.Code, r.TTL)
	}
	clk.advance(time.Millisecond)
	if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Get(codec.BinValue)); r.Code != codec.NotFound {
		t.Fatalf("at expiry: code %d, want NotFound", r.Code)
	}
	if n := count(t, s, 0); n != 1 {
		t.Fatalf("count = %d, want 1", n)
	}
	if n := stored(s, 0); n != 1 {
		t.Fatalf("expired record still held after it was read: %d records", n)
	}

	// An expired record is gone for writes too: create-only succeeds and
	// the generation starts again; "keep" gives a new record no expiry.
	r := one(t, s, 0, (&codec.Call{Key: key(1)}).Exists(codec.ExistsCreateOnly).Put(codec.BinValue, codec.Int(3)))
	if r.Code != codec.OK || r.Generation != 1 || r.TTL != -1 {
		t.Fatalf("re-create: code %d gen %d TTL %d", r.Code, r.Generation, r.TTL)
	}
}

func TestExpiryHidesFromScanAndWrites(t *testing.T) {
	clk := newClock()
	s := New(Options{Now: clk.Now, SweepInterval: -1})
	defer s.Close()
	for i := 0; i < 100; i++ {
		c := &codec.Call{Key: key(i)}
		if i%2 == 0 {
			c.Expire(5)
		}
		one(t, s, 0, c.Put(codec.BinValue, codec.Int(int64(i))))
	}
	clk.advance(5 * time.Second)
	var resp codec.Response
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqScan, Scan: codec.ScanArgs{Count: 1000}}, &resp)
	if len(resp.Scan.Keys) != 50 || resp.Scan.Cursor != 0 {
		t.Fatalf("scan returned %d keys, cursor %d; want the 50 live ones in one page", len(resp.Scan.Keys), resp.Scan.Cursor)
	}
	// Update-only on an expired record is NotFound.
	if r := one(t, s, 0, (&codec.Call{Key: key(0)}).Exists(codec.ExistsUpdateOnly).Put(codec.BinValue, codec.Int(1))); r.Code != codec.NotFound {
		t.Fatalf("update-only on an expired record: code %d", r.Code)
	}
}

func TestTTLCountdown(t *testing.T) {
	clk := newClock()
	s := New(Options{Now: clk.Now, SweepInterval: -1})
	defer s.Close()
	k := &codec.Call{Key: key(1)}
	if r := one(t, s, 0, k.Expire(100).Put(codec.BinValue, codec.Int(1))); r.TTL != 100 {
		t.Fatalf("TTL at write = %d", r.TTL)
	}
	for _, step := range []struct {
		advance time.Duration
		want    int64
	}{
		{300 * time.Millisecond, 100}, // whole seconds, rounded up
		{700 * time.Millisecond, 99},
		{49 * time.Second, 50},
		{49*time.Second + 500*time.Millisecond, 1},
	} {
		clk.advance(step.advance)
		if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Header()); r.TTL != step.want {
			t.Fatalf("TTL = %d, want %d", r.TTL, step.want)
		}
	}
	// A write with "keep" does not restart the countdown.
	if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Put(codec.BinValue, codec.Int(2))); r.TTL != 1 {
		t.Fatalf("TTL after a keep write = %d, want 1", r.TTL)
	}
	clk.advance(time.Second)
	if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Header()); r.Code != codec.NotFound {
		t.Fatalf("after expiry: code %d", r.Code)
	}
}

func TestSweeper(t *testing.T) {
	clk := newClock()
	swept := make(chan struct{})
	stop := make(chan struct{})
	s := newStore(Options{Now: clk.Now, SweepInterval: time.Millisecond}, func() {
		select {
		case swept <- struct{}{}:
		case <-stop:
		}
	})
	defer s.Close()
	defer close(stop)

	const n = 30000 // several sweep slices per shard
	var resp codec.Response
	req := codec.Request{Kind: codec.ReqRecords}
	for i := 0; i < n; i++ {
		c := codec.Call{Key: key(i)}
		if i >= 10 {
			c.Expire(int64(5 + i%3))
		}
		req.Calls = append(req.Calls, *c.Put(codec.BinValue, codec.Int(int64(i))))
	}
	s.Exec(context.Background(), 3, &req, &resp)
	<-swept
	<-swept
	if got := stored(s, 3); got != n {
		t.Fatalf("sweeper removed live records: %d of %d left", got, n)
	}

	clk.advance(8 * time.Second)
	// The first pass may have begun before the clock moved; the second
	// began after.
	<-swept
	<-swept
	if got := stored(s, 3); got != 10 {
		t.Fatalf("after the sweeper ran, %d records are held; want the 10 without expiry", got)
	}
}

func TestSweepOnceInSlices(t *testing.T) {
	clk := newClock()
	s := New(Options{Now: clk.Now, SweepInterval: -1})
	defer s.Close()
	for i := 0; i < 20000; i++ {
		one(t, s, 0, (&codec.Call{Key: key(i)}).Expire(1).Put(codec.BinValue, codec.Int(1)))
	}
	clk.advance(time.Second)
	s.sweepOnce()
	if got := stored(s, 0); got != 0 {
		t.Fatalf("one pass over fully expired shards left %d records", got)
	}
	if n := count(t, s, 0); n != 0 {
		t.Fatalf("count = %d", n)
	}
}

func TestGenerationWraps(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	c := (&codec.Call{Key: key(1)}).Put(codec.BinValue, codec.Int(1))
	one(t, s, 0, c)
	sh, slot := s.dbs[0].locate(key(1))
	sh.mu.Lock()
	sh.lookup(slot, key(1), &instant{now: time.Now}).gen = 65535
	sh.mu.Unlock()
	// Aerospike's generation is 16 bits and skips 0.
	if r := one(t, s, 0, c); r.Generation != 1 {
		t.Fatalf("generation after 65535 = %d, want 1", r.Generation)
	}
}

func TestMaxRecordBytes(t *testing.T) {
	s := New(Options{MaxRecordBytes: 100, SweepInterval: -1})
	defer s.Close()
	if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Put(codec.BinValue, codec.Bytes(make([]byte, 50)))); r.Code != codec.OK {
		t.Fatalf("small write: code %d", r.Code)
	}
	if r := one(t, s, 0, (&codec.Call{Key: key(1)}).Append(codec.BinValue, make([]byte, 60))); r.Code != codec.RecordTooBig {
		t.Fatalf("growing past the limit: code %d", r.Code)
	}
	kv := []codec.Value{codec.Bytes([]byte("f")), codec.Bytes(make([]byte, 45))}
	if r := one(t, s, 0, (&codec.Call{Key: key(2)}).MapPut("m", 0, kv)); r.Code != codec.OK {
		t.Fatalf("small map: code %d", r.Code)
	}
	kv[0] = codec.Bytes([]byte("g"))
	if r := one(t, s, 0, (&codec.Call{Key: key(2)}).MapPut("m", 0, kv)); r.Code != codec.RecordTooBig {
		t.Fatalf("map past the limit: code %d", r.Code)
	}
	r := one(t, s, 0, (&codec.Call{Key: key(2)}).MapSize("m").Get("m"))
	if r.Values[0].Int != 1 || r.Values[1].Len() != 1 {
		t.Fatalf("map after a refused write: size %d, %d items", r.Values[0].Int, r.Values[1].Len())
	}
}

func TestReturnedValuesDoNotChange(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	k := key(1)
	one(t, s, 0, (&codec.Call{Key: k}).Put(codec.BinValue, codec.Bytes([]byte("abc"))).
		MapPut("m", 0, []codec.Value{codec.Bytes([]byte("a")), codec.Int(1)}))
	r := one(t, s, 0, (&codec.Call{Key: k}).Get(codec.BinValue).Get("m").Get(""))
	v, m, all := r.Values[0], r.Values[1], r.Values[2]
	one(t, s, 0, (&codec.Call{Key: k}).Append(codec.BinValue, []byte("def")).
		MapPut("m", 0, []codec.Value{codec.Bytes([]byte("a")), codec.Int(2), codec.Bytes([]byte("0")), codec.Int(0)}))
	if string(v.Bytes) != "abc" {
		t.Errorf("returned blob changed to %q", v.Bytes)
	}
	if !m.Equal(codec.Map(codec.Bytes([]byte("a")), codec.Int(1))) {
		t.Errorf("returned map changed: %+v", m)
	}
	if all.Len() != 2 {
		t.Errorf("returned record changed: %+v", all)
	}
}

func TestResponseReuse(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	big := codec.Request{Kind: codec.ReqRecords}
	for i := 0; i < 5; i++ {
		big.Calls = append(big.Calls, *(&codec.Call{Key: key(i)}).Put("a", codec.Int(int64(i))).Get("a").Get("a"))
	}
	s.Exec(context.Background(), 0, &big, &resp)
	small := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*(&codec.Call{Key: key(9)}).Get("a")}}
	s.Exec(context.Background(), 0, &small, &resp)
	if len(resp.Results) != 1 || resp.Results[0].Code != codec.NotFound || len(resp.Results[0].Values) != 1 || !resp.Results[0].Values[0].IsNil() {
		t.Fatalf("reused response: %+v", resp.Results)
	}
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqCount}, &resp)
	if len(resp.Results) != 0 || resp.Count != 5 {
		t.Fatalf("count on a reused response: %d results, count %d", len(resp.Results), resp.Count)
	}
}

func TestRequestErrors(t *testing.T) {
	s := New(Options{Databases: 2, SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	for _, db := range []int{-1, 2} {
		s.Exec(context.Background(), db, &codec.Request{Kind: codec.ReqCount}, &resp)
		if resp.Code != codec.InvalidOperation {
			t.Errorf("db %d: code %d", db, resp.Code)
		}
	}
	s.Exec(context.Background(), 0, &codec.Request{Kind: 99}, &resp)
	if resp.Code != codec.InvalidOperation {
		t.Errorf("unknown kind: code %d", resp.Code)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Exec(ctx, 0, &codec.Request{Kind: codec.ReqCount}, &resp)
	if resp.Code != codec.Timeout {
		t.Errorf("cancelled context: code %d", resp.Code)
	}
	bad := []*codec.Call{
		(&codec.Call{Key: key(1)}).Expire(0).Put("a", codec.Int(1)),
		(&codec.Call{Key: key(1)}).Put("", codec.Int(1)),
		(&codec.Call{Key: key(1)}).Put("sixteen-bytes-xx", codec.Int(1)),
		(&codec.Call{Key: key(1)}).Put("a", codec.Value{Kind: 42}),
		(&codec.Call{Key: key(1)}).Op(codec.Op{Code: codec.OpMapGetByKeys, Bin: "m", Return: 9}),
	}
	for i, c := range bad {
		if r := one(t, s, 0, c); r.Code != codec.InvalidOperation {
			t.Errorf("bad call %d: code %d", i, r.Code)
		}
	}
}

// Aerospike 8.1.2 writes every item into an empty map under
// UPDATE_ONLY|NO_FAIL|PARTIAL (map_add_items_ordered); the store mirrors it
// so that command tests see what production does.
func TestUpdateOnlyPartialOnEmptyMap(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	kv := []codec.Value{codec.Bytes([]byte("a")), codec.Int(1)}
	r := one(t, s, 0, (&codec.Call{Key: key(1)}).MapPut("m", codec.MapWriteUpdateOnly|codec.MapWriteNoFail, kv))
	if r.Code != codec.OK || r.Values[0].Int != 0 {
		t.Fatalf("update-only|no-fail on a missing map: code %d size %d", r.Code, r.Values[0].Int)
	}
	r = one(t, s, 0, (&codec.Call{Key: key(1)}).MapPut("m", codec.MapWriteUpdateOnly|codec.MapWriteNoFail|codec.MapWritePartial, kv))
	if r.Code != codec.OK || r.Values[0].Int != 1 {
		t.Fatalf("update-only|no-fail|partial on an empty map: code %d size %d", r.Code, r.Values[0].Int)
	}
}

func TestMapIncrementMixedKinds(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	k := func(s string) codec.Value { return codec.Bytes([]byte(s)) }
	r := one(t, s, 0, (&codec.Call{Key: key(1)}).
		MapIncrement("m", 0, k("i"), codec.Int(5)).
		MapIncrement("m", 0, k("i"), codec.Float(2.7)).
		MapIncrement("m", 0, k("f"), codec.Float(0.5)).
		MapIncrement("m", 0, k("f"), codec.Int(2)).
		MapIncrement("m", 0, k("n"), codec.Nil))
	want := []codec.Value{codec.Int(5), codec.Int(7), codec.Float(0.5), codec.Float(2.5), codec.Int(1)}
	for i, w := range want {
		if !r.Values[i].Equal(w) {
			t.Errorf("increment %d = %+v, want %+v", i, r.Values[i], w)
		}
	}
}

func TestConcurrency(t *testing.T) {
	clk := newClock()
	s := New(Options{Now: clk.Now, SweepInterval: time.Millisecond})
	defer s.Close()
	const workers, iters, counters = 8, 500, 5
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var resp codec.Response
			var req codec.Request
			for i := 0; i < iters; i++ {
				req.Kind = codec.ReqRecords
				req.Calls = req.Calls[:0]
				c := codec.Call{Key: []byte("counter" + strconv.Itoa(i%counters))}
				req.Calls = append(req.Calls, *c.Add("n", codec.Int(1)))
				h := codec.Call{Key: []byte("hash")}
				req.Calls = append(req.Calls, *h.MapIncrement("m", 0, codec.Bytes([]byte(strconv.Itoa(i%7))), codec.Int(1)).MapSize("m"))
				own := codec.Call{Key: []byte(fmt.Sprintf("w%d:%d", w, i))}
				req.Calls = append(req.Calls, *own.Expire(int64(1+i%3)).Put(codec.BinValue, codec.Int(int64(i))).Get(codec.BinValue))
				s.Exec(context.Background(), 0, &req, &resp)
				for j, r := range resp.Results {
					if r.Code != codec.OK {
						t.Errorf("worker %d op %d call %d: code %d", w, i, j, r.Code)
						return
					}
				}
				if got := resp.Results[2].Values[1].Int; got != int64(i) {
					t.Errorf("worker %d read back %d, want %d", w, got, i)
					return
				}
				switch i % 50 {
				case 0:
					clk.advance(time.Second)
				case 10:
					s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqScan, Scan: codec.ScanArgs{Count: 100, WithType: true}}, &resp)
				case 20:
					s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqCount}, &resp)
				case 30:
					s.Exec(context.Background(), 1, &codec.Request{Kind: codec.ReqTruncate}, &resp)
				}
			}
		}(w)
	}
	wg.Wait()
	var total int64
	for i := 0; i < counters; i++ {
		total += one(t, s, 0, (&codec.Call{Key: []byte("counter" + strconv.Itoa(i))}).Get("n")).Values[0].Int
	}
	if total != workers*iters {
		t.Errorf("counters sum to %d, want %d", total, workers*iters)
	}
	m := one(t, s, 0, (&codec.Call{Key: []byte("hash")}).Get("m")).Values[0]
	var sum int64
	for i := 1; i < len(m.List); i += 2 {
		sum += m.List[i].Int
	}
	if sum != workers*iters {
		t.Errorf("map counters sum to %d, want %d", sum, workers*iters)
	}
}

func BenchmarkGet(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	set := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("bench")}).TTLNever().Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("some value")))}}
	s.Exec(context.Background(), 0, &set, &resp)
	get := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("bench")}).Guard(codec.TypeString).Get(codec.BinType).Get(codec.BinValue)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.Exec(ctx, 0, &get, &resp)
	}
	if resp.Results[0].Code != codec.OK {
		b.Fatal(resp.Results[0].Code)
	}
}

func BenchmarkSet(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	set := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("bench")}).TTLNever().Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("some value")))}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		s.Exec(ctx, 0, &set, &resp)
	}
	if resp.Results[0].Code != codec.OK {
		b.Fatal(resp.Results[0].Code)
	}
}

func BenchmarkSetNewKeys(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	set := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{}).TTLNever().Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("some value")))}}
	ctx := context.Background()
	keyBuf := make([]byte, 0, 32)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		keyBuf = strconv.AppendInt(append(keyBuf[:0], "key:"...), int64(i), 10)
		set.Calls[0].Key = keyBuf
		s.Exec(ctx, 0, &set, &resp)
		i++
	}
}

func BenchmarkHashSet(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	kv := []codec.Value{codec.Bytes(nil), codec.Bytes([]byte("value"))}
	set := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("hash")}).Guard(codec.TypeHash).Put(codec.BinType, codec.Str(codec.TypeHash)).
			MapPut(codec.BinValue, codec.MapOrderKey, kv)}}
	ctx := context.Background()
	field := make([]byte, 0, 16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		field = strconv.AppendInt(field[:0], int64(i%1000), 10)
		set.Calls[0].Ops[1].Values[0] = codec.Bytes(field)
		s.Exec(ctx, 0, &set, &resp)
		i++
	}
}

func BenchmarkGetParallel(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	for i := 0; i < 1000; i++ {
		s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
			*(&codec.Call{Key: key(i)}).Put(codec.BinValue, codec.Bytes([]byte("v")))}}, &resp)
	}
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = key(i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var resp codec.Response
		get := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*(&codec.Call{}).Get(codec.BinValue)}}
		i := 0
		for pb.Next() {
			get.Calls[0].Key = keys[i%1000]
			s.Exec(context.Background(), 0, &get, &resp)
			i++
		}
	})
}

// BenchmarkZRangeReply is the store's share of ZRANGE k 0 99 WITHSCORES on
// a 10,000-member sorted set: a rank range laid out as the reply
// (codec.ReturnRESPScores).
func BenchmarkZRangeReply(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	kv := make([]codec.Value, 0, 20000)
	for i := range 10000 {
		kv = append(kv, codec.Bytes(fmt.Appendf(nil, "member:%05d", i)), codec.Float(float64(i)))
	}
	load := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("z")}).Put(codec.BinType, codec.Str(codec.TypeZSet)).
			MapPut(codec.BinValue, codec.MapOrderKeyValue, kv)}}
	ctx := context.Background()
	s.Exec(ctx, 0, &load, &resp)
	read := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("z")}).Guard(codec.TypeZSet).MapSize(codec.BinValue).
			MapGetByRank(codec.BinValue, codec.ReturnRESPScores, 0, 100)}}
	b.ReportAllocs()
	for b.Loop() {
		s.Exec(ctx, 0, &read, &resp)
	}
	if r := resp.Results[0]; r.Code != codec.OK || r.Values[1].List[0].Int != 100 {
		b.Fatalf("code %d, %v", r.Code, r.Values)
	}
}

// TestTypeTag: ownValue shares every type tag's stored bytes and copies
// any other string, of a tag's length or first letter alike.
func TestTypeTag(t *testing.T) {
	for _, tag := range typeTags {
		v, err := ownValue(codec.Str(string(tag)))
		if err != nil || v.Kind != codec.KindStr || string(v.Bytes) != string(tag) || &v.Bytes[0] != &tag[0] {
			t.Errorf("tag %q: %v %v, not the shared tag", tag, v, err)
		}
	}
	for _, s := range []string{"", "s", "se", "sex", "set ", "hasH", "hast", "lisa", "zsex", "zse", "strinG", "strings", "xxxx"} {
		v, err := ownValue(codec.Str(s))
		if err != nil || v.Kind != codec.KindStr || string(v.Bytes) != s {
			t.Errorf("%q: %v %v", s, v, err)
		}
		for _, tag := range typeTags {
			if len(v.Bytes) > 0 && &v.Bytes[0] == &tag[0] {
				t.Errorf("%q: stored as the tag %q", s, tag)
			}
		}
	}
}
