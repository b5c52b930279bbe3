package aerospike

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// execTogether runs one request per call through s.ExecMany, as a pipeline
// window of as many clients would go (each request its own command), and
// returns each request's first result and the batch calls and records the
// store sent.
func execTogether(t *testing.T, s *Store, calls []codec.Call) (res []codec.Result, batchCalls, batchRecords uint64) {
	t.Helper()
	stat := func() (uint64, uint64) { return s.nBatch.Load(), s.nBatchRecords.Load() }
	ops := make([]store.Op, len(calls))
	resps := make([]codec.Response, len(calls))
	for i := range calls {
		ops[i] = store.Op{Ctx: context.Background(), Req: &codec.Request{Kind: codec.ReqRecords, Calls: calls[i : i+1]}, Resp: &resps[i]}
	}
	c0, r0 := stat()
	s.ExecMany(ops)
	c1, r1 := stat()
	for i := range resps {
		if resps[i].Code != codec.OK {
			t.Fatalf("request %d: code %d %s", i, resps[i].Code, resps[i].Msg)
		}
		res = append(res, resps[i].Results[0])
	}
	return res, c1 - c0, r1 - r0
}

func saddCall(key string, member string) codec.Call {
	return codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeSet}, Ops: []codec.Op{
		{Code: codec.OpMapSize, Bin: codec.BinValue},
		{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeSet)},
		{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKey | codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial,
			Values: []codec.Value{codec.Bytes([]byte(member)), codec.Int(1)}}}}
}

