package storetest

import (
	"strings"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// The exact expiry cases (codec.TTLAt). They never wait: a record written
// with an expiry already past is the expired record, which both stores
// must treat as absent for every call although it is still stored.

func init() {
	cases = append(cases[:len(cases)-1:len(cases)-1], append([]testCase{
		{"ExpireAtExact", testExpireAtExact},
		{"ExpireAtFarFuture", testExpireAtFarFuture},
		{"ExpireAtKeep", testExpireAtKeep},
		{"ExpiredReads", testExpiredReads},
		{"ExpiredWrites", testExpiredWrites},
		{"ExpiredBatch", testExpiredBatch},
		{"ExpireAtNoRecordOfItsOwn", testExpireAtNoRecordOfItsOwn},
		{"ExpiredScan", testExpiredScan},
	}, cases[len(cases)-1])...) // TruncateAll stays last
}

func nowMs() int64 { return time.Now().UnixMilli() }

// expired writes a string record whose exact expiry passed a second ago.
func (e *env) expired(name string) {
	e.t.Helper()
	e.ok(e.rec(name).ExpireAt(nowMs()-1000).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, b("old")))
}

func testExpireAtExact(e *env) {
	at := nowMs() + 1500
	r := e.ok(e.rec("k").ExpireAt(at).Put(codec.BinValue, b("v")))
	if r.TTL < 1 || r.TTL > 2 {
		e.t.Errorf("TTL of an expiry 1.5 s ahead = %d, want 2 (rounded up) or 1", r.TTL)
	}
	e.eq("exact expiry", e.get("k", codec.BinExpire), i64(at))
	r = e.ok(e.rec("k").Get(codec.BinValue).Get(codec.BinExpire))
	e.eq("value", r.Values[0], b("v"))
	e.eq("exact expiry read with the value", r.Values[1], i64(at))
	// A later TTLAt replaces it.
	at2 := nowMs() + 100_000
	r = e.ok(e.rec("k").ExpireAt(at2).Touch())
	e.ttlNear("touched to 100 s", r.TTL, 100)
	e.eq("exact expiry after a touch", e.get("k", codec.BinExpire), i64(at2))
	// All bins show it, as any bin.
	all := e.get("k", "")
	if v, ok := mapEntry(all, codec.Str(codec.BinExpire)); !ok || !v.Equal(i64(at2)) {
		e.t.Errorf("all bins %s: no %s = %d", show(all), codec.BinExpire, at2)
	}
}

func testExpireAtFarFuture(e *env) {
	// 2100-01-01: beyond Aerospike's ten-year TTL, kept exactly anyway.
	at := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	r := e.ok(e.rec("k").ExpireAt(at).Put(codec.BinValue, b("v")))
	e.eqInt("TTL beyond ten years", r.TTL, -1)
	e.eq("exact expiry", e.get("k", codec.BinExpire), i64(at))
	e.eq("value", e.get("k", codec.BinValue), b("v"))
}

