// Package rdb is Redis 7.0's serialization of one value, the payload of
// DUMP and RESTORE: an RDB object type byte, the object in RDB format
// (RDB version 10), the RDB version (2 bytes little endian) and a CRC-64 of
// all that (8 bytes little endian, Redis's Jones CRC-64).
//
// Encode writes a value the way redis-server 7.0 with its default
// configuration would, choosing its encoding by the same thresholds
// (listpacks for small hashes and sorted sets, intsets for small sets of
// integers, quicklists of listpacks for lists, LZF for strings longer
// than 20 bytes that compress), so the payload is byte for byte Redis's
// wherever the element order agrees (see docs/compatibility.md). Decode
// reads every encoding Redis 7.0 reads for strings, lists, sets, sorted sets
// and hashes, including those of older versions (ziplists, zipmaps, plain
// lists, text-scored sorted sets), and checks the whole structure: a
// payload it accepts is well formed throughout. It never panics on any
// input (see the fuzz test).
//
// The package is pure Go and builds for the guest (wasip1).
package rdb

import (
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"strconv"
)

// Version is the RDB version of Redis 7.0, which Encode writes and the
// newest Decode accepts.
const Version = 10

// RDB object types (src/rdb.h).
const (
	TypeString         = 0
	TypeList           = 1
	TypeSet            = 2
	TypeZSet           = 3
	TypeHash           = 4
	TypeZSet2          = 5
	TypeModule         = 6
	TypeModule2        = 7
	TypeHashZipmap     = 9
	TypeListZiplist    = 10
	TypeSetIntset      = 11
	TypeZSetZiplist    = 12
	TypeHashZiplist    = 13
	TypeListQuicklist  = 14
	TypeStreamLP       = 15
	TypeHashListpack   = 16
	TypeZSetListpack   = 17
	TypeListQuicklist2 = 18
	TypeStreamLP2      = 19
)

// Redis 7.0's default thresholds of the compact encodings.
const (
	HashMaxListpackEntries = 512  // hash-max-listpack-entries
	HashMaxListpackValue   = 64   // hash-max-listpack-value
	SetMaxIntsetEntries    = 512  // set-max-intset-entries
	ZSetMaxListpackEntries = 128  // zset-max-listpack-entries
	ZSetMaxListpackValue   = 64   // zset-max-listpack-value
	listMaxListpackSize    = 8192 // list-max-listpack-size -2: 8 KiB nodes
)

// MaxExpand caps the size of any one string or compact structure a
// payload expands to (an LZF blob declares its size): a payload that
// would build more is refused with ErrTooBig rather than exhaust the
// module's memory. No store holds a record this large.
const MaxExpand = 64 << 20

// Errors of Decode.
var (
	// ErrChecksum is a payload too short, of a newer RDB version, or whose
	// CRC does not match: Redis's "DUMP payload version or checksum are
	// wrong".
	ErrChecksum = errors.New("DUMP payload version or checksum are wrong")
	// ErrFormat is a payload whose body does not decode: Redis's "Bad data
	// format".
	ErrFormat = errors.New("Bad data format")
	// ErrTooBig is a payload that expands beyond MaxExpand.
	ErrTooBig = errors.New("value too large")
)

// UnsupportedError is a well-checksummed payload of a type respike does
// not hold (streams, module types).
type UnsupportedError struct{ Type byte }

func (e *UnsupportedError) Error() string {
	name := "module"
	if e.Type == TypeStreamLP || e.Type == TypeStreamLP2 {
		name = "stream"
	}
	// Not fmt: it would add 450 KB to the keys module (docs/RATIONALE.md).
	return "DUMP payload holds a " + name + " value (RDB type " + strconv.Itoa(int(e.Type)) + "), which respike does not store"
}

// Kind is the Redis type of an Object.
type Kind uint8

// Object kinds.
const (
	String Kind = iota + 1
	List
	Set
	ZSet
	Hash
)

