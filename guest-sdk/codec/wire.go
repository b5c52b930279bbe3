package codec

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrCorrupt is returned when a message does not decode.
var ErrCorrupt = errors.New("codec: corrupt message")

// Encoding: fixed-width little-endian fields. A byte for enums, kinds and
// presence bits; 4 bytes (u32) for lengths, counts, generations, flags and
// result codes; 8 bytes for integers, floats, TTLs and cursors; byte strings
// are a u32 length then the bytes. A policy and an op open with a byte of
// presence bits and carry only the fields that are not zero.
//
// The guest runs the encoders as Go-compiled WebAssembly, where every call,
// branch and loop iteration is several times dearer than native, while a
// fixed-width field is one load or store: varints would make messages a few
// bytes shorter and the guest much slower. (Start messages and responses
// are not encoded at all: see layout.go.)
//
// Every Append function appends to dst and returns it, so a caller that
// reuses dst encodes without allocating.

// maxDepth bounds the nesting of list and map values, so that a corrupt or
// hostile message cannot recurse the decoder without limit.
const maxDepth = 64

func put32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }
func put64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

func get16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func get32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func get64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func appendBytes(dst, b []byte) []byte {
	return append(put32(dst, uint32(len(b))), b...)
}

func appendString(dst []byte, s string) []byte {
	if len(s) == 1 {
		// Bin names: a byte store beats a call to memmove in wasm.
		return append(dst, 1, 0, 0, 0, s[0])
	}
	return append(put32(dst, uint32(len(s))), s...)
}

// AppendValue appends the encoding of v.
func AppendValue(dst []byte, v Value) []byte { return appendValue(dst, &v) }

func appendValue(dst []byte, v *Value) []byte {
	switch v.Kind {
	case KindInt, KindBool:
		return put64(append(dst, byte(v.Kind)), uint64(v.Int))
	case KindFloat:
		return put64(append(dst, byte(KindFloat)), math.Float64bits(v.Float))
	case KindBytes, KindStr:
		return appendBytes(append(dst, byte(v.Kind)), v.Bytes)
	case KindList, KindMap:
		dst = put32(append(dst, byte(v.Kind)), uint32(len(v.List)))
		for i := range v.List {
			dst = appendValue(dst, &v.List[i])
		}
		return dst
	}
	// KindNil, or an unknown kind, which the decoder refuses.
	return append(dst, byte(v.Kind))
}

func appendValues(dst []byte, vs []Value) []byte {
	dst = put32(dst, uint32(len(vs)))
	for i := range vs {
		dst = appendValue(dst, &vs[i])
	}
	return dst
}

// Presence bits of a Policy.
const (
	polExists = 1 << iota
	polTTL
	polSeconds
	polGeneration
	polGuard
	polDeleteIfEmpty
)

// Presence bits of an Op.
const (
	opReturn = 1 << iota
	opBin
	opValue
	opValue2
	opValues
	opIndex
	opCount
	opFlags
)

func appendPolicy(dst []byte, p *Policy) []byte {
	var m byte
	if p.Exists != 0 {
		m |= polExists
	}
	if p.TTL != 0 {
		m |= polTTL
	}
	if p.Seconds != 0 {
		m |= polSeconds
	}
	if p.Generation != 0 {
		m |= polGeneration
	}
	if p.Guard != "" {
		m |= polGuard
	}
	if p.DeleteIfEmpty != "" {
		m |= polDeleteIfEmpty
	}
	dst = append(dst, m)
	if m == 0 {
		return dst
	}
	if m&polExists != 0 {
		dst = append(dst, byte(p.Exists))
	}
	if m&polTTL != 0 {
		dst = append(dst, byte(p.TTL))
	}
	if m&polSeconds != 0 {
		dst = put64(dst, uint64(p.Seconds))
	}
	if m&polGeneration != 0 {
		dst = put32(dst, p.Generation)
	}
	if m&polGuard != 0 {
		dst = appendString(dst, p.Guard)
	}
	if m&polDeleteIfEmpty != 0 {
		dst = appendString(dst, p.DeleteIfEmpty)
	}
	return dst
}

