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

// murmur64ARef and patLenRef are the hash and the run length as they
// were written before (byte loads, Redis's switch for the tail, a loop
// over the bits): murmur64A and patLen must agree with them on keys of
// every length.
func murmur64ARef(key []byte, seed uint32) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(key))*m
	n := len(key) - len(key)&7
	for i := 0; i < n; i += 8 {
		k := uint64(key[i]) | uint64(key[i+1])<<8 | uint64(key[i+2])<<16 | uint64(key[i+3])<<24 |
			uint64(key[i+4])<<32 | uint64(key[i+5])<<40 | uint64(key[i+6])<<48 | uint64(key[i+7])<<56
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	data := key[n:]
	switch len(key) & 7 {
	case 7:
		h ^= uint64(data[6]) << 48
		fallthrough
	case 6:
		h ^= uint64(data[5]) << 40
		fallthrough
	case 5:
		h ^= uint64(data[4]) << 32
		fallthrough
	case 4:
		h ^= uint64(data[3]) << 24
		fallthrough
	case 3:
		h ^= uint64(data[2]) << 16
		fallthrough
	case 2:
		h ^= uint64(data[1]) << 8
		fallthrough
	case 1:
		h ^= uint64(data[0])
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

func patLenRef(ele []byte) (index int, count uint8) {
	hash := murmur64ARef(ele, hashSeed)
	index = int(hash & hllPMask)
	hash >>= hllP
	hash |= 1 << hllQ
	bit := uint64(1)
	count = 1
	for hash&bit == 0 {
		count++
		bit <<= 1
	}
	return index, count
}

func TestMurmurPatLenAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	buf := make([]byte, 80)
	for i := range 300000 {
		n := i % 41
		if i%7 == 0 {
			n = rng.IntN(len(buf) + 1)
		}
		for j := range n {
			buf[j] = byte(rng.Uint32())
		}
		// A sub-slice, so that a read past the key would see other bytes.
		key := buf[:n:n]
		seed := uint32(hashSeed)
		if i%3 == 0 {
			seed = rng.Uint32()
		}
		if got, want := murmur64A(key, seed), murmur64ARef(key, seed); got != want {
			t.Fatalf("murmur64A(%x, %#x) = %#x, want %#x", key, seed, got, want)
		}
		gi, gc := patLen(key)
		wi, wc := patLenRef(key)
		if gi != wi || gc != wc {
			t.Fatalf("patLen(%x) = %d, %d; want %d, %d", key, gi, gc, wi, wc)
		}
	}
}

// cachedCard reads the eight bytes as the loop it replaced did, and says
// not valid exactly when the top bit is set.
func TestCachedCard(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	h := make([]byte, 16)
	for i := range 100000 {
		for j := range h {
			h[j] = byte(rng.Uint32())
		}
		if i%2 == 0 {
			h[15] &= 0x7f
		}
		var want uint64
		for k := range 8 {
			want |= uint64(h[8+k]) << (8 * k)
		}
		wantOK := h[15]&(1<<7) == 0
		got, ok := cachedCard(h)
		if ok != wantOK || ok && got != want {
			t.Fatalf("cachedCard(%x) = %d, %v; want %d, %v", h, got, ok, want, wantOK)
		}
	}
}
