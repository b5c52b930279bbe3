package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
)

// The store's share of bench.sh's GEO and HLL benchmarks (issue 20), with
// the calls the modules send (kit.ZAddOne, geosearch's read, PFADD's raise).

// geoAddCall is GEOADD key 13.361389 38.115556 member as kit.ZAddOne
// sends it: the size before, the put, the type tag after.
func geoAddCall(key []byte) *codec.Request {
	score := geo.ScoreOf(13.361389, 38.115556)
	c := (&codec.Call{Key: key}).Guard(codec.TypeZSet).MapSize(codec.BinValue).
		MapPut(codec.BinValue, codec.MapWriteDefault|codec.MapOrderKeyValue,
			[]codec.Value{codec.Bytes(nil), codec.Float(score)}).
		Put(codec.BinType, codec.Str(codec.TypeZSet))
	return &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*c}}
}

// BenchmarkGeoAddGrowing is bench.sh's GEOADD (redis-benchmark -r 100000
// ... member:__rand_int__): rounds of 50,000 adds of random members of
// 100,000 into a key that starts empty, so that the set grows to ~39,000
// members; three in four adds insert.
func BenchmarkGeoAddGrowing(b *testing.B) { geoAddGrowing(b, 100000, 50000) }

// BenchmarkGeoAddGrowingSmall is BenchmarkGeoAddGrowing of 1,000 members
// (the set stays in cache): the difference is what a big set's misses
// cost.
func BenchmarkGeoAddGrowingSmall(b *testing.B) { geoAddGrowing(b, 1000, 1000) }

func geoAddGrowing(b *testing.B, members, round int) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	ctx := context.Background()
	req := geoAddCall([]byte("bench:geoadd"))
	put := &req.Calls[0].Ops[1].Values[0]
	del := &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*(&codec.Call{Key: []byte("bench:geoadd")}).Delete()}}
	rng := rand.New(rand.NewPCG(1, 2))
	member := make([]byte, 0, 32)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == round {
			b.StopTimer()
			s.Exec(ctx, 0, del, &resp)
			i = 0
			b.StartTimer()
		}
		member = fmt.Appendf(member[:0], "member:%012d", rng.IntN(members))
		*put = codec.Bytes(member)
		s.Exec(ctx, 0, req, &resp)
		i++
	}
	if r := resp.Results[0]; r.Code != codec.OK {
		b.Fatal(r.Code, r.Msg)
	}
}

// BenchmarkGeoAddHeld is GEOADD of members a 100,000-member set already
// holds at the same place (bench.sh's later rounds, whose key is not
// emptied between them).
func BenchmarkGeoAddHeld(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	ctx := context.Background()
	req := geoAddCall([]byte("bench:geoadd"))
	put := &req.Calls[0].Ops[1].Values[0]
	member := make([]byte, 0, 32)
	for i := range 100000 {
		member = fmt.Appendf(member[:0], "member:%012d", i)
		*put = codec.Bytes(member)
		s.Exec(ctx, 0, req, &resp)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		member = fmt.Appendf(member[:0], "member:%012d", rng.IntN(100000))
		*put = codec.Bytes(member)
		s.Exec(ctx, 0, req, &resp)
	}
	if r := resp.Results[0]; r.Code != codec.OK || r.Values[0].Int != 100000 {
		b.Fatal(r.Code, r.Msg, r.Values)
	}
}

// BenchmarkGeoSearch is bench.sh's GEOSEARCH bench:geo FROMLONLAT 13.9 37.4
// BYRADIUS 5 km COUNT 10 ASC WITHDIST on its 10,000-member set (the
// module sorts, so the store is asked for every member in the area).
func BenchmarkGeoSearch(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	var resp codec.Response
	ctx := context.Background()
	kv := make([]codec.Value, 0, 20000)
	for i := range 10000 {
		lon := 12.4 + float64(i*7919%10000)/10000*3.2
		lat := 36.7 + float64(i*104729%10000)/10000*1.5
		kv = append(kv, codec.Bytes(fmt.Appendf(nil, "geo:%05d", i)), codec.Float(geo.ScoreOf(lon, lat)))
	}
	load := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("bench:geo")}).Put(codec.BinType, codec.Str(codec.TypeZSet)).
			MapPut(codec.BinValue, codec.MapOrderKeyValue, kv)}}
	s.Exec(ctx, 0, &load, &resp)
	sh := geo.Shape{Kind: geo.KindCircle, Lon: 13.9, Lat: 37.4, Radius: 5, Conversion: 1000}
	read := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: []byte("bench:geo")}).Guard(codec.TypeZSet).MapGeoSearch(codec.BinValue, sh.AppendFilter(nil), 0)}}
	b.ReportAllocs()
	for b.Loop() {
		s.Exec(ctx, 0, &read, &resp)
	}
	if r := resp.Results[0]; r.Code != codec.OK || r.Values[0].List[0].Int == 0 {
		b.Fatalf("code %d, %v", r.Code, r.Values)
	}
}

// hllPrepared stores a dense HLL (all registers 0) under key.
func hllPrepared(b *testing.B, s *Store, key []byte) {
	h := make([]byte, codec.HLLDenseSize)
	copy(h, "HYLL")
	var resp codec.Response
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: key}).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(h))}}, &resp)
	if resp.Results[0].Code != codec.OK {
		b.Fatal(resp.Results[0].Code)
	}
}

// BenchmarkPFAddRaise is PFADD's update of one register of a dense HLL
// (random registers and counts of a geometric distribution, as elements'
// hashes give them: most raise nothing once the HLL has filled).
func BenchmarkPFAddRaise(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	key := []byte("bench:hlladd")
	hllPrepared(b, s, key)
	var resp codec.Response
	ctx := context.Background()
	regs := make([]byte, 3)
	c := (&codec.Call{Key: key}).Guard(codec.TypeString).Exists(codec.ExistsUpdateOnly).TTLKeep().HLLRaise(codec.BinValue, regs)
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*c}}
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	for b.Loop() {
		i, h := rng.IntN(16384), rng.Uint64()|1<<50
		n := 1
		for h&1 == 0 {
			h >>= 1
			n++
		}
		regs[0], regs[1], regs[2] = byte(i>>8), byte(i), byte(n)
		s.Exec(ctx, 0, &req, &resp)
	}
	if r := resp.Results[0]; r.Code != codec.OK {
		b.Fatal(r.Code, r.Msg)
	}
}

// BenchmarkPFCountRead is PFCOUNT's read of a dense HLL (the module
// counts).
func BenchmarkPFCountRead(b *testing.B) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	key := []byte("bench:hll")
	hllPrepared(b, s, key)
	var resp codec.Response
	ctx := context.Background()
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{
		*(&codec.Call{Key: key}).Guard(codec.TypeString).Get(codec.BinValue)}}
	b.ReportAllocs()
	for b.Loop() {
		s.Exec(ctx, 0, &req, &resp)
	}
	if r := resp.Results[0]; r.Code != codec.OK || len(r.Values[0].Bytes) != codec.HLLDenseSize {
		b.Fatal(r.Code, r.Msg)
	}
}