func appendOp(dst []byte, o *Op) []byte {
	var m byte
	if o.Return != 0 {
		m |= opReturn
	}
	if o.Bin != "" {
		m |= opBin
	}
	if o.Value.Kind != KindNil {
		m |= opValue
	}
	if o.Value2.Kind != KindNil {
		m |= opValue2
	}
	if len(o.Values) != 0 {
		m |= opValues
	}
	if o.Index != 0 {
		m |= opIndex
	}
	if o.Count != 0 {
		m |= opCount
	}
	if o.Flags != 0 {
		m |= opFlags
	}
	dst = append(dst, byte(o.Code), m)
	if m&opReturn != 0 {
		dst = append(dst, byte(o.Return))
	}
	if m&opBin != 0 {
		dst = appendString(dst, o.Bin)
	}
	if m&^(opReturn|opBin) == 0 {
		return dst // Get, Delete, MapSize ...: nothing more
	}
	if m&opValue != 0 {
		dst = appendValue(dst, &o.Value)
	}
	if m&opValue2 != 0 {
		dst = appendValue(dst, &o.Value2)
	}
	if m&opValues != 0 {
		dst = appendValues(dst, o.Values)
	}
	if m&opIndex != 0 {
		dst = put64(dst, uint64(o.Index))
	}
	if m&opCount != 0 {
		dst = put64(dst, uint64(o.Count))
	}
	if m&opFlags != 0 {
		dst = put32(dst, o.Flags)
	}
	return dst
}

// appendBinOp appends an op that has at most a bin, as appendOp would.
func appendBinOp(dst []byte, code OpCode, bin string) []byte {
	if bin == "" {
		return append(dst, byte(code), 0)
	}
	return appendString(append(dst, byte(code), opBin), bin)
}

// appendValueOp appends an op that has a bin and a value, as appendOp would.
// A scalar value (every Put, Add and Append a command makes) is written
// with one growth of dst: in wasm each append is a call's worth of work.
func appendValueOp(dst []byte, code OpCode, bin string, v *Value) []byte {
	var vlen int
	switch v.Kind {
	case KindInt, KindBool, KindFloat:
		vlen = 1 + 8
	case KindBytes, KindStr:
		vlen = 1 + 4 + len(v.Bytes)
	default:
		return appendOp(dst, &Op{Code: code, Bin: bin, Value: *v})
	}
	m, blen := byte(opValue), 0
	if bin != "" {
		m, blen = opValue|opBin, 4+len(bin)
	}
	n := 2 + blen + vlen
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst[:l:l], make([]byte, n)...)
	} else {
		dst = dst[:l+n]
	}
	p := dst[l : l+n : l+n]
	p[0], p[1] = byte(code), m
	if bin != "" {
		binary.LittleEndian.PutUint32(p[2:], uint32(len(bin)))
		if len(bin) == 1 {
			p[6] = bin[0] // bin names are one byte: a store, not a call to memmove
		} else {
			copy(p[6:], bin)
		}
	}
	p = p[2+blen:]
	p[0] = byte(v.Kind)
	switch v.Kind {
	case KindInt, KindBool:
		binary.LittleEndian.PutUint64(p[1:], uint64(v.Int))
	case KindFloat:
		binary.LittleEndian.PutUint64(p[1:], math.Float64bits(v.Float))
	default:
		binary.LittleEndian.PutUint32(p[1:], uint32(len(v.Bytes)))
		copy(p[5:], v.Bytes)
	}
	return dst
}

// appendFieldsOp appends an op without Value or Value2, as appendOp
// would, with one growth of dst when its values are scalars (bytes,
// strings, integers, floats, booleans, nil: what commands put in maps and
// lists and read maps by); a list or map among them goes through appendOp.
func appendFieldsOp(dst []byte, code OpCode, ret MapReturn, bin string, vs []Value, index, count int64, flags uint32) []byte {
	var m byte
	n := 2
	if ret != 0 {
		m |= opReturn
		n++
	}
	if bin != "" {
		m |= opBin
		n += 4 + len(bin)
	}
	if len(vs) != 0 {
		m |= opValues
		n += 4
		for i := range vs {
			k := scalarLen(&vs[i])
			if k < 0 {
				return appendOp(dst, &Op{Code: code, Bin: bin, Return: ret, Values: vs, Index: index, Count: count, Flags: flags})
			}
			n += k
		}
	}
	m, n = indexCountLen(m, n, index, count)
	if flags != 0 {
		m |= opFlags
		n += 4
	}
	dst, p := extendOp(dst, n)
	p[0], p[1] = byte(code), m
	i := 2
	if ret != 0 {
		p[i] = byte(ret)
		i++
	}
	if bin != "" {
		i = putName(p, i, bin)
	}
	if len(vs) != 0 {
		binary.LittleEndian.PutUint32(p[i:], uint32(len(vs)))
		i += 4
		for j := range vs {
			i = putScalar(p, i, &vs[j])
		}
	}
	if index != 0 {
		binary.LittleEndian.PutUint64(p[i:], uint64(index))
		i += 8
	}
	if count != 0 {
		binary.LittleEndian.PutUint64(p[i:], uint64(count))
		i += 8
	}
	if flags != 0 {
		binary.LittleEndian.PutUint32(p[i:], flags)
	}
	return dst
}

