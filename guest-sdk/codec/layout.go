package codec

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Start messages and responses travel as the guest's own memory layout.
// The host writes a Start or Response into guest memory exactly as the
// guest's Go code would hold it (the struct at the start, then the arrays
// and the bytes they point to, every pointer an absolute guest address),
// and the guest uses it in place: no decoding at all. Decoding in the guest was the
// dearest part of a command (Go-compiled WebAssembly pays for every load,
// branch and loop iteration); the host, native code, writes the layout in a
// fraction of that time.
//
// The layout is Go's for these types on a 64-bit architecture: wasm (Go's
// GOARCH=wasm has 8-byte pointers and ints) and every 64-bit host lay them
// out identically, so the host computes the offsets from its own copy of
// the types. A host on a 32-bit architecture would not: the check below
// stops it from compiling.
//
// To the guest's garbage collector the buffer is a []byte holding no
// pointers. That is safe because every pointer in the layout points into
// the same buffer, which the guest keeps alive while it uses the Response:
// nothing the layout points to can be freed early, and nothing outside it
// is referenced from it.

// A 64-bit architecture is required: on a 32-bit one this array length
// overflows and the package does not compile.
var _ [unsafe.Sizeof(uintptr(0)) - 8]byte

// Sizes and field offsets of the laid-out types.
const (
	startSize  = int(unsafe.Sizeof(Start{}))
	respSize   = int(unsafe.Sizeof(Response{}))
	resultSize = int(unsafe.Sizeof(Result{}))
	valueSize  = int(unsafe.Sizeof(Value{}))
	sliceSize  = int(unsafe.Sizeof([]byte(nil)))

	offStartProto  = int(unsafe.Offsetof(Start{}.Proto))
	offStartRst    = int(unsafe.Offsetof(Start{}.Restart))
	offStartDB     = int(unsafe.Offsetof(Start{}.DB))
	offStartCmd    = int(unsafe.Offsetof(Start{}.Cmd))
	offStartClient = int(unsafe.Offsetof(Start{}.ClientID))
	offStartNow    = int(unsafe.Offsetof(Start{}.Now))
	offStartArgs   = int(unsafe.Offsetof(Start{}.Args))

	offRespCode    = int(unsafe.Offsetof(Response{}.Code))
	offRespMsg     = int(unsafe.Offsetof(Response{}.Msg))
	offRespResults = int(unsafe.Offsetof(Response{}.Results))
	offRespScan    = int(unsafe.Offsetof(Response{}.Scan))
	offRespCount   = int(unsafe.Offsetof(Response{}.Count))

	offScanCursor = int(unsafe.Offsetof(ScanPage{}.Cursor))
	offScanKeys   = int(unsafe.Offsetof(ScanPage{}.Keys))
	offScanTypes  = int(unsafe.Offsetof(ScanPage{}.Types))

	offResCode   = int(unsafe.Offsetof(Result{}.Code))
	offResMsg    = int(unsafe.Offsetof(Result{}.Msg))
	offResGen    = int(unsafe.Offsetof(Result{}.Generation))
	offResTTL    = int(unsafe.Offsetof(Result{}.TTL))
	offResValues = int(unsafe.Offsetof(Result{}.Values))

	offValKind  = int(unsafe.Offsetof(Value{}.Kind))
	offValInt   = int(unsafe.Offsetof(Value{}.Int))
	offValFloat = int(unsafe.Offsetof(Value{}.Float))
	offValBytes = int(unsafe.Offsetof(Value{}.Bytes))
	offValList  = int(unsafe.Offsetof(Value{}.List))
)

// startPad is the zero bytes after a laid-out Start's last argument, so
// that the guest may read any argument of up to 16 bytes as two whole
// 64-bit words.
const startPad = 16

