package sdk

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestLower8 checks the word-at-a-time lower-casing against the byte rule
// for every byte value in every position.
func TestLower8(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			var b [8]byte
			for i := range b {
				b[i] = byte(c + i*37) // neighbours of every kind
			}
			b[pos] = byte(c)
			want := b
			for i, ch := range want {
				if ch >= 'A' && ch <= 'Z' {
					want[i] = ch + 'a' - 'A'
				}
			}
			if got := lower8(binary.LittleEndian.Uint64(b[:])); got != binary.LittleEndian.Uint64(want[:]) {
				t.Fatalf("lower8(%q) = %x, want %q", b, got, want)
			}
		}
	}
}

// TestLookup checks that lookup finds every registered name in any case,
// at every length around the 8- and 16-byte word limits, and nothing else.
func TestLookup(t *testing.T) {
	var e engine
	names := []string{"a", "get", "set", "getset", "incrbyf", "incrbyfl", "incrbyflo",
		"sixteen-bytes-16", "seventeen-bytes17", "a_b", "a@b", "a[b", "x.y-z"}
	for i, n := range names {
		i := int64(i)
		e.addCommand(n, func(c *Ctx) { c.N[0] = i })
	}
	c := new(Ctx)
	find := func(name string) int64 {
		// As start does: the name in a buffer followed by 16 zero bytes.
		buf := append([]byte(name), make([]byte, 16)...)
		run := e.lookup(buf[:len(name):len(name)])
		if run == nil {
			return -1
		}
		c.N[0] = -2
		run(c)
		return c.N[0]
	}
	for i, n := range names {
		for _, variant := range []string{n, strings.ToUpper(n), strings.ToUpper(n[:1]) + n[1:]} {
			if got := find(variant); got != int64(i) {
				t.Errorf("lookup(%q) = command %d, want %d", variant, got, i)
			}
		}
	}
	for _, n := range []string{"", "ge", "gets", "get\x00", "GET ", "a`b", "a{b", "a\x7fb", "A_B\x00",
		"sixteen-bytes-1", "seventeen-bytes1", "seventeen-bytes177", "ge\xd4"} {
		if got := find(n); got != -1 {
			t.Errorf("lookup(%q) found command %d", n, got)
		}
	}
}