// appendBytesOp appends an op with a bin, a blob value and optionally an
// index and a count (a bit write, an HLL raise, an append), as appendOp
// would, with one growth of dst.
func appendBytesOp(dst []byte, code OpCode, bin string, b []byte, index, count int64) []byte {
	m := byte(opValue)
	n := 2 + 5 + len(b)
	if bin != "" {
		m |= opBin
		n += 4 + len(bin)
	}
	m, n = indexCountLen(m, n, index, count)
	dst, p := extendOp(dst, n)
	p[0], p[1] = byte(code), m
	i := 2
	if bin != "" {
		i = putName(p, i, bin)
	}
	p[i] = byte(KindBytes)
	binary.LittleEndian.PutUint32(p[i+1:], uint32(len(b)))
	i += 5 + copy(p[i+5:], b)
	if index != 0 {
		binary.LittleEndian.PutUint64(p[i:], uint64(index))
		i += 8
	}
	if count != 0 {
		binary.LittleEndian.PutUint64(p[i:], uint64(count))
	}
	return dst
}

// indexCountLen adds an op's index and count, those not zero, to its
// presence bits m and encoded length n: appendFieldsOp's and
// appendBytesOp's shared part, inlined into both (no call). Their writes
// of the two stay in each: no helper of one PutUint64 fits Go's inlining
// budget (cost 82 to 164 against 80), and a call would cost every op by
// index or rank (LRANGE, ZRANGE, GETRANGE) ~50 instructions in
// WebAssembly.
func indexCountLen(m byte, n int, index, count int64) (byte, int) {
	if index != 0 {
		m |= opIndex
		n += 8
	}
	if count != 0 {
		m |= opCount
		n += 8
	}
	return m, n
}

// appendMapPutScore appends a map put of one blob key and one float value
// as appendOp would.
func appendMapPutScore(dst []byte, bin string, flags uint32, member []byte, score float64) []byte {
	m := byte(opBin | opValues)
	n := 2 + 4 + len(bin) + 4 + 5 + len(member) + 9
	if flags != 0 {
		m |= opFlags
		n += 4
	}
	dst, p := extendOp(dst, n)
	p[0], p[1] = byte(OpMapPut), m
	i := putName(p, 2, bin)
	binary.LittleEndian.PutUint32(p[i:], 2)
	p[i+4] = byte(KindBytes)
	binary.LittleEndian.PutUint32(p[i+5:], uint32(len(member)))
	i += 9 + copy(p[i+9:], member)
	p[i] = byte(KindFloat)
	binary.LittleEndian.PutUint64(p[i+1:], math.Float64bits(score))
	if flags != 0 {
		binary.LittleEndian.PutUint32(p[i+9:], flags)
	}
	return dst
}

// appendBlobOp appends an op of a one-byte bin and a blob value, nothing
// else, as appendOp would: its first twelve bytes (code, presence bits,
// the bin's name, the value's kind and length) as a word and a half.
func appendBlobOp(dst []byte, code OpCode, bin byte, b []byte) []byte {
	dst, p := extendOp(dst, 12+len(b))
	_ = p[11]
	binary.LittleEndian.PutUint64(p, uint64(code)|uint64(opBin|opValue)<<8|1<<16|uint64(bin)<<48|uint64(KindBytes)<<56)
	binary.LittleEndian.PutUint32(p[8:], uint32(len(b)))
	copy(p[12:], b)
	return dst
}

// extendOp extends dst by n bytes and returns it and the new bytes.
func extendOp(dst []byte, n int) ([]byte, []byte) {
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst[:l:l], make([]byte, n)...)
	} else {
		dst = dst[:l+n]
	}
	return dst, dst[l : l+n : l+n]
}

