package codec

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestRequestRoundTrip(t *testing.T) {
	req := Request{Kind: ReqRecords, Calls: []Call{
		{
			Key:    []byte("k\x00 ey"),
			Policy: Policy{Exists: ExistsCreateOnly, TTL: TTLSeconds, Seconds: 10, Generation: 7, Guard: TypeHash, DeleteIfEmpty: BinValue},
			Ops: []Op{
				{Code: OpGet, Bin: BinValue},
				{Code: OpMapPut, Bin: BinValue, Flags: MapWriteCreateOnly | MapWriteNoFail | MapOrderKey, Values: []Value{Bytes([]byte("f")), Int(-3), Str("g"), Float(1.5)}},
				{Code: OpMapGetByValues, Bin: BinValue, Return: ReturnKeyValue, Value: Nil, Value2: List(Bool(true), Map(Int(1), Bytes(nil)))},
				{Code: OpMapGetByIndex, Bin: BinValue, Index: -2, Count: -1},
			},
		},
		{Key: []byte{}, Ops: []Op{{Code: OpDelete}}},
	}}
	b := AppendRequest(nil, &req)
	var d Decoder
	var got Request
	if err := d.DecodeRequest(b, &got); err != nil {
		t.Fatal(err)
	}
	if again := AppendRequest(nil, &got); !bytes.Equal(b, again) {
		t.Fatalf("re-encoding differs:\n%x\n%x", b, again)
	}
	if got.Calls[0].Policy != req.Calls[0].Policy {
		t.Fatalf("policy %+v, want %+v", got.Calls[0].Policy, req.Calls[0].Policy)
	}
	if !got.Calls[0].Ops[2].Value2.Equal(req.Calls[0].Ops[2].Value2) {
		t.Fatalf("nested value lost: %+v", got.Calls[0].Ops[2].Value2)
	}
	if got.OtherDB {
		t.Fatal("a request without the database trailer decoded with OtherDB")
	}
	// Another database (MOVE, COPY ... DB): an optional trailer.
	req.OtherDB, req.DB = true, 7
	if err := d.DecodeRequest(AppendRequest(nil, &req), &got); err != nil || !got.OtherDB || got.DB != 7 {
		t.Fatalf("other db: %v %v %d", err, got.OtherDB, got.DB)
	}
	// A reused request forgets it.
	req.OtherDB, req.DB = false, 0
	if err := d.DecodeRequest(AppendRequest(nil, &req), &got); err != nil || got.OtherDB || got.DB != 0 {
		t.Fatalf("reused: %v %v %d", err, got.OtherDB, got.DB)
	}
}

func TestCorruptInputIsAnErrorNotAPanic(t *testing.T) {
	req := Request{Kind: ReqRecords, Calls: []Call{{Key: []byte("k"), Ops: []Op{{Code: OpPut, Bin: "v", Value: List(Bytes([]byte("abc")))}}}}}
	b := AppendRequest(nil, &req)
	var d Decoder
	var got Request
	for i := 0; i < len(b); i++ {
		if err := d.DecodeRequest(b[:i], &got); err == nil {
			t.Fatalf("truncation at %d decoded without error", i)
		}
	}
	huge := []byte{byte(ReqRecords), 0xff, 0xff, 0xff, 0xff, 0x0f}
	if err := d.DecodeRequest(huge, &got); err == nil {
		t.Fatal("absurd call count accepted")
	}
}

