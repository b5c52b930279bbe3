package codec

import (
	"encoding/binary"
	"runtime"
	"testing"
	"unsafe"
)

// inside reports whether the n bytes at p lie within buf. An empty slice or
// string must still point inside buf (never past its end) or be nil.
func inside(buf []byte, p unsafe.Pointer, n int) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	a := uintptr(p)
	if p == nil {
		return n == 0
	}
	return a >= lo && a+uintptr(n) <= lo+uintptr(len(buf)) && (n > 0 || a < lo+uintptr(len(buf)))
}

func checkValues(t *testing.T, buf []byte, got, want []Value, path string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", path, len(got), len(want))
	}
	if len(got) > 0 && !inside(buf, unsafe.Pointer(unsafe.SliceData(got)), len(got)*valueSize) {
		t.Fatalf("%s: value array outside the buffer", path)
	}
	for i := range got {
		g, w := &got[i], &want[i]
		if !g.Equal(*w) || g.Kind != w.Kind {
			t.Fatalf("%s[%d] = %+v, want %+v", path, i, *g, *w)
		}
		if cap(g.Bytes) != len(g.Bytes) || cap(g.List) != len(g.List) {
			t.Fatalf("%s[%d]: capacity beyond length lets an append overwrite the buffer", path, i)
		}
		if !inside(buf, unsafe.Pointer(unsafe.SliceData(g.Bytes)), len(g.Bytes)) {
			t.Fatalf("%s[%d]: bytes outside the buffer", path, i)
		}
		checkValues(t, buf, g.List, w.List, path+"/list")
	}
}

func TestResponseLayoutRoundTrip(t *testing.T) {
	records := Response{Msg: "note", Results: []Result{
		{Code: OK, Msg: "fine", Generation: 1 << 31, TTL: 1 << 40, Values: []Value{
			Nil, Int(-1), Bool(true), Float(-0.25), Bytes([]byte("b")), Bytes([]byte{}), Str("s"),
			List(Int(1), List(), Map(Bytes([]byte("k\x00")), Nil)), Map(),
		}},
		{Code: FilteredOut, Msg: "guard", Values: []Value{}},
		{Code: NotFound, TTL: -1, Values: []Value{Nil}},
	}}
	buf := NewResponse(ReqRecords, &records)
	if len(buf) != len(AppendResponse(nil, 0, ReqRecords, &records)) {
		t.Fatalf("buffer %d bytes, layout %d", len(buf), len(AppendResponse(nil, 0, ReqRecords, &records)))
	}
	got := ResponseAt(buf)
	if got == nil || got.Code != OK || got.Msg != "note" || len(got.Results) != 3 {
		t.Fatalf("got %+v", got)
	}
	for i, r := range got.Results {
		w := records.Results[i]
		if r.Code != w.Code || r.Msg != w.Msg || r.Generation != w.Generation || r.TTL != w.TTL {
			t.Fatalf("result %d = %+v, want %+v", i, r, w)
		}
		if !inside(buf, unsafe.Pointer(unsafe.StringData(r.Msg)), len(r.Msg)) {
			t.Fatalf("result %d: message outside the buffer", i)
		}
		checkValues(t, buf, r.Values, w.Values, "result")
	}

	scan := Response{Scan: ScanPage{Cursor: 99, Keys: [][]byte{[]byte("a"), {}}, Types: [][]byte{[]byte("string"), []byte("hash")}}}
	sb := NewResponse(ReqScan, &scan)
	s := ResponseAt(sb)
	if s.Scan.Cursor != 99 || len(s.Scan.Keys) != 2 || string(s.Scan.Keys[0]) != "a" || len(s.Scan.Keys[1]) != 0 ||
		string(s.Scan.Types[1]) != "hash" || len(s.Results) != 0 {
		t.Fatalf("scan %+v", s)
	}
	for _, k := range append(s.Scan.Keys, s.Scan.Types...) {
		if !inside(sb, unsafe.Pointer(unsafe.SliceData(k)), len(k)) {
			t.Fatal("scan key outside the buffer")
		}
	}
	if c := ResponseAt(NewResponse(ReqCount, &Response{Count: 1 << 33})); c.Count != 1<<33 {
		t.Fatalf("count %d", c.Count)
	}
	// A failed request carries its code and message and nothing else.
	f := ResponseAt(NewResponse(ReqRecords, &Response{Code: BackendUnavail, Msg: "no nodes", Results: []Result{{}}}))
	if f.Code != BackendUnavail || f.Msg != "no nodes" || len(f.Results) != 0 {
		t.Fatalf("failure %+v", f)
	}
}

