// Package storetest is the conformance suite of store.Store: one table of
// cases that every backend (the embedded memory store, the Aerospike
// backend) must pass, so that a command behaves the same on both.
//
// Cases assume only behaviour that Aerospike also has, and never wait for
// time to pass: expiry itself is tested by each backend with its own clock.
// Keys are unique to a run and a case, so the suite can share a real
// server; the cases that count, scan and truncate use databases of their
// own (see the db* constants), and the store must have at least 16.
package storetest

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/geo"
	"github.com/respike/respike/host/store"
)

// Databases the suite uses besides 0.
const (
	dbOther     = 1  // isolation from db 0
	dbScan      = 10 // the 5,000-key scan
	dbCount     = 11 // count deltas
	dbTruncate  = 13 // truncated by TruncateDB and TruncateAll
	dbKept      = 14 // must survive TruncateDB
	dbTruncate2 = 15 // truncated by TruncateAll only
)

type testCase struct {
	name string
	fn   func(e *env)
}

// Run runs every conformance case as a subtest of t. open returns the store
// a case runs against; it may return the same store each time, and is
// responsible for closing what it opens (t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(&env{t: t, s: open(t), prefix: "storetest:" + run + ":" + t.Name() + ":"})
		})
	}
}

var cases = []testCase{
	{"GetMissing", testGetMissing},
	{"PutGet", testPutGet},
	{"ValueKinds", testValueKinds},
	{"GetAllBins", testGetAllBins},
	{"ReadYourWritesInCall", testReadYourWrites},
	{"Generation", testGeneration},
	{"ExistsUpdateOnly", testExistsUpdateOnly},
	{"ExistsReplace", testExistsReplace},
	{"ExistsReplaceOnly", testExistsReplaceOnly},
	{"ExistsCreateOnly", testExistsCreateOnly},
	{"Delete", testDelete},
	{"PutNilDeletesBin", testPutNil},
	{"Touch", testTouch},
	{"TTL", testTTL},
	{"TTLTooLong", testTTLTooLong},
	{"Header", testHeader},
	{"Guard", testGuard},
	{"Add", testAdd},
	{"AddOverflow", testAddOverflow},
	{"AddBinType", testAddBinType},
	{"AppendPrepend", testAppendPrepend},
	{"AtomicCall", testAtomicCall},
	{"Batch", testBatch},
	{"InvalidOperation", testInvalidOperation},
	{"RecordTooBig", testRecordTooBig},
	{"MapPut", testMapPut},
	{"MapPutCreateOnly", testMapPutCreateOnly},
	{"MapPutUpdateOnly", testMapPutUpdateOnly},
	{"MapIncrement", testMapIncrement},
	{"MapIncrementErrors", testMapIncrementErrors},
	{"MapSize", testMapSize},
	{"MapGetByKeys", testMapGetByKeys},
	{"MapRemoveByKeys", testMapRemoveByKeys},
	{"MapByIndex", testMapByIndex},
	{"MapRemoveByIndex", testMapRemoveByIndex},
	{"MapByRank", testMapByRank},
	{"MapByValueRange", testMapByValueRange},
	{"MapByKeyRange", testMapByKeyRange},
	{"MapRemoveByRank", testMapRemoveByRank},
	{"MapRemoveByValueRange", testMapRemoveByValueRange},
	{"MapRemoveByKeyRange", testMapRemoveByKeyRange},
	{"MapInvertedGet", testMapInvertedGet},
	{"MapInvertedRemove", testMapInvertedRemove},
	{"MapKeepHighestRanks", testMapKeepHighestRanks},
	{"MapRangeRemoveEdges", testMapRangeRemoveEdges},
	{"MapByValueRelRank", testMapByValueRelRank},
	{"MapByKeyRelIndex", testMapByKeyRelIndex},
	{"MapReturnRank", testMapReturnRank},
	{"MapReplyReturns", testMapReplyReturns},
	{"MapGeoSearch", testMapGeoSearch},
	{"MapKeyOrder", testMapKeyOrder},
	{"MapBlobKeyBounds", testMapBlobKeyBounds},
	{"MapClear", testMapClear},
	{"MapEmptyStays", testMapEmptyStays},
	{"DeleteIfEmpty", testDeleteIfEmpty},
	{"MapOnNonMap", testMapOnNonMap},
	{"MapMissingBin", testMapMissingBin},
	{"DBIsolation", testDBIsolation},
	{"Count", testCount},
	{"Scan", testScan},
	{"TruncateDB", testTruncateDB},
	{"TruncateAll", testTruncateAll}, // last: it empties every database
}

// env is one case's view of the store.
type env struct {
	t      *testing.T
	s      store.Store
	db     int
	prefix string
}

func (e *env) key(name string) []byte { return []byte(e.prefix + name) }

// on returns the env for another database.
func (e *env) on(db int) *env {
	c := *e
	c.db = db
	return &c
}

// rec starts a call on the case's key name.
func (e *env) rec(name string) *codec.Call { return &codec.Call{Key: e.key(name)} }

func (e *env) exec(req *codec.Request) *codec.Response {
	e.t.Helper()
	var resp codec.Response
	e.s.Exec(context.Background(), e.db, req, &resp)
	if resp.Code != codec.OK {
		e.t.Fatalf("request kind %d failed: code %d: %s", req.Kind, resp.Code, resp.Msg)
	}
	return &resp
}

// do runs calls as one request and checks the result shape.
func (e *env) do(calls ...*codec.Call) []codec.Result {
	e.t.Helper()
	req := &codec.Request{Kind: codec.ReqRecords}
	for _, c := range calls {
		req.Calls = append(req.Calls, *c)
	}
	resp := e.exec(req)
	if len(resp.Results) != len(calls) {
		e.t.Fatalf("got %d results for %d calls", len(resp.Results), len(calls))
	}
	for i := range calls {
		if got, want := len(resp.Results[i].Values), len(calls[i].Ops); got != want {
			e.t.Fatalf("call %d: got %d values for %d ops", i, got, want)
		}
	}
	return resp.Results
}

// ok runs one call that must succeed.
func (e *env) ok(c *codec.Call) codec.Result {
	e.t.Helper()
	r := e.do(c)[0]
	if r.Code != codec.OK {
		e.t.Fatalf("%s: code %d (%s), want OK", describe(c), r.Code, r.Msg)
	}
	return r
}

// fails runs one call that must fail with want, returning nothing.
func (e *env) fails(c *codec.Call, want codec.Code) {
	e.t.Helper()
	r := e.do(c)[0]
	if r.Code != want {
		e.t.Fatalf("%s: code %d (%s), want %d", describe(c), r.Code, r.Msg, want)
	}
	for i, v := range r.Values {
		if !v.IsNil() {
			e.t.Errorf("%s: failed call returned value %d = %s", describe(c), i, show(v))
		}
	}
}

// get reads one bin of an existing record.
func (e *env) get(name, bin string) codec.Value {
	e.t.Helper()
	return e.ok(e.rec(name).Get(bin)).Values[0]
}

// missing asserts that a record does not exist.
func (e *env) missing(name string) {
	e.t.Helper()
	r := e.do(e.rec(name).Header())[0]
	if r.Code != codec.NotFound {
		e.t.Fatalf("record %q: code %d, want NotFound", name, r.Code)
	}
}

func (e *env) eq(what string, got, want codec.Value) {
	e.t.Helper()
	if !got.Equal(want) {
		e.t.Errorf("%s = %s, want %s", what, show(got), show(want))
	}
}

func (e *env) eqInt(what string, got, want int64) {
	e.t.Helper()
	if got != want {
		e.t.Errorf("%s = %d, want %d", what, got, want)
	}
}

// ttlNear asserts a TTL a little under want seconds (time passes between
// the write and the check on a real server).
func (e *env) ttlNear(what string, got, want int64) {
	e.t.Helper()
	if got > want || got < want-3 {
		e.t.Errorf("%s TTL = %d, want about %d", what, got, want)
	}
}

func b(s string) codec.Value             { return codec.Bytes([]byte(s)) }
func i64(n int64) codec.Value            { return codec.Int(n) }
func f64(x float64) codec.Value          { return codec.Float(x) }
func list(vs ...codec.Value) codec.Value { return codec.List(vs...) }

// show renders a value for failure messages.
func show(v codec.Value) string {
	switch v.Kind {
	case codec.KindNil:
		return "nil"
	case codec.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case codec.KindFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64) + "f"
	case codec.KindBytes:
		return strconv.Quote(string(v.Bytes))
	case codec.KindStr:
		return "str:" + strconv.Quote(string(v.Bytes))
	case codec.KindBool:
		return strconv.FormatBool(v.Int != 0)
	case codec.KindList, codec.KindMap:
		parts := make([]string, len(v.List))
		for i, e := range v.List {
			parts[i] = show(e)
		}
		if v.Kind == codec.KindMap {
			return "map{" + strings.Join(parts, " ") + "}"
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("kind%d", v.Kind)
}

func describe(c *codec.Call) string {
	ops := make([]string, len(c.Ops))
	for i, o := range c.Ops {
		ops[i] = fmt.Sprintf("op%d(%s)", o.Code, o.Bin)
	}
	return fmt.Sprintf("call %q %s", c.Key, strings.Join(ops, ","))
}

// mapEntry finds key in a map value.
func mapEntry(m codec.Value, key codec.Value) (codec.Value, bool) {
	for i := 0; i+1 < len(m.List); i += 2 {
		if m.List[i].Equal(key) {
			return m.List[i+1], true
		}
	}
	return codec.Nil, false
}

// hash writes a map bin "v" with items k0,v0,... and type "hash".
func (e *env) hash(name string, kv ...codec.Value) {
	e.t.Helper()
	e.ok(e.rec(name).Put(codec.BinType, codec.Str(codec.TypeHash)).
		MapPut(codec.BinValue, codec.MapOrderKey, kv))
}

func testGetMissing(e *env) {
	e.fails(e.rec("k").Get(codec.BinValue).Get(codec.BinType), codec.NotFound)
	e.fails(e.rec("k").Get(""), codec.NotFound)
	e.fails(e.rec("k").Header(), codec.NotFound)
}

func testPutGet(e *env) {
	r := e.ok(e.rec("k").Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, b("hello")))
	e.eqInt("generation after create", int64(r.Generation), 1)
	for i, v := range r.Values {
		e.eq(fmt.Sprintf("put value %d", i), v, codec.Nil)
	}
	r = e.ok(e.rec("k").Get(codec.BinValue).Get(codec.BinType).Get("nope"))
	e.eq("v", r.Values[0], b("hello"))
	e.eq("t", r.Values[1], codec.Str(codec.TypeString))
	e.eq("missing bin", r.Values[2], codec.Nil)

	// The store must not keep the caller's buffer.
	buf := []byte("abc")
	e.ok(e.rec("k2").Put(codec.BinValue, codec.Bytes(buf)))
	copy(buf, "xyz")
	e.eq("after the caller reused its buffer", e.get("k2", codec.BinValue), b("abc"))

	// An empty blob is a value, not an absent bin.
	e.ok(e.rec("k3").Put(codec.BinValue, b("")))
	v := e.get("k3", codec.BinValue)
	if v.Kind != codec.KindBytes || len(v.Bytes) != 0 {
		e.t.Errorf("empty blob read back as %s", show(v))
	}
}

func testValueKinds(e *env) {
	vals := map[string]codec.Value{
		"int":    i64(-42),
		"big":    i64(math.MaxInt64),
		"float":  f64(2.5),
		"bytes":  codec.Bytes([]byte{0, 1, 2, 255}),
		"str":    codec.Str("héllo"),
		"true":   codec.Bool(true),
		"false":  codec.Bool(false),
		"list":   list(i64(1), b("x"), f64(0.5)),
		"nested": list(list(i64(1)), b("y")),
	}
	c := e.rec("k")
	for name, v := range vals {
		c.Put(name, v)
	}
	e.ok(c)
	for name, want := range vals {
		e.eq(name, e.get("k", name), want)
	}
}

func testGetAllBins(e *env) {
	e.ok(e.rec("k").Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, b("x")).Put("n", i64(7)))
	all := e.get("k", "")
	if all.Kind != codec.KindMap || all.Len() != 3 {
		e.t.Fatalf("all bins = %s, want a map of 3 bins", show(all))
	}
	for _, want := range []struct {
		bin string
		v   codec.Value
	}{{codec.BinType, codec.Str(codec.TypeString)}, {codec.BinValue, b("x")}, {"n", i64(7)}} {
		got, found := mapEntry(all, codec.Str(want.bin))
		if !found {
			e.t.Errorf("all bins lacks %q: %s", want.bin, show(all))
			continue
		}
		e.eq("bin "+want.bin, got, want.v)
	}
}

func testReadYourWrites(e *env) {
	// A call that writes creates a missing record, and its reads see its
	// earlier writes.
	r := e.ok(e.rec("k").Get(codec.BinValue).Put(codec.BinValue, b("a")).Get(codec.BinValue).Append(codec.BinValue, []byte("b")).Get(codec.BinValue))
	e.eq("read before the write", r.Values[0], codec.Nil)
	e.eq("read after put", r.Values[2], b("a"))
	e.eq("read after append", r.Values[4], b("ab"))
}