// TestMergedRows checks on the server named by RESPIKE_TEST_AEROSPIKE that
// different clients' writes on one record that share a batch call go as
// one operate of all their ops (one record in the call, so the server
// rewrites the record once), and that each still gets the answer its own
// row would have: SADDs see the sizes one after another, a member added
// twice counts once, a guard refused answers each command's WRONGTYPE, and
// rows that cannot merge (a different policy, DeleteIfEmpty) go as rows.
// Skipped without RESPIKE_TEST_AEROSPIKE.
func TestMergedRows(t *testing.T) {
	s := openServer(t)
	defer s.Close()
	if s.co == nil {
		t.Skip("gathering off")
	}
	// One clock for every request, but where a subtest moves it: the
	// expiry filters of requests that straddle a millisecond differ.
	now := time.Now()
	s.now = func() time.Time { return now }
	exec(t, s, codec.Call{Key: []byte("merge:set"), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
	exec(t, s, codec.Call{Key: []byte("merge:other"), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)

	t.Run("SADD", func(t *testing.T) {
		var calls []codec.Call
		for i := 0; i < 6; i++ {
			calls = append(calls, saddCall("merge:set", fmt.Sprintf("m%d", i%5))) // m0 twice
		}
		calls = append(calls, saddCall("merge:other", "x"))
		res, nc, nr := execTogether(t, s, calls)
		if nc != 1 || nr != 2 {
			t.Errorf("%d batch calls of %d records, want 1 of 2 (the six SADDs on one record merged)", nc, nr)
		}
		for i, r := range res[:6] {
			if r.Code != codec.OK {
				t.Fatalf("SADD %d: code %d %s", i, r.Code, r.Msg)
			}
			before, after := r.IntAt(0), r.IntAt(2)
			wantBefore, wantAdded := int64(i), int64(1)
			if i == 5 {
				wantBefore, wantAdded = 5, 0 // m0 again
			}
			if before != wantBefore || after-before != wantAdded {
				t.Errorf("SADD %d: size %d before, %d after; want %d, +%d", i, before, after, wantBefore, wantAdded)
			}
		}
		if r := res[6]; r.Code != codec.OK || r.IntAt(2) != 1 {
			t.Errorf("SADD on the other key: code %d, size %d", r.Code, r.IntAt(2))
		}
		r := exec(t, s, codec.Call{Key: []byte("merge:set"), Ops: []codec.Op{{Code: codec.OpMapSize, Bin: codec.BinValue}}}, codec.OK)
		if r.IntAt(0) != 5 {
			t.Errorf("the set holds %d members, want 5", r.IntAt(0))
		}
	})

	t.Run("LPUSH and RPUSH", func(t *testing.T) {
		exec(t, s, codec.Call{Key: []byte("merge:list"), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		push := func(code codec.OpCode, item string) codec.Call {
			op := codec.Op{Code: code, Bin: codec.BinValue, Values: []codec.Value{codec.Bytes([]byte(item))}}
			return codec.Call{Key: []byte("merge:list"), Policy: codec.Policy{Guard: codec.TypeList}, Ops: []codec.Op{
				{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeList)}, op}}
		}
		res, nc, nr := execTogether(t, s, []codec.Call{push(codec.OpListInsert, "a"), push(codec.OpListInsert, "b"),
			push(codec.OpListAppend, "c"), push(codec.OpListInsert, "d")})
		if nc != 1 || nr != 1 {
			t.Errorf("%d batch calls of %d records, want 1 of 1", nc, nr)
		}
		for i, r := range res {
			if r.Code != codec.OK || r.IntAt(1) != int64(i+1) {
				t.Errorf("push %d: code %d, size %d, want %d", i, r.Code, r.IntAt(1), i+1)
			}
		}
		r := exec(t, s, codec.Call{Key: []byte("merge:list"), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}, codec.OK)
		var got []string
		for _, v := range r.Value(0).List {
			got = append(got, string(v.Bytes))
		}
		if fmt.Sprint(got) != "[d b a c]" {
			t.Errorf("list %v, want [d b a c] (the pushes in order)", got)
		}
	})

	t.Run("WRONGTYPE", func(t *testing.T) {
		exec(t, s, codec.Call{Key: []byte("merge:str"), Policy: codec.Policy{TTL: codec.TTLNever}, Ops: []codec.Op{
			{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeString)}, {Code: codec.OpPut, Bin: codec.BinValue, Value: codec.Bytes([]byte("v"))}}}, codec.OK)
		res, _, _ := execTogether(t, s, []codec.Call{saddCall("merge:str", "a"), saddCall("merge:str", "b"), saddCall("merge:str", "c")})
		for i, r := range res {
			if r.Code != codec.FilteredOut {
				t.Errorf("SADD %d on a string: code %d %s, want FilteredOut", i, r.Code, r.Msg)
			}
		}
	})

	t.Run("create-only", func(t *testing.T) {
		// A read-modify-write of a missing key (HINCRBYFLOAT) writes
		// create-only: of several at once exactly one creates the key,
		// the others answer Exists and read again. Merged, every one
		// would have succeeded and the increments but one been lost.
		exec(t, s, codec.Call{Key: []byte("merge:new"), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		create := codec.Call{Key: []byte("merge:new"), Policy: codec.Policy{Guard: codec.TypeHash, Exists: codec.ExistsCreateOnly}, Ops: []codec.Op{
			{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeHash)},
			{Code: codec.OpMapPut, Bin: codec.BinValue, Flags: codec.MapOrderKey, Values: []codec.Value{codec.Bytes([]byte("f")), codec.Bytes([]byte("0.5"))}}}}
		res, _, _ := execTogether(t, s, []codec.Call{create, create, create})
		ok := 0
		for i, r := range res {
			switch r.Code {
			case codec.OK:
				ok++
			case codec.Exists:
			default:
				t.Errorf("create %d: code %d %s", i, r.Code, r.Msg)
			}
		}
		if ok != 1 {
			t.Errorf("%d of 3 create-only writes of a missing key succeeded, want 1", ok)
		}
	})

	srem := func(key, member string) codec.Call {
		return codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeSet, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
			{Code: codec.OpMapSize, Bin: codec.BinValue},
			{Code: codec.OpMapRemoveByKeys, Bin: codec.BinValue, Return: codec.ReturnNone, Values: []codec.Value{codec.Bytes([]byte(member))}},
			{Code: codec.OpMapSize, Bin: codec.BinValue}}}
	}
	sizes := func(r codec.Result) [2]int64 { return [2]int64{r.IntAt(0), r.IntAt(len(r.Values) - 1)} }

	t.Run("DeleteIfEmpty", func(t *testing.T) {
		// An SREM that empties the set, an SADD, an SREM of a member
		// that is not there, merged: the record loses its bins between
		// the first two, as the SREM's row would have deleted it, and the
		// SADD makes it again from nothing: the set's exact expiry is
		// gone with it.
		const key = "merge:one"
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		exec(t, s, saddCall(key, "a"), codec.OK)
		k, err := as.NewKey(s.cfg.Namespace, s.set(0), []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		wp := as.NewWritePolicy(0, 0)
		if err := s.client.Load().PutBins(wp, k, as.NewBin(codec.BinExpire, now.Add(time.Hour).UnixMilli())); err != nil {
			t.Fatal(err)
		}
		res, nc, nr := execTogether(t, s, []codec.Call{srem(key, "a"), saddCall(key, "b"), srem(key, "x")})
		if nc != 1 || nr != 1 {
			t.Errorf("%d batch calls of %d records, want 1 of 1 (merged)", nc, nr)
		}
		for i, want := range [][2]int64{{1, 0}, {0, 1}, {1, 1}} {
			if r := res[i]; r.Code != codec.OK || sizes(r) != want {
				t.Errorf("command %d: code %d %s, sizes %v, want %v", i, r.Code, r.Msg, sizes(r), want)
			}
		}
		rec, err := s.client.Load().Get(nil, k)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := rec.Bins[codec.BinExpire]; ok || rec.Bins[codec.BinType] != codec.TypeSet || len(rec.Bins) != 2 {
			t.Errorf("the record made again holds %v, want the type and the member only", rec.Bins)
		}
		r := exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}, codec.OK)
		if l := r.Value(0).List; len(l) != 2 || string(l[0].Bytes) != "b" {
			t.Errorf("the set holds %v, want b alone", l)
		}
	})

	t.Run("DeleteIfEmpty, emptied", func(t *testing.T) {
		// Two SREMs of the last member: the first empties and deletes
		// the record, the second finds nothing, as its row would.
		const key = "merge:two"
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		exec(t, s, saddCall(key, "a"), codec.OK)
		res, nc, nr := execTogether(t, s, []codec.Call{srem(key, "a"), srem(key, "a")})
		if nc != 1 || nr != 1 {
			t.Errorf("%d batch calls of %d records, want 1 of 1 (merged)", nc, nr)
		}
		if r := res[0]; r.Code != codec.OK || sizes(r) != [2]int64{1, 0} {
			t.Errorf("first SREM: code %d %s, sizes %v, want [1 0]", r.Code, r.Msg, sizes(r))
		}
		if r := res[1]; (r.Code != codec.OK && r.Code != codec.NotFound) || sizes(r) != [2]int64{0, 0} {
			t.Errorf("second SREM: code %d %s, sizes %v, want nothing", r.Code, r.Msg, sizes(r))
		}
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinType}}}, codec.NotFound)
	})

	t.Run("milliseconds apart", func(t *testing.T) {
		// Each request planned 5 ms after the one before: their expiry
		// filters differ, and they still merge, in order.
		const key = "merge:ms"
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		var tick atomic.Int64
		s.now = func() time.Time { return now.Add(time.Duration(tick.Add(1)-1) * 5 * time.Millisecond) }
		defer func() { s.now = func() time.Time { return now } }()
		var calls []codec.Call
		for i := 0; i < 4; i++ {
			calls = append(calls, saddCall(key, fmt.Sprint("m", i)))
		}
		res, nc, nr := execTogether(t, s, calls)
		if nc != 1 || nr != 1 {
			t.Errorf("%d batch calls of %d records, want 1 of 1 (merged)", nc, nr)
		}
		for i, r := range res {
			if r.Code != codec.OK || r.IntAt(0) != int64(i) || r.IntAt(2) != int64(i+1) {
				t.Errorf("SADD %d: code %d %s, size %d before, %d after", i, r.Code, r.Msg, r.IntAt(0), r.IntAt(2))
			}
		}
	})

	t.Run("expired between", func(t *testing.T) {
		// The set's exact expiry falls between two SADDs' milliseconds:
		// the first sees it live and adds to it, the second sees it
		// expired and makes a new set, as their rows would have. Merged,
		// the later filter fails the operate and each runs alone.
		const key = "merge:msx"
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		exec(t, s, saddCall(key, "a"), codec.OK)
		k, err := as.NewKey(s.cfg.Namespace, s.set(0), []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.client.Load().PutBins(as.NewWritePolicy(0, 0), k, as.NewBin(codec.BinExpire, now.Add(2*time.Millisecond).UnixMilli())); err != nil {
			t.Fatal(err)
		}
		var tick atomic.Int64
		s.now = func() time.Time { return now.Add(time.Duration(tick.Add(1)-1) * 5 * time.Millisecond) }
		defer func() { s.now = func() time.Time { return now } }()
		res, _, _ := execTogether(t, s, []codec.Call{saddCall(key, "b"), saddCall(key, "c")})
		if r := res[0]; r.Code != codec.OK || r.IntAt(0) != 1 || r.IntAt(2) != 2 {
			t.Errorf("SADD before the expiry: code %d %s, size %d before, %d after; want 1, 2", r.Code, r.Msg, r.IntAt(0), r.IntAt(2))
		}
		if r := res[1]; r.Code != codec.OK || r.IntAt(0) != 0 || r.IntAt(2) != 1 {
			t.Errorf("SADD after the expiry: code %d %s, size %d before, %d after; want 0, 1", r.Code, r.Msg, r.IntAt(0), r.IntAt(2))
		}
		r := exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}, codec.OK)
		if l := r.Value(0).List; len(l) != 2 || string(l[0].Bytes) != "c" {
			t.Errorf("the set holds %v, want c alone", l)
		}
	})

	t.Run("pops", func(t *testing.T) {
		// Three SPOPs of a two-member set (update-only, DeleteIfEmpty):
		// merged, the third runs after the second emptied the record and
		// answers NotFound, as its row would have found no record.
		const key = "merge:pops"
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		exec(t, s, saddCall(key, "a"), codec.OK)
		exec(t, s, saddCall(key, "b"), codec.OK)
		spop := codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeSet, Exists: codec.ExistsUpdateOnly, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
			{Code: codec.OpMapRemoveByIndex, Bin: codec.BinValue, Return: codec.ReturnKey, Index: 0, Count: 1}}}
		res, nc, nr := execTogether(t, s, []codec.Call{spop, spop, spop})
		if nc != 1 || nr != 1 {
			t.Errorf("%d batch calls of %d records, want 1 of 1 (merged)", nc, nr)
		}
		var got []string
		for i, r := range res[:2] {
			if r.Code != codec.OK || len(r.Value(0).List) != 1 {
				t.Fatalf("SPOP %d: code %d %s, %v", i, r.Code, r.Msg, r.Value(0))
			}
			got = append(got, string(r.Value(0).List[0].Bytes))
		}
		if fmt.Sprint(got) != "[a b]" {
			t.Errorf("SPOPs took %v, want [a b]", got)
		}
		if r := res[2]; r.Code != codec.NotFound {
			t.Errorf("SPOP of the emptied set: code %d %s %v, want NotFound", r.Code, r.Msg, r.Value(0))
		}
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinType}}}, codec.NotFound)
	})

	t.Run("update-only not merged", func(t *testing.T) {
		// An SPOP (update-only: a missing record answers NotFound) after
		// an SREM that may empty the set: rows, so the SPOP finds the
		// record gone if the SREM deleted it.
		const key = "merge:three"
		exec(t, s, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
		exec(t, s, saddCall(key, "a"), codec.OK)
		spop := codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeSet, Exists: codec.ExistsUpdateOnly, DeleteIfEmpty: codec.BinValue}, Ops: []codec.Op{
			{Code: codec.OpMapRemoveByIndex, Bin: codec.BinValue, Return: codec.ReturnKey, Index: 0, Count: 1}}}
		res, nc, nr := execTogether(t, s, []codec.Call{srem(key, "a"), spop})
		if nc != 1 || nr != 2 {
			t.Errorf("%d batch calls of %d records, want 1 of 2 (not merged)", nc, nr)
		}
		if r := res[1]; r.Code != codec.NotFound {
			t.Errorf("SPOP after the SREM that emptied the set: code %d %s, want NotFound", r.Code, r.Msg)
		}
	})
}