func TestManifestRoundTrip(t *testing.T) {
	m := Manifest{Module: "strings", Version: "1.0.0", Commands: []CommandInfo{
		{Name: "get", Arity: 2, Flags: []string{"readonly", "fast"}, FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Summary: "Get", Since: "1.0.0"},
	}}
	got, err := DecodeManifest(AppendManifest(nil, &m))
	if err != nil || got.Commands[0].Name != "get" || got.Commands[0].Flags[1] != "fast" || got.Version != "1.0.0" {
		t.Fatalf("%v %+v", err, got)
	}
	if _, err := DecodeManifest([]byte("garbage that is not a manifest")); err == nil {
		t.Fatal("garbage manifest accepted")
	}
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add(AppendRequest(nil, &Request{Kind: ReqRecords, Calls: []Call{{Key: []byte("k"), Ops: []Op{{Code: OpGet, Bin: "v"}}}}}))
	f.Add(AppendRequest(nil, &Request{Kind: ReqScan, Scan: ScanArgs{Cursor: 5, Count: 10}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		var r Request
		_ = d.DecodeRequest(b, &r) // must not panic
	})
}

// TestEncodedCallsEncodeAsOps checks that a call built with BeginEncoded
// (ops encoded as they are added) encodes exactly as the same call built
// into Ops, for every builder method.
func TestEncodedCallsEncodeAsOps(t *testing.T) {
	sizeOp, tagOp, empty := Prepare(Op{Code: OpMapSize, Bin: BinValue}), Prepare(Op{Code: OpPut, Bin: BinType, Value: Str(TypeZSet)}), Prepare()
	long := Prepare(Op{Code: OpMapSize, Bin: BinValue}, Op{Code: OpPut, Bin: BinType, Value: Str(TypeZSet)})
	if !sizeOp.short || !tagOp.short || !empty.short || long.short {
		t.Fatal("the prepared ops are not the lengths this test needs") // 7, 16, 0 and 23 bytes
	}
	build := func(c *Call) {
		c.Guard(TypeHash).Exists(ExistsUpdateOnly).Expire(30).Generation(4).DeleteIfEmpty(BinValue).
			Get(BinValue).Get("").Header().Put(BinType, Str(TypeHash)).Put(BinValue, Nil).
			Add(BinValue, Int(-7)).Add(BinValue, Float(0.5)).Append(BinValue, []byte("xy")).
			Delete().Touch().
			MapPut(BinValue, MapWriteCreateOnly|MapOrderKey, []Value{Bytes([]byte("f")), Int(1)}).
			MapIncrement(BinValue, MapOrderKeyValue, Bytes([]byte("f")), Float(2)).
			MapSize(BinValue).MapGetByKeys(BinValue, ReturnKeyValue, []Value{Bytes([]byte("f"))}).
			MapRemoveByKeys(BinValue, ReturnCount, []Value{Bytes(nil)}).
			MapGetByIndex(BinValue, ReturnKey, -2, -1).MapRemoveByIndex(BinValue, ReturnValue, 0, 1).
			MapGetByRank(BinValue, ReturnKeyValue, 1, 2).
			MapGetByValueRange(BinValue, ReturnKey, Nil, Float(3)).
			MapGetByKeyRange(BinValue, ReturnKey, Bytes([]byte("a")), Nil).
			MapClear(BinValue).Op(Op{Code: OpGet, Bin: "x", Return: ReturnExists}).
			MapPut(BinValue, 0, []Value{Str("k"), Float(-2.5), Bytes([]byte("l")), List(Int(1), Bool(true))}).
			MapPut("bins", MapWriteUpdateOnly|MapWriteNoFail, []Value{Bytes([]byte("k")), Nil, Bytes([]byte("b")), Bool(true)}).
			MapPut(BinValue, 0, nil).MapGetByKeys(BinValue, 0, []Value{Str("k")}).
			MapRemoveByIndex(BinValue, ReturnCount|ReturnInverted, 0, 0).
			MapRemoveByRank(BinValue, ReturnValue, -3, 2).
			ListAppend(BinValue, []Value{Bytes([]byte("a")), Bytes(nil)}).ListInsert(BinValue, -1, []Value{Int(3)}).
			ListGetByIndex(BinValue, ReturnValue, 1, -1).ListRemoveByIndex(BinValue, ReturnCount|ReturnInverted, 2, 3).
			ExpectBlobSize(BinValue, 12304).ExpectBlobSize(BinValue, 0).BitGrow(BinValue, 16).
			BitGet(BinValue, 0, 128).BitCount(BinValue, 7, 0).BitSet(BinValue, 3, 9, []byte{0xff, 0x80}).
			BitSet(BinValue, 0, 0, nil).HLLRaise(BinValue, []byte{0, 1, 2}).HLLRaise(BinValue, nil).HLLRaise("", nil).Append("", []byte("z")).
			MapPutScore(BinValue, 0, []byte("member"), -1.5).MapPutScore("score", MapWriteCreateOnly, nil, 0).
			Prepared(Prepare(Op{Code: OpMapSize, Bin: BinValue}, Op{Code: OpPut, Bin: BinType, Value: Str(TypeZSet)})).
			Prepared(Prepare())
		c.PutScore(PrepareScorePut(sizeOp, BinValue, 0, tagOp), []byte("member:12345"), 3.5e15)
		c.PutScore(PrepareScorePut(tagOp, BinValue, MapWriteCreateOnly|MapWriteNoFail, empty), nil, -0.25)
		c.PutScore(PrepareScorePut(empty, BinValue, MapWriteUpdateOnly, sizeOp), []byte("a longer member than sixteen bytes"), 1)
		c.PutScore(PrepareScorePut(long, BinValue, 0, tagOp), []byte("m"), 2) // a long prepared sequence: the chain
		c.PutScore(PrepareScorePut(sizeOp, "score", 0, long), []byte("m"), 2)
		// Members of every length around PutScore's word copies (8 to
		// 24 bytes), with and without flags.
		between := PrepareScorePut(sizeOp, BinValue, 0, tagOp)
		flagged := PrepareScorePut(sizeOp, BinValue, MapWriteCreateOnly|MapOrderKeyValue, empty)
		for n := range 34 {
			m := []byte("abcdefghijklmnopqrstuvwxyz0123456789"[:n])
			c.PutScore(between, m, float64(n))
			c.PutScore(flagged, m, -float64(n))
		}
	}
	plain := Call{Key: []byte("key")}
	build(&plain)
	var enc Call
	enc.Ops = append(enc.Ops, Op{Code: OpDelete}) // stale state BeginEncoded must clear
	enc.BeginEncoded([]byte("key"))
	build(&enc)
	if len(enc.Ops) != 0 {
		t.Fatalf("encoded call has %d Ops", len(enc.Ops))
	}
	want := AppendRequest(nil, &Request{Kind: ReqRecords, Calls: []Call{plain}})
	got := AppendRequest(nil, &Request{Kind: ReqRecords, Calls: []Call{enc}})
	if !bytes.Equal(got, want) {
		t.Fatalf("encoded call:\n%x\nwant\n%x", got, want)
	}
	var d Decoder
	var req Request
	if err := d.DecodeRequest(got, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Calls[0].Ops) != len(plain.Ops) || req.Calls[0].Policy != plain.Policy {
		t.Fatalf("decoded %d ops, policy %+v; want %d, %+v", len(req.Calls[0].Ops), req.Calls[0].Policy, len(plain.Ops), plain.Policy)
	}
	for i, o := range req.Calls[0].Ops {
		w := plain.Ops[i]
		if o.Code != w.Code || o.Bin != w.Bin || o.Return != w.Return || o.Index != w.Index || o.Count != w.Count ||
			o.Flags != w.Flags || !o.Value.Equal(w.Value) || !o.Value2.Equal(w.Value2) || !List(o.Values...).Equal(List(w.Values...)) {
			t.Fatalf("op %d = %+v, want %+v", i, o, w)
		}
	}
}

func BenchmarkAppendRequestGET(b *testing.B) {
	var c Call
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		c.BeginEncoded([]byte("key"))
		c.Guard(TypeString).Get(BinValue)
		buf = AppendRequest(buf[:0], &Request{Kind: ReqRecords, Calls: []Call{c}})
	}
}