// AppendStart lays s out at the end of dst, for a guest that will see those
// bytes at address base (a multiple of 8), and returns the extended dst.
//
// It writes what the general layout writer would (layoutWriter.start, kept
// for reference in the tests): the Start, the argument headers, the
// argument bytes one after another, then startPad zero bytes. But it sizes
// the message first and grows dst once, and writes each header as words
// into a fixed-size view, with no append or bounds check per field: it is
// on the path of every command, where the writer's appends and checks were
// ~700 instructions of an unpipelined GET (docs/performance.md).
func AppendStart(dst []byte, base uint64, s *Start) []byte {
	args := s.Args
	size := startSize + len(args)*sliceSize + startPad
	for _, a := range args {
		size += len(a)
	}
	dst, b := extend(dst, size)
	h := (*[startSize]byte)(b)
	*h = [startSize]byte{}
	h[offStartProto] = s.Proto
	h[offStartRst] = s.Restart
	binary.LittleEndian.PutUint16(h[offStartDB:], s.DB)
	binary.LittleEndian.PutUint32(h[offStartCmd:], s.Cmd)
	binary.LittleEndian.PutUint64(h[offStartClient:], s.ClientID)
	binary.LittleEndian.PutUint64(h[offStartNow:], uint64(s.Now))
	if len(args) > 0 {
		putHeader(h[offStartArgs:], base, startSize, len(args))
	}
	data := startSize + len(args)*sliceSize
	hdrs := b[startSize:data]
	for i, a := range args {
		putHeader(hdrs[i*sliceSize:], base, data, len(a))
		data += copy(b[data:], a)
	}
	clear(b[data:])
	return dst
}

// StartAt returns the Start laid out at the start of b, or nil when b is
// too short or misaligned to hold one.
func StartAt(b []byte) *Start {
	if len(b) < startSize || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
		return nil
	}
	return (*Start)(unsafe.Pointer(unsafe.SliceData(b)))
}

// NewStart lays s out in fresh memory at that memory's own address, for
// StartAt.
func NewStart(s *Start) []byte {
	n := len(AppendStart(nil, 0, s))
	buf, base := alignedBuf(n)
	return AppendStart(buf[:0], base, s)
}

// alignedBuf allocates n bytes at an 8-aligned address and returns them
// with that address.
func alignedBuf(n int) ([]byte, uint64) {
	words := make([]uint64, (n+7)/8)
	p := unsafe.Pointer(unsafe.SliceData(words))
	return unsafe.Slice((*byte)(p), n), uint64(uintptr(p))
}

// AppendResponse lays r, a response to a request of the given kind, out
// at the end of dst, for a guest that will see those bytes at address base
// (a multiple of 8), and returns the extended dst.
func AppendResponse(dst []byte, base uint64, kind RequestKind, r *Response) []byte {
	if kind == ReqRecords && r.Code == OK && r.Msg == "" {
		if out, ok := appendRecords(dst, base, r.Results); ok {
			return out
		}
	}
	w := layoutWriter{buf: dst, at0: len(dst), base: base}
	w.response(kind, r)
	return w.buf
}