// putName writes a bin name at p[i:] as appendString does and returns
// the index after it.
func putName(p []byte, i int, s string) int {
	binary.LittleEndian.PutUint32(p[i:], uint32(len(s)))
	if len(s) == 1 {
		p[i+4] = s[0] // bin names are one byte: a store, not a call to memmove
		return i + 5
	}
	return i + 4 + copy(p[i+4:], s)
}

// scalarLen is the length of v's encoding when it is not a list or a map,
// else -1.
func scalarLen(v *Value) int {
	switch v.Kind {
	case KindInt, KindBool, KindFloat:
		return 9
	case KindBytes, KindStr:
		return 5 + len(v.Bytes)
	case KindList, KindMap:
		return -1
	}
	return 1
}

// putScalar writes v's encoding at p[i:] as appendValue does (v not a
// list or a map) and returns the index after it.
func putScalar(p []byte, i int, v *Value) int {
	p[i] = byte(v.Kind)
	switch v.Kind {
	case KindInt, KindBool:
		binary.LittleEndian.PutUint64(p[i+1:], uint64(v.Int))
		return i + 9
	case KindFloat:
		binary.LittleEndian.PutUint64(p[i+1:], math.Float64bits(v.Float))
		return i + 9
	case KindBytes, KindStr:
		binary.LittleEndian.PutUint32(p[i+1:], uint32(len(v.Bytes)))
		return i + 5 + copy(p[i+5:], v.Bytes)
	}
	return i + 1
}

// AppendRequest appends the encoding of r.
func AppendRequest(dst []byte, r *Request) []byte {
	dst = append(dst, byte(r.Kind))
	switch r.Kind {
	case ReqRecords:
		dst = put32(dst, uint32(len(r.Calls)))
		for i := range r.Calls {
			c := &r.Calls[i]
			dst = appendBytes(dst, c.Key)
			dst = appendPolicy(dst, &c.Policy)
			dst = put32(dst, uint32(len(c.Ops))+c.nenc)
			for j := range c.Ops {
				dst = appendOp(dst, &c.Ops[j])
			}
			dst = append(dst, c.enc...)
		}
		if r.OtherDB {
			// An optional trailer: a request without it runs in the
			// connection's database.
			dst = append(dst, 1)
			dst = put32(dst, uint32(r.DB))
		}
	case ReqScan:
		dst = put64(dst, r.Scan.Cursor)
		dst = put64(dst, uint64(r.Scan.Count))
		dst = append(dst, boolByte(r.Scan.WithType))
	case ReqTruncate:
		dst = append(dst, boolByte(r.AllDBs))
	}
	return dst
}