// TestOpCodesStable pins the op codes' numbers: modules built against ABI 2
// send them, so new codes may only be appended.
func TestOpCodesStable(t *testing.T) {
	codes := []OpCode{
		OpGet, OpPut, OpAdd, OpAppend, OpPrepend, OpDelete, OpTouch, OpGetHeader,
		OpMapPut, OpMapIncrement, OpMapSize, OpMapGetByKeys, OpMapRemoveByKeys,
		OpMapGetByIndex, OpMapRemoveByIndex, OpMapGetByRank, OpMapGetByValues,
		OpMapGetByKeyRange, OpMapClear,
		OpMapRemoveByRank, OpMapRemoveByValueRange, OpMapRemoveByKeyRange,
	}
	for i, c := range codes {
		if int(c) != i+1 {
			t.Errorf("op code #%d is %d, want %d", i, c, i+1)
		}
	}
	if ReturnExists != 5 || ReturnInverted != 0x80 {
		t.Errorf("ReturnExists = %d, ReturnInverted = %#x", ReturnExists, ReturnInverted)
	}
}

func TestMapReturnInverted(t *testing.T) {
	for _, c := range []struct {
		r        MapReturn
		typ      MapReturn
		inverted bool
	}{
		{ReturnNone, ReturnNone, false},
		{ReturnKey, ReturnKey, false},
		{ReturnNone | ReturnInverted, ReturnNone, true},
		{ReturnCount | ReturnInverted, ReturnCount, true},
		{ReturnExists | ReturnInverted, ReturnExists, true},
	} {
		if c.r.Type() != c.typ || c.r.Inverted() != c.inverted {
			t.Errorf("%#x: Type %d Inverted %v, want %d %v", c.r, c.r.Type(), c.r.Inverted(), c.typ, c.inverted)
		}
	}
}