// Object is one value. Strings hold Value; lists their elements (head
// first) and sets their members in Elems; hashes field, value, field,
// value ... in Elems; sorted sets their members in Elems and the scores in
// Scores, index for index. Decode returns collections in payload order.
type Object struct {
	Kind   Kind
	Value  []byte
	Elems  [][]byte
	Scores []float64
}

// Encode returns the DUMP payload of o, in the encoding Redis 7.0 would
// use for it. A sorted set's elements are written in Redis's order (score,
// then member); the other collections' in o's order. Sets of integers are
// sorted as intsets are.
func Encode(o *Object) []byte {
	var out []byte
	switch o.Kind {
	case String:
		out = append(out, TypeString)
		out = appendString(out, o.Value)
	case List:
		out = append(out, TypeListQuicklist2)
		out = appendQuicklist(out, o.Elems)
	case Set:
		out = appendSet(out, o.Elems)
	case ZSet:
		out = appendZSet(out, o.Elems, o.Scores)
	case Hash:
		out = appendHash(out, o.Elems)
	}
	out = append(out, Version&0xff, Version>>8)
	return binary.LittleEndian.AppendUint64(out, CRC64(0, out))
}

// appendLen appends a length as rdbSaveLen does.
func appendLen(out []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(out, byte(n))
	case n < 1<<14:
		return append(out, byte(n>>8)|0x40, byte(n))
	case n <= math.MaxUint32:
		out = append(out, 0x80)
		return binary.BigEndian.AppendUint32(out, uint32(n))
	default:
		out = append(out, 0x81)
		return binary.BigEndian.AppendUint64(out, n)
	}
}

// appendString appends s as rdbSaveRawString does: as an 8, 16 or 32-bit
// integer when it is the canonical form of one, LZF-compressed when longer
// than 20 bytes and it shrinks by at least 4 bytes... (lzf_compress into
// len-4 bytes succeeds), else verbatim.
func appendString(out, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := parseInt(s); ok && v >= math.MinInt32 && v <= math.MaxInt32 {
			switch {
			case v >= math.MinInt8 && v <= math.MaxInt8:
				return append(out, 0xC0, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				return append(out, 0xC1, byte(v), byte(v>>8))
			default:
				return append(out, 0xC2, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			}
		}
	}
	if len(s) > 20 {
		if c := lzfCompress(s, len(s)-4); c != nil {
			out = append(out, 0xC3)
			out = appendLen(out, uint64(len(c)))
			out = appendLen(out, uint64(len(s)))
			return append(out, c...)
		}
	}
	out = appendLen(out, uint64(len(s)))
	return append(out, s...)
}

// appendQuicklist appends a list as a quicklist of listpack nodes filled
// as RPUSH fills them (quicklistPushTail with list-max-listpack-size -2: a
// node takes an element while its size plus the element plus 8 stays
// within 8 KiB).
func appendQuicklist(out []byte, elems [][]byte) []byte {
	var nodes [][]byte
	for _, e := range elems {
		n := len(nodes) - 1
		if n < 0 || len(nodes[n])+len(e)+8 > listMaxListpackSize {
			nodes = append(nodes, lpNew())
			n++
		}
		nodes[n] = lpAppend(nodes[n], e)
	}
	out = appendLen(out, uint64(len(nodes)))
	for _, lp := range nodes {
		out = append(out, 2) // QUICKLIST_NODE_CONTAINER_PACKED
		out = appendString(out, lp)
	}
	return out
}

// appendSet appends a set: an intset when every member is an integer and
// there are at most set-max-intset-entries, else a plain set.
func appendSet(out []byte, elems [][]byte) []byte {
	if len(elems) <= SetMaxIntsetEntries {
		vals := make([]int64, 0, len(elems))
		for _, e := range elems {
			v, ok := parseInt(e)
			if !ok {
				break
			}
			vals = append(vals, v)
		}
		if len(vals) == len(elems) {
			out = append(out, TypeSetIntset)
			return appendString(out, intsetEncode(vals))
		}
	}
	out = append(out, TypeSet)
	out = appendLen(out, uint64(len(elems)))
	for _, e := range elems {
		out = appendString(out, e)
	}
	return out
}

// appendZSet appends a sorted set: a listpack of member, score pairs in
// rank order when it has at most zset-max-listpack-entries members of at
// most zset-max-listpack-value bytes, else RDB_TYPE_ZSET_2 from the
// highest rank down, as Redis writes its skiplist.
func appendZSet(out []byte, elems [][]byte, scores []float64) []byte {
	idx := make([]int, len(elems))
	small := len(elems) <= ZSetMaxListpackEntries
	for i := range idx {
		idx[i] = i
		if len(elems[i]) > ZSetMaxListpackValue {
			small = false
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if scores[i] != scores[j] {
			return scores[i] < scores[j]
		}
		return string(elems[i]) < string(elems[j])
	})
	if small {
		lp := lpNew()
		for _, i := range idx {
			lp = lpAppend(lp, elems[i])
			lp = lpAppend(lp, scoreString(scores[i]))
		}
		out = append(out, TypeZSetListpack)
		return appendString(out, lp)
	}
	out = append(out, TypeZSet2)
	out = appendLen(out, uint64(len(elems)))
	for k := len(idx) - 1; k >= 0; k-- {
		i := idx[k]
		out = appendString(out, elems[i])
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(scores[i]))
	}
	return out
}

