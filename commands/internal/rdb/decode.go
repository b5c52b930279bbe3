package rdb

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Decode checks a DUMP payload's trailer as verifyDumpPayload does (RDB
// version at most Version, CRC-64 matching) and decodes its value. Errors:
// ErrChecksum, ErrFormat, ErrTooBig, *UnsupportedError. Bytes between the
// value and the trailer are ignored, as Redis ignores them, and a value
// that runs into the trailer reads it, as Redis does. Collections
// must not be empty or hold duplicate members or fields (Redis refuses
// both; respike checks duplicates in every encoding, Redis in the compact
// ones only with sanitize-dump-payload).
func Decode(payload []byte) (*Object, error) {
	if len(payload) < 10 {
		return nil, ErrChecksum
	}
	footer := payload[len(payload)-10:]
	if int(footer[1])<<8|int(footer[0]) > Version {
		return nil, ErrChecksum
	}
	if CRC64(0, payload[:len(payload)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrChecksum
	}
	// Redis reads the value from the whole payload, trailer included (a
	// string that runs into the trailer is accepted, and takes its bytes):
	// so does Decode.
	d := &decoder{b: payload}
	o, err := d.object()
	if err != nil {
		return nil, err
	}
	return o, nil
}

// decoder reads an RDB body; every read checks bounds.
type decoder struct {
	b    []byte
	p    int
	nums numbers
}

func (d *decoder) byte1() (byte, error) {
	if d.p >= len(d.b) {
		return 0, ErrFormat
	}
	d.p++
	return d.b[d.p-1], nil
}

func (d *decoder) take(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.p) {
		return nil, ErrFormat
	}
	s := d.b[d.p : d.p+int(n)]
	d.p += int(n)
	return s, nil
}

// length reads an rdbSaveLen length, or the special encoding of a string
// (enc true, the encoding in n).
func (d *decoder) length() (n uint64, enc bool, err error) {
	b, err := d.byte1()
	if err != nil {
		return 0, false, err
	}
	switch b >> 6 {
	case 3:
		return uint64(b & 0x3F), true, nil
	case 0:
		return uint64(b & 0x3F), false, nil
	case 1:
		c, err := d.byte1()
		return uint64(b&0x3F)<<8 | uint64(c), false, err
	}
	switch b {
	case 0x80:
		s, err := d.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(s)), false, nil
	case 0x81:
		s, err := d.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(s), false, nil
	}
	return 0, false, ErrFormat
}

// count reads a collection's length, which must be at least 1 and, each
// element taking at least a byte, at most what is left.
func (d *decoder) count() (int, error) {
	n, enc, err := d.length()
	if err != nil {
		return 0, err
	}
	if enc || n == 0 || n > uint64(len(d.b)-d.p) {
		return 0, ErrFormat
	}
	return int(n), nil
}

// str reads a string: plain, integer-encoded or LZF-compressed
// (rdbGenericLoadStringObject).
func (d *decoder) str() ([]byte, error) {
	n, enc, err := d.length()
	if err != nil {
		return nil, err
	}
	if !enc {
		return d.take(n)
	}
	switch n {
	case 0:
		b, err := d.take(1)
		if err != nil {
			return nil, err
		}
		return d.nums.decimal(int64(int8(b[0]))), nil
	case 1:
		b, err := d.take(2)
		if err != nil {
			return nil, err
		}
		return d.nums.decimal(int64(int16(binary.LittleEndian.Uint16(b)))), nil
	case 2:
		b, err := d.take(4)
		if err != nil {
			return nil, err
		}
		return d.nums.decimal(int64(int32(binary.LittleEndian.Uint32(b)))), nil
	case 3:
		clen, cenc, err := d.length()
		if err != nil || cenc {
			return nil, ErrFormat
		}
		ulen, uenc, err := d.length()
		if err != nil || uenc {
			return nil, ErrFormat
		}
		c, err := d.take(clen)
		if err != nil {
			return nil, err
		}
		// A back reference of 3 bytes yields at most 264: a larger claim
		// cannot be honest.
		if ulen > uint64(len(c))*88+32 {
			return nil, ErrFormat
		}
		if ulen > MaxExpand {
			return nil, ErrTooBig
		}
		out, ok := lzfDecompress(c, int(ulen))
		if !ok {
			return nil, ErrFormat
		}
		return out, nil
	}
	return nil, ErrFormat
}