// TestRangeRemovesEncode checks the range removes and inverted return
// types: an encoded call encodes as the same call built into Ops, and both
// decode to the ops given.
func TestRangeRemovesEncode(t *testing.T) {
	build := func(c *Call) {
		c.MapPut(BinValue, MapOrderKeyValue, []Value{Bytes([]byte("m")), Float(1.5)}).
			MapRemoveByRank(BinValue, ReturnCount|ReturnInverted, -10, 10).
			MapRemoveByRank(BinValue, ReturnKeyValue, 0, -1).
			MapRemoveByRank(BinValue, ReturnNone|ReturnInverted, 0, 0).
			MapRemoveByValueRange(BinValue, ReturnKey, Float(-1), Nil).
			MapRemoveByValueRange(BinValue, ReturnValue|ReturnInverted, Nil, Int(3)).
			MapRemoveByKeyRange(BinValue, ReturnKeyValue, Bytes([]byte("a")), Bytes([]byte("b"))).
			MapRemoveByKeyRange(BinValue, ReturnExists|ReturnInverted, Nil, Nil).
			MapGetByRank(BinValue, ReturnKey|ReturnInverted, 1, 2).
			MapGetByKeys(BinValue, ReturnCount|ReturnInverted, []Value{Bytes([]byte("m"))})
	}
	want := []Op{
		{Code: OpMapPut, Bin: BinValue, Flags: MapOrderKeyValue, Values: []Value{Bytes([]byte("m")), Float(1.5)}},
		{Code: OpMapRemoveByRank, Bin: BinValue, Return: ReturnCount | ReturnInverted, Index: -10, Count: 10},
		{Code: OpMapRemoveByRank, Bin: BinValue, Return: ReturnKeyValue, Count: -1},
		{Code: OpMapRemoveByRank, Bin: BinValue, Return: ReturnInverted},
		{Code: OpMapRemoveByValueRange, Bin: BinValue, Return: ReturnKey, Value: Float(-1)},
		{Code: OpMapRemoveByValueRange, Bin: BinValue, Return: ReturnValue | ReturnInverted, Value2: Int(3)},
		{Code: OpMapRemoveByKeyRange, Bin: BinValue, Return: ReturnKeyValue, Value: Bytes([]byte("a")), Value2: Bytes([]byte("b"))},
		{Code: OpMapRemoveByKeyRange, Bin: BinValue, Return: ReturnExists | ReturnInverted},
		{Code: OpMapGetByRank, Bin: BinValue, Return: ReturnKey | ReturnInverted, Index: 1, Count: 2},
		{Code: OpMapGetByKeys, Bin: BinValue, Return: ReturnCount | ReturnInverted, Values: []Value{Bytes([]byte("m"))}},
	}
	checkEncodes(t, build, want)
}

// checkEncodes checks that a call built by build encodes the same whether
// its ops are encoded as they are added or kept in Ops, and decodes to want.
func checkEncodes(t *testing.T, build func(*Call), want []Op) {
	t.Helper()
	plain := Call{Key: []byte("z")}
	build(&plain)
	var enc Call
	enc.BeginEncoded([]byte("z"))
	build(&enc)
	b := AppendRequest(nil, &Request{Kind: ReqRecords, Calls: []Call{plain}})
	if got := AppendRequest(nil, &Request{Kind: ReqRecords, Calls: []Call{enc}}); !bytes.Equal(got, b) {
		t.Fatalf("encoded call:\n%x\nwant\n%x", got, b)
	}
	var d Decoder
	var req Request
	if err := d.DecodeRequest(b, &req); err != nil {
		t.Fatal(err)
	}
	ops := req.Calls[0].Ops
	if len(ops) != len(want) {
		t.Fatalf("decoded %d ops, want %d", len(ops), len(want))
	}
	for i, o := range ops {
		w := want[i]
		if o.Code != w.Code || o.Bin != w.Bin || o.Return != w.Return || o.Index != w.Index || o.Count != w.Count ||
			o.Flags != w.Flags || !o.Value.Equal(w.Value) || !o.Value2.Equal(w.Value2) || !List(o.Values...).Equal(List(w.Values...)) {
			t.Errorf("op %d = %+v, want %+v", i, o, w)
		}
	}
}