// TestLayoutSurvivesGC checks what the guest relies on: a laid-out response
// referenced only through the *Response stays intact across collections,
// although the collector sees the buffer as plain bytes.
func TestLayoutSurvivesGC(t *testing.T) {
	want := Response{Results: []Result{{Generation: 7, Values: []Value{Bytes([]byte("value")), Map(Bytes([]byte("f")), Int(3))}}}}
	r := ResponseAt(NewResponse(ReqRecords, &want))
	var junk [][]byte
	for range 5 {
		runtime.GC()
		for range 1000 {
			junk = append(junk, make([]byte, 64))
		}
		junk = junk[:0]
	}
	if r.Results[0].Generation != 7 || string(r.Results[0].Values[0].Bytes) != "value" || !r.Results[0].Values[1].Equal(want.Results[0].Values[1]) {
		t.Fatalf("response changed: %+v", r.Results[0])
	}
}

func TestAppendResponseAtAnotherBase(t *testing.T) {
	r := Response{Results: []Result{{Values: []Value{Bytes([]byte("xyz"))}}}}
	const base = 0x10000
	prefix := []byte("earlier bytes")
	buf := AppendResponse(prefix, base, ReqRecords, &r)
	if string(buf[:len(prefix)]) != "earlier bytes" {
		t.Fatal("the layout overwrote what dst held")
	}
	lay := buf[len(prefix):]
	// The results slice header points at base + its offset in the layout.
	ptr := uint64(lay[offRespResults]) | uint64(lay[offRespResults+1])<<8 | uint64(lay[offRespResults+2])<<16
	if ptr < base+uint64(respSize) || ptr >= base+uint64(len(lay)) || (ptr-base)%8 != 0 {
		t.Fatalf("results at %#x, layout at %#x..%#x", ptr, base, base+len(lay))
	}
}

func TestStartLayout(t *testing.T) {
	in := Start{Proto: 3, DB: 7, Cmd: 12, ClientID: 1 << 40, Now: -1 << 62, Args: [][]byte{[]byte("GET"), []byte("k ey\x00"), {}}}
	buf := NewStart(&in)
	s := StartAt(buf)
	if s == nil || s.Proto != 3 || s.DB != 7 || s.Cmd != 12 || s.ClientID != 1<<40 || s.Now != -1<<62 || len(s.Args) != 3 {
		t.Fatalf("start %+v", s)
	}
	for i, a := range s.Args {
		if string(a) != string(in.Args[i]) || cap(a) != len(a) || !inside(buf, unsafe.Pointer(unsafe.SliceData(a)), len(a)) {
			t.Fatalf("arg %d = %q (cap %d)", i, a, cap(a))
		}
	}
	// 16 zero bytes end the message, so a name may be read as two words.
	for _, b := range buf[len(buf)-startPad:] {
		if b != 0 {
			t.Fatalf("padding %x", buf[len(buf)-startPad:])
		}
	}
	if StartAt(buf[:startSize-1]) != nil || StartAt(buf[1:]) != nil {
		t.Fatal("a short or misaligned start was accepted")
	}
	if ResponseAt(buf[:respSize-1]) != nil {
		t.Fatal("a short response was accepted")
	}
}

