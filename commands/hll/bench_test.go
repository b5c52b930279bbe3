package main

import (
	"strconv"
	"testing"
)

// BenchmarkUnionCount is PFCOUNT of two dense HLLs without the store.
func BenchmarkUnionCount(b *testing.B) {
	h1, _ := toDense(newSparse())
	h2, _ := toDense(newSparse())
	for i := range 20000 {
		h1, _ = add(h1, []byte(strconv.Itoa(i)))
		h2, _ = add(h2, []byte("x"+strconv.Itoa(i)))
	}
	b.ResetTimer()
	for range b.N {
		var max [hllRegisters]uint8
		merge(&max, h1)
		merge(&max, h2)
		var hist [64]int
		for _, v := range max {
			hist[v]++
		}
		estimate(&hist)
	}
}

// BenchmarkUnionWords is BenchmarkUnionCount with the word-wise union.
func BenchmarkUnionWords(b *testing.B) {
	h1, _ := toDense(newSparse())
	h2, _ := toDense(newSparse())
	for i := range 20000 {
		h1, _ = add(h1, []byte(strconv.Itoa(i)))
		h2, _ = add(h2, []byte("x"+strconv.Itoa(i)))
	}
	b.ResetTimer()
	for range b.N {
		var u union
		u.merge(h1, true)
		u.merge(h2, false)
		var hist [64]int
		u.histogram(&hist)
		estimate(&hist)
	}
}
