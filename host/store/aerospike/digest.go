package aerospike

//go:generate go run gen_ripemd.go

import (
	"encoding/binary"

	as "github.com/aerospike/aerospike-client-go/v8"
	ParticleType "github.com/aerospike/aerospike-client-go/v8/types/particle_type"
)

// A record's digest is computed here rather than by as.NewKey: the digest
// is RIPEMD-160 of the set name, the key's particle type and the key, and
// the client's RIPEMD-160 (a loop over tables of message indices and
// rotations) took 1.8 µs per key on the benchmark machine, 15% of the
// store's CPU per gathered GET (docs/performance.md, "The store's CPU per
// gathered command"). ripemdBlocks is the same compression unrolled, every
// rotation and index a constant; TestKeyDigestMatchesClient holds the
// digests to the client's.

// newKey is the client key of key in set, its digest computed by
// keyDigest. The key is a blob, as as.NewKey makes of a []byte.
func newKey(ns, set string, key []byte) (*as.Key, error) {
	d := keyDigest(set, key)
	return as.NewKeyWithDigest(ns, set, as.BytesValue(key), d[:])
}

// keyDigest is the digest Aerospike addresses a blob key by:
// RIPEMD-160(set, the blob particle type, key).
func keyDigest(set string, key []byte) [20]byte {
	var h ripemd
	h.reset()
	h.writeString(set)
	h.writeByte(ParticleType.BLOB)
	h.write(key)
	return h.sum()
}

// ripemd is a RIPEMD-160 hash in progress.
type ripemd struct {
	s  [5]uint32
	x  [64]byte // a partial block
	nx int      // bytes in x
	n  uint64   // bytes written
}

func (h *ripemd) reset() {
	h.s = [5]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}
	h.nx, h.n = 0, 0
}

func (h *ripemd) writeByte(b byte) {
	h.n++
	h.x[h.nx] = b
	h.nx++
	if h.nx == 64 {
		ripemdBlocks(&h.s, h.x[:])
		h.nx = 0
	}
}

func (h *ripemd) writeString(s string) {
	for len(s) > 0 {
		c := copy(h.x[h.nx:], s)
		h.n += uint64(c)
		h.nx += c
		s = s[c:]
		if h.nx == 64 {
			ripemdBlocks(&h.s, h.x[:])
			h.nx = 0
		}
	}
}

func (h *ripemd) write(p []byte) {
	h.n += uint64(len(p))
	if h.nx > 0 {
		c := copy(h.x[h.nx:], p)
		h.nx += c
		p = p[c:]
		if h.nx < 64 {
			return
		}
		ripemdBlocks(&h.s, h.x[:])
		h.nx = 0
	}
	p = p[ripemdBlocks(&h.s, p):]
	h.nx = copy(h.x[:], p)
}

// sum pads the message and returns the digest.
func (h *ripemd) sum() [20]byte {
	bitLen := h.n << 3
	h.x[h.nx] = 0x80
	clear(h.x[h.nx+1:])
	if h.nx >= 56 {
		ripemdBlocks(&h.s, h.x[:])
		clear(h.x[:])
	}
	binary.LittleEndian.PutUint64(h.x[56:], bitLen)
	ripemdBlocks(&h.s, h.x[:])
	var d [20]byte
	for i, v := range h.s {
		binary.LittleEndian.PutUint32(d[4*i:], v)
	}
	return d
}