func testGeneration(e *env) {
	e.eqInt("create", int64(e.ok(e.rec("k").Put(codec.BinValue, i64(1))).Generation), 1)
	e.eqInt("update", int64(e.ok(e.rec("k").Put(codec.BinValue, i64(2))).Generation), 2)
	e.eqInt("read", int64(e.ok(e.rec("k").Get(codec.BinValue)).Generation), 2)
	e.eqInt("read again", int64(e.ok(e.rec("k").Header()).Generation), 2)

	e.fails(e.rec("k").Generation(1).Put(codec.BinValue, i64(3)), codec.GenerationError)
	e.eq("after a generation conflict", e.get("k", codec.BinValue), i64(2))
	e.eqInt("generation after a conflict", int64(e.ok(e.rec("k").Header()).Generation), 2)

	e.eqInt("matching generation", int64(e.ok(e.rec("k").Generation(2).Put(codec.BinValue, i64(3))).Generation), 3)
	e.eq("after a matching write", e.get("k", codec.BinValue), i64(3))

	e.fails(e.rec("new").Generation(7).Put(codec.BinValue, i64(1)), codec.GenerationError)
	e.missing("new")
}

func testExistsUpdateOnly(e *env) {
	e.fails(e.rec("k").Exists(codec.ExistsUpdateOnly).Put(codec.BinValue, i64(1)), codec.NotFound)
	e.missing("k")
	e.ok(e.rec("k").Put("a", i64(1)).Put("b", i64(2)))
	e.ok(e.rec("k").Exists(codec.ExistsUpdateOnly).Put("a", i64(10)))
	e.eq("updated bin", e.get("k", "a"), i64(10))
	e.eq("untouched bin", e.get("k", "b"), i64(2))
}

func testExistsReplace(e *env) {
	e.ok(e.rec("k").Exists(codec.ExistsReplace).Put("a", i64(1)).Put("b", i64(2)))
	e.ok(e.rec("k").Exists(codec.ExistsReplace).Put("a", i64(10)))
	e.eq("replaced bin", e.get("k", "a"), i64(10))
	e.eq("dropped bin", e.get("k", "b"), codec.Nil)
}

func testExistsReplaceOnly(e *env) {
	e.fails(e.rec("k").Exists(codec.ExistsReplaceOnly).Put("a", i64(1)), codec.NotFound)
	e.missing("k")
	e.ok(e.rec("k").Put("a", i64(1)).Put("b", i64(2)))
	e.ok(e.rec("k").Exists(codec.ExistsReplaceOnly).Put("b", i64(20)))
	e.eq("dropped bin", e.get("k", "a"), codec.Nil)
	e.eq("replaced bin", e.get("k", "b"), i64(20))
}

func testExistsCreateOnly(e *env) {
	e.eqInt("create", int64(e.ok(e.rec("k").Exists(codec.ExistsCreateOnly).Put("a", i64(1))).Generation), 1)
	e.fails(e.rec("k").Exists(codec.ExistsCreateOnly).Put("a", i64(2)), codec.Exists)
	e.eq("after a refused create", e.get("k", "a"), i64(1))
}

func testDelete(e *env) {
	e.ok(e.rec("k").Put("a", i64(1)).Put("b", i64(2)))
	e.ok(e.rec("k").Delete())
	e.missing("k")
	// Deleting a missing record reports NotFound: that is how DEL counts.
	e.fails(e.rec("k").Delete(), codec.NotFound)

	// Delete then write in one call: only the new bins remain.
	e.ok(e.rec("k2").Put("a", i64(1)).Put("b", i64(2)))
	e.ok(e.rec("k2").Delete().Put("c", i64(3)))
	e.eq("bin written before the delete", e.get("k2", "a"), codec.Nil)
	e.eq("bin written after the delete", e.get("k2", "c"), i64(3))
}

func testPutNil(e *env) {
	e.ok(e.rec("k").Put("a", i64(1)).Put("b", i64(2)))
	e.ok(e.rec("k").Put("a", codec.Nil))
	e.eq("deleted bin", e.get("k", "a"), codec.Nil)
	e.eq("other bin", e.get("k", "b"), i64(2))
	// A record left without bins is deleted.
	e.ok(e.rec("k").Put("b", codec.Nil))
	e.missing("k")
	// And a write that leaves a new record without bins creates nothing.
	e.fails(e.rec("k").Put("b", codec.Nil), codec.NotFound)
	e.missing("k")
}

func testTouch(e *env) {
	e.fails(e.rec("k").Expire(100).Touch(), codec.NotFound)
	e.missing("k")
	e.ok(e.rec("k").Put(codec.BinValue, i64(1)))
	r := e.ok(e.rec("k").Expire(100).Touch())
	e.eqInt("generation after touch", int64(r.Generation), 2)
	e.ttlNear("touch", r.TTL, 100)
	e.ttlNear("read after touch", e.ok(e.rec("k").Header()).TTL, 100)
	e.eq("value after touch", e.get("k", codec.BinValue), i64(1))
	e.eqInt("touch to never", e.ok(e.rec("k").TTLNever().Touch()).TTL, -1)
}

func testTTL(e *env) {
	// A new record written with "keep" never expires.
	e.eqInt("new, keep", e.ok(e.rec("keep").Put(codec.BinValue, i64(1))).TTL, -1)
	e.eqInt("new, never", e.ok(e.rec("never").TTLNever().Put(codec.BinValue, i64(1))).TTL, -1)

	e.ttlNear("new, 100s", e.ok(e.rec("k").Expire(100).Put(codec.BinValue, i64(1))).TTL, 100)
	e.ttlNear("read", e.ok(e.rec("k").Get(codec.BinValue)).TTL, 100)
	// Reads ignore the TTL policy.
	e.ttlNear("read with a TTL policy", e.ok(e.rec("k").Expire(5).Get(codec.BinValue)).TTL, 100)
	e.ttlNear("update, keep", e.ok(e.rec("k").TTLKeep().Put(codec.BinValue, i64(2))).TTL, 100)
	e.ttlNear("map write, keep", e.ok(e.rec("k").MapPut("m", 0, []codec.Value{b("f"), b("v")})).TTL, 100)
	e.ttlNear("update, 1000s", e.ok(e.rec("k").Expire(1000).Put(codec.BinValue, i64(3))).TTL, 1000)
	e.eqInt("update, never", e.ok(e.rec("k").TTLNever().Put(codec.BinValue, i64(4))).TTL, -1)
	e.eqInt("read, never", e.ok(e.rec("k").Header()).TTL, -1)
	e.eqInt("update, keep never", e.ok(e.rec("k").Put(codec.BinValue, i64(5))).TTL, -1)
}

func testTTLTooLong(e *env) {
	// Aerospike refuses TTLs over ten years.
	e.fails(e.rec("k").Expire(11*365*24*3600).Put(codec.BinValue, i64(1)), codec.ParameterError)
	e.missing("k")
}

func testHeader(e *env) {
	e.ok(e.rec("k").Expire(500).Put(codec.BinValue, b("x")))
	e.ok(e.rec("k").Put(codec.BinValue, b("y")))
	r := e.ok(e.rec("k").Header())
	e.eq("header value", r.Values[0], codec.Nil)
	e.eqInt("header generation", int64(r.Generation), 2)
	e.ttlNear("header", r.TTL, 500)
}

func testGuard(e *env) {
	// A missing record passes the guard.
	e.ok(e.rec("k").Guard(codec.TypeHash).Put(codec.BinType, codec.Str(codec.TypeHash)).MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{b("f"), b("1")}))
	e.ok(e.rec("k").Guard(codec.TypeHash).MapPut(codec.BinValue, 0, []codec.Value{b("g"), b("2")}))
	r := e.ok(e.rec("k").Guard(codec.TypeHash).MapSize(codec.BinValue))
	e.eq("size", r.Values[0], i64(2))

	// Another type is filtered out: nothing written, nothing read.
	e.fails(e.rec("k").Guard(codec.TypeString).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, b("x")), codec.FilteredOut)
	e.fails(e.rec("k").Guard(codec.TypeString).Get(codec.BinValue), codec.FilteredOut)
	e.eq("type after a filtered write", e.get("k", codec.BinType), codec.Str(codec.TypeHash))
	e.eqInt("generation after a filtered write", int64(e.ok(e.rec("k").Header()).Generation), 2)

	// A guarded read of a missing record is NotFound, not filtered.
	e.fails(e.rec("none").Guard(codec.TypeString).Get(codec.BinValue), codec.NotFound)
}

func testAdd(e *env) {
	r := e.ok(e.rec("k").Add("n", i64(5)).Get("n"))
	e.eq("add to a missing bin", r.Values[1], i64(5))
	r = e.ok(e.rec("k").Add("n", i64(-7)).Get("n"))
	e.eq("add", r.Values[1], i64(-2))
	e.ok(e.rec("f").Add("fx", f64(1.5)))
	r = e.ok(e.rec("f").Add("fx", f64(0.25)).Get("fx"))
	e.eq("float add", r.Values[1], f64(1.75))
}

func testAddOverflow(e *env) {
	e.ok(e.rec("k").Put("n", i64(math.MaxInt64-1)))
	e.ok(e.rec("k").Add("n", i64(1)))
	e.fails(e.rec("k").Add("n", i64(1)), codec.Overflow)
	e.eq("after overflow", e.get("k", "n"), i64(math.MaxInt64))
	e.ok(e.rec("m").Put("n", i64(math.MinInt64)))
	e.fails(e.rec("m").Add("n", i64(-1)), codec.Overflow)
	e.eq("after underflow", e.get("m", "n"), i64(math.MinInt64))
}

func testAddBinType(e *env) {
	e.ok(e.rec("k").Put("s", b("12")).Put("t", codec.Str("12")).Put("i", i64(1)).Put("f", f64(1)))
	e.fails(e.rec("k").Add("s", i64(1)), codec.BinTypeError)
	e.fails(e.rec("k").Add("t", i64(1)), codec.BinTypeError)
	e.fails(e.rec("k").Add("i", f64(1)), codec.BinTypeError)
	e.fails(e.rec("k").Add("f", i64(1)), codec.BinTypeError)
	e.eq("blob after a refused add", e.get("k", "s"), b("12"))
}

func testAppendPrepend(e *env) {
	r := e.ok(e.rec("k").Append(codec.BinValue, []byte("mid")).Get(codec.BinValue))
	e.eq("append to a missing bin", r.Values[1], b("mid"))
	e.ok(e.rec("k").Append(codec.BinValue, []byte(">")).Op(codec.Op{Code: codec.OpPrepend, Bin: codec.BinValue, Value: b("<")}))
	e.eq("append and prepend", e.get("k", codec.BinValue), b("<mid>"))
	e.ok(e.rec("k").Put("n", i64(1)))
	e.fails(e.rec("k").Append("n", []byte("x")), codec.BinTypeError)
	e.fails(e.rec("k").Op(codec.Op{Code: codec.OpPrepend, Bin: "n", Value: b("x")}), codec.BinTypeError)
	e.eq("int after a refused append", e.get("k", "n"), i64(1))
}

func testAtomicCall(e *env) {
	e.ok(e.rec("k").Put("a", i64(1)).Put("s", b("x")))
	e.hash("h", b("f1"), b("1"))

	// The last op fails: the earlier ones are undone.
	e.fails(e.rec("k").Put("a", i64(2)).Put("new", i64(3)).Add("s", i64(1)), codec.BinTypeError)
	e.eq("bin written before the failure", e.get("k", "a"), i64(1))
	e.eq("bin created before the failure", e.get("k", "new"), codec.Nil)
	e.eqInt("generation", int64(e.ok(e.rec("k").Header()).Generation), 1)

	e.fails(e.rec("h").
		MapPut(codec.BinValue, 0, []codec.Value{b("f2"), b("2")}).
		MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("f1")}).
		MapIncrement(codec.BinValue, 0, b("f3"), i64(1)).
		MapPut(codec.BinValue, codec.MapWriteCreateOnly, []codec.Value{b("f3"), b("x")}), codec.ElementExists)
	r := e.ok(e.rec("h").MapGetByIndex(codec.BinValue, codec.ReturnKeyValue, 0, -1))
	e.eq("map after a failed call", r.Values[0], codec.Map(b("f1"), b("1")))

	// A failed call creates nothing.
	e.fails(e.rec("new").Put("a", i64(1)).Put("s", b("x")).Add("s", i64(1)), codec.BinTypeError)
	e.missing("new")
}

func testBatch(e *env) {
	e.ok(e.rec("a").Put(codec.BinValue, b("A")))
	res := e.do(
		e.rec("a").Get(codec.BinValue),
		e.rec("missing").Get(codec.BinValue),
		e.rec("c").Put(codec.BinValue, b("C")),
		e.rec("a").Add(codec.BinValue, i64(1)),
		e.rec("c").Get(codec.BinValue),
	)
	want := []codec.Code{codec.OK, codec.NotFound, codec.OK, codec.BinTypeError, codec.OK}
	for i, w := range want {
		if res[i].Code != w {
			e.t.Errorf("call %d: code %d, want %d", i, res[i].Code, w)
		}
	}
	e.eq("first read", res[0].Values[0], b("A"))
	e.eq("read of a record written earlier in the batch", res[4].Values[0], b("C"))
}