func TestBatchLayout(t *testing.T) {
	var in []Start
	for i := range 5 {
		args := [][]byte{[]byte("SET"), []byte("key"), make([]byte, i*3)}
		in = append(in, Start{Proto: 2 + uint8(i%2), DB: uint16(i), Cmd: uint32(i + 1), ClientID: 9, Now: int64(i) << 40, Args: args})
	}
	buf := NewBatch(in)
	if BatchLen(buf) != len(in) {
		t.Fatalf("BatchLen = %d, want %d", BatchLen(buf), len(in))
	}
	for i := range in {
		s := BatchStart(buf, i)
		if s == nil || s.Proto != in[i].Proto || s.DB != in[i].DB || s.Cmd != in[i].Cmd || s.Now != in[i].Now || len(s.Args) != 3 {
			t.Fatalf("start %d = %+v", i, s)
		}
		for j, a := range s.Args {
			if string(a) != string(in[i].Args[j]) || !inside(buf, unsafe.Pointer(unsafe.SliceData(a)), len(a)) {
				t.Fatalf("start %d arg %d = %q", i, j, a)
			}
		}
	}
	// Flags (ABI 8) leave the count and the starts as they are.
	flagged := append([]byte(nil), buf...)
	binary.LittleEndian.PutUint32(flagged, uint32(len(in))|BatchFinals)
	if BatchLen(flagged) != len(in) || BatchFlags(flagged) != BatchFinals || BatchFlags(buf) != 0 {
		t.Fatalf("flags: BatchLen %d, BatchFlags %#x and %#x", BatchLen(flagged), BatchFlags(flagged), BatchFlags(buf))
	}
	if got := AppendBatchFlags(nil, 0, in, BatchFinals); BatchFlags(got) != BatchFinals || BatchLen(got) != len(in) {
		t.Fatalf("AppendBatchFlags: BatchLen %d, BatchFlags %#x", BatchLen(got), BatchFlags(got))
	}
	// A count the message cannot hold, or over MaxBatch, reads as empty.
	if BatchLen(buf[:7]) != 0 || BatchLen(buf[:8+4*2]) != 0 {
		t.Fatal("a truncated batch was accepted")
	}
	big := make([]byte, 8+4*(MaxBatch+1))
	big[0] = MaxBatch + 1
	if BatchLen(big) != 0 {
		t.Fatal("a batch over MaxBatch was accepted")
	}
	bad := append([]byte(nil), buf...)
	bad[4] = 0xff
	bad[5] = 0xff
	if BatchStart(bad, 0) != nil {
		t.Fatal("a start offset past the message was accepted")
	}
}

func BenchmarkAppendResponseGET(b *testing.B) {
	resp := Response{Results: []Result{{Generation: 1, TTL: -1, Values: []Value{Bytes(make([]byte, 64))}}}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResponse(buf[:0], 0x1000, ReqRecords, &resp)
	}
}

// processMemory reads this process's memory as a guest's: a request built
// natively is read at its real address, as the host reads a module's.
type processMemory struct{}

func (processMemory) Read(addr, n uint64) ([]byte, bool) {
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), n), true
}

// refusingMemory has nothing at any address.
type refusingMemory struct{}

func (refusingMemory) Read(addr, n uint64) ([]byte, bool) { return nil, false }

// addrOf returns r's address; r must be on the heap, where it stays put.
func addrOf(t *testing.T, r *Request) uint64 {
	t.Cleanup(func() { runtime.KeepAlive(r) }) // keeps r on the heap and alive
	return uint64(uintptr(unsafe.Pointer(r)))
}

func TestReadRequestMatchesAppendRequest(t *testing.T) {
	records := new(Request)
	records.Kind = ReqRecords
	records.Calls = make([]Call, 3)
	records.Calls[0].BeginEncoded([]byte("k\x00 ey"))
	records.Calls[0].Guard(TypeHash).Exists(ExistsUpdateOnly).Expire(30).Generation(4).DeleteIfEmpty(BinValue).
		Get(BinValue).Put(BinType, Str(TypeHash)).Add(BinValue, Float(0.5)).
		MapPut(BinValue, MapOrderKey, []Value{Bytes([]byte("f")), Int(-3)})
	records.Calls[1].BeginEncoded([]byte{})
	records.Calls[1].Delete()
	records.Calls[2].BeginEncoded([]byte("x"))
	records.Calls[2].TTLKeep().Get(BinValue)
	scan := &Request{Kind: ReqScan, Scan: ScanArgs{Cursor: 1 << 40, Count: 10, WithType: true}}
	otherDB := new(Request)
	otherDB.Kind, otherDB.OtherDB, otherDB.DB = ReqRecords, true, 65535
	otherDB.Calls = make([]Call, 1)
	otherDB.Calls[0].BeginEncoded([]byte("moved"))
	otherDB.Calls[0].Get("")
	for name, r := range map[string]*Request{
		"records":  records,
		"other db": otherDB,
		"scan":     scan,
		"count":    {Kind: ReqCount},
		"truncate": {Kind: ReqTruncate, AllDBs: true},
	} {
		want := AppendRequest(nil, r)
		got, err := ReadRequest(processMemory{}, addrOf(t, r), nil)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %v\n got %x\nwant %x", name, err, got, want)
		}
		var d Decoder
		var back Request
		if err := d.DecodeRequest(got, &back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Decoding in place gives the same request.
		var at Request
		for range 2 { // and again into the reused request
			if err := d.DecodeRequestAt(processMemory{}, addrOf(t, r), &at); err != nil {
				t.Fatalf("%s: in place: %v", name, err)
			}
			if again := AppendRequest(nil, &at); string(again) != string(want) {
				t.Fatalf("%s: in place:\n got %x\nwant %x", name, again, want)
			}
		}
	}
}