// appendRecords lays out the response to a records request whose results
// carry no message and no list or map value (every GET, SET, INCR ...), as
// the general writer would (layoutWriter.response): the Response, the
// Results, then for each result its Values (8-aligned) and their bytes. It
// sizes the message first, grows dst once and writes each struct into a
// fixed-size view, with no append or bounds check per field: on the path
// of every command, where the general writer's appends and checks were
// ~600 instructions of a GET (docs/performance.md). It reports false, and
// writes nothing, for a response it does not handle.
func appendRecords(dst []byte, base uint64, results []Result) ([]byte, bool) {
	size := respSize + len(results)*resultSize
	for i := range results {
		res := &results[i]
		if res.Msg != "" {
			return dst, false
		}
		size = (size+7)&^7 + len(res.Values)*valueSize
		for j := range res.Values {
			switch v := &res.Values[j]; v.Kind {
			case KindList, KindMap:
				return dst, false
			case KindBytes, KindStr:
				size += len(v.Bytes)
			}
		}
	}
	dst, b := extend(dst, size)
	off := respSize + len(results)*resultSize
	clear(b[:off])
	h := (*[respSize]byte)(b)
	putHeader(h[offRespResults:], base, respSize, len(results))
	for i := range results {
		res := &results[i]
		rb := (*[resultSize]byte)(b[respSize+i*resultSize:])
		binary.LittleEndian.PutUint32(rb[offResCode:], uint32(res.Code))
		binary.LittleEndian.PutUint32(rb[offResGen:], res.Generation)
		binary.LittleEndian.PutUint64(rb[offResTTL:], uint64(res.TTL))
		arr := (off + 7) &^ 7
		clear(b[off : arr+len(res.Values)*valueSize]) // the padding, then the Values
		off = arr + len(res.Values)*valueSize
		putHeader(rb[offResValues:], base, arr, len(res.Values))
		for j := range res.Values {
			v := &res.Values[j]
			vb := (*[valueSize]byte)(b[arr+j*valueSize:])
			vb[offValKind] = uint8(v.Kind)
			switch v.Kind {
			case KindInt, KindBool:
				binary.LittleEndian.PutUint64(vb[offValInt:], uint64(v.Int))
			case KindFloat:
				binary.LittleEndian.PutUint64(vb[offValFloat:], math.Float64bits(v.Float))
			case KindBytes, KindStr:
				putHeader(vb[offValBytes:], base, off, len(v.Bytes))
				off += copy(b[off:], v.Bytes)
			}
		}
	}
	return dst, true
}

// putHeader writes into h the header of a slice of n elements at offset
// data of a layout at base, as layoutWriter.header does: an empty slice
// points at the layout's start.
func putHeader(h []byte, base uint64, data, n int) {
	h = h[:24]
	p := base + uint64(data)
	if n == 0 {
		p = base
	}
	binary.LittleEndian.PutUint64(h[0:], p)
	binary.LittleEndian.PutUint64(h[8:], uint64(n))
	binary.LittleEndian.PutUint64(h[16:], uint64(n))
}

// ResponseAt returns the Response laid out at the start of b, or nil when b
// is too short or misaligned to hold one. The Response and everything it
// points to live in b.
func ResponseAt(b []byte) *Response {
	if len(b) < respSize || uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 != 0 {
		return nil
	}
	return (*Response)(unsafe.Pointer(unsafe.SliceData(b)))
}

// layoutWriter appends a layout to buf from at0, where the guest will see
// address base. Offsets are from at0; structs are placed at multiples of
// 8 and zeroed, bytes are placed as they come.
type layoutWriter struct {
	buf  []byte
	at0  int // the layout's start in buf
	base uint64
}

// alloc appends n zero bytes aligned to align (a power of two) and returns
// their offset.
func (w *layoutWriter) alloc(n, align int) int {
	off := len(w.buf) - w.at0
	pad := -off & (align - 1)
	w.buf = append(w.buf, make([]byte, pad+n)...)
	return off + pad
}

func (w *layoutWriter) u64(at int, v uint64) { binary.LittleEndian.PutUint64(w.buf[w.at0+at:], v) }
func (w *layoutWriter) u32(at int, v uint32) { binary.LittleEndian.PutUint32(w.buf[w.at0+at:], v) }
func (w *layoutWriter) u16(at int, v uint16) { binary.LittleEndian.PutUint16(w.buf[w.at0+at:], v) }
func (w *layoutWriter) u8(at int, v uint8)   { w.buf[w.at0+at] = v }

// header writes a slice header (n elements at offset data) at at. An empty
// slice points at the layout's start: data may be its end, and a pointer
// past an object confuses a garbage collector.
func (w *layoutWriter) header(at, data, n int) {
	if n == 0 {
		data = 0
	}
	w.u64(at, w.base+uint64(data))
	w.u64(at+8, uint64(n))
	w.u64(at+16, uint64(n))
}

// bytes appends b and writes its slice header at at.
func (w *layoutWriter) bytes(at int, b []byte) {
	data := len(w.buf) - w.at0
	w.buf = append(w.buf, b...)
	w.header(at, data, len(b))
}

