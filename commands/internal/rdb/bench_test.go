package rdb

import (
	"strconv"
	"testing"
)

// benchObjects are typical values: a small hash (listpack), a 1000-element
// list, a dense HLL from redis-server (12 KB, LZF).
func benchObjects(b *testing.B) map[string]*Object {
	h := &Object{Kind: Hash}
	for i := 0; i < 100; i++ {
		h.Elems = append(h.Elems, []byte("field:"+strconv.Itoa(i)), []byte("value "+strconv.Itoa(i)))
	}
	l := &Object{Kind: List}
	for i := 0; i < 1000; i++ {
		l.Elems = append(l.Elems, []byte("element-"+strconv.Itoa(i)))
	}
	hll, err := Decode(dumps(b)["same-hll-dense"])
	if err != nil {
		b.Fatal(err)
	}
	return map[string]*Object{"hash100": h, "list1000": l, "hll-dense": hll}
}

func BenchmarkEncode(b *testing.B) {
	for name, o := range benchObjects(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(Encode(o))))
			for i := 0; i < b.N; i++ {
				Encode(o)
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for name, o := range benchObjects(b) {
		p := Encode(o)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for i := 0; i < b.N; i++ {
				if _, err := Decode(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