func testExpireAtKeep(e *env) {
	at := nowMs() + 500_000
	e.ok(e.rec("k").ExpireAt(at).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, b("a")))
	e.ttlNear("update, keep", e.ok(e.rec("k").Put(codec.BinValue, b("b"))).TTL, 500)
	e.eq("kept by an update", e.get("k", codec.BinExpire), i64(at))
	e.ttlNear("map write, keep", e.ok(e.rec("k").MapPut("m", 0, []codec.Value{b("f"), b("v")})).TTL, 500)
	e.eq("kept by a map write", e.get("k", codec.BinExpire), i64(at))
	// A replacing write with TTLKeep (SET … KEEPTTL) keeps it, on both paths.
	e.ttlNear("replace, keep", e.ok(e.rec("k").Exists(codec.ExistsReplace).Put(codec.BinValue, b("c"))).TTL, 500)
	e.eq("kept by a replace", e.get("k", codec.BinExpire), i64(at))
	e.eq("replaced", e.get("k", ""), codec.Map(codec.Str(codec.BinValue), b("c"), codec.Str(codec.BinExpire), i64(at)))
	e.ok(e.rec("k").Exists(codec.ExistsReplace).Put(codec.BinValue, b("d")).MapPut("m", 0, []codec.Value{b("f"), b("v")}))
	e.eq("kept by a replace with a map", e.get("k", codec.BinExpire), i64(at))
	// TTLSeconds and TTLNever drop it.
	e.ttlNear("seconds", e.ok(e.rec("k").Expire(300).Put(codec.BinValue, b("e"))).TTL, 300)
	e.eq("dropped by TTLSeconds", e.get("k", codec.BinExpire), codec.Nil)
	e.ok(e.rec("k").ExpireAt(at).Touch())
	e.eqInt("never", e.ok(e.rec("k").TTLNever().Touch()).TTL, -1)
	e.eq("dropped by TTLNever", e.get("k", codec.BinExpire), codec.Nil)
	e.ok(e.rec("k").ExpireAt(at).Touch())
	e.eqInt("replace, never", e.ok(e.rec("k").Exists(codec.ExistsReplace).TTLNever().Put(codec.BinValue, b("f"))).TTL, -1)
	e.eq("dropped by a replace", e.get("k", codec.BinExpire), codec.Nil)
	// A collection emptied and deleted takes the expiry with it.
	e.ok(e.rec("h").ExpireAt(at).Put(codec.BinType, codec.Str(codec.TypeHash)).MapPut(codec.BinValue, 0, []codec.Value{b("f"), b("v")}))
	e.ok(e.rec("h").DeleteIfEmpty(codec.BinValue).MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("f")}))
	e.missing("h")
}

func testExpiredReads(e *env) {
	e.expired("k")
	e.fails(e.rec("k").Get(codec.BinValue), codec.NotFound)
	e.fails(e.rec("k").Get(""), codec.NotFound)
	e.fails(e.rec("k").Header(), codec.NotFound)
	e.fails(e.rec("k").Get(codec.BinExpire), codec.NotFound)
	// Absent, not of another type: the guard does not apply.
	e.fails(e.rec("k").Guard(codec.TypeHash).MapSize(codec.BinValue), codec.NotFound)
	e.fails(e.rec("k").Guard(codec.TypeString).Get(codec.BinValue), codec.NotFound)
	e.missing("k")
}

func testExpiredWrites(e *env) {
	// Every write starts from nothing, whatever its policy and guard.
	e.expired("add")
	r := e.ok(e.rec("add").Guard(codec.TypeString).Add(codec.BinValue, i64(5)).Get(""))
	e.eq("add on an expired record", r.Values[1], codec.Map(codec.Str(codec.BinValue), i64(5)))
	e.eqInt("TTL after", r.TTL, -1)

	e.expired("hash")
	e.ok(e.rec("hash").Guard(codec.TypeHash).Put(codec.BinType, codec.Str(codec.TypeHash)).
		MapPut(codec.BinValue, 0, []codec.Value{b("f"), b("v")}))
	e.eq("hash written on an expired string", e.get("hash", ""),
		codec.Map(codec.Str(codec.BinType), codec.Str(codec.TypeHash), codec.Str(codec.BinValue), codec.Map(b("f"), b("v"))))

	e.expired("nx")
	e.ok(e.rec("nx").Exists(codec.ExistsCreateOnly).TTLNever().Put(codec.BinValue, b("new")))
	e.eq("create-only on an expired record", e.get("nx", codec.BinValue), b("new"))

	e.expired("xx")
	e.fails(e.rec("xx").Exists(codec.ExistsUpdateOnly).Put(codec.BinValue, b("new")), codec.NotFound)
	e.fails(e.rec("xx").Exists(codec.ExistsReplaceOnly).Put(codec.BinValue, b("new")), codec.NotFound)
	e.fails(e.rec("xx").Exists(codec.ExistsUpdateOnly).ExpireAt(nowMs()+100_000).Touch(), codec.NotFound)
	e.missing("xx")

	e.expired("gen")
	e.fails(e.rec("gen").Generation(1).Put(codec.BinValue, b("new")), codec.GenerationError)

	e.expired("set")
	e.ok(e.rec("set").Exists(codec.ExistsReplace).TTLKeep().Put(codec.BinValue, b("new")))
	r = e.ok(e.rec("set").Get(""))
	e.eq("replace with TTLKeep on an expired record", r.Values[0], codec.Map(codec.Str(codec.BinValue), b("new")))
	e.eqInt("TTL after", r.TTL, -1)

	// A replacing write of plain puts (SET): the old record, expired or
	// not, is gone, its expiry with it.
	e.expired("rep")
	e.ok(e.rec("rep").Exists(codec.ExistsReplace).TTLNever().Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, b("new")))
	r = e.ok(e.rec("rep").Get(""))
	e.eq("replace on an expired record", r.Values[0], codec.Map(codec.Str(codec.BinType), codec.Str(codec.TypeString), codec.Str(codec.BinValue), b("new")))
	e.eqInt("TTL after", r.TTL, -1)

	e.expired("list")
	r = e.ok(e.rec("list").Guard(codec.TypeList).ListAppend(codec.BinValue, bs("a")).Get(codec.BinExpire))
	e.eqInt("list size after an append to an expired record", r.Values[0].Int, 1)
	e.eq("no expiry after", r.Values[1], codec.Nil)
}

