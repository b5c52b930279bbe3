package rdb

import (
	"bytes"
	"encoding/hex"
	"errors"
	"hash/crc64"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestCRC64(t *testing.T) {
	// The test vector of Redis's src/crc64.c.
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// The slicing-by-8 form agrees with hash/crc64's bytewise one (which
	// inverts its state around the update) at every length and alignment.
	tab := crc64.MakeTable(jonesReflected)
	rng := rand.New(rand.NewSource(1))
	for n := 0; n < 600; n++ {
		b := make([]byte, n+3)
		rng.Read(b)
		p := b[n%3 : n%3+n]
		if got, want := CRC64(0, p), ^crc64.Update(^uint64(0), tab, p); got != want {
			t.Fatalf("crc64 of %d bytes = %#x, hash/crc64 says %#x", n, got, want)
		}
	}
	// Continuing a checksum equals checksumming the whole.
	a, b := []byte("hello "), []byte("world")
	if CRC64(CRC64(0, a), b) != CRC64(0, []byte("hello world")) {
		t.Fatal("crc64 does not continue")
	}
}

// dumps are the payloads testdata/gen.sh took from redis-server 7.0.
func dumps(t testing.TB) map[string][]byte {
	files, err := filepath.Glob(filepath.Join("testdata", "dumps", "*.bin"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dumps: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".bin")] = b
	}
	return out
}

// canon is an object's content independent of the order of a set's or
// hash's elements.
func canon(o *Object) string {
	var parts []string
	switch o.Kind {
	case String:
		return "string:" + hex.EncodeToString(o.Value)
	case List:
		for _, e := range o.Elems {
			parts = append(parts, hex.EncodeToString(e))
		}
		return "list:" + strings.Join(parts, ",")
	case Set:
		for _, e := range o.Elems {
			parts = append(parts, hex.EncodeToString(e))
		}
	case Hash:
		for i := 0; i < len(o.Elems); i += 2 {
			parts = append(parts, hex.EncodeToString(o.Elems[i])+"="+hex.EncodeToString(o.Elems[i+1]))
		}
	case ZSet:
		for i, e := range o.Elems {
			// -0 and 0 are one score (Redis writes both as the integer 0).
			parts = append(parts, hex.EncodeToString(e)+"="+strconv.FormatFloat(o.Scores[i]+0, 'g', -1, 64))
		}
	}
	sort.Strings(parts)
	return strconv.Itoa(int(o.Kind)) + ":" + strings.Join(parts, ",")
}

func TestRedisDumps(t *testing.T) {
	for name, payload := range dumps(t) {
		t.Run(name, func(t *testing.T) {
			o, err := Decode(payload)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			again := Encode(o)
			if strings.HasPrefix(name, "same-") && !bytes.Equal(again, payload) {
				t.Errorf("encode differs from redis-server\n  redis: %x\n  ours:  %x", payload, again)
			}
			o2, err := Decode(again)
			if err != nil {
				t.Fatalf("decode of our encoding: %v", err)
			}
			if canon(o) != canon(o2) {
				t.Errorf("round trip changed the value\n  %s\n  %s", canon(o), canon(o2))
			}
		})
	}
}