// TestMergedRowsClusterGone checks that when a batch call fails as a whole
// (the cluster went away), every command merged into one record's operate
// fails with it, not only the first. Skipped without RESPIKE_TEST_AEROSPIKE.
func TestMergedRowsClusterGone(t *testing.T) {
	addr := serverAddr()
	if addr == "" {
		t.Skip("RESPIKE_TEST_AEROSPIKE not set")
	}
	p := &proxy{t: t, addr: refusedAddr(t), target: addr}
	p.start()
	defer p.cut()
	s := storeVia(t, p)
	defer s.Close()
	get := &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte("merge:gone"), Ops: []codec.Op{{Code: codec.OpGet, Bin: "v"}}}}}
	waitFor(t, s, get, "connect", func(r *codec.Response, _ time.Duration) bool {
		return r.Code == codec.OK && (r.Results[0].Code == codec.OK || r.Results[0].Code == codec.NotFound)
	})
	p.cut()
	ops := make([]store.Op, 4)
	resps := make([]codec.Response, len(ops))
	for i := range ops {
		ops[i] = store.Op{Ctx: context.Background(), Req: &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{saddCall("merge:gone", fmt.Sprint(i))}}, Resp: &resps[i]}
	}
	s.ExecMany(ops)
	for i, r := range resps {
		if r.Code == codec.OK {
			t.Errorf("SADD %d with the cluster gone answered OK (%+v)", i, r.Results)
		}
	}
}