// AppendManifest appends the encoding of m.
func AppendManifest(dst []byte, m *Manifest) []byte {
	dst = appendString(dst, m.Module)
	dst = appendString(dst, m.Version)
	dst = put32(dst, uint32(len(m.Commands)))
	for _, c := range m.Commands {
		dst = appendString(dst, c.Name)
		dst = put64(dst, uint64(int64(c.Arity)))
		dst = put32(dst, uint32(len(c.Flags)))
		for _, f := range c.Flags {
			dst = appendString(dst, f)
		}
		dst = put64(dst, uint64(int64(c.FirstKey)))
		dst = put64(dst, uint64(int64(c.LastKey)))
		dst = put64(dst, uint64(int64(c.Step)))
		dst = appendString(dst, c.Group)
		dst = appendString(dst, c.Summary)
		dst = appendString(dst, c.Since)
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Decoder decodes messages. It keeps its buffers between uses so that a
// long-lived Decoder decodes without allocating once warm. Decoded byte
// slices alias the input, and decoded Values alias the Decoder's arena: both
// stay valid until the input is overwritten or the Decoder is used again.
type Decoder struct {
	b     []byte
	off   int
	err   error
	arena []Value
	used  int
	need  int
}

func (d *Decoder) reset(b []byte) {
	// Size the arena for the largest demand seen so far, so that a Decoder
	// that keeps decoding similar messages stops allocating.
	if d.need > len(d.arena) {
		d.arena = make([]Value, d.need)
	}
	d.b, d.off, d.err, d.used, d.need = b, 0, nil, 0, 0
}

func (d *Decoder) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
	d.off = len(d.b)
}

// The field readers of the general paths: a read past the end fails the
// decoder and returns zero.

func (d *Decoder) u8() byte {
	if d.off >= len(d.b) {
		d.fail()
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *Decoder) u32() uint32 {
	if len(d.b)-d.off < 4 {
		d.fail()
		return 0
	}
	v := get32(d.b[d.off:])
	d.off += 4
	return v
}

func (d *Decoder) u64() uint64 {
	if len(d.b)-d.off < 8 {
		d.fail()
		return 0
	}
	v := get64(d.b[d.off:])
	d.off += 8
	return v
}

// count reads a collection length and checks it against the bytes left
// (each element takes at least min bytes), so a corrupt length cannot make
// the decoder allocate without bound.
func (d *Decoder) count(min int) int {
	n := d.u32()
	if uint64(n)*uint64(min) > uint64(len(d.b)-d.off) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *Decoder) bytes() []byte {
	n := d.count(1)
	b := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

func (d *Decoder) str() string {
	if b := d.bytes(); len(b) > 0 {
		return string(b)
	}
	return ""
}

// name reads a bin or type name. The names every command sends are
// returned as constants: the host decodes a request per store call, and
// converting them would allocate each time.
func (d *Decoder) name() string { return internName(d.bytes()) }

// internName returns b as a string, without allocating for the names every
// command sends.
func internName(b []byte) string {
	switch string(b) {
	case "":
		return ""
	case BinValue:
		return BinValue
	case BinType:
		return BinType
	case TypeString:
		return TypeString
	case TypeHash:
		return TypeHash
	case TypeSet:
		return TypeSet
	case TypeList:
		return TypeList
	case TypeZSet:
		return TypeZSet
	}
	return string(b)
}

// alloc takes n values from the arena, or from the heap when the arena is
// too small (it is resized at the next reset). The arena itself never moves
// while a message decodes, so earlier slices stay valid.
func (d *Decoder) alloc(n int) []Value {
	d.need += n
	if d.used+n > len(d.arena) {
		return make([]Value, n)
	}
	s := d.arena[d.used : d.used+n : d.used+n]
	d.used += n
	return s
}

// value decodes one value at d.off.
func (d *Decoder) value(v *Value) {
	var one [1]Value
	var ok bool
	d.off, ok = d.fill(d.b, d.off, one[:], 0)
	*v = one[0]
	if !ok {
		d.fail()
	}
}

// values decodes a counted value sequence at d.off into dst's storage.
func (d *Decoder) values(dst []Value) []Value {
	n := d.count(1)
	if cap(dst) < n {
		dst = make([]Value, n)
	}
	dst = dst[:n]
	var ok bool
	if d.off, ok = d.fill(d.b, d.off, dst, 0); !ok {
		d.fail()
		return dst[:0]
	}
	return dst
}

// fill decodes len(dst) values at b[off:] into dst and returns the offset
// past them; ok is false if b is corrupt. Scalars decode inline; lists and
// maps take their elements from the arena.
func (d *Decoder) fill(b []byte, off int, dst []Value, depth int) (int, bool) {
	for i := range dst {
		v := &dst[i]
		if off >= len(b) {
			*v = Value{}
			return off, false
		}
		k := Kind(b[off])
		off++
		switch k {
		case KindNil:
			*v = Value{}
		case KindInt, KindBool:
			if len(b)-off < 8 {
				*v = Value{}
				return off, false
			}
			*v = Value{Kind: k, Int: int64(get64(b[off:]))}
			off += 8
		case KindFloat:
			if len(b)-off < 8 {
				*v = Value{}
				return off, false
			}
			*v = Value{Kind: k, Float: math.Float64frombits(get64(b[off:]))}
			off += 8
		case KindBytes, KindStr:
			if len(b)-off < 4 {
				*v = Value{}
				return off, false
			}
			l := get32(b[off:])
			off += 4
			if uint64(l) > uint64(len(b)-off) {
				*v = Value{}
				return off, false
			}
			end := off + int(l)
			*v = Value{Kind: k, Bytes: b[off:end:end]}
			off = end
		case KindList, KindMap:
			*v = Value{}
			if len(b)-off < 4 || depth >= maxDepth {
				return off, false
			}
			m := get32(b[off:])
			off += 4
			if uint64(m) > uint64(len(b)-off) || k == KindMap && m%2 != 0 {
				return off, false
			}
			list := d.alloc(int(m))
			var ok bool
			if off, ok = d.fill(b, off, list, depth+1); !ok {
				return off, false
			}
			*v = Value{Kind: k, List: list}
		default:
			*v = Value{}
			return off, false
		}
	}
	return off, true
}

func (d *Decoder) policy(p *Policy) {
	m := d.u8()
	*p = Policy{}
	if m == 0 {
		return
	}
	if m&polExists != 0 {
		p.Exists = ExistsPolicy(d.u8())
	}
	if m&polTTL != 0 {
		p.TTL = TTLMode(d.u8())
	}
	if m&polSeconds != 0 {
		p.Seconds = int64(d.u64())
	}
	if m&polGeneration != 0 {
		p.Generation = d.u32()
	}
	if m&polGuard != 0 {
		p.Guard = d.name()
	}
	if m&polDeleteIfEmpty != 0 {
		p.DeleteIfEmpty = d.name()
	}
}

func (d *Decoder) op(o *Op) {
	*o = Op{Code: OpCode(d.u8()), Values: o.Values[:0]}
	m := d.u8()
	if m&opReturn != 0 {
		o.Return = MapReturn(d.u8())
	}
	if m&opBin != 0 {
		o.Bin = d.name()
	}
	if m&opValue != 0 {
		d.value(&o.Value)
	}
	if m&opValue2 != 0 {
		d.value(&o.Value2)
	}
	if m&opValues != 0 {
		o.Values = d.values(o.Values)
	}
	if m&opIndex != 0 {
		o.Index = int64(d.u64())
	}
	if m&opCount != 0 {
		o.Count = int64(d.u64())
	}
	if m&opFlags != 0 {
		o.Flags = d.u32()
	}
}

// nextCall extends r.Calls by one, reusing a Call the slice held before,
// and returns it emptied of encoded ops.
func nextCall(r *Request) *Call {
	if len(r.Calls) < cap(r.Calls) {
		r.Calls = r.Calls[:len(r.Calls)+1]
	} else {
		r.Calls = append(r.Calls, Call{})
	}
	c := &r.Calls[len(r.Calls)-1]
	c.enc, c.nenc, c.encoded = c.enc[:0], 0, false
	return c
}

// ops decodes n ops into c.Ops, reusing its Op values.
func (d *Decoder) ops(c *Call, n int) {
	c.Ops = c.Ops[:0]
	for j := 0; j < n && d.err == nil; j++ {
		if len(c.Ops) < cap(c.Ops) {
			c.Ops = c.Ops[:j+1]
		} else {
			c.Ops = append(c.Ops, Op{})
		}
		d.op(&c.Ops[j])
	}
}

// DecodeRequest decodes a Request into r, reusing r's slices.
func (d *Decoder) DecodeRequest(b []byte, r *Request) error {
	d.reset(b)
	r.Kind = RequestKind(d.u8())
	r.Calls = r.Calls[:0]
	r.AllDBs = false
	r.OtherDB, r.DB = false, 0
	r.Scan = ScanArgs{}
	switch r.Kind {
	case ReqRecords:
		// A call takes at least 9 bytes: key length, policy bits, op count.
		n := d.count(9)
		for i := 0; i < n && d.err == nil; i++ {
			c := nextCall(r)
			c.Key = d.bytes()
			d.policy(&c.Policy)
			d.ops(c, d.count(2))
		}
		if d.err == nil && d.off < len(d.b) {
			r.OtherDB = d.u8() != 0
			db := d.u32()
			if db > 0xffff {
				d.fail()
			}
			r.DB = uint16(db)
		}
	case ReqScan:
		r.Scan.Cursor = d.u64()
		r.Scan.Count = int64(d.u64())
		r.Scan.WithType = d.u8() != 0
	case ReqCount:
	case ReqTruncate:
		r.AllDBs = d.u8() != 0
	default:
		d.fail()
	}
	return d.err
}

// DecodeManifest decodes a module manifest. The result owns its memory.
func DecodeManifest(b []byte) (Manifest, error) {
	var d Decoder
	d.reset(b)
	var m Manifest
	m.Module = d.str()
	m.Version = d.str()
	n := d.count(4)
	for i := 0; i < n && d.err == nil; i++ {
		var c CommandInfo
		c.Name = d.str()
		c.Arity = int(int64(d.u64()))
		nf := d.count(4)
		for j := 0; j < nf && d.err == nil; j++ {
			c.Flags = append(c.Flags, d.str())
		}
		c.FirstKey = int(int64(d.u64()))
		c.LastKey = int(int64(d.u64()))
		c.Step = int(int64(d.u64()))
		c.Group = d.str()
		c.Summary = d.str()
		c.Since = d.str()
		m.Commands = append(m.Commands, c)
	}
	if d.err == nil && d.off != len(d.b) {
		d.fail()
	}
	return m, d.err
}
