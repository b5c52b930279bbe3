package main

import (
	"strconv"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// The manifest describes every command as Redis 7.0's COMMAND INFO does.
func TestManifest(t *testing.T) {
	cmdtest.CheckManifest(t, "hll", "hyperloglog", map[string]cmdtest.Spec{
		"pfadd": {-2, 1, 1}, "pfcount": {-2, 1, -1}, "pfmerge": {-2, 1, -1}, "pfdebug": {3, 2, 2},
	})
}

// The register and run length of an element, as Redis 7.0 computes them
// (MurmurHash64A, seed 0xadc83b19); the randomized differential test
// covers elements of every length.
func TestPatLen(t *testing.T) {
	// "a" goes to register 12711 with a count of 2 in Redis 7.0: after
	// PFADD h a, PFDEBUG DECODE h answers "Z:12711 v:2,1 Z:3672".
	if i, c := patLen([]byte("a")); i != 12711 || c != 2 {
		t.Errorf("patLen(a) = %d, %d", i, c)
	}
}

// Sparse and dense forms agree: the same elements counted through a
// sparse HLL (promoted on the way) and a dense one give the same
// registers and count.
func TestSparseDenseAgree(t *testing.T) {
	s := newSparse()
	d, _ := toDense(newSparse())
	promoted := false
	for i := range 20000 {
		e := []byte("e" + strconv.Itoa(i))
		var r1, r2 int
		s, r1 = add(s, e)
		d, r2 = add(d, e)
		if r1 != r2 || r1 < 0 {
			t.Fatalf("element %d: sparse %d, dense %d", i, r1, r2)
		}
		if s[4] == encDense && !promoted {
			promoted = true
			if i < 1000 {
				t.Fatalf("promoted after %d elements", i)
			}
		}
		if s[4] == encSparse && len(s) > sparseMaxBytes {
			t.Fatalf("sparse HLL of %d bytes", len(s))
		}
		if i%997 == 0 || i == 19999 {
			var h1, h2 [64]int
			if !histogram(s, &h1) || !histogram(d, &h2) || estimate(&h1) != estimate(&h2) {
				t.Fatalf("element %d: counts differ", i)
			}
		}
	}
	if !promoted {
		t.Fatal("never promoted")
	}
	if string(s[hdrSize:]) != string(d[hdrSize:]) {
		t.Fatal("registers differ")
	}
}