// TestBlockAnswer round-trips a block answer and refuses malformed ones.
func TestBlockAnswer(t *testing.T) {
	keys := [][]byte{[]byte("k1"), {}, []byte("a longer key")}
	ans := AppendBlock([]byte("x"), int64(1500*time.Millisecond), keys, []byte("*-1\r\n"))[1:]
	var b Block
	if err := DecodeBlock(ans, &b); err != nil {
		t.Fatal(err)
	}
	if b.Timeout != int64(1500*time.Millisecond) || len(b.Keys) != 3 || string(b.Keys[2]) != "a longer key" ||
		len(b.Keys[1]) != 0 || string(b.Reply) != "*-1\r\n" {
		t.Fatalf("decoded %+v", b)
	}
	bad := map[string][]byte{
		"no key":       AppendBlock(nil, 0, nil, []byte("_\r\n")),
		"no reply":     AppendBlock(nil, 0, keys, nil),
		"cut key":      AppendBlock(nil, 0, keys, nil)[:20],
		"other status": append([]byte{StatusDone}, ans[1:]...),
		"short":        ans[:12],
		"negative":     append(append([]byte{StatusBlock}, 0, 0, 0, 0, 0, 0, 0, 0x80), ans[9:]...),
	}
	for name, a := range bad {
		if err := DecodeBlock(a, &b); err == nil {
			t.Errorf("%s: decoded %+v", name, b)
		}
	}
}

func TestAppendScore(t *testing.T) {
	for f, want := range map[float64]string{
		1.1: "1.1000000000000001", 0.1: "0.10000000000000001", 3: "3", 1e20: "1e+20", -7: "-7",
		1.5e-7: "1.4999999999999999e-07", 123456789012345678: "1.2345678901234568e+17",
		99999999999999984: "99999999999999984", 4294967296: "4294967296",
		math.Inf(1): "inf", math.Inf(-1): "-inf", math.Copysign(0, -1): "-0",
	} {
		if got := string(AppendScore(nil, f)); got != want {
			t.Errorf("AppendScore(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestAppendReplyItem(t *testing.T) {
	k, long := Bytes([]byte("m")), Bytes([]byte("0123456789"))
	for _, c := range []struct {
		t    MapReturn
		k, v Value
		want string
	}{
		{ReturnRESPKeys, k, Float(1.5), "$1\r\nm\r\n"},
		{ReturnRESPKeys | ReturnReversed, long, Nil, "$10\r\n0123456789\r\n"},
		{ReturnRESPScores, k, Float(1.5), "$1\r\nm\r\n$3\r\n1.5\r\n"},
		{ReturnRESPScores, k, Float(0.1), "$1\r\nm\r\n$19\r\n0.10000000000000001\r\n"},
		{ReturnRESPScores, k, Int(-3), "$1\r\nm\r\n$2\r\n-3\r\n"},
		{ReturnRESPScores, k, Float(math.Copysign(0, -1)), "$1\r\nm\r\n$1\r\n0\r\n"},
		{ReturnRESPScores, k, Bytes([]byte("x")), "$1\r\nm\r\n$1\r\n0\r\n"},
		{ReturnRESP3Scores, k, Float(math.Inf(-1)), "*2\r\n$1\r\nm\r\n,-inf\r\n"},
		{ReturnRESP3Scores | ReturnInverted, long, Float(2), "*2\r\n$10\r\n0123456789\r\n,2\r\n"},
	} {
		if got := string(AppendReplyItem(nil, c.t, &c.k, &c.v)); got != c.want {
			t.Errorf("AppendReplyItem(%d, %v, %v) = %q, want %q", c.t, c.k, c.v, got, c.want)
		}
	}
}