func testExpiredBatch(e *env) {
	e.expired("a")
	e.ok(e.rec("b").Put(codec.BinValue, b("live")))
	rs := e.do(e.rec("a").Get(codec.BinValue), e.rec("b").Get(codec.BinValue))
	if rs[0].Code != codec.NotFound {
		e.t.Errorf("batch read of an expired record: code %d, want NotFound", rs[0].Code)
	}
	if rs[1].Code != codec.OK || !rs[1].Values[0].Equal(b("live")) {
		e.t.Errorf("batch read of a live record: code %d value %s", rs[1].Code, show(rs[1].Values[0]))
	}
	e.expired("c")
	rs = e.do(e.rec("c").Add("n", i64(1)), e.rec("b").Add("n", i64(1)))
	if rs[0].Code != codec.OK || rs[1].Code != codec.OK {
		e.t.Fatalf("batch adds: codes %d %d", rs[0].Code, rs[1].Code)
	}
	e.eq("batch write on an expired record", e.get("c", ""), codec.Map(codec.Str("n"), i64(1)))
}

func testExpireAtNoRecordOfItsOwn(e *env) {
	// An exact expiry does not make a record on its own.
	e.fails(e.rec("none").ExpireAt(nowMs()+100_000).Touch(), codec.NotFound)
	e.missing("none")
	e.ok(e.rec("del").Put(codec.BinValue, b("v")))
	e.ok(e.rec("del").ExpireAt(nowMs() + 100_000).Delete())
	e.missing("del")
}

// dbExpiry is the database of the expired-scan case: a scan sees all of it.
const dbExpiry = 9

func testExpiredScan(e *env) {
	s := e.on(dbExpiry)
	s.expired("gone")
	s.ok(s.rec("live").ExpireAt(nowMs()+100_000).Put(codec.BinValue, b("v")))
	seen := map[string]bool{}
	cursor := uint64(0)
	for {
		resp := s.exec(&codec.Request{Kind: codec.ReqScan, Scan: codec.ScanArgs{Cursor: cursor, Count: 1000}})
		for _, k := range resp.Scan.Keys {
			if strings.HasPrefix(string(k), s.prefix) {
				seen[strings.TrimPrefix(string(k), s.prefix)] = true
			}
		}
		if cursor = resp.Scan.Cursor; cursor == 0 {
			break
		}
	}
	if seen["gone"] || !seen["live"] {
		e.t.Errorf("scan saw %v, want live only", seen)
	}
}