func testInvalidOperation(e *env) {
	res := e.do(
		e.rec("k").Put(codec.BinValue, i64(1)),
		e.rec("k2").Op(codec.Op{Code: 200, Bin: codec.BinValue}),
		e.rec("k3").MapPut(codec.BinValue, 0, []codec.Value{b("odd")}),
	)
	if res[0].Code != codec.OK {
		e.t.Errorf("valid call beside invalid ones: code %d", res[0].Code)
	}
	for i := 1; i < 3; i++ {
		if res[i].Code != codec.InvalidOperation {
			e.t.Errorf("call %d: code %d, want InvalidOperation", i, res[i].Code)
		}
	}
	e.missing("k2")
	e.missing("k3")
}

func testRecordTooBig(e *env) {
	big := make([]byte, 9<<20)
	e.fails(e.rec("k").Put(codec.BinValue, codec.Bytes(big)), codec.RecordTooBig)
	e.missing("k")
	e.ok(e.rec("k").Put(codec.BinValue, b("small")))
	e.fails(e.rec("k").Put(codec.BinValue, codec.Bytes(big)), codec.RecordTooBig)
	e.eq("after a refused write", e.get("k", codec.BinValue), b("small"))
}

func testMapPut(e *env) {
	r := e.ok(e.rec("k").MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{b("b"), b("2"), b("a"), b("1")}))
	e.eq("size after the first put", r.Values[0], i64(2))
	// Overwrite one, add one: "how many were added" is the size difference.
	r = e.ok(e.rec("k").MapSize(codec.BinValue).MapPut(codec.BinValue, 0, []codec.Value{b("a"), b("10"), b("c"), b("3")}))
	e.eq("size before", r.Values[0], i64(2))
	e.eq("size after", r.Values[1], i64(3))
	e.eq("map", e.get("k", codec.BinValue), codec.Map(b("a"), b("10"), b("b"), b("2"), b("c"), b("3")))

	// Values of any kind.
	e.ok(e.rec("k").MapPut(codec.BinValue, 0, []codec.Value{b("i"), i64(5), b("f"), f64(0.5), b("n"), codec.Nil}))
	r = e.ok(e.rec("k").MapGetByKeys(codec.BinValue, codec.ReturnValue, []codec.Value{b("i"), b("f"), b("n")}))
	e.eq("values in key order", r.Values[0], list(f64(0.5), i64(5), codec.Nil))

	// Many items at once.
	kv := make([]codec.Value, 0, 200)
	for i := 99; i >= 0; i-- {
		kv = append(kv, b(fmt.Sprintf("m%02d", i)), i64(int64(i)))
	}
	r = e.ok(e.rec("many").MapPut(codec.BinValue, codec.MapOrderKey, kv))
	e.eq("size of a bulk put", r.Values[0], i64(100))
	r = e.ok(e.rec("many").MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, 3).MapGetByIndex(codec.BinValue, codec.ReturnValue, -1, 1))
	e.eq("first keys", r.Values[0], list(b("m00"), b("m01"), b("m02")))
	e.eq("last value", r.Values[1], list(i64(99)))
}

func testMapPutCreateOnly(e *env) {
	e.hash("k", b("a"), b("1"), b("b"), b("2"))
	// CREATE_ONLY alone: one existing key fails the whole call.
	e.fails(e.rec("k").MapPut(codec.BinValue, codec.MapWriteCreateOnly, []codec.Value{b("c"), b("3"), b("a"), b("x")}), codec.ElementExists)
	e.eq("after a refused create-only put", e.get("k", codec.BinValue), codec.Map(b("a"), b("1"), b("b"), b("2")))

	// CREATE_ONLY|NO_FAIL|PARTIAL: only the new keys are written (HSETNX, SADD).
	r := e.ok(e.rec("k").MapPut(codec.BinValue, codec.MapWriteCreateOnly|codec.MapWriteNoFail|codec.MapWritePartial,
		[]codec.Value{b("c"), b("3"), b("a"), b("x")}))
	e.eq("size", r.Values[0], i64(3))
	e.eq("map", e.get("k", codec.BinValue), codec.Map(b("a"), b("1"), b("b"), b("2"), b("c"), b("3")))

	// CREATE_ONLY|NO_FAIL: a refused item makes the op a no-op, not an error.
	r = e.ok(e.rec("k").MapPut(codec.BinValue, codec.MapWriteCreateOnly|codec.MapWriteNoFail,
		[]codec.Value{b("d"), b("4"), b("a"), b("x")}))
	e.eq("size after a no-op", r.Values[0], i64(3))
	e.eq("map after a no-op", e.get("k", codec.BinValue), codec.Map(b("a"), b("1"), b("b"), b("2"), b("c"), b("3")))

	// CREATE_ONLY on a missing record creates it.
	r = e.ok(e.rec("new").MapPut(codec.BinValue, codec.MapOrderKey|codec.MapWriteCreateOnly, []codec.Value{b("a"), b("1")}))
	e.eq("size of a new map", r.Values[0], i64(1))
}

func testMapPutUpdateOnly(e *env) {
	e.hash("k", b("a"), b("1"), b("b"), b("2"))
	e.fails(e.rec("k").MapPut(codec.BinValue, codec.MapWriteUpdateOnly, []codec.Value{b("a"), b("x"), b("z"), b("9")}), codec.ElementNotFound)
	e.eq("after a refused update-only put", e.get("k", codec.BinValue), codec.Map(b("a"), b("1"), b("b"), b("2")))

	r := e.ok(e.rec("k").MapPut(codec.BinValue, codec.MapWriteUpdateOnly|codec.MapWriteNoFail|codec.MapWritePartial,
		[]codec.Value{b("a"), b("x"), b("z"), b("9")}))
	e.eq("size", r.Values[0], i64(2))
	e.eq("map", e.get("k", codec.BinValue), codec.Map(b("a"), b("x"), b("b"), b("2")))

	r = e.ok(e.rec("k").MapPut(codec.BinValue, codec.MapWriteUpdateOnly, []codec.Value{b("b"), b("y")}))
	e.eq("size", r.Values[0], i64(2))
	e.eq("map", e.get("k", codec.BinValue), codec.Map(b("a"), b("x"), b("b"), b("y")))
}

func testMapIncrement(e *env) {
	r := e.ok(e.rec("k").MapIncrement(codec.BinValue, codec.MapOrderKey, b("n"), i64(5)))
	e.eq("increment of a missing key in a missing record", r.Values[0], i64(5))
	r = e.ok(e.rec("k").MapIncrement(codec.BinValue, 0, b("n"), i64(-8)))
	e.eq("int increment", r.Values[0], i64(-3))
	r = e.ok(e.rec("k").MapIncrement(codec.BinValue, 0, b("x"), f64(1.5)).MapIncrement(codec.BinValue, 0, b("x"), f64(0.25)))
	e.eq("float increment of a missing key", r.Values[0], f64(1.5))
	e.eq("float increment", r.Values[1], f64(1.75))
	e.eq("map", e.get("k", codec.BinValue), codec.Map(b("n"), i64(-3), b("x"), f64(1.75)))

	// A missing key is incremented from 0, so by -0 it becomes 0; a
	// stored -0 stays -0 (-0 + -0). Sorted sets rely on the first.
	negZero := f64(math.Copysign(0, -1))
	r = e.ok(e.rec("z").MapIncrement(codec.BinValue, codec.MapOrderKeyValue, b("new"), negZero).
		MapPut(codec.BinValue, 0, []codec.Value{b("neg"), negZero}).
		MapIncrement(codec.BinValue, 0, b("neg"), negZero))
	if v := r.Values[0]; v.Kind != codec.KindFloat || v.Float != 0 || math.Signbit(v.Float) {
		e.t.Errorf("increment of a missing key by -0 = %s, want 0", show(v))
	}
	if v := r.Values[2]; v.Kind != codec.KindFloat || v.Float != 0 || !math.Signbit(v.Float) {
		e.t.Errorf("increment of -0 by -0 = %s, want -0", show(v))
	}
}

func testMapIncrementErrors(e *env) {
	e.hash("k", b("s"), b("abc"), b("n"), i64(math.MaxInt64))
	// respike's contract: int overflow is reported, the map unchanged.
	e.fails(e.rec("k").MapIncrement(codec.BinValue, 0, b("n"), i64(1)), codec.Overflow)
	// Aerospike answers a non-numeric value with PARAMETER_ERROR (map_increment).
	e.fails(e.rec("k").MapIncrement(codec.BinValue, 0, b("s"), i64(1)), codec.ParameterError)
	e.eq("map after refused increments", e.get("k", codec.BinValue), codec.Map(b("n"), i64(math.MaxInt64), b("s"), b("abc")))
}

func testMapSize(e *env) {
	e.hash("k", b("a"), b("1"), b("b"), b("2"))
	r := e.ok(e.rec("k").MapSize(codec.BinValue))
	e.eq("size", r.Values[0], i64(2))
}

func testMapGetByKeys(e *env) {
	e.hash("k", b("a"), b("1"), b("b"), b("2"), b("c"), b("3"))
	keys := []codec.Value{b("c"), b("zz"), b("a")}
	r := e.ok(e.rec("k").
		MapGetByKeys(codec.BinValue, codec.ReturnNone, keys).
		MapGetByKeys(codec.BinValue, codec.ReturnCount, keys).
		MapGetByKeys(codec.BinValue, codec.ReturnKey, keys).
		MapGetByKeys(codec.BinValue, codec.ReturnValue, keys).
		MapGetByKeys(codec.BinValue, codec.ReturnKeyValue, keys).
		MapGetByKeys(codec.BinValue, codec.ReturnExists, keys).
		MapGetByKeys(codec.BinValue, codec.ReturnExists, []codec.Value{b("zz")}).
		MapGetByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("zz")}).
		MapGetByKeys(codec.BinValue, codec.ReturnKey, []codec.Value{b("zz")}))
	e.eq("none", r.Values[0], codec.Nil)
	e.eq("count", r.Values[1], i64(2))
	e.eq("keys (map order)", r.Values[2], list(b("a"), b("c")))
	e.eq("values", r.Values[3], list(b("1"), b("3")))
	e.eq("key-values", r.Values[4], codec.Map(b("a"), b("1"), b("c"), b("3")))
	e.eq("exists", r.Values[5], codec.Bool(true))
	e.eq("exists, no match", r.Values[6], codec.Bool(false))
	e.eq("count, no match", r.Values[7], i64(0))
	if v := r.Values[8]; v.Kind != codec.KindList || v.Len() != 0 {
		e.t.Errorf("keys, no match = %s, want an empty list", show(v))
	}
	e.eqInt("generation after reads", int64(e.ok(e.rec("k").Header()).Generation), 1)
}

func testMapRemoveByKeys(e *env) {
	e.hash("k", b("a"), b("1"), b("b"), b("2"), b("c"), b("3"), b("d"), b("4"))
	r := e.ok(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a"), b("zz")}))
	e.eq("removed count", r.Values[0], i64(1))
	r = e.ok(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnKeyValue, []codec.Value{b("c"), b("b")}))
	e.eq("removed items", r.Values[0], codec.Map(b("b"), b("2"), b("c"), b("3")))
	r = e.ok(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnNone, []codec.Value{b("zz")}).MapSize(codec.BinValue))
	e.eq("remove none", r.Values[0], codec.Nil)
	e.eq("size", r.Values[1], i64(1))
	r = e.ok(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnExists, []codec.Value{b("d")}))
	e.eq("removed exists", r.Values[0], codec.Bool(true))
	// Removing from a missing record is NotFound: the call leaves no bins.
	e.fails(e.rec("none").MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a")}), codec.NotFound)
	e.missing("none")
}

// fiveItems writes a map a..e → 1..5.
func (e *env) fiveItems(name string) {
	e.hash(name, b("a"), i64(1), b("b"), i64(2), b("c"), i64(3), b("d"), i64(4), b("e"), i64(5))
}

