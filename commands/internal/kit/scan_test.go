package kit

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestCursorPositions(t *testing.T) {
	for _, c := range []struct {
		key   string
		after uint64
		start string // CursorStart(after)
	}{
		{"", 1, "\x00\x00\x00\x00\x00\x00\x00\x01"},
		{"\x00", 1, "\x00\x00\x00\x00\x00\x00\x00\x01"},
		{"a", 0x6100000000000001, "a\x00\x00\x00\x00\x00\x00\x01"},
		{"abcdefgh", 0x6162636465666769, "abcdefgi"},
		{"abcdefghXYZ", 0x6162636465666769, "abcdefgi"},
		{"abcdefg\xff", 0x6162636465666800, "abcdefh"},
		{"\xff\xff\xff\xff\xff\xff\xff\xff", 0, ""},
		{"\xff\xff\xff\xff\xff\xff\xff\xff\x00tail", 0, ""},
		{"\xff\xff\xff\xff\xff\xff\xff\xfe", math.MaxUint64, "\xff\xff\xff\xff\xff\xff\xff\xff"},
	} {
		if got := CursorAfter([]byte(c.key)); got != c.after {
			t.Errorf("CursorAfter(%q) = %#x, want %#x", c.key, got, c.after)
		}
		if got := string(CursorStart(nil, c.after)); got != c.start {
			t.Errorf("CursorStart(%#x) = %q, want %q", c.after, got, c.start)
		}
	}
	if !SamePos([]byte("ab"), []byte("ab\x00\x00")) || SamePos([]byte("ab"), []byte("ab\x01")) ||
		!SamePos([]byte("session:1"), []byte("session:2")) || SamePos([]byte("session"), []byte("session:")) {
		t.Error("SamePos")
	}
}

// The position is monotone in key order, so the keys at one position are a
// contiguous run, and CursorStart bounds them: every key at position p or
// after is >= CursorStart(p), every key before it is below.
func TestCursorOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0, 1, 'a', 'b', 0xfe, 0xff}
	keys := make([][]byte, 3000)
	for i := range keys {
		k := make([]byte, rng.IntN(11))
		for j := range k {
			k[j] = alphabet[rng.IntN(len(alphabet))]
		}
		keys[i] = k
	}
	slices.SortFunc(keys, bytes.Compare)
	for i := 1; i < len(keys); i++ {
		if keyPos(keys[i-1]) > keyPos(keys[i]) {
			t.Fatalf("position not monotone: %q > %q", keys[i-1], keys[i])
		}
	}
	for _, k := range keys {
		p := keyPos(k)
		if start := CursorStart(nil, p); bytes.Compare(start, k) > 0 || keyPos(start) != p {
			t.Fatalf("CursorStart(pos(%q)) = %q", k, start)
		}
		if next := CursorAfter(k); next != 0 {
			if start := CursorStart(nil, next); bytes.Compare(start, k) <= 0 {
				t.Fatalf("CursorStart(after(%q)) = %q is not past it", k, start)
			}
		}
	}
}