// scoreString is a score as zzlInsertAt writes it into a listpack: an
// integer when the double is one (double2ll), else d2string's form.
func scoreString(f float64) []byte {
	if f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f) {
		return strconv.AppendInt(nil, int64(f), 10)
	}
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return appendG17(nil, f)
}

// appendG17 appends f as C's printf("%.17g").
func appendG17(dst []byte, f float64) []byte {
	b := strconv.AppendFloat(nil, f, 'e', 16, 64) // d.dddddddddddddddde±XX
	mant, exp := b, 0
	for i := range b {
		if b[i] == 'e' {
			mant = b[:i]
			exp, _ = strconv.Atoi(string(b[i+1:]))
			break
		}
	}
	if exp < -4 || exp >= 17 {
		// %e style, trailing zeros of the fraction removed.
		m := trimFraction(mant)
		dst = append(dst, m...)
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	// %f style with 17 significant digits, trailing zeros removed.
	return append(dst, trimFraction(strconv.AppendFloat(nil, f, 'f', 16-exp, 64))...)
}

// trimFraction removes trailing zeros of a fraction, and the point when
// nothing is left after it, as %g does.
func trimFraction(b []byte) []byte {
	dot := -1
	for i, c := range b {
		if c == '.' {
			dot = i
		}
	}
	if dot < 0 {
		return b
	}
	i := len(b)
	for i > dot+1 && b[i-1] == '0' {
		i--
	}
	if i == dot+1 {
		i = dot
	}
	return b[:i]
}

// appendHash appends a hash: a listpack of field, value pairs when it has
// at most hash-max-listpack-entries fields and every field and value has
// at most hash-max-listpack-value bytes, else a plain hash.
func appendHash(out []byte, kv [][]byte) []byte {
	small := len(kv)/2 <= HashMaxListpackEntries
	for _, e := range kv {
		if len(e) > HashMaxListpackValue {
			small = false
		}
	}
	if small {
		lp := lpNew()
		for _, e := range kv {
			lp = lpAppend(lp, e)
		}
		out = append(out, TypeHashListpack)
		return appendString(out, lp)
	}
	out = append(out, TypeHash)
	out = appendLen(out, uint64(len(kv)/2))
	for _, e := range kv {
		out = appendString(out, e)
	}
	return out
}