func testMapByIndex(e *env) {
	e.fiveItems("k")
	for _, c := range []struct {
		index, count int64
		want         []string
	}{
		{0, 2, []string{"a", "b"}},
		{1, 1, []string{"b"}},
		{3, -1, []string{"d", "e"}},  // count < 0: to the end
		{-2, -1, []string{"d", "e"}}, // negative index: from the end
		{-2, 1, []string{"d"}},
		{3, 10, []string{"d", "e"}}, // clipped at the end
		{-7, 4, []string{"a", "b"}}, // starts before the first item
		{-10, 3, nil},               // ends before the first item
		{5, 1, nil},                 // starts past the end
		{0, 0, nil},
		{-100, -1, []string{"a", "b", "c", "d", "e"}},
	} {
		want := make([]codec.Value, len(c.want))
		for i, k := range c.want {
			want[i] = b(k)
		}
		r := e.ok(e.rec("k").MapGetByIndex(codec.BinValue, codec.ReturnKey, c.index, c.count).
			MapGetByIndex(codec.BinValue, codec.ReturnCount, c.index, c.count))
		e.eq(fmt.Sprintf("keys of index %d count %d", c.index, c.count), r.Values[0], list(want...))
		e.eq(fmt.Sprintf("count of index %d count %d", c.index, c.count), r.Values[1], i64(int64(len(want))))
	}
	r := e.ok(e.rec("k").MapGetByIndex(codec.BinValue, codec.ReturnKeyValue, 1, 2).
		MapGetByIndex(codec.BinValue, codec.ReturnValue, -1, 1).
		MapGetByIndex(codec.BinValue, codec.ReturnExists, 9, 1).
		MapGetByIndex(codec.BinValue, codec.ReturnNone, 0, 1))
	e.eq("key-values", r.Values[0], codec.Map(b("b"), i64(2), b("c"), i64(3)))
	e.eq("values", r.Values[1], list(i64(5)))
	e.eq("exists out of range", r.Values[2], codec.Bool(false))
	e.eq("none", r.Values[3], codec.Nil)
}

func testMapRemoveByIndex(e *env) {
	e.fiveItems("k")
	r := e.ok(e.rec("k").MapRemoveByIndex(codec.BinValue, codec.ReturnKeyValue, 0, 2))
	e.eq("removed head", r.Values[0], codec.Map(b("a"), i64(1), b("b"), i64(2)))
	r = e.ok(e.rec("k").MapRemoveByIndex(codec.BinValue, codec.ReturnValue, -1, 1))
	e.eq("removed tail", r.Values[0], list(i64(5)))
	r = e.ok(e.rec("k").MapRemoveByIndex(codec.BinValue, codec.ReturnCount, 7, 1))
	e.eq("removed out of range", r.Values[0], i64(0))
	e.eq("map", e.get("k", codec.BinValue), codec.Map(b("c"), i64(3), b("d"), i64(4)))
	r = e.ok(e.rec("k").MapRemoveByIndex(codec.BinValue, codec.ReturnKey, 0, -1).MapSize(codec.BinValue))
	e.eq("removed all", r.Values[0], list(b("c"), b("d")))
	e.eq("size", r.Values[1], i64(0))
}

func testMapByRank(e *env) {
	// Values rank by type first: every integer below every float; equal
	// values by key.
	e.hash("k",
		b("a"), f64(1.5),
		b("b"), i64(2),
		b("c"), f64(-1),
		b("d"), i64(0),
		b("e"), f64(1.5),
		b("f"), i64(100),
	)
	r := e.ok(e.rec("k").MapGetByRank(codec.BinValue, codec.ReturnKey, 0, -1))
	e.eq("rank order", r.Values[0], list(b("d"), b("b"), b("f"), b("c"), b("a"), b("e")))
	r = e.ok(e.rec("k").
		MapGetByRank(codec.BinValue, codec.ReturnKeyValue, 0, 2).
		MapGetByRank(codec.BinValue, codec.ReturnKey, -2, 2).
		MapGetByRank(codec.BinValue, codec.ReturnValue, -3, -1).
		MapGetByRank(codec.BinValue, codec.ReturnCount, 4, 10).
		MapGetByRank(codec.BinValue, codec.ReturnKey, 6, 1).
		MapGetByRank(codec.BinValue, codec.ReturnKey, -8, 3))
	e.eq("lowest two", r.Values[0], codec.Map(b("d"), i64(0), b("b"), i64(2)))
	e.eq("highest two, ascending", r.Values[1], list(b("a"), b("e")))
	e.eq("top three values", r.Values[2], list(f64(-1), f64(1.5), f64(1.5)))
	e.eq("count clipped", r.Values[3], i64(2))
	e.eq("past the end", r.Values[4], list())
	e.eq("partly before the start", r.Values[5], list(b("d")))
}

func testMapByValueRange(e *env) {
	e.hash("k",
		b("a"), f64(3),
		b("b"), f64(1),
		b("c"), f64(2),
		b("d"), f64(2),
		b("e"), f64(5),
		b("i"), i64(9),
	)
	r := e.ok(e.rec("k").
		MapGetByValueRange(codec.BinValue, codec.ReturnKey, f64(2), f64(5)).
		MapGetByValueRange(codec.BinValue, codec.ReturnKeyValue, codec.Nil, f64(2)).
		MapGetByValueRange(codec.BinValue, codec.ReturnCount, f64(3), codec.Nil).
		MapGetByValueRange(codec.BinValue, codec.ReturnKey, codec.Nil, codec.Nil).
		MapGetByValueRange(codec.BinValue, codec.ReturnCount, f64(6), f64(7)).
		MapGetByValueRange(codec.BinValue, codec.ReturnKey, f64(4), f64(2)).
		MapGetByValueRange(codec.BinValue, codec.ReturnKey, i64(0), i64(100)))
	e.eq("[2, 5) in rank order", r.Values[0], list(b("c"), b("d"), b("a")))
	// Integers rank below floats, so an open start takes the int too.
	e.eq("(-inf, 2)", r.Values[1], codec.Map(b("i"), i64(9), b("b"), f64(1)))
	e.eq("[3, +inf)", r.Values[2], i64(2))
	e.eq("everything", r.Values[3], list(b("i"), b("b"), b("c"), b("d"), b("a"), b("e")))
	e.eq("empty range", r.Values[4], i64(0))
	e.eq("reversed range", r.Values[5], list())
	e.eq("integers only", r.Values[6], list(b("i")))
}

func testMapByKeyRange(e *env) {
	e.fiveItems("k")
	r := e.ok(e.rec("k").
		MapGetByKeyRange(codec.BinValue, codec.ReturnKey, b("b"), b("d")).
		MapGetByKeyRange(codec.BinValue, codec.ReturnKeyValue, codec.Nil, b("b")).
		MapGetByKeyRange(codec.BinValue, codec.ReturnValue, b("c"), codec.Nil).
		MapGetByKeyRange(codec.BinValue, codec.ReturnCount, b("bb"), b("cc")).
		MapGetByKeyRange(codec.BinValue, codec.ReturnCount, codec.Nil, codec.Nil).
		MapGetByKeyRange(codec.BinValue, codec.ReturnKey, b("x"), b("z")))
	e.eq("[b, d)", r.Values[0], list(b("b"), b("c")))
	e.eq("(-inf, b)", r.Values[1], codec.Map(b("a"), i64(1)))
	e.eq("[c, +inf)", r.Values[2], list(i64(3), i64(4), i64(5)))
	e.eq("[bb, cc)", r.Values[3], i64(1))
	e.eq("everything", r.Values[4], i64(5))
	e.eq("past the end", r.Values[5], list())
}

func testMapKeyOrder(e *env) {
	// Keys order by type (integer < string < blob), then by value; blobs
	// bytewise with a prefix first.
	e.ok(e.rec("k").MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{
		b("b"), i64(1),
		codec.Str("s"), i64(2),
		i64(10), i64(3),
		b("ab"), i64(4),
		i64(-5), i64(5),
		b("a"), i64(6),
		codec.Bytes([]byte{0xff}), i64(7),
		b(""), i64(8),
	}))
	r := e.ok(e.rec("k").MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1))
	e.eq("key order", r.Values[0], list(i64(-5), i64(10), codec.Str("s"), b(""), b("a"), b("ab"), b("b"), codec.Bytes([]byte{0xff})))
	// A string key and a blob key with the same bytes are different keys.
	r = e.ok(e.rec("k").MapGetByKeys(codec.BinValue, codec.ReturnValue, []codec.Value{b("s")}))
	e.eq("blob key lookup of a string key", r.Values[0], list())
}

// testMapBlobKeyBounds: what HSCAN/SSCAN/ZSCAN cursors rely on (kit.MapScan):
// the empty blob bounds the keys that are not blobs (a key range up to it
// holds exactly them, a relative index from it starts at the first blob),
// and blob anchors and bounds that are not keys of the map fall between
// keys bytewise, a prefix first, in both map orders.
func testMapBlobKeyBounds(e *env) {
	for _, o := range mapOrders {
		name := "k" + o.name
		e.ok(e.rec(name).MapPut(codec.BinValue, o.flag, []codec.Value{
			i64(7), f64(1),
			codec.Str("s"), f64(2),
			b(""), f64(3),
			b("\x00"), f64(4),
			b("ab"), f64(5),
			b("ab\x00"), f64(6),
			b("ab\x00\x00\x00\x00\x00\x00x"), f64(7),
			b("ab\x00\x00\x00\x00\x00\x01"), f64(8),
			codec.Bytes([]byte{0xff, 0xff}), f64(9),
		}))
		r := e.ok(e.rec(name).
			MapGetByKeyRange(codec.BinValue, codec.ReturnKey, codec.Nil, b("")).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b(""), 0, 2).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKeyValue, b("a"), 0, 2).
			MapGetByKeyRange(codec.BinValue, codec.ReturnKey, b("ab"), b("ab\x00\x00\x00\x00\x00\x01")).
			MapGetByKeyRange(codec.BinValue, codec.ReturnKey, b("ab\x00\x00\x00\x00\x00\x01"), codec.Nil).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, codec.Bytes([]byte{0xff, 0xff, 0}), 0, 3).
			MapGetByKeyRange(codec.BinValue, codec.ReturnKey, codec.Nil, codec.Bytes([]byte{0x00, 0, 0, 0, 0, 0, 0, 1})))
		e.eq(o.name+": below every blob", r.Values[0], list(i64(7), codec.Str("s")))
		e.eq(o.name+": from the first blob", r.Values[1], list(b(""), b("\x00")))
		e.eq(o.name+": from an absent anchor", r.Values[2], codec.Map(b("ab"), f64(5), b("ab\x00"), f64(6)))
		e.eq(o.name+": one position", r.Values[3], list(b("ab"), b("ab\x00"), b("ab\x00\x00\x00\x00\x00\x00x")))
		e.eq(o.name+": the next position on", r.Values[4], list(b("ab\x00\x00\x00\x00\x00\x01"), codec.Bytes([]byte{0xff, 0xff})))
		e.eq(o.name+": past the last key", r.Values[5], list())
		e.eq(o.name+": from the start to a bound", r.Values[6], list(i64(7), codec.Str("s"), b(""), b("\x00")))
	}
}

func testMapClear(e *env) {
	e.fiveItems("k")
	r := e.ok(e.rec("k").MapClear(codec.BinValue).MapSize(codec.BinValue))
	e.eq("clear", r.Values[0], codec.Nil)
	e.eq("size after clear", r.Values[1], i64(0))
	e.eq("type bin after clear", e.get("k", codec.BinType), codec.Str(codec.TypeHash))
}

func testMapEmptyStays(e *env) {
	// Aerospike keeps an emptied collection; the record stays.
	e.hash("k", b("a"), b("1"))
	e.ok(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnNone, []codec.Value{b("a")}))
	r := e.ok(e.rec("k").MapSize(codec.BinValue))
	e.eq("size of an emptied map", r.Values[0], i64(0))
}

func testDeleteIfEmpty(e *env) {
	e.hash("k", b("a"), b("1"), b("b"), b("2"))
	r := e.ok(e.rec("k").DeleteIfEmpty(codec.BinValue).MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a")}))
	e.eq("removed", r.Values[0], i64(1))
	e.eq("record kept while not empty", e.get("k", codec.BinValue), codec.Map(b("b"), b("2")))
	r = e.ok(e.rec("k").DeleteIfEmpty(codec.BinValue).MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("b")}))
	e.eq("removed last", r.Values[0], i64(1))
	e.missing("k")

	// Clearing and refilling in one call keeps the record.
	e.hash("k2", b("a"), b("1"))
	e.ok(e.rec("k2").DeleteIfEmpty(codec.BinValue).MapClear(codec.BinValue).MapPut(codec.BinValue, 0, []codec.Value{b("z"), b("9")}))
	e.eq("refilled", e.get("k2", codec.BinValue), codec.Map(b("z"), b("9")))

	// Reads ignore it.
	e.hash("k3", b("a"), b("1"))
	e.ok(e.rec("k3").MapRemoveByKeys(codec.BinValue, codec.ReturnNone, []codec.Value{b("a")}))
	e.ok(e.rec("k3").DeleteIfEmpty(codec.BinValue).MapSize(codec.BinValue))
	e.ok(e.rec("k3").Header())
}