func (d *decoder) object() (*Object, error) {
	t, err := d.byte1()
	if err != nil {
		return nil, err
	}
	switch t {
	case TypeString:
		s, err := d.str()
		if err != nil {
			return nil, err
		}
		return &Object{Kind: String, Value: s}, nil
	case TypeList, TypeSet:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		elems := make([][]byte, 0, n)
		for i := 0; i < n; i++ {
			s, err := d.str()
			if err != nil {
				return nil, err
			}
			elems = append(elems, s)
		}
		if t == TypeList {
			return &Object{Kind: List, Elems: elems}, nil
		}
		return setObject(elems)
	case TypeZSet, TypeZSet2:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		o := &Object{Kind: ZSet, Elems: make([][]byte, 0, n), Scores: make([]float64, 0, n)}
		for i := 0; i < n; i++ {
			s, err := d.str()
			if err != nil {
				return nil, err
			}
			var f float64
			if t == TypeZSet2 {
				b, err := d.take(8)
				if err != nil {
					return nil, err
				}
				f = math.Float64frombits(binary.LittleEndian.Uint64(b))
			} else if f, err = d.textDouble(); err != nil {
				return nil, err
			}
			o.Elems, o.Scores = append(o.Elems, s), append(o.Scores, f)
		}
		return zsetObject(o)
	case TypeHash:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		kv := make([][]byte, 0, 2*n)
		for i := 0; i < 2*n; i++ {
			s, err := d.str()
			if err != nil {
				return nil, err
			}
			kv = append(kv, s)
		}
		return hashObject(kv)
	case TypeListQuicklist, TypeListQuicklist2:
		n, err := d.count()
		if err != nil {
			return nil, err
		}
		var elems [][]byte
		for i := 0; i < n; i++ {
			container := uint64(2)
			if t == TypeListQuicklist2 {
				var enc bool
				if container, enc, err = d.length(); err != nil || enc || (container != 1 && container != 2) {
					return nil, ErrFormat
				}
			}
			blob, err := d.str()
			if err != nil {
				return nil, err
			}
			if len(blob) == 0 {
				return nil, ErrFormat
			}
			if container == 1 { // a plain node: one element
				elems = append(elems, blob)
				continue
			}
			var es [][]byte
			var ok bool
			if t == TypeListQuicklist2 {
				es, ok = lpEntries(blob, &d.nums)
			} else {
				es, ok = ziplistEntries(blob, &d.nums)
			}
			if !ok {
				return nil, ErrFormat
			}
			elems = append(elems, es...) // an empty node is skipped, as Redis does
		}
		if len(elems) == 0 {
			return nil, ErrFormat
		}
		return &Object{Kind: List, Elems: elems}, nil
	case TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist,
		TypeHashZiplist, TypeHashListpack, TypeZSetListpack:
		blob, err := d.str()
		if err != nil {
			return nil, err
		}
		var es [][]byte
		var ok bool
		switch t {
		case TypeHashZipmap:
			es, ok = zipmapEntries(blob)
		case TypeSetIntset:
			es, ok = intsetDecode(blob, &d.nums)
		case TypeHashListpack, TypeZSetListpack:
			es, ok = lpEntries(blob, &d.nums)
		default:
			es, ok = ziplistEntries(blob, &d.nums)
		}
		if !ok || len(es) == 0 {
			return nil, ErrFormat
		}
		switch t {
		case TypeListZiplist:
			return &Object{Kind: List, Elems: es}, nil
		case TypeSetIntset:
			return &Object{Kind: Set, Elems: es}, nil
		case TypeZSetZiplist, TypeZSetListpack:
			if len(es)%2 != 0 {
				return nil, ErrFormat
			}
			o := &Object{Kind: ZSet}
			for i := 0; i < len(es); i += 2 {
				f, ok := parseScore(es[i+1])
				if !ok {
					return nil, ErrFormat
				}
				o.Elems, o.Scores = append(o.Elems, es[i]), append(o.Scores, f)
			}
			return zsetObject(o)
		default: // hashes
			if len(es)%2 != 0 {
				return nil, ErrFormat
			}
			return hashObject(es)
		}
	case TypeModule, TypeModule2, TypeStreamLP, TypeStreamLP2:
		return nil, &UnsupportedError{Type: t}
	}
	return nil, ErrFormat
}

// textDouble reads a score of RDB_TYPE_ZSET (rdbLoadDoubleValue): a length
// byte, 253 NaN, 254 +inf, 255 -inf, else that many bytes of text.
func (d *decoder) textDouble() (float64, error) {
	n, err := d.byte1()
	if err != nil {
		return 0, err
	}
	switch n {
	case 255:
		return math.Inf(-1), nil
	case 254:
		return math.Inf(1), nil
	case 253:
		return math.NaN(), nil
	}
	b, err := d.take(uint64(n))
	if err != nil {
		return 0, err
	}
	f, ok := parseScore(b)
	if !ok {
		return 0, ErrFormat
	}
	return f, nil
}

// parseScore parses a score written as text (zzlStrtod, sscanf "%lg"):
// a decimal or "inf" form.
func parseScore(b []byte) (float64, bool) {
	s := string(b)
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), true
	case "-inf", "-infinity":
		return math.Inf(-1), true
	}
	if strings.ContainsAny(s, "_xXnN") { // Go-only forms, hex, nan
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true // strtod's ±HUGE_VAL or 0
		}
		return 0, false
	}
	return f, true
}

// distinct reports whether the byte strings keys[0], keys[step], ... are
// all different (sorting a copy: a map would allocate every key).
func distinct(keys [][]byte, step int) bool {
	sorted := make([][]byte, 0, len(keys)/step+1)
	for i := 0; i < len(keys); i += step {
		sorted = append(sorted, keys[i])
	}
	slices.SortFunc(sorted, bytes.Compare)
	for i := 1; i < len(sorted); i++ {
		if bytes.Equal(sorted[i-1], sorted[i]) {
			return false
		}
	}
	return true
}

// setObject checks a set's members are distinct.
func setObject(elems [][]byte) (*Object, error) {
	if !distinct(elems, 1) {
		return nil, ErrFormat
	}
	return &Object{Kind: Set, Elems: elems}, nil
}

// zsetObject checks a sorted set's members are distinct and its scores
// not NaN.
func zsetObject(o *Object) (*Object, error) {
	for _, f := range o.Scores {
		if math.IsNaN(f) {
			return nil, ErrFormat
		}
	}
	if !distinct(o.Elems, 1) {
		return nil, ErrFormat
	}
	return o, nil
}

// hashObject checks a hash's fields are distinct.
func hashObject(kv [][]byte) (*Object, error) {
	if !distinct(kv, 2) {
		return nil, ErrFormat
	}
	return &Object{Kind: Hash, Elems: kv}, nil
}
