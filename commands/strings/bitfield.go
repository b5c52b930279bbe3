package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "bitfield", Arity: -2, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "3.2.0",
		Summary: "Performs arbitrary bitfield integer operations on strings.",
		Run:     func(c *sdk.Ctx) { runBitField(c, false) },
	}, sdk.Command{
		Name: "bitfield_ro", Arity: -2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "bitmap", Since: "6.0.0",
		Summary: "Performs arbitrary read-only bitfield integer operations on strings.",
		Run:     func(c *sdk.Ctx) { runBitField(c, true) },
	})
}

// BITFIELD subcommands and overflow behaviours.
const (
	bfGet = iota
	bfSet
	bfIncrBy

	owWrap = iota - 3
	owSat
	owFail
)

// bfOp is one parsed GET, SET or INCRBY.
type bfOp struct {
	code   int
	ow     int // the OVERFLOW in force when it was given
	signed bool
	bits   uint
	off    int64 // in bits
	arg    int64 // SET's value or INCRBY's increment
}

// bitField is a BITFIELD in flight: its operations and, once applied, each
// one's reply (nil for an INCRBY or SET that failed with OVERFLOW FAIL).
type bitField struct {
	ops      []bfOp
	readonly bool  // GETs only
	highest  int64 // the last bit any write reaches
	// The window of bytes the operations touch: its first byte and length.
	winFirst, winLen int64
	replies          []int64
	nils             []bool
}

const errBitFieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."

// runBitField: BITFIELD key [GET type offset | SET type offset value |
// INCRBY type offset increment | OVERFLOW WRAP|SAT|FAIL] ...; BITFIELD_RO
// key [GET type offset ...]. Every subcommand is parsed (and any error
// answered) before the key is looked up, as Redis does.
//
// The store reads only the window of bytes the operations touch
// (OpBitGet); the module applies them there and, when they wrote, the
// window goes back in one call (OpBitSet) guarded by the generation read,
// keeping the TTL: packed counters in a large string move a few bytes.
// When the window reaches past the end of the value (a write must then
// grow the string with zero bytes up to the farthest bit written, even
// when every write fails with OVERFLOW FAIL, as in Redis), the key is
// missing, or the value is stored as an integer, the whole value is read
// instead (a GET past the end reads zeros), and written back by a
// read-modify-write guarded by the generation (bitRMW).
func runBitField(c *sdk.Ctx, readOnly bool) {
	bf := &bitField{}
	ow := owWrap
	readonly := true
	var highest int64 = -1 // the last bit any write reaches
	for j := 2; j < c.NArg(); j++ {
		rem := c.NArg() - j - 1
		sub := c.Arg(j)
		op := bfOp{ow: ow}
		switch {
		case kit.Fold(sub, "get") && rem >= 2:
			op.code = bfGet
		case kit.Fold(sub, "set") && rem >= 3:
			op.code = bfSet
		case kit.Fold(sub, "incrby") && rem >= 3:
			op.code = bfIncrBy
		case kit.Fold(sub, "overflow") && rem >= 1:
			j++
			switch w := c.Arg(j); {
			case kit.Fold(w, "wrap"):
				ow = owWrap
			case kit.Fold(w, "sat"):
				ow = owSat
			case kit.Fold(w, "fail"):
				ow = owFail
			default:
				c.Error("ERR Invalid OVERFLOW type specified")
				return
			}
			continue
		default:
			c.Error(kit.Syntax)
			return
		}
		var ok bool
		if op.signed, op.bits, ok = parseBitFieldType(c.Arg(j + 1)); !ok {
			c.Error(errBitFieldType)
			return
		}
		if op.off, ok = parseBitOffset(c.Arg(j+2), true, int64(op.bits)); !ok {
			c.Error(errBitOffset)
			return
		}
		if op.code != bfGet {
			readonly = false
			highest = max(highest, op.off+int64(op.bits)-1)
			if op.arg, ok = kit.ParseInt(c.Arg(j + 3)); !ok {
				c.Error(kit.NotInt)
				return
			}
			j++
		}
		j += 2
		bf.ops = append(bf.ops, op)
	}
	if !readonly && readOnly {
		c.Error("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	if highest>>3+1 > kit.MaxBuild {
		tooBig(c)
		return
	}
	bf.readonly, bf.highest = readonly, highest
	if len(bf.ops) == 0 {
		readStr(c, c.Arg(1), bf.read) // nothing to do but the type check
		return
	}
	bf.readWindow(c)
}

// readWindow reads the bytes the operations touch (OpBitGet), with the
// record's generation.
func (bf *bitField) readWindow(c *sdk.Ctx) {
	lo, hi := bf.ops[0].off>>3, int64(-1)
	for _, op := range bf.ops {
		lo = min(lo, op.off>>3)
		hi = max(hi, (op.off+int64(op.bits)-1)>>3)
	}
	bf.winFirst, bf.winLen = lo, hi-lo+1
	c.Record(c.Arg(1)).Guard(codec.TypeString).BitGet(codec.BinValue, lo<<3, bf.winLen<<3)
	c.Exec(bf.windowRead)
}

// windowRead applies the operations to the window read and, when they
// wrote, writes it back in one call guarded by the generation read. When
// the window cannot be read (a missing key or value bin, a window past the
// end, which a write must grow, a value stored as an integer, an offset
// beyond what the store's bit operations address), the whole value is
// read instead.
func (bf *bitField) windowRead(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if v := r.Value(0); v.Kind == codec.KindBytes && int64(len(v.Bytes)) == bf.winLen {
			break
		}
		bf.whole(c)
		return
	case codec.NotFound, codec.OpNotApplicable, codec.BinTypeError, codec.ParameterError:
		bf.whole(c)
		return
	case codec.FilteredOut:
		c.Error(kit.WrongType)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	win := append(c.B[:0], r.Value(0).Bytes...)
	c.B = win
	changed := false
	bf.apply(win, bf.winFirst<<3, &changed)
	if !changed {
		bf.reply(c)
		return
	}
	c.Record(c.Arg(1)).Guard(codec.TypeString).Generation(r.Generation).
		Exists(codec.ExistsUpdateOnly).TTLKeep().
		BitSet(codec.BinValue, bf.winFirst<<3, bf.winLen<<3, win)
	c.Exec(bf.windowWritten)
}

func (bf *bitField) windowWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		bf.reply(c)
	case codec.GenerationError, codec.NotFound, codec.FilteredOut, codec.OpNotApplicable, codec.BinTypeError:
		// Another client wrote (shortened, retyped, deleted) the key
		// since the read: start over.
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		bf.readWindow(c)
	default:
		kit.StoreError(c, r)
	}
}

