package codec

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrCorrupt is returned when a message does not decode.
var ErrCorrupt = errors.New("codec: corrupt message")

// Encoding: unsigned varints for counts and lengths, zigzag varints for signed
// integers, 8-byte little-endian floats, length-prefixed byte strings. Every
// Append function appends to dst and returns it, so a caller that reuses dst
// encodes without allocating.

func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }
func appendVarint(dst []byte, v int64) []byte   { return binary.AppendVarint(dst, v) }
func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}
func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendValue appends the encoding of v.
func AppendValue(dst []byte, v Value) []byte {
	dst = append(dst, byte(v.Kind))
	switch v.Kind {
	case KindInt, KindBool:
		dst = appendVarint(dst, v.Int)
	case KindFloat:
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float))
	case KindBytes, KindStr:
		dst = appendBytes(dst, v.Bytes)
	case KindList, KindMap:
		dst = appendUvarint(dst, uint64(len(v.List)))
		for _, e := range v.List {
			dst = AppendValue(dst, e)
		}
	}
	return dst
}

func appendValues(dst []byte, vs []Value) []byte {
	dst = appendUvarint(dst, uint64(len(vs)))
	for _, v := range vs {
		dst = AppendValue(dst, v)
	}
	return dst
}

// AppendRequest appends the encoding of r.
func AppendRequest(dst []byte, r *Request) []byte {
	dst = append(dst, byte(r.Kind))
	switch r.Kind {
	case ReqRecords:
		dst = appendUvarint(dst, uint64(len(r.Calls)))
		for i := range r.Calls {
			c := &r.Calls[i]
			dst = appendBytes(dst, c.Key)
			p := &c.Policy
			dst = append(dst, byte(p.Exists), byte(p.TTL))
			dst = appendVarint(dst, p.Seconds)
			dst = appendUvarint(dst, uint64(p.Generation))
			dst = appendString(dst, p.Guard)
			dst = appendString(dst, p.DeleteIfEmpty)
			dst = appendUvarint(dst, uint64(len(c.Ops)))
			for j := range c.Ops {
				o := &c.Ops[j]
				dst = append(dst, byte(o.Code), byte(o.Return))
				dst = appendString(dst, o.Bin)
				dst = AppendValue(dst, o.Value)
				dst = AppendValue(dst, o.Value2)
				dst = appendValues(dst, o.Values)
				dst = appendVarint(dst, o.Index)
				dst = appendVarint(dst, o.Count)
				dst = appendUvarint(dst, uint64(o.Flags))
			}
		}
	case ReqScan:
		dst = appendUvarint(dst, r.Scan.Cursor)
		dst = appendVarint(dst, r.Scan.Count)
		dst = append(dst, boolByte(r.Scan.WithType))
	case ReqTruncate:
		dst = append(dst, boolByte(r.AllDBs))
	}
	return dst
}

// AppendResponse appends the encoding of r for a request of the given kind.
func AppendResponse(dst []byte, kind RequestKind, r *Response) []byte {
	dst = appendVarint(dst, int64(r.Code))
	dst = appendString(dst, r.Msg)
	if r.Code != OK {
		return dst
	}
	switch kind {
	case ReqRecords:
		dst = appendUvarint(dst, uint64(len(r.Results)))
		for i := range r.Results {
			res := &r.Results[i]
			dst = appendVarint(dst, int64(res.Code))
			dst = appendString(dst, res.Msg)
			dst = appendUvarint(dst, uint64(res.Generation))
			dst = appendVarint(dst, res.TTL)
			dst = appendValues(dst, res.Values)
		}
	case ReqScan:
		dst = appendUvarint(dst, r.Scan.Cursor)
		dst = appendUvarint(dst, uint64(len(r.Scan.Keys)))
		for _, k := range r.Scan.Keys {
			dst = appendBytes(dst, k)
		}
		dst = appendUvarint(dst, uint64(len(r.Scan.Types)))
		for _, t := range r.Scan.Types {
			dst = appendBytes(dst, t)
		}
	case ReqCount:
		dst = appendVarint(dst, r.Count)
	}
	return dst
}

// AppendStart appends the encoding of s.
func AppendStart(dst []byte, s *Start) []byte {
	dst = append(dst, s.Proto)
	dst = appendUvarint(dst, uint64(s.DB))
	dst = appendUvarint(dst, s.ClientID)
	dst = appendUvarint(dst, uint64(len(s.Args)))
	for _, a := range s.Args {
		dst = appendBytes(dst, a)
	}
	return dst
}

