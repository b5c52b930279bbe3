package memory

import (
	"github.com/respike/respike/guest-sdk/codec"
)

// codec.OpHLLRaise: PFADD's in-place edit of a dense Redis HyperLogLog.
// The registers are Redis's: 6 bits each, packed from byte 16 on, least
// significant bits first (hyperloglog.c's HLL_DENSE_GET_REGISTER and
// HLL_DENSE_SET_REGISTER).

var errNotDenseHLL = &opError{codec.OpNotApplicable, "memory: the blob is not a dense HyperLogLog"}

// hllHdr is the header of a dense HLL; hllRegMax a register's largest
// value.
const (
	hllHdr    = 16
	hllRegMax = 63
)

// validateHLLRaise checks what both stores refuse whatever the record: an
// OpHLLRaise that is not its call's only op, a call that may create the
// record, a Value that is not whole 3-byte register entries in range.
func validateHLLRaise(c *codec.Call, o *codec.Op) *opError {
	if len(c.Ops) != 1 || c.Policy.Exists != codec.ExistsUpdateOnly {
		return &opError{codec.InvalidOperation, "memory: OpHLLRaise must be the only op of an update-only call"}
	}
	if e := codec.CheckHLLRaise(o.Value); e != "" {
		return &opError{codec.InvalidOperation, "memory: " + e}
	}
	return nil
}

// hllRaise runs OpHLLRaise on the draft. When no register rises it marks
// the call unchanged, so that nothing is written.
func (cx *callCtx) hllRaise(o *codec.Op) (codec.Value, *opError) {
	b := cx.draftBin(o.Bin)
	blob, present, e := blobOf(b)
	if e != nil {
		return codec.Nil, e
	}
	if !present {
		return codec.Nil, errBinNotFound
	}
	if len(blob) != codec.HLLDenseSize || string(blob[:4]) != "HYLL" || blob[4] != 0 {
		return codec.Nil, errNotDenseHLL
	}
	// A stored blob may have been handed out by a read: unless the store
	// made it and nobody saw it since (own), the first register that
	// rises copies it. The call has no other op and cannot fail after
	// this one, so a change in place needs no undo.
	cur, rose := blob, false
	regs := o.Value.Bytes
	for k := 0; k < len(regs); k += 3 {
		i, count := int(regs[k])<<8|int(regs[k+1]), regs[k+2]
		if count <= hllGet(cur, i) {
			continue
		}
		if !rose && !b.own {
			cur = append([]byte(nil), blob...)
		}
		rose = true
		hllSet(cur, i, count)
	}
	if !rose {
		cx.unchanged = true
		return codec.Int(0), nil
	}
	cur[15] |= 1 << 7 // the cached cardinality is no longer valid
	if !b.own {
		cx.setBin(o.Bin, codec.Bytes(cur), nil)
		cx.draftBin(o.Bin).own = true
	}
	return codec.Int(1), nil
}

// hllGet is register i of the dense HLL h.
func hllGet(h []byte, i int) uint8 {
	b, fb := hllHdr+i*6/8, uint(i*6&7)
	v := uint(h[b]) >> fb
	if b+1 < len(h) {
		v |= uint(h[b+1]) << (8 - fb)
	}
	return uint8(v & hllRegMax)
}

// hllSet sets register i of the dense HLL h to v.
func hllSet(h []byte, i int, v uint8) {
	b, fb := hllHdr+i*6/8, uint(i*6&7)
	h[b] = h[b]&^byte(hllRegMax<<fb) | byte(uint(v)<<fb)
	if fb > 2 {
		h[b+1] = h[b+1]&^byte(hllRegMax>>(8-fb)) | byte(v>>(8-fb))
	}
}
