package codec

import (
	"bytes"
	"testing"
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
}

func TestResponseRoundTrip(t *testing.T) {
	resp := Response{Results: []Result{
		{Code: OK, Generation: 3, TTL: -1, Values: []Value{Nil, Bytes([]byte("v")), Map(Bytes([]byte("a")), Int(1))}},
		{Code: FilteredOut, Msg: "guard", Values: []Value{}},
	}}
	b := AppendResponse(nil, ReqRecords, &resp)
	var d Decoder
	var got Response
	for i := 0; i < 3; i++ { // reuse of the decoder and response must give the same result
		if err := d.DecodeResponse(b, ReqRecords, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Results) != 2 || got.Results[1].Code != FilteredOut || got.Results[1].Msg != "guard" {
			t.Fatalf("got %+v", got)
		}
		if !got.Results[0].Values[2].Equal(resp.Results[0].Values[2]) || got.Results[0].TTL != -1 {
			t.Fatalf("got %+v", got.Results[0])
		}
	}
	scan := Response{Scan: ScanPage{Cursor: 99, Keys: [][]byte{[]byte("a"), []byte("b")}, Types: [][]byte{[]byte("string"), []byte("hash")}}}
	b = AppendResponse(nil, ReqScan, &scan)
	if err := d.DecodeResponse(b, ReqScan, &got); err != nil || got.Scan.Cursor != 99 || string(got.Scan.Types[1]) != "hash" {
		t.Fatalf("scan: %v %+v", err, got.Scan)
	}
	fail := Response{Code: BackendUnavail, Msg: "no nodes"}
	b = AppendResponse(nil, ReqRecords, &fail)
	if err := d.DecodeResponse(b, ReqRecords, &got); err != nil || got.Code != BackendUnavail || got.Msg != "no nodes" {
		t.Fatalf("failure: %v %+v", err, got)
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

func BenchmarkDecodeResponseGET(b *testing.B) {
	resp := Response{Results: []Result{{Generation: 1, TTL: -1, Values: []Value{Str("string"), Bytes(make([]byte, 64))}}}}
	msg := AppendResponse(nil, ReqRecords, &resp)
	var d Decoder
	var got Response
	b.ReportAllocs()
	for b.Loop() {
		if err := d.DecodeResponse(msg, ReqRecords, &got); err != nil {
			b.Fatal(err)
		}
	}
}