// str appends s and writes its string header at at; "" is the zero string,
// already there.
func (w *layoutWriter) str(at int, s string) {
	if s == "" {
		return
	}
	data := len(w.buf) - w.at0
	w.buf = append(w.buf, s...)
	w.u64(at, w.base+uint64(data))
	w.u64(at+8, uint64(len(s)))
}

// zero appends n bytes of zeroed, 8-aligned structs.
func (w *layoutWriter) zero(n int) int { return w.alloc(n, 8) }

func (w *layoutWriter) response(kind RequestKind, r *Response) {
	at := w.zero(respSize)
	w.u32(at+offRespCode, uint32(r.Code))
	w.str(at+offRespMsg, r.Msg)
	if r.Code != OK {
		return
	}
	switch kind {
	case ReqRecords:
		arr := w.zero(len(r.Results) * resultSize)
		w.header(at+offRespResults, arr, len(r.Results))
		for i := range r.Results {
			w.result(arr+i*resultSize, &r.Results[i])
		}
	case ReqScan:
		s := at + offRespScan
		w.u64(s+offScanCursor, r.Scan.Cursor)
		w.byteSlices(s+offScanKeys, r.Scan.Keys)
		w.byteSlices(s+offScanTypes, r.Scan.Types)
	case ReqCount:
		w.u64(at+offRespCount, uint64(r.Count))
	}
}

func (w *layoutWriter) result(at int, res *Result) {
	w.u32(at+offResCode, uint32(res.Code))
	w.str(at+offResMsg, res.Msg)
	w.u32(at+offResGen, res.Generation)
	w.u64(at+offResTTL, uint64(res.TTL))
	w.values(at+offResValues, res.Values)
}

func (w *layoutWriter) byteSlices(at int, bs [][]byte) {
	if len(bs) == 0 {
		return
	}
	arr := w.zero(len(bs) * sliceSize)
	w.header(at, arr, len(bs))
	for i, b := range bs {
		w.bytes(arr+i*sliceSize, b)
	}
}

// values lays out vs and writes their slice header at at. The store never
// nests deeper than a map of scalars, but nothing here depends on that.
func (w *layoutWriter) values(at int, vs []Value) {
	arr := w.zero(len(vs) * valueSize)
	w.header(at, arr, len(vs))
	for i := range vs {
		v, p := &vs[i], arr+i*valueSize
		w.u8(p+offValKind, uint8(v.Kind))
		switch v.Kind {
		case KindInt, KindBool:
			w.u64(p+offValInt, uint64(v.Int))
		case KindFloat:
			w.u64(p+offValFloat, math.Float64bits(v.Float))
		case KindBytes, KindStr:
			w.bytes(p+offValBytes, v.Bytes)
		case KindList, KindMap:
			w.values(p+offValList, v.List)
		}
	}
}

// NewResponse lays r out in fresh memory at that memory's own address, as a
// host sharing the guest code's process does (sdktest, tests), and returns
// the buffer, for ResponseAt.
func NewResponse(kind RequestKind, r *Response) []byte {
	n := len(AppendResponse(nil, 0, kind, r))
	buf, base := alignedBuf(n)
	return AppendResponse(buf[:0], base, kind, r)
}

// Requests are read where the guest built them. The guest hands the host
// the address of its codec.Request; ReadRequest follows the Request's calls,
// keys, policies and encoded ops (Call.BeginEncoded) through guest memory
// and appends the request's wire encoding, exactly what AppendRequest
// would append for it, for a request that must outlive the guest call (it
// waits on the store); DecodeRequestAt decodes one in place for the host
// to run while the guest waits in exec. The guest encodes nothing but its
// ops. Unlike the layouts the host writes, this one comes
// from the module, which the host does not trust: every address and length
// is checked, and a call holding decoded Ops (not encoded ones) is refused.