func TestReadRequestRefusesWhatItCannotTrust(t *testing.T) {
	if _, err := ReadRequest(refusingMemory{}, 0x1000, nil); err == nil {
		t.Fatal("unreadable memory accepted")
	}
	var d Decoder
	var into Request
	if d.DecodeRequestAt(refusingMemory{}, 0x1000, &into) == nil {
		t.Fatal("unreadable memory accepted in place")
	}
	bad := new(Request)
	bad.Kind = ReqRecords
	bad.Calls = make([]Call, 1)
	bad.Calls[0].BeginEncoded([]byte("k"))
	bad.Calls[0].Get(BinValue)
	bad.Calls[0].enc = bad.Calls[0].enc[:len(bad.Calls[0].enc)-1] // a truncated op
	for name, r := range map[string]*Request{
		"no calls":     {Kind: ReqRecords},
		"decoded ops":  {Kind: ReqRecords, Calls: []Call{{Key: []byte("k"), Ops: []Op{{Code: OpGet}}}}},
		"unknown kind": {Kind: 99},
		"truncated op": bad,
	} {
		if name != "truncated op" { // ReadRequest leaves ops to the decoder
			if _, err := ReadRequest(processMemory{}, addrOf(t, r), nil); err == nil {
				t.Fatalf("%s: accepted", name)
			}
		}
		if err := d.DecodeRequestAt(processMemory{}, addrOf(t, r), &into); err == nil {
			t.Fatalf("%s: accepted in place", name)
		}
	}
	// A key whose length runs past memory.
	r := new(Request)
	r.Kind = ReqRecords
	r.Calls = make([]Call, 1)
	r.Calls[0].BeginEncoded([]byte("k"))
	mem := limitedMemory{processMemory{}, addrOf(t, r)}
	if _, err := ReadRequest(mem, mem.only, nil); err == nil {
		t.Fatal("a key outside readable memory was accepted")
	}
}

// limitedMemory reads only the Request at only and its calls array.
type limitedMemory struct {
	processMemory
	only uint64
}

func (m limitedMemory) Read(addr, n uint64) ([]byte, bool) {
	if addr == m.only || n%uint64(callSize) == 0 && n > 1 {
		return m.processMemory.Read(addr, n)
	}
	return nil, false
}

// BenchmarkRequestFromGuest compares the host's two ways of taking a SET's
// request out of guest memory: through the wire encoding (the wait path)
// and decoded in place (the inline path).
func BenchmarkRequestFromGuest(b *testing.B) {
	r := new(Request)
	r.Kind = ReqRecords
	r.Calls = make([]Call, 1)
	r.Calls[0].BeginEncoded([]byte("key:000001"))
	r.Calls[0].Guard(TypeString).TTLNever().Put(BinType, Str(TypeString)).Put(BinValue, Bytes([]byte("value")))
	addr := uint64(uintptr(unsafe.Pointer(r)))
	var d Decoder
	var out Request
	var wire []byte
	b.Run("wire", func(b *testing.B) {
		for b.Loop() {
			wire, _ = ReadRequest(processMemory{}, addr, wire[:0])
			if err := d.DecodeRequest(wire, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-place", func(b *testing.B) {
		for b.Loop() {
			if err := d.DecodeRequestAt(processMemory{}, addr, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	runtime.KeepAlive(r)
}
