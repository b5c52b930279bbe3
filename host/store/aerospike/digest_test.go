package aerospike

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"

	as "github.com/aerospike/aerospike-client-go/v8"
)

// TestRipemdVectors checks the hash against the test vectors of
// RIPEMD-160's specification.
func TestRipemdVectors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "9c1185a5c5e9fc54612808977ee8f548b2258d31"},
		{"a", "0bdc9d2d256b3ee9daae347be6f4dc835a467ffe"},
		{"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"},
		{"message digest", "5d0689ef49d2fae572b881b123a85ffa21595f36"},
		{"abcdefghijklmnopqrstuvwxyz", "f71c27109c692c1b56bbdceb5b9d2865b3708dbc"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "12a053384a9c0c88e405a06c27dcf49ada62eb2b"},
		{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "b0e20b6e3116640286ed3a87a5713079b21f5189"},
		{strings.Repeat("1234567890", 8), "9b752e45573d4b39f4dbd3323cab82bf63326bfb"},
		{strings.Repeat("a", 1000000), "52783243c1697bdbe16d37f97f68f08325dc1528"},
	} {
		var h ripemd
		h.reset()
		h.write([]byte(c.in))
		d := h.sum()
		if got := hex.EncodeToString(d[:]); got != c.want {
			t.Errorf("RIPEMD-160 of %d bytes %.20q: %s, want %s", len(c.in), c.in, got, c.want)
		}
	}
}

// TestKeyDigestMatchesClient holds the store's key digests to the
// client's own (as.NewKey of a []byte key) for sets and keys of every
// length around the block boundaries, written in pieces of every size.
func TestKeyDigestMatchesClient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, set := range []string{"", "s", "respike", "as12_e2e_sys", strings.Repeat("x", 56), strings.Repeat("y", 63)} {
		for n := 0; n <= 300; n++ {
			key := make([]byte, n)
			for i := range key {
				key[i] = byte(r.Uint32())
			}
			want, err := as.NewKey("test", set, key)
			if err != nil {
				t.Fatal(err)
			}
			got, err2 := newKey("test", set, key)
			if err2 != nil {
				t.Fatal(err2)
			}
			if !bytes.Equal(got.Digest(), want.Digest()) {
				t.Fatalf("set %q, key of %d bytes: digest %x, want %x", set, n, got.Digest(), want.Digest())
			}
			if !got.Equals(want) || got.SetName() != set || got.Namespace() != "test" || !bytes.Equal(got.Value().GetObject().([]byte), key) {
				t.Fatalf("set %q, key of %d bytes: key %v, want %v", set, n, got, want)
			}
			// The same bytes written in two pieces.
			if n > 0 {
				cut := r.IntN(n)
				var h ripemd
				h.reset()
				h.writeString(set)
				h.writeByte(4)
				h.write(key[:cut])
				h.write(key[cut:])
				if d := h.sum(); !bytes.Equal(d[:], want.Digest()) {
					t.Fatalf("set %q, key of %d bytes cut at %d: digest %x, want %x", set, n, cut, d, want.Digest())
				}
			}
		}
	}
}

// TestNewKeyAllocations: a key costs the client's Key and the key's value,
// no more.
func TestNewKeyAllocations(t *testing.T) {
	key := []byte("some:key:12345")
	if n := testing.AllocsPerRun(100, func() { _, _ = newKey("test", "respike", key) }); n > 2 {
		t.Errorf("newKey: %v allocations, want at most 2", n)
	}
}

func BenchmarkKeyDigest(b *testing.B) {
	key := []byte("GET:12345")
	b.Run("store", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = newKey("test", "as12_bench", key)
		}
	})
	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = as.NewKey("test", "as12_bench", key)
		}
	})
}