// Memory is guest memory as the host reads it.
type Memory interface {
	// Read returns the n bytes at guest address addr, or false when they
	// are not all in memory. The view is valid until the guest runs again.
	Read(addr, n uint64) ([]byte, bool)
}

// Sizes and field offsets of the request types the host reads.
const (
	reqSize  = int(unsafe.Sizeof(Request{}))
	callSize = int(unsafe.Sizeof(Call{}))

	offReqKind   = int(unsafe.Offsetof(Request{}.Kind))
	offReqCalls  = int(unsafe.Offsetof(Request{}.Calls))
	offReqScan   = int(unsafe.Offsetof(Request{}.Scan))
	offReqAllDBs = int(unsafe.Offsetof(Request{}.AllDBs))
	offReqOther  = int(unsafe.Offsetof(Request{}.OtherDB))
	offReqDB     = int(unsafe.Offsetof(Request{}.DB))

	offScanArgsCursor   = int(unsafe.Offsetof(ScanArgs{}.Cursor))
	offScanArgsCount    = int(unsafe.Offsetof(ScanArgs{}.Count))
	offScanArgsWithType = int(unsafe.Offsetof(ScanArgs{}.WithType))

	offCallKey     = int(unsafe.Offsetof(Call{}.Key))
	offCallPolicy  = int(unsafe.Offsetof(Call{}.Policy))
	offCallOps     = int(unsafe.Offsetof(Call{}.Ops))
	offCallEnc     = int(unsafe.Offsetof(Call{}.enc))
	offCallNenc    = int(unsafe.Offsetof(Call{}.nenc))
	offCallEncoded = int(unsafe.Offsetof(Call{}.encoded))

	offPolExists = int(unsafe.Offsetof(Policy{}.Exists))
	offPolTTL    = int(unsafe.Offsetof(Policy{}.TTL))
	offPolSecs   = int(unsafe.Offsetof(Policy{}.Seconds))
	offPolGen    = int(unsafe.Offsetof(Policy{}.Generation))
	offPolGuard  = int(unsafe.Offsetof(Policy{}.Guard))
	offPolDIE    = int(unsafe.Offsetof(Policy{}.DeleteIfEmpty))
)

// maxCalls bounds the calls of one request read from a guest.
const maxCalls = 1 << 20

// ReadRequest reads the Request at guest address addr and appends its
// encoding to dst.
func ReadRequest(mem Memory, addr uint64, dst []byte) ([]byte, error) {
	r, ok := mem.Read(addr, uint64(reqSize))
	if !ok {
		return dst, ErrCorrupt
	}
	kind := RequestKind(r[offReqKind])
	dst = append(dst, byte(kind))
	switch kind {
	case ReqRecords:
		p, n := get64(r[offReqCalls:]), get64(r[offReqCalls+8:])
		if n == 0 || n > maxCalls {
			return dst, ErrCorrupt
		}
		calls, ok := mem.Read(p, n*uint64(callSize))
		if !ok {
			return dst, ErrCorrupt
		}
		dst = put32(dst, uint32(n))
		for i := range int(n) {
			c := calls[i*callSize : (i+1)*callSize]
			if c[offCallEncoded] == 0 || get64(c[offCallOps+8:]) != 0 {
				return dst, ErrCorrupt // only encoded calls are read
			}
			key, ok := readSlice(mem, c[offCallKey:])
			if !ok {
				return dst, ErrCorrupt
			}
			dst = appendBytes(dst, key)
			pol := c[offCallPolicy:]
			guard, ok1 := readSlice(mem, pol[offPolGuard:])
			die, ok2 := readSlice(mem, pol[offPolDIE:])
			enc, ok3 := readSlice(mem, c[offCallEnc:])
			if !ok1 || !ok2 || !ok3 {
				return dst, ErrCorrupt
			}
			// The strings only live while appendPolicy copies them.
			p := Policy{
				Exists:        ExistsPolicy(pol[offPolExists]),
				TTL:           TTLMode(pol[offPolTTL]),
				Seconds:       int64(get64(pol[offPolSecs:])),
				Generation:    get32(pol[offPolGen:]),
				Guard:         unsafe.String(unsafe.SliceData(guard), len(guard)),
				DeleteIfEmpty: unsafe.String(unsafe.SliceData(die), len(die)),
			}
			dst = appendPolicy(dst, &p)
			dst = put32(dst, get32(c[offCallNenc:]))
			dst = append(dst, enc...)
		}
		if r[offReqOther] != 0 {
			dst = append(dst, 1)
			dst = put32(dst, uint32(binary.LittleEndian.Uint16(r[offReqDB:])))
		}
	case ReqScan:
		s := r[offReqScan:]
		dst = put64(dst, get64(s[offScanArgsCursor:]))
		dst = put64(dst, get64(s[offScanArgsCount:]))
		dst = append(dst, boolByte(s[offScanArgsWithType] != 0))
	case ReqCount:
	case ReqTruncate:
		dst = append(dst, boolByte(r[offReqAllDBs] != 0))
	default:
		return dst, ErrCorrupt
	}
	return dst, nil
}

