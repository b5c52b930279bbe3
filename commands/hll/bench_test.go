package main

import (
	"strconv"
	"testing"
)

// twoDense is two dense HLLs of 20,000 elements each.
func twoDense() (h1, h2 []byte) {
	h1, _ = toDense(newSparse())
	h2, _ = toDense(newSparse())
	for i := range 20000 {
		h1, _ = add(h1, []byte(strconv.Itoa(i)))
		h2, _ = add(h2, []byte("x"+strconv.Itoa(i)))
	}
	return h1, h2
}

// BenchmarkUnionCount is PFCOUNT of two dense HLLs without the store.
func BenchmarkUnionCount(b *testing.B) {
	h1, h2 := twoDense()
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