// whole runs the operations on the whole value: a read for GETs only, else
// a read-modify-write that grows the string to the farthest bit written.
func (bf *bitField) whole(c *sdk.Ctx) {
	if bf.readonly {
		readStr(c, c.Arg(1), bf.read)
		return
	}
	highest := bf.highest
	m := &bitRMW{reply: bf.reply}
	m.edit = func(c *sdk.Ctx, b []byte, exists bool) ([]byte, bool, bool) {
		old := len(b)
		b = grow(b, highest>>3+1)
		changed := len(b) != old || !exists
		bf.apply(b, 0, &changed)
		return b, changed, true
	}
	m.run(c)
}

// parseBitFieldType parses i1..i64 or u1..u63 as Redis's
// getBitfieldTypeFromArgument: the letter is case-sensitive and the width
// is read up to a NUL byte, as C's strlen stops there.
func parseBitFieldType(b []byte) (signed bool, bits uint, ok bool) {
	if len(b) == 0 || b[0] != 'i' && b[0] != 'u' {
		return false, 0, false
	}
	signed = b[0] == 'i'
	w := b[1:]
	for i, ch := range w {
		if ch == 0 {
			w = w[:i]
			break
		}
	}
	n, ok := kit.ParseInt(w)
	if !ok || n < 1 || signed && n > 64 || !signed && n > 63 {
		return false, 0, false
	}
	return signed, uint(n), true
}

// read answers a BITFIELD of GETs only from the value read.
func (bf *bitField) read(c *sdk.Ctx) {
	r := c.Result(0)
	exists, ok := strRead(c, r)
	if !ok {
		return
	}
	var tmp [24]byte
	var s []byte
	if exists {
		s = strBytes(r.Value(0), tmp[:])
	}
	changed := false
	bf.apply(s, 0, &changed)
	bf.reply(c)
}