// TestMergedRowsHeadFailed checks that the requests merged into one
// record's operate behind another request's row still answer when that
// other request fails as a whole in the same batch call: request A's call
// on a string (an SADD the type guard refuses) comes first in the call and
// fails A, as the follow-up read that looks for an expired record finds
// the cluster gone; A's SADD on the set heads the set's merged operate,
// and B's and C's SADDs, merged behind it, must get their own sizes, not
// the empty results they started with. Skipped without
// RESPIKE_TEST_AEROSPIKE.
func TestMergedRowsHeadFailed(t *testing.T) {
	addr := serverAddr()
	if addr == "" {
		t.Skip("RESPIKE_TEST_AEROSPIKE not set")
	}
	direct := openServer(t) // setup and the final read, past the gate
	defer direct.Close()
	const set, str = "merge:headfailed:set", "merge:headfailed:str"
	exec(t, direct, codec.Call{Key: []byte(set), Ops: []codec.Op{{Code: codec.OpDelete}}}, codec.OK, codec.NotFound)
	exec(t, direct, codec.Call{Key: []byte(str), Policy: codec.Policy{TTL: codec.TTLNever}, Ops: []codec.Op{
		{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(codec.TypeString)}, {Code: codec.OpPut, Bin: codec.BinValue, Value: codec.Bytes([]byte("v"))}}}, codec.OK)

	g := &gate{t: t, target: addr, left: -1}
	g.start()
	defer g.close()
	s, err := New(context.Background(), Config{Hosts: []string{g.addr()}, Namespace: testNamespace(), Set: testSet(),
		TotalTimeout: 5 * time.Second, SocketTimeout: 5 * time.Second}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.co == nil {
		t.Skip("gathering off")
	}
	// One clock for every request: rows merge only with the same expiry
	// filter, which is per millisecond, and ExecMany's requests could
	// straddle one.
	now := time.Now()
	s.now = func() time.Time { return now }
	get := &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(set), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}}}
	waitFor(t, s, get, "connect", func(r *codec.Response, _ time.Duration) bool {
		return r.Code == codec.OK && r.Results[0].Code == codec.NotFound
	})

	reqs := []*codec.Request{
		{Kind: codec.ReqRecords, Calls: []codec.Call{saddCall(str, "x"), saddCall(set, "a")}}, // A
		{Kind: codec.ReqRecords, Calls: []codec.Call{saddCall(set, "b")}},                     // B
		{Kind: codec.ReqRecords, Calls: []codec.Call{saddCall(set, "c")}},                     // C
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ops := make([]store.Op, len(reqs))
	resps := make([]codec.Response, len(reqs))
	for i := range reqs {
		ops[i] = store.Op{Ctx: ctx, Req: reqs[i], Resp: &resps[i]}
	}
	g.allow(1) // the batch call; the follow-up read of A's string finds the cluster gone
	c0, r0 := s.nBatch.Load(), s.nBatchRecords.Load()
	done := make(chan struct{})
	go func() {
		s.ExecMany(ops)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ExecMany did not return")
	}
	if nc, nr := s.nBatch.Load()-c0, s.nBatchRecords.Load()-r0; nc != 1 || nr != 2 {
		t.Fatalf("%d batch calls of %d records, want 1 of 2 (A's string, and the three SADDs on the set merged)", nc, nr)
	}
	if resps[0].Code == codec.OK {
		t.Fatalf("request A answered OK (%+v): its call on the string did not fail it, so nothing was tested", resps[0].Results)
	}
	for i, r := range resps[1:] {
		if r.Code != codec.OK {
			t.Fatalf("request %c: code %d %s", 'B'+i, r.Code, r.Msg)
		}
		// A's SADD ran first in the operate (its request failed after),
		// then B's, then C's.
		res := r.Results[0]
		before, after := res.IntAt(0), res.IntAt(2)
		if res.Code != codec.OK || before != int64(i+1) || after != int64(i+2) {
			t.Errorf("SADD of request %c: code %d %s, size %d before, %d after; want %d, %d",
				'B'+i, res.Code, res.Msg, before, after, i+1, i+2)
		}
	}
	r := exec(t, direct, codec.Call{Key: []byte(set), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}, codec.OK)
	var members []string
	for k, v := range r.Value(0).List {
		if k%2 == 0 {
			members = append(members, string(v.Bytes))
		}
	}
	if fmt.Sprint(members) != "[a b c]" {
		t.Errorf("the set holds %v, want [a b c] (every merged SADD applied)", members)
	}
}