func testMapOnNonMap(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, b("str")))
	e.fails(e.rec("k").MapPut(codec.BinValue, 0, []codec.Value{b("a"), b("1")}), codec.BinTypeError)
	e.fails(e.rec("k").MapIncrement(codec.BinValue, 0, b("a"), i64(1)), codec.BinTypeError)
	e.fails(e.rec("k").MapSize(codec.BinValue), codec.BinTypeError)
	e.fails(e.rec("k").MapGetByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a")}), codec.BinTypeError)
	e.fails(e.rec("k").MapGetByIndex(codec.BinValue, codec.ReturnCount, 0, 1), codec.BinTypeError)
	e.fails(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a")}), codec.BinTypeError)
	e.fails(e.rec("k").MapClear(codec.BinValue), codec.BinTypeError)
	e.eq("value after refused map ops", e.get("k", codec.BinValue), b("str"))
}

// testMapReplyReturns checks the reply return types: a sorted-set reply's
// elements, in the contract's order, reversed on request, with scores
// formatted as Redis 7.0 formats them.
func testMapReplyReturns(e *env) {
	e.ok(e.rec("z").Put(codec.BinType, codec.Str(codec.TypeZSet)).
		MapPut(codec.BinValue, codec.MapOrderKeyValue, []codec.Value{
			b("a"), f64(1.5), b("b"), f64(0.1), b("c"), f64(3), b("d"), f64(-2.25),
			b("e"), i64(7), b("f"), f64(1e20), b("member:0123"), f64(math.Inf(-1)),
		}))
	// Rank order: the integer first (Aerospike ranks integers below
	// floats), then by score.
	r := e.ok(e.rec("z").
		MapGetByRank(codec.BinValue, codec.ReturnRESPScores, 0, 3).
		MapGetByRank(codec.BinValue, codec.ReturnRESP3Scores|codec.ReturnReversed, -2, 2).
		MapGetByValueRange(codec.BinValue, codec.ReturnRESPKeys, f64(0), f64(2)).
		MapGetByKeyRange(codec.BinValue, codec.ReturnRESPKeys|codec.ReturnReversed, b("a"), b("c")).
		MapGetByRank(codec.BinValue, codec.ReturnRESPKeys|codec.ReturnInverted, 0, 5).
		MapGetByRank(codec.BinValue, codec.ReturnRESPScores, 10, 2).
		MapGetByValueRelRank(codec.BinValue, codec.ReturnRESPScores|codec.ReturnReversed, f64(1), 0, 2))
	e.eq("ranks 0..2", r.Values[0], list(i64(3),
		b("$1\r\ne\r\n$1\r\n7\r\n$11\r\nmember:0123\r\n$4\r\n-inf\r\n$1\r\nd\r\n$5\r\n-2.25\r\n")))
	e.eq("last two, RESP3, reversed", r.Values[1], list(i64(2), b("*2\r\n$1\r\nf\r\n,1e+20\r\n*2\r\n$1\r\nc\r\n,3\r\n")))
	e.eq("value range", r.Values[2], list(i64(2), b("$1\r\nb\r\n$1\r\na\r\n")))
	e.eq("key range reversed", r.Values[3], list(i64(2), b("$1\r\nb\r\n$1\r\na\r\n")))
	e.eq("inverted rank range", r.Values[4], list(i64(2), b("$1\r\nc\r\n$1\r\nf\r\n")))
	e.eq("past the end", r.Values[5], list(i64(0), b("")))
	e.eq("from a value, reversed", r.Values[6], list(i64(2), b("$1\r\nc\r\n$1\r\n3\r\n$1\r\na\r\n$3\r\n1.5\r\n")))
	r = e.ok(e.rec("z").MapGetByValueRange(codec.BinValue, codec.ReturnRESPScores, f64(0), f64(1)))
	e.eq("one non-integral score", r.Values[0], list(i64(1), b("$1\r\nb\r\n$19\r\n0.10000000000000001\r\n")))
	// ReturnScoredKeys: each item's score bits, key length and key, packed.
	r = e.ok(e.rec("z").
		MapGetByValueRange(codec.BinValue, codec.ReturnScoredKeys, f64(0), f64(5)).
		MapGetByRank(codec.BinValue, codec.ReturnScoredKeys|codec.ReturnReversed, 0, 2).
		MapGetByValueRange(codec.BinValue, codec.ReturnScoredKeys, f64(100), f64(200)))
	e.eq("scored keys", r.Values[0], list(i64(3), b(string(scored(nil, "b", 0.1, "a", 1.5, "c", 3)))))
	e.eq("scored keys reversed", r.Values[1], list(i64(2), b(string(scored(nil, "member:0123", math.Inf(-1), "e", 7)))))
	e.eq("scored keys of nothing", r.Values[2], list(i64(0), b("")))
	// Only reads, and ReturnReversed only on a reply type.
	e.fails(e.rec("z").MapRemoveByRank(codec.BinValue, codec.ReturnRESPKeys, 0, 1), codec.InvalidOperation)
	e.fails(e.rec("z").MapGetByRank(codec.BinValue, codec.ReturnKey|codec.ReturnReversed, 0, 1), codec.InvalidOperation)
	e.eq("size after the refused ops", e.ok(e.rec("z").MapSize(codec.BinValue)).Values[0], i64(7))
	// A missing bin returns nothing.
	e.ok(e.rec("nobin").Put(codec.BinType, codec.Str(codec.TypeZSet)))
	e.eq("missing bin", e.ok(e.rec("nobin").MapGetByRank(codec.BinValue, codec.ReturnRESPKeys, 0, -1)).Values[0], codec.Nil)
}

// testMapGeoSearch checks codec.OpMapGeoSearch: the members of the score
// ranges covering a circle or a box (geo.Shape.ScanRanges), each range's
// in rank order, only those inside, with their distances (exact, or within
// their error bound of geo.Distance), up to Count of them.
func testMapGeoSearch(e *env) {
	const lon0, lat0 = 13.9, 37.4
	pos := map[string][2]float64{
		"near": {13.91, 37.40},    // 0.9 km east
		"mid":  {13.93, 37.42},    // 3.4 km north-east
		"far":  {13.98, 37.40},    // 7 km east
		"tie2": {13.89, 37.395},   // 1 km south-west, the same score as tie1
		"tie1": {13.89, 37.395},   //
		"away": {-73.98, 40.75},   // New York
		"pole": {179.99, 85.0},    // the top corner
		"neg":  {-179.99, -85.05}, // the bottom corner
		"anti": {-179.995, 85.0},  // across the antimeridian from pole
	}
	score := func(m string) float64 { return geo.ScoreOf(pos[m][0], pos[m][1]) }
	var kv []codec.Value
	for m := range pos {
		kv = append(kv, b(m), f64(score(m)))
	}
	e.ok(e.rec("g").Put(codec.BinType, codec.Str(codec.TypeZSet)).MapPut(codec.BinValue, codec.MapOrderKeyValue, kv))
	// visit is the members a search reads, in the order it reads them:
	// the covering ranges in their order, each by score, then member.
	visit := func(sh geo.Shape) []string {
		var out []string
		for _, rg := range sh.ScanRanges(nil) {
			var in []string
			for m := range pos {
				if s := score(m); s >= float64(rg[0]) && s < float64(rg[1]) {
					in = append(in, m)
				}
			}
			slices.SortFunc(in, func(x, y string) int {
				if c := cmp.Compare(score(x), score(y)); c != 0 {
					return c
				}
				return strings.Compare(x, y)
			})
			out = append(out, in...)
		}
		return out
	}
	// check compares a result with the members expected (those of want
	// inside the shape, in want's order), and their distances with Redis's.
	check := func(what string, sh geo.Shape, got codec.Value, want []string) {
		e.t.Helper()
		if got.Kind != codec.KindList || len(got.List) != 2 || got.List[0].Int != int64(len(want)) {
			e.t.Errorf("%s: %s, want %d members %v", what, show(got), len(want), want)
			return
		}
		blob := got.List[1].Bytes
		for _, m := range want {
			if len(blob) < geo.PointHeader {
				e.t.Errorf("%s: the blob ends before %s", what, m)
				return
			}
			sc := math.Float64frombits(binary.LittleEndian.Uint64(blob))
			d := math.Float64frombits(binary.LittleEndian.Uint64(blob[8:]))
			bound := math.Float64frombits(binary.LittleEndian.Uint64(blob[16:]))
			n := int(binary.LittleEndian.Uint32(blob[24:]))
			member := string(blob[geo.PointHeader : geo.PointHeader+n])
			blob = blob[geo.PointHeader+n:]
			lon, lat := geo.Position(sc)
			exact := geo.Distance(sh.Lon, sh.Lat, lon, lat)
			if member != m || sc != score(m) || math.Abs(d-exact) > bound || bound > 1e-3 {
				e.t.Errorf("%s: %s at %v, %v ± %v m; want %s at %v, %v m", what, member, sc, d, bound, m, score(m), exact)
			}
		}
		if len(blob) != 0 {
			e.t.Errorf("%s: %d bytes after the members", what, len(blob))
		}
	}
	circle := geo.Shape{Kind: geo.KindCircle, Lon: lon0, Lat: lat0, Radius: 5, Conversion: 1000}
	box := geo.Shape{Kind: geo.KindBox, Lon: lon0, Lat: lat0, Width: 16, Height: 2, Conversion: 1000}
	tiny := geo.Shape{Kind: geo.KindCircle, Lon: lon0, Lat: lat0, Radius: 1, Conversion: 1}
	r := e.ok(e.rec("g").
		MapGeoSearch(codec.BinValue, circle.AppendFilter(nil), 0).
		MapGeoSearch(codec.BinValue, circle.AppendFilter(nil), 2).
		MapGeoSearch(codec.BinValue, box.AppendFilter(nil), 0).
		MapGeoSearch(codec.BinValue, tiny.AppendFilter(nil), 0))
	// Inside the circle: near, mid, tie1, tie2 (not far, 7 km away), in
	// the order they are read.
	var inCircle []string
	for _, m := range visit(circle) {
		if m == "near" || m == "mid" || m == "tie1" || m == "tie2" {
			inCircle = append(inCircle, m)
		}
	}
	if len(inCircle) != 4 || slices.Index(inCircle, "tie1") > slices.Index(inCircle, "tie2") {
		e.t.Fatalf("the covering ranges read %v", visit(circle))
	}
	check("circle", circle, r.Values[0], inCircle)
	check("count", circle, r.Values[1], inCircle[:2])
	// Inside the 16 × 2 km box: near, far, tie1, tie2 (not mid, 2.2 km
	// north).
	var inBox []string
	for _, m := range visit(box) {
		if m == "near" || m == "far" || m == "tie1" || m == "tie2" {
			inBox = append(inBox, m)
		}
	}
	check("box", box, r.Values[2], inBox)
	check("nothing inside", tiny, r.Values[3], nil)
	// At the corners of the map: 10 km around each holds it; around
	// pole, anti across the antimeridian too.
	for _, c := range []struct {
		at   string
		want []string
	}{{"pole", []string{"pole", "anti"}}, {"neg", []string{"neg"}}, {"anti", []string{"pole", "anti"}}} {
		sh := geo.Shape{Kind: geo.KindCircle, Lon: pos[c.at][0], Lat: pos[c.at][1], Radius: 10, Conversion: 1000}
		var want []string
		for _, m := range visit(sh) {
			if slices.Contains(c.want, m) {
				want = append(want, m)
			}
		}
		if len(want) != len(c.want) {
			e.t.Fatalf("around %s, the covering ranges read %v", c.at, visit(sh))
		}
		check("around "+c.at, sh, e.ok(e.rec("g").MapGeoSearch(codec.BinValue, sh.AppendFilter(nil), 0)).Values[0], want)
	}
	// Malformed ops.
	area := circle.AppendFilter(nil)
	neg := circle
	neg.Radius = -1
	out := circle
	out.Lat = 86
	for _, c := range []*codec.Call{
		e.rec("g").MapGeoSearch(codec.BinValue, area[:10], 0),
		e.rec("g").MapGeoSearch(codec.BinValue, append(area, 0), 0),
		e.rec("g").MapGeoSearch(codec.BinValue, neg.AppendFilter(nil), 0),
		e.rec("g").MapGeoSearch(codec.BinValue, out.AppendFilter(nil), 0),
		e.rec("g").MapGeoSearch(codec.BinValue, area, -1),
		{Key: e.key("g"), Ops: []codec.Op{{Code: codec.OpMapGeoSearch, Bin: codec.BinValue,
			Value: codec.Bytes(area), Return: codec.ReturnCount}}},
	} {
		e.fails(c, codec.InvalidOperation)
	}
	// A missing bin returns nothing; a bin that is not a map is refused.
	e.ok(e.rec("nobin").Put(codec.BinType, codec.Str(codec.TypeZSet)))
	e.eq("missing bin", e.ok(e.rec("nobin").MapGeoSearch(codec.BinValue, area, 0)).Values[0], codec.Nil)
	e.ok(e.rec("str").Put(codec.BinValue, b("x")))
	e.fails(e.rec("str").MapGeoSearch(codec.BinValue, area, 0), codec.BinTypeError)
	e.fails(e.rec("none").MapGeoSearch(codec.BinValue, area, 0), codec.NotFound)
}

func testMapMissingBin(e *env) {
	// An existing record without the map bin: the size is 0, reads match
	// nothing (whatever their kind, their count is 0), removes are no-ops.
	e.ok(e.rec("k").Put(codec.BinType, codec.Str(codec.TypeHash)))
	r := e.ok(e.rec("k").MapSize(codec.BinValue).
		MapGetByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a")}).
		MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1))
	e.eq("size of a missing bin", r.Values[0], i64(0))
	if r.Values[1].Int != 0 || r.Values[2].Len() != 0 {
		e.t.Errorf("reads of a missing bin matched something: %s, %s", show(r.Values[1]), show(r.Values[2]))
	}
	e.ok(e.rec("k").MapRemoveByKeys(codec.BinValue, codec.ReturnCount, []codec.Value{b("a")}).MapClear(codec.BinValue))
	e.eq("type after no-op removes", e.get("k", codec.BinType), codec.Str(codec.TypeHash))
}