// TestDecodedValues checks the content of some of Redis's payloads.
func TestDecodedValues(t *testing.T) {
	d := dumps(t)
	want := map[string]string{
		"same-string-int8":   "string:" + hex.EncodeToString([]byte("-100")),
		"same-string-int16":  "string:" + hex.EncodeToString([]byte("30000")),
		"same-string-int32":  "string:" + hex.EncodeToString([]byte("-2000000000")),
		"same-string-int64":  "string:" + hex.EncodeToString([]byte("9223372036854775807")),
		"same-string-lzf":    "string:" + hex.EncodeToString([]byte(strings.Repeat("abcabcabcabc", 40))),
		"same-string-empty":  "string:",
		"same-list-small":    canon(&Object{Kind: List, Elems: bs("a", "b", "1", "2", "-5000", "hello")}),
		"same-list-lpush":    canon(&Object{Kind: List, Elems: bs("c", "b", "a")}),
		"same-hash-listpack": canon(&Object{Kind: Hash, Elems: bs("a", "1", "b", "hello", "c", "-70000", "d", "3.5")}),
		"hash-hashtable":     canon(&Object{Kind: Hash, Elems: bs("f1", "v1", "f2", "2", "f3", "v3")}),
		"same-set-intset":    canon(&Object{Kind: Set, Elems: bs("5", "-3", "100000", "7")}),
		"set-hashtable":      canon(&Object{Kind: Set, Elems: bs("a", "b", "c", "1")}),
		"same-zset-listpack": canon(&Object{Kind: ZSet, Elems: bs("a", "b", "c", "d", "e", "f"),
			Scores: []float64{1, 2.5, -3, math.Inf(1), 1e300, 0.1}}),
		"zset-skiplist-small": canon(&Object{Kind: ZSet, Elems: bs("a", "b", "c"), Scores: []float64{1.5, 2, math.Inf(-1)}}),
		"list-countfill":      canon(&Object{Kind: List, Elems: bs("a", "b", "c", "d", "e")}),
	}
	for name, w := range want {
		o, err := Decode(d[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := canon(o); got != w {
			t.Errorf("%s:\n  got  %s\n  want %s", name, got, w)
		}
	}
	o, _ := Decode(d["same-list-multinode"])
	if o == nil || len(o.Elems) != 3001 || string(o.Elems[3000]) != "103000" {
		t.Errorf("multinode list decoded wrong")
	}
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// payload wraps a body in the DUMP trailer.
func payload(body []byte) []byte {
	out := append(append([]byte{}, body...), Version, 0)
	return append(out, le64(CRC64(0, out))...)
}

func le64(v uint64) []byte {
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
	return b
}

func TestTrailer(t *testing.T) {
	good := Encode(&Object{Kind: String, Value: []byte("x")})
	if _, err := Decode(good); err != nil {
		t.Fatal(err)
	}
	bad := append([]byte{}, good...)
	bad[len(bad)-1] ^= 1
	newer := payload([]byte{0, 1, 'x'})
	newer[len(newer)-10] = Version + 1
	for name, p := range map[string][]byte{
		"crc": bad, "short": good[:9], "empty": nil,
		"newer": append(newer[:len(newer)-8:len(newer)-8], le64(CRC64(0, newer[:len(newer)-8]))...),
	} {
		if _, err := Decode(p); !errors.Is(err, ErrChecksum) {
			t.Errorf("%s: got %v, want ErrChecksum", name, err)
		}
	}
	// An older version is accepted, as Redis accepts it.
	older := payload([]byte{0, 1, 'x'})
	older[len(older)-10] = 6
	older = append(older[:len(older)-8], le64(CRC64(0, older[:len(older)-8]))...)
	if o, err := Decode(older); err != nil || string(o.Value) != "x" {
		t.Errorf("older version: %v", err)
	}
}

func TestBadBodies(t *testing.T) {
	for name, body := range map[string][]byte{
		"no type":        {},
		"unknown type":   {8, 1, 'x'},
		"short string":   {0, 20, 'x'},
		"bad int enc":    {0, 0xC4},
		"empty list":     {1, 0},
		"empty hash":     {4, 0},
		"dup set":        {2, 2, 1, 'a', 1, 'a'},
		"dup hash":       {4, 2, 1, 'a', 1, '1', 1, 'a', 1, '2'},
		"dup zset":       {5, 2, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0, 0},
		"nan zset":       {5, 1, 1, 'a', 0, 0, 0, 0, 0, 0, 0xF8, 0x7F},
		"count too big":  {1, 0x80, 0xFF, 0xFF, 0xFF, 0xFF, 1, 'a'},
		"bad lzf":        {0, 0xC3, 2, 30, 0xFF, 0xFF},
		"lzf short":      {0, 0xC3, 2, 3, 0x01, 'a'},
		"bad listpack":   {16, 7, 7, 0, 0, 0, 1, 0, 0xFF},
		"odd listpack":   append([]byte{16}, appendString(nil, lpAppend(lpNew(), []byte("a")))...),
		"bad intset":     {11, 9, 3, 0, 0, 0, 0, 0, 0, 0, 1},
		"unsorted":       append([]byte{11}, appendString(nil, []byte{2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 1, 0})...),
		"bad container":  {18, 1, 3, 1, 'a'},
		"empty quicklst": append([]byte{18, 1, 2}, appendString(nil, lpNew())...),
		"bad ziplist":    {10, 11, 11, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0xFF},
	} {
		if _, err := Decode(payload(body)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: got %v, want ErrFormat", name, err)
		}
	}
	var u *UnsupportedError
	if _, err := Decode(payload([]byte{19, 0})); !errors.As(err, &u) || u.Type != 19 {
		t.Errorf("stream: got %v", err)
	}
}

func TestEncodings(t *testing.T) {
	big := strings.Repeat("x", 65)
	cases := []struct {
		o    Object
		typ  byte
		name string
	}{
		{Object{Kind: String, Value: []byte("12")}, TypeString, "int string"},
		{Object{Kind: Hash, Elems: bs("a", "1")}, TypeHashListpack, "small hash"},
		{Object{Kind: Hash, Elems: bs("a", big)}, TypeHash, "long value"},
		{Object{Kind: Set, Elems: bs("1", "2")}, TypeSetIntset, "int set"},
		{Object{Kind: Set, Elems: bs("1", "a")}, TypeSet, "mixed set"},
		{Object{Kind: Set, Elems: bs("01")}, TypeSet, "not canonical"},
		{Object{Kind: ZSet, Elems: bs("a"), Scores: []float64{1}}, TypeZSetListpack, "small zset"},
		{Object{Kind: ZSet, Elems: bs(big), Scores: []float64{1}}, TypeZSet2, "long member"},
		{Object{Kind: List, Elems: bs("a")}, TypeListQuicklist2, "list"},
	}
	for _, c := range cases {
		p := Encode(&c.o)
		if p[0] != c.typ {
			t.Errorf("%s: type %d, want %d", c.name, p[0], c.typ)
		}
		o, err := Decode(p)
		if err != nil || canon(o) != canon(&c.o) {
			t.Errorf("%s: round trip: %v", c.name, err)
		}
	}
	// The thresholds, one over.
	many := func(n int, f func(i int) string) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(f(i))
		}
		return out
	}
	if p := Encode(&Object{Kind: Set, Elems: many(513, strconv.Itoa)}); p[0] != TypeSet {
		t.Errorf("513 integers: type %d", p[0])
	}
	if p := Encode(&Object{Kind: Hash, Elems: many(1026, strconv.Itoa)}); p[0] != TypeHash {
		t.Errorf("513 fields: type %d", p[0])
	}
	z := &Object{Kind: ZSet, Elems: many(129, strconv.Itoa), Scores: make([]float64, 129)}
	if p := Encode(z); p[0] != TypeZSet2 {
		t.Errorf("129 members: type %d", p[0])
	}
}

func TestScoreString(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1", -3: "-3", 2.5: "2.5", 0.1: "0.10000000000000001", 1e300: "1.0000000000000001e+300",
		math.Inf(1): "inf", math.Inf(-1): "-inf", 1e-5: "1.0000000000000001e-05", 123456.789: "123456.789",
		1e17: "100000000000000000", 3.0e18: "3000000000000000000", 5e18: "5e+18", 0.0001: "0.0001",
	} {
		if got := string(scoreString(f)); got != want {
			t.Errorf("scoreString(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestLZF(t *testing.T) {
	inputs := [][]byte{
		[]byte(strings.Repeat("a", 100)),
		[]byte(strings.Repeat("abcdefgh", 1000)),
		[]byte("the quick brown fox jumps over the lazy dog, the quick brown fox"),
	}
	for i := 0; i < 3000; i += 7 {
		inputs = append(inputs, []byte(strings.Repeat(strconv.Itoa(i), i%50+1)))
	}
	for _, in := range inputs {
		c := lzfCompress(in, len(in)-4)
		if c == nil {
			continue
		}
		out, ok := lzfDecompress(c, len(in))
		if !ok || !bytes.Equal(out, in) {
			t.Fatalf("lzf round trip of %q failed", in)
		}
	}
}

// oldZiplist builds a ziplist of strings and small integers, for the
// decoder's tests of Redis's older encodings.
func oldZiplist(elems ...string) []byte {
	var entries []byte
	prev, tail := 0, 10
	for _, e := range elems {
		tail = 10 + len(entries)
		var ent []byte
		if prev < 254 {
			ent = append(ent, byte(prev))
		} else {
			ent = append(ent, 254, byte(prev), byte(prev>>8), byte(prev>>16), byte(prev>>24))
		}
		if v, err := strconv.Atoi(e); err == nil && v >= 0 && v <= 12 {
			ent = append(ent, 0xF1+byte(v))
		} else if err == nil && v >= -128 && v < 128 {
			ent = append(ent, 0xFE, byte(int8(v)))
		} else {
			ent = append(ent, byte(len(e)))
			ent = append(ent, e...)
		}
		prev = len(ent)
		entries = append(entries, ent...)
	}
	n := 10 + len(entries) + 1
	zl := []byte{byte(n), byte(n >> 8), 0, 0, byte(tail), byte(tail >> 8), 0, 0, byte(len(elems)), 0}
	zl = append(zl, entries...)
	return append(zl, 0xFF)
}

func TestOldEncodings(t *testing.T) {
	zl := oldZiplist("a", "7", "-100", "hello")
	zipmap := []byte{2, 1, 'f', 1, 0, 'v', 2, 'g', 'h', 2, 1, 'x', 'y', '!', 0xFF}
	textZSet := []byte{3, 2, 1, 'a', 3, '1', '.', '5', 1, 'b', 255}
	cases := map[string]struct {
		body []byte
		want *Object
	}{
		"list ziplist":   {append([]byte{TypeListZiplist}, appendString(nil, zl)...), &Object{Kind: List, Elems: bs("a", "7", "-100", "hello")}},
		"quicklist v1":   {append([]byte{TypeListQuicklist, 1}, appendString(nil, zl)...), &Object{Kind: List, Elems: bs("a", "7", "-100", "hello")}},
		"hash ziplist":   {append([]byte{TypeHashZiplist}, appendString(nil, zl)...), &Object{Kind: Hash, Elems: bs("a", "7", "-100", "hello")}},
		"zset ziplist":   {append([]byte{TypeZSetZiplist}, appendString(nil, oldZiplist("a", "7", "b", "-100"))...), &Object{Kind: ZSet, Elems: bs("a", "b"), Scores: []float64{7, -100}}},
		"hash zipmap":    {append([]byte{TypeHashZipmap}, appendString(nil, zipmap)...), &Object{Kind: Hash, Elems: bs("f", "v", "gh", "xy")}},
		"plain list":     {[]byte{TypeList, 2, 1, 'a', 0xC0, 5}, &Object{Kind: List, Elems: bs("a", "5")}},
		"text zset":      {textZSet, &Object{Kind: ZSet, Elems: bs("a", "b"), Scores: []float64{1.5, math.Inf(-1)}}},
		"plain node":     {[]byte{TypeListQuicklist2, 1, 1, 3, 'a', 'b', 'c'}, &Object{Kind: List, Elems: bs("abc")}},
		"lzf compressed": {append([]byte{TypeString}, appendString(nil, []byte(strings.Repeat("xy", 40)))...), &Object{Kind: String, Value: []byte(strings.Repeat("xy", 40))}},
	}
	for name, c := range cases {
		o, err := Decode(payload(c.body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if canon(o) != canon(c.want) {
			t.Errorf("%s:\n  got  %s\n  want %s", name, canon(o), canon(c.want))
		}
	}
}