// DecodeRequestAt decodes the Request at guest address addr straight from
// guest memory into r, reusing r's slices, as DecodeRequest would decode
// what ReadRequest appends, without the copy in between. r's keys and
// byte values alias guest memory: valid only until the guest runs again,
// which is enough for a request the host runs while the guest waits in
// exec. It checks what ReadRequest checks.
func (d *Decoder) DecodeRequestAt(mem Memory, addr uint64, r *Request) error {
	b, ok := mem.Read(addr, uint64(reqSize))
	if !ok {
		return ErrCorrupt
	}
	d.reset(nil)
	r.Kind = RequestKind(b[offReqKind])
	r.Calls = r.Calls[:0]
	r.AllDBs = false
	r.OtherDB, r.DB = false, 0
	r.Scan = ScanArgs{}
	switch r.Kind {
	case ReqRecords:
		r.OtherDB, r.DB = b[offReqOther] != 0, binary.LittleEndian.Uint16(b[offReqDB:])
		p, n := get64(b[offReqCalls:]), get64(b[offReqCalls+8:])
		if n == 0 || n > maxCalls {
			return ErrCorrupt
		}
		calls, ok := mem.Read(p, n*uint64(callSize))
		if !ok {
			return ErrCorrupt
		}
		for i := range int(n) {
			g := calls[i*callSize : (i+1)*callSize]
			if g[offCallEncoded] == 0 || get64(g[offCallOps+8:]) != 0 {
				return ErrCorrupt
			}
			key, ok := readSlice(mem, g[offCallKey:])
			pol := g[offCallPolicy:]
			guard, ok1 := readSlice(mem, pol[offPolGuard:])
			die, ok2 := readSlice(mem, pol[offPolDIE:])
			enc, ok3 := readSlice(mem, g[offCallEnc:])
			if !ok || !ok1 || !ok2 || !ok3 {
				return ErrCorrupt
			}
			c := nextCall(r)
			c.Key = key
			c.Policy = Policy{
				Exists:        ExistsPolicy(pol[offPolExists]),
				TTL:           TTLMode(pol[offPolTTL]),
				Seconds:       int64(get64(pol[offPolSecs:])),
				Generation:    get32(pol[offPolGen:]),
				Guard:         internName(guard),
				DeleteIfEmpty: internName(die),
			}
			nops := int(get32(g[offCallNenc:]))
			if nops > len(enc)/2 {
				return ErrCorrupt // an op takes at least 2 bytes
			}
			d.b, d.off = enc, 0
			d.ops(c, nops)
			if d.err != nil || d.off != len(enc) {
				return ErrCorrupt
			}
		}
	case ReqScan:
		s := b[offReqScan:]
		r.Scan = ScanArgs{Cursor: get64(s[offScanArgsCursor:]), Count: int64(get64(s[offScanArgsCount:])),
			WithType: s[offScanArgsWithType] != 0}
	case ReqCount:
	case ReqTruncate:
		r.AllDBs = b[offReqAllDBs] != 0
	default:
		return ErrCorrupt
	}
	return nil
}