func testDBIsolation(e *env) {
	other := e.on(dbOther)
	e.ok(e.rec("k").Put(codec.BinValue, b("zero")))
	other.missing("k")
	other.ok(other.rec("k").Put(codec.BinValue, b("one")))
	e.eq("db 0", e.get("k", codec.BinValue), b("zero"))
	other.eq("db 1", other.get("k", codec.BinValue), b("one"))
	e.ok(e.rec("k").Delete())
	other.eq("db 1 after a delete in db 0", other.get("k", codec.BinValue), b("one"))
}

func (e *env) count() int64 {
	e.t.Helper()
	return e.exec(&codec.Request{Kind: codec.ReqCount}).Count
}

func testCount(e *env) {
	c := e.on(dbCount)
	before := c.count()
	for _, k := range []string{"a", "b", "c"} {
		c.ok(c.rec(k).Put(codec.BinValue, b(k)))
	}
	c.ok(c.rec("a").Put(codec.BinValue, b("again")))
	c.eqInt("count after 3 creates", c.count(), before+3)
	c.ok(c.rec("b").Delete())
	c.eqInt("count after a delete", c.count(), before+2)
	c.fails(c.rec("zz").Get(codec.BinValue), codec.NotFound)
	c.eqInt("count after a read miss", c.count(), before+2)
}

// scanAll pages through db with count per page and returns how often each
// key was seen and the type reported for it. between runs after each page.
func (e *env) scanAll(count int64, withType bool, between func(page int)) (map[string]int, map[string]string) {
	e.t.Helper()
	seen := map[string]int{}
	types := map[string]string{}
	req := &codec.Request{Kind: codec.ReqScan, Scan: codec.ScanArgs{Count: count, WithType: withType}}
	for page := 0; ; page++ {
		if page > 100000 {
			e.t.Fatal("scan does not end")
		}
		resp := e.exec(req)
		if withType && len(resp.Scan.Types) != len(resp.Scan.Keys) {
			e.t.Fatalf("page %d: %d keys, %d types", page, len(resp.Scan.Keys), len(resp.Scan.Types))
		}
		if !withType && len(resp.Scan.Types) != 0 {
			e.t.Fatalf("page %d: types without WithType", page)
		}
		for i, k := range resp.Scan.Keys {
			seen[string(k)]++
			if withType {
				types[string(k)] = string(resp.Scan.Types[i])
			}
		}
		if resp.Scan.Cursor == 0 {
			return seen, types
		}
		req.Scan.Cursor = resp.Scan.Cursor
		if between != nil {
			between(page)
		}
	}
}

func testScan(e *env) {
	s := e.on(dbScan)
	const n = 5000
	typeOf := func(i int) string {
		if i%3 == 0 {
			return codec.TypeHash
		}
		return codec.TypeString
	}
	name := func(i int) string { return "key" + strconv.Itoa(i) }
	for start := 0; start < n; start += 500 {
		var calls []*codec.Call
		for i := start; i < start+500; i++ {
			calls = append(calls, s.rec(name(i)).Put(codec.BinType, codec.Str(typeOf(i))).Put(codec.BinValue, i64(int64(i))))
		}
		for i, r := range s.do(calls...) {
			if r.Code != codec.OK {
				s.t.Fatalf("write %d: code %d", start+i, r.Code)
			}
		}
	}
	check := func(what string, seen map[string]int, types map[string]string, skip func(i int) bool) {
		for i := 0; i < n; i++ {
			if skip != nil && skip(i) {
				continue
			}
			k := string(s.key(name(i)))
			if seen[k] == 0 {
				s.t.Fatalf("%s: key %d never returned", what, i)
			}
			if types != nil && types[k] != typeOf(i) {
				s.t.Fatalf("%s: key %d has type %q, want %q", what, i, types[k], typeOf(i))
			}
		}
	}
	for _, count := range []int64{7, 0, 1000} {
		seen, types := s.scanAll(count, true, nil)
		check(fmt.Sprintf("count %d", count), seen, types, nil)
	}
	seen, _ := s.scanAll(3, false, nil)
	check("without types", seen, nil, nil)

	// Keys deleted and added during a scan do not hide the others.
	seen, _ = s.scanAll(7, false, func(page int) {
		if page != 10 {
			return
		}
		var calls []*codec.Call
		for i := 0; i < n; i += 50 {
			calls = append(calls, s.rec(name(i)).Delete())
			calls = append(calls, s.rec("added"+strconv.Itoa(i)).Put(codec.BinValue, i64(1)))
		}
		s.do(calls...)
	})
	check("with changes during the scan", seen, nil, func(i int) bool { return i%50 == 0 })
	for i := 0; i < n; i += 50 {
		if k := string(s.key(name(i))); seen[k] > 1 {
			s.t.Errorf("deleted key %d returned %d times", i, seen[k])
		}
	}
}

func testTruncateDB(e *env) {
	t1, kept := e.on(dbTruncate), e.on(dbKept)
	for i := 0; i < 20; i++ {
		k := "k" + strconv.Itoa(i)
		t1.ok(t1.rec(k).Put(codec.BinValue, i64(int64(i))))
		kept.ok(kept.rec(k).Put(codec.BinValue, i64(int64(i))))
	}
	t1.exec(&codec.Request{Kind: codec.ReqTruncate})
	for i := 0; i < 20; i++ {
		k := "k" + strconv.Itoa(i)
		t1.missing(k)
		kept.eq("kept "+k, kept.get(k, codec.BinValue), i64(int64(i)))
	}
	seen, _ := t1.scanAll(100, false, nil)
	for k := range seen {
		if strings.HasPrefix(k, t1.prefix) {
			t1.t.Fatalf("scan after truncate returned %q", k)
		}
	}
	// The database is usable after a truncate.
	t1.ok(t1.rec("after").Put(codec.BinValue, i64(1)))
	t1.eq("written after truncate", t1.get("after", codec.BinValue), i64(1))
}

func testTruncateAll(e *env) {
	dbs := []*env{e, e.on(dbTruncate), e.on(dbTruncate2)}
	for _, d := range dbs {
		d.ok(d.rec("k").Put(codec.BinValue, i64(1)))
	}
	e.exec(&codec.Request{Kind: codec.ReqTruncate, AllDBs: true})
	for _, d := range dbs {
		d.missing("k")
	}
}

// rankItems writes a map whose rank order is d b f c a e: integers rank
// below floats, equal values by key. order is the map order flag.
func (e *env) rankItems(name string, order uint32) {
	e.t.Helper()
	e.ok(e.rec(name).Put(codec.BinType, codec.Str(codec.TypeZSet)).MapPut(codec.BinValue, order, []codec.Value{
		b("a"), f64(1.5),
		b("b"), i64(2),
		b("c"), f64(-1),
		b("d"), i64(0),
		b("e"), f64(1.5),
		b("f"), i64(100),
	}))
}

// mapOrders are the map orders respike creates: key order (hashes, sets)
// and key-value order (sorted sets). Results must not depend on it.
var mapOrders = []struct {
	name string
	flag uint32
}{{"key", codec.MapOrderKey}, {"keyvalue", codec.MapOrderKeyValue}}

// letters is a list of one-letter blob keys, "dbf" → [d b f].
func letters(s string) codec.Value {
	l := make([]codec.Value, len(s))
	for i := range s {
		l[i] = b(s[i : i+1])
	}
	return codec.List(l...)
}

// keysLeft is every key of a map bin, in key order.
func (e *env) keysLeft(name string) codec.Value {
	e.t.Helper()
	return e.ok(e.rec(name).MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)).Values[0]
}

func testMapRemoveByRank(e *env) {
	for _, o := range mapOrders {
		for i, c := range []struct {
			rank, count   int64
			removed, left string
		}{
			{0, 2, "db", "acef"},
			{1, 3, "bfc", "ade"},
			{-2, -1, "ae", "bcdf"},   // negative rank: from the highest; count < 0: to the end
			{-1, 1, "e", "abcdf"},    // the highest; equal values rank by key
			{-3, 2, "ca", "bdef"},    // negative rank with a count
			{4, 10, "ae", "bcdf"},    // clipped at the end
			{-8, 3, "d", "abcef"},    // starts before the lowest
			{-10, 3, "", "abcdef"},   // ends before the lowest
			{6, 1, "", "abcdef"},     // starts past the end
			{0, 0, "", "abcdef"},     // nothing
			{-100, -1, "dbfcae", ""}, // everything, in rank order
		} {
			name := fmt.Sprintf("%s%d", o.name, i)
			e.rankItems(name, o.flag)
			what := fmt.Sprintf("%s map, remove rank %d count %d", o.name, c.rank, c.count)
			r := e.ok(e.rec(name).MapRemoveByRank(codec.BinValue, codec.ReturnKey, c.rank, c.count))
			e.eq(what, r.Values[0], letters(c.removed))
			e.eq(what+": keys left", e.keysLeft(name), letters(c.left))
		}

		// What a remove returns, in rank order.
		name := o.name + "-ret"
		e.rankItems(name, o.flag)
		r := e.ok(e.rec(name).
			MapRemoveByRank(codec.BinValue, codec.ReturnKeyValue, 2, 2).
			MapRemoveByRank(codec.BinValue, codec.ReturnValue, -1, 1).
			MapRemoveByRank(codec.BinValue, codec.ReturnCount, 0, 1).
			MapRemoveByRank(codec.BinValue, codec.ReturnExists, 5, 1).
			MapRemoveByRank(codec.BinValue, codec.ReturnNone, 0, 1).
			MapSize(codec.BinValue))
		e.eq(o.name+": removed key-values", r.Values[0], codec.Map(b("f"), i64(100), b("c"), f64(-1)))
		e.eq(o.name+": removed values", r.Values[1], list(f64(1.5)))
		e.eq(o.name+": removed count", r.Values[2], i64(1))
		// Ranks are of the map as the earlier ops left it: 3 items remain.
		e.eq(o.name+": removed exists past the end", r.Values[3], codec.Bool(false))
		e.eq(o.name+": removed none", r.Values[4], codec.Nil)
		e.eq(o.name+": size", r.Values[5], i64(1))
		e.eq(o.name+": left", e.get(name, codec.BinValue), codec.Map(b("a"), f64(1.5)))
	}
}

func testMapRemoveByValueRange(e *env) {
	for _, o := range mapOrders {
		for i, c := range []struct {
			begin, end    codec.Value
			removed, left string
		}{
			{f64(0), f64(2), "ae", "bcdf"},       // floats only: integers rank below them
			{i64(0), i64(100), "db", "acef"},     // integers only
			{codec.Nil, f64(1.5), "dbfc", "ae"},  // open start: every integer, and floats below
			{f64(1.5), codec.Nil, "ae", "bcdf"},  // open end
			{i64(1), codec.Nil, "bfcae", "d"},    // from an integer to the highest float
			{codec.Nil, codec.Nil, "dbfcae", ""}, // everything, in rank order
			{f64(4), f64(2), "", "abcdef"},       // reversed
			{f64(200), f64(300), "", "abcdef"},   // above everything
		} {
			name := fmt.Sprintf("%s%d", o.name, i)
			e.rankItems(name, o.flag)
			what := fmt.Sprintf("%s map, remove values [%s, %s)", o.name, show(c.begin), show(c.end))
			r := e.ok(e.rec(name).MapRemoveByValueRange(codec.BinValue, codec.ReturnKey, c.begin, c.end))
			e.eq(what, r.Values[0], letters(c.removed))
			e.eq(what+": keys left", e.keysLeft(name), letters(c.left))
		}
		name := o.name + "-ret"
		e.rankItems(name, o.flag)
		r := e.ok(e.rec(name).
			MapRemoveByValueRange(codec.BinValue, codec.ReturnKeyValue, i64(1), i64(200)).
			MapRemoveByValueRange(codec.BinValue, codec.ReturnValue, f64(-5), f64(0)).
			MapRemoveByValueRange(codec.BinValue, codec.ReturnCount, f64(1.5), f64(1.6)).
			MapRemoveByValueRange(codec.BinValue, codec.ReturnExists, f64(1.5), f64(1.6)).
			MapRemoveByValueRange(codec.BinValue, codec.ReturnNone, codec.Nil, codec.Nil))
		e.eq(o.name+": removed key-values, rank order", r.Values[0], codec.Map(b("b"), i64(2), b("f"), i64(100)))
		e.eq(o.name+": removed values", r.Values[1], list(f64(-1)))
		e.eq(o.name+": removed count", r.Values[2], i64(2))
		e.eq(o.name+": removed exists, nothing left in range", r.Values[3], codec.Bool(false))
		e.eq(o.name+": removed none", r.Values[4], codec.Nil)
		e.eq(o.name+": keys left", e.keysLeft(name), letters(""))
	}
}