// gate forwards a loopback port to the test server one protocol message
// at a time. Info requests (the client's tending) always pass; record
// commands pass while its allowance lasts, and one past it closes its
// connection unsent, as a node that goes away between two commands.
type gate struct {
	t      *testing.T
	target string
	l      net.Listener
	mu     sync.Mutex
	left   int // commands still let through; -1: no limit
	conns  []net.Conn
}

func (g *gate) start() {
	g.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		g.t.Fatal(err)
	}
	g.l = l
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", g.target)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, c, up)
			g.mu.Unlock()
			go io.Copy(c, up)
			go g.forward(c, up)
		}
	}()
}

func (g *gate) addr() string { return g.l.Addr().String() }

// allow lets n more record commands through, and none after them.
func (g *gate) allow(n int) {
	g.mu.Lock()
	g.left = n
	g.mu.Unlock()
}

// pass reports whether a record command may go, and counts it.
func (g *gate) pass() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.left < 0:
		return true
	case g.left == 0:
		return false
	}
	g.left--
	return true
}

// forward copies the client's messages to the server: an 8-byte header
// (version, type, 48-bit big-endian size), then the body.
func (g *gate) forward(c, up net.Conn) {
	defer c.Close()
	defer up.Close()
	const typeInfo = 1
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		var size uint64
		for _, b := range hdr[2:] {
			size = size<<8 | uint64(b)
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(c, body); err != nil {
			return
		}
		if hdr[1] != typeInfo && !g.pass() {
			return // closes both ends: the command is never sent
		}
		if _, err := up.Write(append(hdr[:], body...)); err != nil {
			return
		}
	}
}

func (g *gate) close() {
	g.l.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}