// AppendManifest appends the encoding of m.
func AppendManifest(dst []byte, m *Manifest) []byte {
	dst = appendString(dst, m.Module)
	dst = appendString(dst, m.Version)
	dst = appendUvarint(dst, uint64(len(m.Commands)))
	for _, c := range m.Commands {
		dst = appendString(dst, c.Name)
		dst = appendVarint(dst, int64(c.Arity))
		dst = appendUvarint(dst, uint64(len(c.Flags)))
		for _, f := range c.Flags {
			dst = appendString(dst, f)
		}
		dst = appendVarint(dst, int64(c.FirstKey))
		dst = appendVarint(dst, int64(c.LastKey))
		dst = appendVarint(dst, int64(c.Step))
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

func (d *Decoder) byte1() byte {
	if d.off >= len(d.b) {
		d.fail()
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

func (d *Decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail()
		return 0
	}
	d.off += n
	return v
}

func (d *Decoder) varint() int64 {
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail()
		return 0
	}
	d.off += n
	return v
}

// count reads a collection length and checks it against the bytes left, so a
// corrupt length cannot make the decoder allocate without bound.
func (d *Decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)-d.off) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *Decoder) bytes() []byte {
	n := d.count()
	if d.err != nil {
		return nil
	}
	b := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

func (d *Decoder) str() string { return string(d.bytes()) }

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

func (d *Decoder) value(v *Value) {
	k := Kind(d.byte1())
	*v = Value{Kind: k}
	switch k {
	case KindNil:
	case KindInt, KindBool:
		v.Int = d.varint()
	case KindFloat:
		if d.off+8 > len(d.b) {
			d.fail()
			return
		}
		v.Float = math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
		d.off += 8
	case KindBytes, KindStr:
		v.Bytes = d.bytes()
	case KindList, KindMap:
		n := d.count()
		if k == KindMap && n%2 != 0 {
			d.fail()
			return
		}
		v.List = d.alloc(n)
		for i := range v.List {
			d.value(&v.List[i])
			if d.err != nil {
				return
			}
		}
	default:
		d.fail()
	}
}

// values decodes a counted value sequence into dst's storage.
func (d *Decoder) values(dst []Value) []Value {
	n := d.count()
	dst = dst[:0]
	for i := 0; i < n && d.err == nil; i++ {
		dst = append(dst, Value{})
		d.value(&dst[len(dst)-1])
	}
	return dst
}

// DecodeRequest decodes a Request into r, reusing r's slices.
func (d *Decoder) DecodeRequest(b []byte, r *Request) error {
	d.reset(b)
	r.Kind = RequestKind(d.byte1())
	r.Calls = r.Calls[:0]
	r.AllDBs = false
	r.Scan = ScanArgs{}
	switch r.Kind {
	case ReqRecords:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			if len(r.Calls) < cap(r.Calls) {
				r.Calls = r.Calls[:len(r.Calls)+1]
			} else {
				r.Calls = append(r.Calls, Call{})
			}
			c := &r.Calls[len(r.Calls)-1]
			c.Key = d.bytes()
			c.Policy = Policy{
				Exists: ExistsPolicy(d.byte1()),
				TTL:    TTLMode(d.byte1()),
			}
			c.Policy.Seconds = d.varint()
			c.Policy.Generation = uint32(d.uvarint())
			c.Policy.Guard = d.str()
			c.Policy.DeleteIfEmpty = d.str()
			nops := d.count()
			c.Ops = c.Ops[:0]
			for j := 0; j < nops && d.err == nil; j++ {
				c.Ops = append(c.Ops, Op{})
				o := &c.Ops[j]
				o.Code = OpCode(d.byte1())
				o.Return = MapReturn(d.byte1())
				o.Bin = d.str()
				d.value(&o.Value)
				d.value(&o.Value2)
				o.Values = d.values(o.Values)
				o.Index = d.varint()
				o.Count = d.varint()
				o.Flags = uint32(d.uvarint())
			}
		}
	case ReqScan:
		r.Scan.Cursor = d.uvarint()
		r.Scan.Count = d.varint()
		r.Scan.WithType = d.byte1() != 0
	case ReqCount:
	case ReqTruncate:
		r.AllDBs = d.byte1() != 0
	default:
		d.fail()
	}
	return d.err
}

// DecodeResponse decodes a Response to a request of the given kind into r,
// reusing r's slices.
func (d *Decoder) DecodeResponse(b []byte, kind RequestKind, r *Response) error {
	d.reset(b)
	r.Code = Code(d.varint())
	r.Msg = d.str()
	r.Results = r.Results[:0]
	r.Scan.Cursor = 0
	r.Scan.Keys = r.Scan.Keys[:0]
	r.Scan.Types = r.Scan.Types[:0]
	r.Count = 0
	if r.Code != OK || d.err != nil {
		return d.err
	}
	switch kind {
	case ReqRecords:
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			if len(r.Results) < cap(r.Results) {
				r.Results = r.Results[:len(r.Results)+1]
			} else {
				r.Results = append(r.Results, Result{})
			}
			res := &r.Results[len(r.Results)-1]
			res.Code = Code(d.varint())
			res.Msg = ""
			if m := d.bytes(); len(m) > 0 {
				res.Msg = string(m)
			}
			res.Generation = uint32(d.uvarint())
			res.TTL = d.varint()
			res.Values = d.values(res.Values)
		}
	case ReqScan:
		r.Scan.Cursor = d.uvarint()
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			r.Scan.Keys = append(r.Scan.Keys, d.bytes())
		}
		n = d.count()
		for i := 0; i < n && d.err == nil; i++ {
			r.Scan.Types = append(r.Scan.Types, d.bytes())
		}
	case ReqCount:
		r.Count = d.varint()
	case ReqTruncate:
	default:
		d.fail()
	}
	return d.err
}

// DecodeStart decodes a Start message into s, reusing s.Args.
func (d *Decoder) DecodeStart(b []byte, s *Start) error {
	d.reset(b)
	s.Proto = d.byte1()
	s.DB = uint16(d.uvarint())
	s.ClientID = d.uvarint()
	n := d.count()
	s.Args = s.Args[:0]
	for i := 0; i < n && d.err == nil; i++ {
		s.Args = append(s.Args, d.bytes())
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
	n := d.count()
	for i := 0; i < n && d.err == nil; i++ {
		var c CommandInfo
		c.Name = d.str()
		c.Arity = int(d.varint())
		nf := d.count()
		for j := 0; j < nf && d.err == nil; j++ {
			c.Flags = append(c.Flags, d.str())
		}
		c.FirstKey = int(d.varint())
		c.LastKey = int(d.varint())
		c.Step = int(d.varint())
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