func testMapRemoveByKeyRange(e *env) {
	for _, o := range mapOrders {
		for i, c := range []struct {
			begin, end    codec.Value
			removed, left string
		}{
			{b("b"), b("d"), "bc", "adef"},
			{codec.Nil, b("b"), "a", "bcdef"},
			{b("c"), codec.Nil, "cdef", "ab"},
			{b("bb"), b("cc"), "c", "abdef"},
			{codec.Nil, codec.Nil, "abcdef", ""},
			{b("x"), b("z"), "", "abcdef"},
			{b("d"), b("b"), "", "abcdef"}, // reversed
		} {
			name := fmt.Sprintf("%s%d", o.name, i)
			e.rankItems(name, o.flag)
			what := fmt.Sprintf("%s map, remove keys [%s, %s)", o.name, show(c.begin), show(c.end))
			r := e.ok(e.rec(name).MapRemoveByKeyRange(codec.BinValue, codec.ReturnKey, c.begin, c.end))
			e.eq(what, r.Values[0], letters(c.removed))
			e.eq(what+": keys left", e.keysLeft(name), letters(c.left))
		}
		name := o.name + "-ret"
		e.rankItems(name, o.flag)
		r := e.ok(e.rec(name).
			MapRemoveByKeyRange(codec.BinValue, codec.ReturnKeyValue, b("a"), b("c")).
			MapRemoveByKeyRange(codec.BinValue, codec.ReturnValue, b("e"), codec.Nil).
			MapRemoveByKeyRange(codec.BinValue, codec.ReturnCount, b("a"), b("d")).
			MapRemoveByKeyRange(codec.BinValue, codec.ReturnExists, b("a"), b("d")).
			MapRemoveByKeyRange(codec.BinValue, codec.ReturnNone, b("d"), b("e")))
		e.eq(o.name+": removed key-values", r.Values[0], codec.Map(b("a"), f64(1.5), b("b"), i64(2)))
		e.eq(o.name+": removed values, key order", r.Values[1], list(f64(1.5), i64(100)))
		e.eq(o.name+": removed count", r.Values[2], i64(1))
		e.eq(o.name+": removed exists", r.Values[3], codec.Bool(false))
		e.eq(o.name+": removed none", r.Values[4], codec.Nil)
		e.eq(o.name+": left", e.get(name, codec.BinValue), codec.Map())
	}
}

// selection is one map selection, applied as a get or a remove.
type selection struct {
	name   string
	get    func(c *codec.Call, ret codec.MapReturn) *codec.Call
	remove func(c *codec.Call, ret codec.MapReturn) *codec.Call
	// inverted is what the selection inverted returns as keys, in order:
	// key order for keys, index and key ranges, rank order for ranks and
	// value ranges.
	inverted string
}

func byKeys(ks ...codec.Value) (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
	return func(c *codec.Call, r codec.MapReturn) *codec.Call { return c.MapGetByKeys(codec.BinValue, r, ks) },
		func(c *codec.Call, r codec.MapReturn) *codec.Call { return c.MapRemoveByKeys(codec.BinValue, r, ks) }
}

func byIndex(i, n int64) (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
	return func(c *codec.Call, r codec.MapReturn) *codec.Call { return c.MapGetByIndex(codec.BinValue, r, i, n) },
		func(c *codec.Call, r codec.MapReturn) *codec.Call { return c.MapRemoveByIndex(codec.BinValue, r, i, n) }
}

func byRank(i, n int64) (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
	return func(c *codec.Call, r codec.MapReturn) *codec.Call { return c.MapGetByRank(codec.BinValue, r, i, n) },
		func(c *codec.Call, r codec.MapReturn) *codec.Call { return c.MapRemoveByRank(codec.BinValue, r, i, n) }
}

func byValues(lo, hi codec.Value) (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
	return func(c *codec.Call, r codec.MapReturn) *codec.Call {
			return c.MapGetByValueRange(codec.BinValue, r, lo, hi)
		},
		func(c *codec.Call, r codec.MapReturn) *codec.Call {
			return c.MapRemoveByValueRange(codec.BinValue, r, lo, hi)
		}
}

func byKeyRange(lo, hi codec.Value) (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
	return func(c *codec.Call, r codec.MapReturn) *codec.Call {
			return c.MapGetByKeyRange(codec.BinValue, r, lo, hi)
		},
		func(c *codec.Call, r codec.MapReturn) *codec.Call {
			return c.MapRemoveByKeyRange(codec.BinValue, r, lo, hi)
		}
}

func sel(name string, ops func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call), inverted string) selection {
	g, r := ops()
	return selection{name: name, get: g, remove: r, inverted: inverted}
}

// invertedSelections run on rankItems: key order a b c d e f, rank order
// d b f c a e.
var invertedSelections = []selection{
	sel("keys e a zz", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeys(b("e"), b("a"), b("zz"))
	}, "bcdf"),
	sel("keys zz", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeys(b("zz"))
	}, "abcdef"),
	sel("no keys", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeys()
	}, "abcdef"),
	sel("index 1 count 2", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byIndex(1, 2)
	}, "adef"),
	sel("index -2 to the end", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byIndex(-2, -1)
	}, "abcd"),
	sel("index 7 count 1", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byIndex(7, 1)
	}, "abcdef"),
	sel("index -10 count 3", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byIndex(-10, 3)
	}, "abcdef"),
	sel("index 0 to the end", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byIndex(0, -1)
	}, ""),
	sel("rank -2 count 2", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(-2, 2)
	}, "dbfc"),
	sel("rank 1 count 2", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(1, 2)
	}, "dcae"),
	sel("rank 2 to the end", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(2, -1)
	}, "db"),
	sel("rank 10 count 2", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(10, 2)
	}, "dbfcae"),
	sel("rank -8 count 3", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(-8, 3)
	}, "bfcae"),
	sel("rank 0 count 0", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(0, 0)
	}, "dbfcae"),
	sel("rank -100 to the end", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byRank(-100, -1)
	}, ""),
	sel("values [0.0, 2.0)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byValues(f64(0), f64(2))
	}, "dbfc"),
	sel("values [0, 100)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byValues(i64(0), i64(100))
	}, "fcae"),
	sel("values [-inf, 2.0)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byValues(codec.Nil, f64(2))
	}, ""),
	sel("values [1, +inf)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byValues(i64(1), codec.Nil)
	}, "d"),
	sel("values [4.0, 2.0)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byValues(f64(4), f64(2))
	}, "dbfcae"),
	sel("keys [b, d)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeyRange(b("b"), b("d"))
	}, "adef"),
	sel("keys [-inf, +inf)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeyRange(codec.Nil, codec.Nil)
	}, ""),
	sel("keys [x, z)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeyRange(b("x"), b("z"))
	}, "abcdef"),
	sel("keys [d, b)", func() (func(*codec.Call, codec.MapReturn) *codec.Call, func(*codec.Call, codec.MapReturn) *codec.Call) {
		return byKeyRange(b("d"), b("b"))
	}, "abcdef"),
}

// complementOf is the keys of "abcdef" not in s, in key order.
func complementOf(s string) string {
	var out []byte
	for _, k := range []byte("abcdef") {
		if !strings.ContainsRune(s, rune(k)) {
			out = append(out, k)
		}
	}
	return string(out)
}

func testMapInvertedGet(e *env) {
	for _, o := range mapOrders {
		name := o.name
		e.rankItems(name, o.flag)
		for _, s := range invertedSelections {
			c := e.rec(name)
			s.get(c, codec.ReturnKey|codec.ReturnInverted)
			s.get(c, codec.ReturnCount|codec.ReturnInverted)
			s.get(c, codec.ReturnExists|codec.ReturnInverted)
			s.get(c, codec.ReturnNone|codec.ReturnInverted)
			r := e.ok(c)
			what := o.name + " map, " + s.name + " inverted"
			e.eq(what+": keys", r.Values[0], letters(s.inverted))
			e.eq(what+": count", r.Values[1], i64(int64(len(s.inverted))))
			e.eq(what+": exists", r.Values[2], codec.Bool(s.inverted != ""))
			e.eq(what+": none", r.Values[3], codec.Nil)
		}
		// Values and pairs come in the same order as keys.
		r := e.ok(e.rec(name).
			MapGetByRank(codec.BinValue, codec.ReturnKeyValue|codec.ReturnInverted, 1, 2).
			MapGetByRank(codec.BinValue, codec.ReturnValue|codec.ReturnInverted, 1, 2).
			MapGetByValueRange(codec.BinValue, codec.ReturnValue|codec.ReturnInverted, f64(0), f64(2)).
			MapGetByIndex(codec.BinValue, codec.ReturnKeyValue|codec.ReturnInverted, 1, 4).
			MapGetByKeys(codec.BinValue, codec.ReturnValue|codec.ReturnInverted, []codec.Value{b("c"), b("d")}))
		what := o.name + " map"
		e.eq(what+": rank 1 count 2 inverted, pairs", r.Values[0], codec.Map(b("d"), i64(0), b("c"), f64(-1), b("a"), f64(1.5), b("e"), f64(1.5)))
		e.eq(what+": rank 1 count 2 inverted, values", r.Values[1], list(i64(0), f64(-1), f64(1.5), f64(1.5)))
		e.eq(what+": values [0.0, 2.0) inverted, values", r.Values[2], list(i64(0), i64(2), i64(100), f64(-1)))
		e.eq(what+": index 1 count 4 inverted, pairs", r.Values[3], codec.Map(b("a"), f64(1.5), b("f"), i64(100)))
		e.eq(what+": keys c d inverted, values", r.Values[4], list(f64(1.5), i64(2), f64(1.5), i64(100)))
		e.eqInt(what+": generation after inverted reads", int64(e.ok(e.rec(name).Header()).Generation), 1)
	}
}

func testMapInvertedRemove(e *env) {
	for _, o := range mapOrders {
		for i, s := range invertedSelections {
			name := fmt.Sprintf("%s%d", o.name, i)
			e.rankItems(name, o.flag)
			what := o.name + " map, remove " + s.name + " inverted"
			r := e.ok(s.remove(e.rec(name), codec.ReturnKey|codec.ReturnInverted))
			e.eq(what, r.Values[0], letters(s.inverted))
			e.eq(what+": keys left", e.keysLeft(name), letters(complementOf(s.inverted)))

			// The other return types remove the same items.
			name += "-n"
			e.rankItems(name, o.flag)
			r = e.ok(s.remove(e.rec(name), codec.ReturnNone|codec.ReturnInverted).MapSize(codec.BinValue))
			e.eq(what+", none", r.Values[0], codec.Nil)
			e.eq(what+", none: size", r.Values[1], i64(int64(6-len(s.inverted))))
		}
		name := o.name + "-ret"
		e.rankItems(name, o.flag)
		r := e.ok(e.rec(name).
			MapRemoveByRank(codec.BinValue, codec.ReturnKeyValue|codec.ReturnInverted, 1, 4).
			MapRemoveByValueRange(codec.BinValue, codec.ReturnExists|codec.ReturnInverted, f64(1.5), codec.Nil).
			MapRemoveByKeys(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, []codec.Value{b("a")}))
		e.eq(o.name+": rank 1 count 4 inverted, removed pairs", r.Values[0], codec.Map(b("d"), i64(0), b("e"), f64(1.5)))
		// Left b f c a: every value below 1.5 goes, then all but a.
		e.eq(o.name+": values [1.5, +inf) inverted, removed exists", r.Values[1], codec.Bool(true))
		e.eq(o.name+": keys a inverted, removed count", r.Values[2], i64(0))
		e.eq(o.name+": left", e.get(name, codec.BinValue), codec.Map(b("a"), f64(1.5)))
	}
}

// testMapKeepHighestRanks is the capped sorted set: put a member, then
// remove all but the n highest ranks, whatever the size, in one call.
func testMapKeepHighestRanks(e *env) {
	const n = 3
	add := func(name, member string, score float64) codec.Result {
		e.t.Helper()
		return e.ok(e.rec(name).Guard(codec.TypeZSet).Put(codec.BinType, codec.Str(codec.TypeZSet)).
			MapPut(codec.BinValue, codec.MapOrderKeyValue, []codec.Value{b(member), f64(score)}).
			MapRemoveByRank(codec.BinValue, codec.ReturnKey|codec.ReturnInverted, -n, n))
	}
	e.eq("first add evicts nothing", add("z", "m1", 10).Values[2], list())
	add("z", "m2", 5)
	e.eq("at the cap", add("z", "m3", 20).Values[2], list())
	e.eq("over the cap evicts the lowest", add("z", "m4", 15).Values[2], list(b("m2")))
	e.eq("a member below the cap is evicted at once", add("z", "low", 1).Values[2], list(b("low")))
	e.eq("an update within the cap evicts nothing", add("z", "m3", 0).Values[2], list())
	e.eq("the updated member is now the lowest", add("z", "m0", 10).Values[2], list(b("m3")))
	e.eq("equal scores rank by member", add("z", "m00", 10).Values[2], list(b("m0")))
	r := e.ok(e.rec("z").MapGetByRank(codec.BinValue, codec.ReturnKeyValue, 0, -1))
	e.eq("kept", r.Values[0], codec.Map(b("m00"), f64(10), b("m1"), f64(10), b("m4"), f64(15)))
}

