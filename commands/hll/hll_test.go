package main

import (
	"math/rand/v2"
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

// The word-wise union holds the maximum of each register as read from the
// dense form, for dense and sparse HLLs of every fill, and counts the same.
func TestUnionMatchesRegisters(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var hs [][]byte
	for _, n := range []int{0, 1, 50, 3000, 40000} {
		h := newSparse()
		for range n {
			h, _ = add(h, []byte(strconv.FormatUint(rng.Uint64(), 36)))
		}
		hs = append(hs, h)
		if h[4] == encSparse {
			d, ok := toDense(append([]byte(nil), h...))
			if !ok {
				t.Fatal("toDense")
			}
			hs = append(hs, d)
		}
	}
	for i := range hs {
		for j := range hs {
			// The reference: each register read from the dense form.
			var want [hllRegisters]uint8
			u := union{1, 2, 3} // garbage: the first merge clears or overwrites it
			for k, h := range [][]byte{hs[i], hs[j]} {
				if !u.merge(h, k == 0) {
					t.Fatal("merge failed")
				}
				d := h
				if h[4] == encSparse {
					d, _ = toDense(append([]byte(nil), h...))
				}
				for r := range want {
					want[r] = max(want[r], denseGet(d[hdrSize:], r))
				}
			}
			for r := range want {
				if u.register(r) != want[r] {
					t.Fatalf("%d+%d: register %d is %d, want %d", i, j, r, u.register(r), want[r])
				}
			}
			var h1, h2 [64]int
			for _, v := range want {
				h1[v]++
			}
			u.histogram(&h2)
			if h1 != h2 {
				t.Fatalf("%d+%d: histograms differ", i, j)
			}
		}
	}
	// Every lane value against every other.
	for a := range uint64(64) {
		for b := range uint64(64) {
			w := maxLanes(a*0x0101010101010101, b<<8|b<<48)
			for l := range 8 {
				want := a
				if (l == 1 || l == 6) && b > a {
					want = b
				}
				if got := w >> (8 * l) & 0xff; got != want {
					t.Fatalf("maxLanes(%d, %d) lane %d = %d", a, b, l, got)
				}
			}
		}
	}
}