// readSlice reads the bytes of the slice or string whose header (data
// pointer, then length) is at the start of h.
func readSlice(mem Memory, h []byte) ([]byte, bool) {
	n := get64(h[8:])
	if n == 0 {
		return nil, true
	}
	return mem.Read(get64(h), n)
}

// A batch is several Start messages in one host→guest message, for
// respike_batch: a header of the count (u32) and each Start's offset from
// the message's start (u32 each), padded to 8 bytes, then the Starts laid
// out one after another, each 8-aligned and followed by its own padding.

//
// ABI 8: the count's upper 16 bits are flags (BatchFinals); a host sets
// them only for a module of ABI 8 or later, older modules see the count
// alone.

// MaxBatch is the most commands one batch message carries.
const MaxBatch = 64

// BatchFinals, a batch flag (ABI 8), lets a command of the batch that
// ends with a final answer hand it over through respike.reply (the answer
// as respike_start would return it, status byte first), the batch going
// on after it; the host reads its request during that call. Without it a
// final answer ends the batch, as a Pending one does. The host sets it
// where it runs the batch's requests together (commands on distinct keys).
const BatchFinals uint32 = 1 << 16

// AppendBatch lays starts out as a batch at the end of dst, for a guest
// that will see those bytes at address base (a multiple of 8), and returns
// the extended dst. len(starts) must be 1 to MaxBatch.
func AppendBatch(dst []byte, base uint64, starts []Start) []byte {
	return AppendBatchFlags(dst, base, starts, 0)
}

// AppendBatchFlags is AppendBatch with flags (BatchFinals) in the header.
func AppendBatchFlags(dst []byte, base uint64, starts []Start, flags uint32) []byte {
	at0 := len(dst)
	hdr := (4 + 4*len(starts) + 7) &^ 7
	dst = append(dst, make([]byte, hdr)...)
	binary.LittleEndian.PutUint32(dst[at0:], uint32(len(starts))|flags&^0xffff)
	for i := range starts {
		off := len(dst) - at0
		if pad := -off & 7; pad != 0 {
			dst = append(dst, make([]byte, pad)...)
			off += pad
		}
		binary.LittleEndian.PutUint32(dst[at0+4+4*i:], uint32(off))
		dst = AppendStart(dst, base+uint64(off), &starts[i])
	}
	return dst
}

// BatchLen returns the number of Starts in the batch laid out in b, or 0
// when b cannot hold one.
func BatchLen(b []byte) int {
	if len(b) < 8 {
		return 0
	}
	n := int(binary.LittleEndian.Uint32(b) & 0xffff)
	if n > MaxBatch || 4+4*n > len(b) {
		return 0
	}
	return n
}

// BatchFlags returns the flags of the batch laid out in b (BatchFinals).
func BatchFlags(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(b) &^ 0xffff
}

// BatchStart returns the i-th Start of the batch laid out in b (i below
// BatchLen(b)), or nil when its offset is bad.
func BatchStart(b []byte, i int) *Start {
	off := int(binary.LittleEndian.Uint32(b[4+4*i:]))
	if off > len(b) {
		return nil
	}
	return StartAt(b[off:])
}

// NewBatch lays starts out as a batch in fresh memory at that memory's own
// address, for BatchStart.
func NewBatch(starts []Start) []byte {
	n := len(AppendBatch(nil, 0, starts))
	buf, base := alignedBuf(n)
	return AppendBatch(buf[:0], base, starts)
}

// extend returns dst lengthened by size bytes, grown at most once, and the
// added bytes, for the one-pass layout writers.
func extend(dst []byte, size int) ([]byte, []byte) {
	at0 := len(dst)
	if cap(dst)-at0 < size {
		dst = append(dst[:at0:at0], make([]byte, size)...)
	} else {
		dst = dst[:at0+size]
	}
	return dst, dst[at0:]
}