func testMapRangeRemoveEdges(e *env) {
	// An existing record without the map bin: removes are no-ops that
	// return nothing, inverted or not.
	e.ok(e.rec("nobin").Put(codec.BinType, codec.Str(codec.TypeZSet)))
	r := e.ok(e.rec("nobin").
		MapRemoveByRank(codec.BinValue, codec.ReturnCount, 0, 2).
		MapRemoveByRank(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, 0, 2).
		MapRemoveByValueRange(codec.BinValue, codec.ReturnKey, codec.Nil, codec.Nil).
		MapRemoveByKeyRange(codec.BinValue, codec.ReturnKey|codec.ReturnInverted, b("a"), codec.Nil).
		MapGetByRank(codec.BinValue, codec.ReturnKey|codec.ReturnInverted, 0, 2))
	for i, v := range r.Values {
		if !v.IsNil() {
			e.t.Errorf("op %d on a missing bin = %s, want nil", i, show(v))
		}
	}
	e.eq("type after no-op removes", e.get("nobin", codec.BinType), codec.Str(codec.TypeZSet))

	// A missing record: NotFound, and nothing is created.
	e.fails(e.rec("none").MapRemoveByRank(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, -1, 1), codec.NotFound)
	e.fails(e.rec("none").MapRemoveByValueRange(codec.BinValue, codec.ReturnCount, codec.Nil, codec.Nil), codec.NotFound)
	e.fails(e.rec("none").MapRemoveByKeyRange(codec.BinValue, codec.ReturnCount, codec.Nil, codec.Nil), codec.NotFound)
	e.missing("none")

	// A bin that is not a map.
	e.ok(e.rec("str").Put(codec.BinValue, b("x")))
	e.fails(e.rec("str").MapRemoveByRank(codec.BinValue, codec.ReturnCount, 0, 1), codec.BinTypeError)
	e.fails(e.rec("str").MapRemoveByValueRange(codec.BinValue, codec.ReturnCount, codec.Nil, codec.Nil), codec.BinTypeError)
	e.fails(e.rec("str").MapRemoveByKeyRange(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, codec.Nil, codec.Nil), codec.BinTypeError)
	e.eq("value after refused removes", e.get("str", codec.BinValue), b("x"))

	// DeleteIfEmpty: a range remove that empties the map deletes the record.
	e.rankItems("del", codec.MapOrderKeyValue)
	r = e.ok(e.rec("del").DeleteIfEmpty(codec.BinValue).MapRemoveByRank(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, 0, 3))
	e.eq("removed by inverted rank", r.Values[0], i64(3))
	e.eq("record kept while not empty", e.keysLeft("del"), letters("bdf"))
	r = e.ok(e.rec("del").DeleteIfEmpty(codec.BinValue).MapRemoveByValueRange(codec.BinValue, codec.ReturnCount, codec.Nil, codec.Nil))
	e.eq("removed by value range", r.Values[0], i64(3))
	e.missing("del")

	// An emptied map: selections match nothing, inverted ones too.
	e.rankItems("empty", codec.MapOrderKey)
	e.ok(e.rec("empty").MapRemoveByKeyRange(codec.BinValue, codec.ReturnNone, codec.Nil, codec.Nil))
	r = e.ok(e.rec("empty").
		MapGetByRank(codec.BinValue, codec.ReturnKey|codec.ReturnInverted, 0, 1).
		MapGetByRank(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, 0, 1).
		MapRemoveByRank(codec.BinValue, codec.ReturnKey|codec.ReturnInverted, -3, 3).
		MapRemoveByValueRange(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, f64(1), f64(2)))
	e.eq("inverted rank keys of an empty map", r.Values[0], list())
	e.eq("inverted rank count of an empty map", r.Values[1], i64(0))
	e.eq("inverted rank remove of an empty map", r.Values[2], list())
	e.eq("inverted value remove of an empty map", r.Values[3], i64(0))

	// ReturnInverted on an op that selects nothing is a malformed call.
	e.fails(e.rec("inv").MapPut(codec.BinValue, 0, []codec.Value{b("a"), b("1")}).
		Op(codec.Op{Code: codec.OpMapSize, Bin: codec.BinValue, Return: codec.ReturnInverted}), codec.InvalidOperation)
	e.missing("inv")
}

// floatItems makes a sorted-set style map of float scores in both map
// orders: a=3 b=1 c=2 d=2 e=5 f=-inf g=+inf.
func (e *env) floatItems(name string, order uint32) {
	e.t.Helper()
	e.ok(e.rec(name).Put(codec.BinType, codec.Str(codec.TypeZSet)).MapPut(codec.BinValue, order, []codec.Value{
		b("a"), f64(3),
		b("b"), f64(1),
		b("c"), f64(2),
		b("d"), f64(2),
		b("e"), f64(5),
		b("f"), f64(math.Inf(-1)),
		b("g"), f64(math.Inf(1)),
	}))
}

func testMapByValueRelRank(e *env) {
	for _, o := range mapOrders {
		name := "k" + o.name
		e.floatItems(name, o.flag)
		// Rank order: f(-inf) b(1) c(2) d(2) a(3) e(5) g(+inf).
		r := e.ok(e.rec(name).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(2), 0, 2).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKeyValue, f64(2), 1, 2).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(2.5), -2, 3).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(4), 0, -1).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(1), -3, 2).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(1), -3, 3).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnCount, f64(math.Inf(1)), 1, 5).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(math.Inf(-1)), 0, 1).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnValue, f64(100), -1, 1).
			MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(0), 5, 10))
		e.eq(o.name+": from 2, two", r.Values[0], list(b("c"), b("d")))
		e.eq(o.name+": from 2, skip one", r.Values[1], codec.Map(b("d"), f64(2), b("a"), f64(3)))
		e.eq(o.name+": two below 2.5 and one at it", r.Values[2], list(b("c"), b("d"), b("a")))
		e.eq(o.name+": from 4 to the end", r.Values[3], list(b("e"), b("g")))
		e.eq(o.name+": before the start", r.Values[4], list())
		e.eq(o.name+": partly before the start", r.Values[5], list(b("f")))
		e.eq(o.name+": past the end", r.Values[6], i64(0))
		e.eq(o.name+": -inf anchor", r.Values[7], list(b("f")))
		e.eq(o.name+": the one below an anchor past all finite", r.Values[8], list(f64(5)))
		e.eq(o.name+": clipped at the end", r.Values[9], list(b("g")))
	}
	e.missingBinReads(func(c *codec.Call) *codec.Call {
		return c.MapGetByValueRelRank(codec.BinValue, codec.ReturnKey, f64(1), 0, 1)
	})
}

func testMapByKeyRelIndex(e *env) {
	for _, o := range mapOrders {
		name := "k" + o.name
		e.floatItems(name, o.flag)
		r := e.ok(e.rec(name).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b("c"), 0, 2).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKeyValue, b("bb"), 1, 2).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b("c"), -2, 3).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b("e"), 0, -1).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b("a"), -3, 2).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnCount, b("z"), 0, 5).
			MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b("z"), -1, 1))
		e.eq(o.name+": from c, two", r.Values[0], list(b("c"), b("d")))
		e.eq(o.name+": after bb, skip one", r.Values[1], codec.Map(b("d"), f64(2), b("e"), f64(5)))
		e.eq(o.name+": two before c", r.Values[2], list(b("a"), b("b"), b("c")))
		e.eq(o.name+": from e to the end", r.Values[3], list(b("e"), b("f"), b("g")))
		e.eq(o.name+": before the start", r.Values[4], list())
		e.eq(o.name+": past the end", r.Values[5], i64(0))
		e.eq(o.name+": the last", r.Values[6], list(b("g")))
	}
	e.missingBinReads(func(c *codec.Call) *codec.Call {
		return c.MapGetByKeyRelIndex(codec.BinValue, codec.ReturnKey, b("a"), 0, 1)
	})
}

func testMapReturnRank(e *env) {
	for _, o := range mapOrders {
		name := "k" + o.name
		e.floatItems(name, o.flag)
		// Rank order: f(-inf) b(1) c(2) d(2) a(3) e(5) g(+inf).
		r := e.ok(e.rec(name).
			MapGetByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("a")}).
			MapGetByKeys(codec.BinValue, codec.ReturnReverseRank, []codec.Value{b("a")}).
			MapGetByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("d")}).
			MapGetByKeys(codec.BinValue, codec.ReturnReverseRank, []codec.Value{b("c")}).
			MapGetByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("zz")}).
			MapGetByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("g")}).
			MapGetByKeys(codec.BinValue, codec.ReturnReverseRank, []codec.Value{b("f")}))
		e.eq(o.name+": rank of a", r.Values[0], list(i64(4)))
		e.eq(o.name+": reverse rank of a", r.Values[1], list(i64(2)))
		e.eq(o.name+": tie broken by key", r.Values[2], list(i64(3)))
		e.eq(o.name+": reverse rank of c", r.Values[3], list(i64(4)))
		e.eq(o.name+": missing member", r.Values[4], list())
		e.eq(o.name+": +inf is last", r.Values[5], list(i64(6)))
		e.eq(o.name+": -inf is last in reverse", r.Values[6], list(i64(6)))
		// A removal answers the ranks the items had.
		r = e.ok(e.rec(name).MapRemoveByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("e")}).MapSize(codec.BinValue))
		e.eq(o.name+": rank of a removed item", r.Values[0], list(i64(5)))
		e.eq(o.name+": size after", r.Values[1], i64(6))
		r = e.ok(e.rec(name).MapRemoveByKeys(codec.BinValue, codec.ReturnReverseRank, []codec.Value{b("zz")}).MapSize(codec.BinValue))
		e.eq(o.name+": reverse rank of a missing item removed", r.Values[0], list())
		e.eq(o.name+": size after removing nothing", r.Values[1], i64(6))
	}
	e.missingBinReads(func(c *codec.Call) *codec.Call {
		return c.MapGetByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("a")})
	})
	// A rank return answers one key's rank: Aerospike refuses it on a key
	// list, and its ranks of ranges do not follow the selection order.
	e.floatItems("bad", codec.MapOrderKeyValue)
	for i, c := range []*codec.Call{
		e.rec("bad").MapGetByKeys(codec.BinValue, codec.ReturnRank, []codec.Value{b("a"), b("b")}),
		e.rec("bad").MapGetByKeys(codec.BinValue, codec.ReturnRank, nil),
		e.rec("bad").MapGetByKeys(codec.BinValue, codec.ReturnRank|codec.ReturnInverted, []codec.Value{b("a")}),
		e.rec("bad").MapRemoveByKeys(codec.BinValue, codec.ReturnReverseRank, []codec.Value{b("a"), b("b")}),
		e.rec("bad").MapGetByIndex(codec.BinValue, codec.ReturnRank, 0, 2),
		e.rec("bad").MapGetByRank(codec.BinValue, codec.ReturnReverseRank, 0, 2),
		e.rec("bad").MapGetByValueRange(codec.BinValue, codec.ReturnRank, f64(1), f64(3)),
		e.rec("bad").MapGetByValueRelRank(codec.BinValue, codec.ReturnRank, f64(2), 0, 2),
		e.rec("bad").MapGetByKeyRelIndex(codec.BinValue, codec.ReturnRank, b("b"), 0, 2),
	} {
		r := e.do(c)[0]
		if r.Code != codec.InvalidOperation {
			e.t.Errorf("bad rank return %d: code %d (%s), want InvalidOperation", i, r.Code, r.Msg)
		}
	}
	e.eqInt("items after refused rank removes", int64(e.get("bad", codec.BinValue).Len()), 7)
}

// missingBinReads checks that a map read on a record without the map bin
// matches nothing, as every map read does (testMapMissingBin).
func (e *env) missingBinReads(read func(c *codec.Call) *codec.Call) {
	e.t.Helper()
	e.ok(e.rec("nomap").Put(codec.BinType, codec.Str(codec.TypeZSet)))
	r := e.ok(read(e.rec("nomap")))
	if r.Values[0].Len() != 0 {
		e.t.Errorf("read of a missing map bin matched something: %s", show(r.Values[0]))
	}
}

// scored appends ReturnScoredKeys items, key and score pairs.
func scored(dst []byte, kv ...any) []byte {
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		var f float64
		switch x := kv[i+1].(type) {
		case int:
			f = float64(x)
		case float64:
			f = x
		}
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(k)))
		dst = append(dst, k...)
	}
	return dst
}
