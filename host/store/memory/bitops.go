package memory

import (
	"math/bits"

	"github.com/respike/respike/guest-sdk/codec"
)

// The bit operations on a blob bin (codec.OpBitGrow and the like), with
// Aerospike's results as observed on CE 8.1: BIN_TYPE_ERROR on a bin that
// is not a blob, OP_NOT_APPLICABLE for a range past the blob's end, a nil
// read of an absent bin, BIN_NOT_FOUND for a set on one. Stored values
// are never mutated (reads hand them out), so writes build a new blob.

var (
	errOpNotApplicable = &opError{codec.OpNotApplicable, "memory: bit range past the end of the blob"}
	errBinNotFound     = &opError{codec.BinNotFound, "memory: bin not found"}
)

// maxBitGrow bounds what OpBitGrow allocates before the record size limit
// is checked: Redis's largest string.
const maxBitGrow = 512 << 20

// validateBitOp checks what Aerospike would refuse whatever the record.
func validateBitOp(o *codec.Op) *opError {
	if o.Count < 1 || o.Code != codec.OpBitGrow && o.Index < 0 {
		return &opError{codec.InvalidOperation, "memory: a bit op needs Index >= 0 and Count >= 1"}
	}
	if o.Code != codec.OpBitGrow && o.Index > 1<<30 {
		// As Aerospike (CE 8.1.2).
		return &opError{codec.ParameterError, "memory: bit offset beyond 2^30"}
	}
	if o.Code == codec.OpBitGrow && o.Count > maxBitGrow {
		return &opError{codec.RecordTooBig, "memory: a blob over 512 MiB"}
	}
	if o.Code == codec.OpBitSet && o.Value.Kind != codec.KindBytes {
		return &opError{codec.InvalidOperation, "memory: a bit set needs bytes"}
	}
	return nil
}

// blobOf returns the blob in b (nil when b is nil), or errBinType when b
// holds anything else.
func blobOf(b *bin) ([]byte, bool, *opError) {
	if b == nil {
		return nil, false, nil
	}
	if b.m != nil || b.l != nil || b.val.Kind != codec.KindBytes {
		return nil, true, errBinType
	}
	return b.val.Bytes, true, nil
}

// inBlob reports whether Count bits from Index lie within a blob of n bytes.
func inBlob(o *codec.Op, n int) bool {
	return o.Index+o.Count <= int64(n)*8 && o.Index+o.Count > o.Index
}

// bitRead runs OpBitGet or OpBitCount on bin b.
func bitRead(b *bin, o *codec.Op) (codec.Value, *opError) {
	blob, present, e := blobOf(b)
	if e != nil || !present {
		return codec.Nil, e
	}
	if !inBlob(o, len(blob)) {
		return codec.Nil, errOpNotApplicable
	}
	if o.Code == codec.OpBitCount {
		var n int64
		for p := o.Index; p < o.Index+o.Count; {
			if p&7 == 0 && p+8 <= o.Index+o.Count {
				n += int64(bits.OnesCount8(blob[p>>3]))
				p += 8
				continue
			}
			n += int64(blob[p>>3]>>(7-p&7)) & 1
			p++
		}
		return codec.Int(n), nil
	}
	if o.Index&7 == 0 && o.Count&7 == 0 { // whole bytes (an HLL's header, BITFIELD windows)
		return codec.Bytes(append([]byte(nil), blob[o.Index>>3:(o.Index+o.Count)>>3]...)), nil
	}
	out := make([]byte, (o.Count+7)/8)
	for j := range o.Count {
		p := o.Index + j
		if blob[p>>3]>>(7-p&7)&1 != 0 {
			out[j>>3] |= 0x80 >> (j & 7)
		}
	}
	return codec.Bytes(out), nil
}

// bitWrite runs OpBitGrow or OpBitSet on the draft.
func (cx *callCtx) bitWrite(o *codec.Op) *opError {
	blob, present, e := blobOf(cx.draftBin(o.Bin))
	if e != nil {
		return e
	}
	if o.Code == codec.OpBitGrow {
		if present && int64(len(blob)) >= o.Count {
			return nil
		}
		nb := make([]byte, o.Count)
		copy(nb, blob)
		cx.setBin(o.Bin, codec.Bytes(nb), nil)
		return nil
	}
	if !present {
		return errBinNotFound
	}
	if int64(len(o.Value.Bytes)) < (o.Count+7)/8 {
		return errParam
	}
	if !inBlob(o, len(blob)) {
		return errOpNotApplicable
	}
	nb := blob
	if len(cx.ownBlob) != len(blob) || &cx.ownBlob[0] != &blob[0] {
		nb = append([]byte(nil), blob...)
	}
	for j := range o.Count {
		p := o.Index + j
		mask := byte(0x80) >> (p & 7)
		if o.Value.Bytes[j>>3]&(0x80>>(j&7)) != 0 {
			nb[p>>3] |= mask
		} else {
			nb[p>>3] &^= mask
		}
	}
	cx.setBin(o.Bin, codec.Bytes(nb), nil)
	cx.ownBlob = nb
	return nil
}