// apply runs every operation on b, which holds the value's bits from bit
// base on, in order, recording the replies. A GET reads bits past the end
// of b as zeros; writes never reach past it (the caller grew it). changed
// is set when a write happened.
func (bf *bitField) apply(b []byte, base int64, changed *bool) {
	bf.replies, bf.nils = bf.replies[:0], bf.nils[:0]
	for _, op := range bf.ops {
		op.off -= base
		old := getBits(b, op.off, op.bits)
		if op.code == bfGet {
			bf.push(signExtend(old, op.bits, op.signed), false)
			continue
		}
		var nv uint64
		var overflow bool
		var ret int64
		if op.signed {
			oldv := signExtend(old, op.bits, true)
			var v int64
			if op.code == bfIncrBy {
				v, overflow = signedOverflow(oldv, op.arg, op.bits, op.ow)
				ret = v
			} else {
				v, overflow = signedOverflow(op.arg, 0, op.bits, op.ow)
				ret = oldv
			}
			nv = uint64(v)
		} else {
			if op.code == bfIncrBy {
				nv, overflow = unsignedOverflow(old, op.arg, op.bits, op.ow)
				ret = int64(nv)
			} else {
				nv, overflow = unsignedOverflow(uint64(op.arg), 0, op.bits, op.ow)
				ret = int64(old)
			}
		}
		if overflow && op.ow == owFail {
			bf.push(0, true)
			continue
		}
		bf.push(ret, false)
		setBits(b, op.off, op.bits, nv)
		*changed = true
	}
}

func (bf *bitField) push(v int64, isNil bool) {
	bf.replies = append(bf.replies, v)
	bf.nils = append(bf.nils, isNil)
}

// reply writes the array of the operations' replies.
func (bf *bitField) reply(c *sdk.Ctx) {
	w := c.Reply()
	w.Array(len(bf.replies))
	for i, v := range bf.replies {
		if bf.nils[i] {
			w.Null()
		} else {
			w.Int(v)
		}
	}
}

// getBits reads bits bits of b from bit off on, most significant first,
// as an unsigned number; bits past the end of b read as zeros.
func getBits(b []byte, off int64, bits uint) uint64 {
	var v uint64
	for range bits {
		var bit uint64
		if by := off >> 3; by < int64(len(b)) {
			bit = uint64(b[by]>>(7-off&7)) & 1
		}
		v = v<<1 | bit
		off++
	}
	return v
}

// setBits writes the low bits bits of v into b from bit off on, most
// significant first.
func setBits(b []byte, off int64, bits uint, v uint64) {
	for j := range bits {
		mask := byte(1) << (7 - off&7)
		if v&(1<<(bits-1-j)) != 0 {
			b[off>>3] |= mask
		} else {
			b[off>>3] &^= mask
		}
		off++
	}
}

// signExtend turns the bits-wide field v into an int64: two's complement
// when signed.
func signExtend(v uint64, bits uint, signed bool) int64 {
	if signed && bits < 64 && v&(1<<(bits-1)) != 0 {
		v |= ^uint64(0) << bits
	}
	return int64(v)
}

// signedOverflow is value+incr for a signed field of bits bits under
// overflow behaviour ow, and whether it overflowed, exactly as Redis's
// checkSignedBitfieldOverflow (a SET checks its value with incr 0).
func signedOverflow(value, incr int64, bits uint, ow int) (int64, bool) {
	maxv := int64(1<<63 - 1)
	if bits < 64 {
		maxv = int64(1)<<(bits-1) - 1
	}
	minv := -maxv - 1
	maxincr := int64(uint64(maxv) - uint64(value))
	minincr := minv - value
	var limit int64
	switch {
	case value > maxv || bits != 64 && incr > maxincr || value >= 0 && incr > 0 && incr > maxincr:
		limit = maxv
	case value < minv || bits != 64 && incr < minincr || value < 0 && incr < 0 && incr < minincr:
		limit = minv
	default:
		return value + incr, false
	}
	if ow != owWrap {
		return limit, true
	}
	c := uint64(value) + uint64(incr)
	if bits < 64 {
		mask := ^uint64(0) << bits
		if c&(1<<(bits-1)) != 0 {
			c |= mask
		} else {
			c &^= mask
		}
	}
	return int64(c), true
}

// unsignedOverflow is value+incr for an unsigned field of bits bits under
// overflow behaviour ow, and whether it overflowed, exactly as Redis's
// checkUnsignedBitfieldOverflow.
func unsignedOverflow(value uint64, incr int64, bits uint, ow int) (uint64, bool) {
	maxv := uint64(1)<<bits - 1
	maxincr := int64(maxv - value)
	minincr := -int64(value)
	var limit uint64
	switch {
	case value > maxv || incr > 0 && incr > maxincr:
		limit = maxv
	case incr < 0 && incr < minincr:
		limit = 0
	default:
		return value + uint64(incr), false
	}
	if ow != owWrap {
		return limit, true
	}
	return (value + uint64(incr)) &^ (^uint64(0) << bits), true
}
