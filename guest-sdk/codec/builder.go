package codec

import (
	"encoding/binary"
	"math"
)

// Builder methods append an op or set a policy field on a Call and return the
// Call, so a record operation reads as one chain:
//
//	c.Record(key).Guard(TypeString).TTLNever().Put(BinType, Str(TypeString)).Put(BinValue, Bytes(v))
//
// None of them allocates once the Call's op slice has grown.
//
// Map reads and removes take a MapReturn saying what to return; or
// ReturnInverted into it to select the complement of the keys or range
// given (see ReturnInverted):
//
//	c.Record(key).MapPut(BinValue, MapOrderKeyValue, kv).
//		MapRemoveByRank(BinValue, ReturnCount|ReturnInverted, -10, 10) // keep the 10 highest

// BeginEncoded empties c to build a call on key whose builder methods encode
// each op as it is added, for AppendRequest to copy, instead of appending it
// to Ops, which stays empty (decode the request to read the ops back). The
// guest SDK's Record uses it: in WebAssembly, building Op structs to encode
// them later costs more than the rest of a simple command. Values passed to
// a builder method are read when the op is added.
func (c *Call) BeginEncoded(key []byte) {
	c.Key = key
	// Field by field: Policy{} is a 56-byte zeroing, which Go's
	// WebAssembly does with memory.fill, and wazero's memory.fill is a
	// doubling loop of six calls to memmove: ~300 instructions on every
	// Record.
	c.Policy.Exists, c.Policy.TTL, c.Policy.Seconds, c.Policy.Generation = 0, 0, 0, 0
	c.Policy.Guard, c.Policy.DeleteIfEmpty = "", ""
	c.Ops = c.Ops[:0]
	c.enc = c.enc[:0]
	c.nenc = 0
	c.encoded = true
}

// EncodedCap is the capacity of the buffer holding the call's encoded ops,
// which a Call reused for the next request keeps.
func (c *Call) EncodedCap() int { return cap(c.enc) }

func (c *Call) op(o Op) *Call {
	if c.encoded {
		c.enc = appendOp(c.enc, &o)
		c.nenc++
		return c
	}
	c.Ops = append(c.Ops, o)
	return c
}

// binOp adds an op that takes at most a bin; valueOp one that takes a bin
// and a value. In encoded mode they build no Op.
func (c *Call) binOp(code OpCode, bin string) *Call {
	if !c.encoded {
		return c.op(Op{Code: code, Bin: bin})
	}
	c.enc = appendBinOp(c.enc, code, bin)
	c.nenc++
	return c
}

func (c *Call) valueOp(code OpCode, bin string, v *Value) *Call {
	if !c.encoded {
		return c.op(Op{Code: code, Bin: bin, Value: *v})
	}
	c.enc = appendValueOp(c.enc, code, bin, v)
	c.nenc++
	return c
}

// fieldsOp adds an op given by its fields, none of them Value or Value2
// (a map put, a read by keys, a bit or HLL op): in encoded mode it builds
// no Op. An Op is 216 bytes, and Go's WebAssembly zeroes one with
// memory.fill and passes it with memory.copy, which wazero runs as calls
// to memmove (eight for the fill): more than the encoding itself.
func (c *Call) fieldsOp(code OpCode, ret MapReturn, bin string, vs []Value, index, count int64, flags uint32) *Call {
	if !c.encoded {
		return c.op(Op{Code: code, Bin: bin, Return: ret, Values: vs, Index: index, Count: count, Flags: flags})
	}
	c.enc = appendFieldsOp(c.enc, code, ret, bin, vs, index, count, flags)
	c.nenc++
	return c
}

// bytesOp adds an op with a bin, a blob value and optionally an index and
// a count (a bit write, an HLL raise), as fieldsOp does.
func (c *Call) bytesOp(code OpCode, bin string, b []byte, index, count int64) *Call {
	if !c.encoded {
		return c.op(Op{Code: code, Bin: bin, Value: Bytes(b), Index: index, Count: count})
	}
	c.enc = appendBytesOp(c.enc, code, bin, b, index, count)
	c.nenc++
	return c
}

// Prepared is a sequence of ops encoded once, for the ops a command adds
// unchanged every time (a sorted set's size and type tag, the header read
// of a dense HLL): adding it to an encoded call is one copy of its bytes,
// where a builder method costs hundreds of instructions in WebAssembly.
// Its ops' values must not change after Prepare.
type Prepared struct {
	ops []Op
	enc []byte
	// short: enc has at most 16 bytes, and head and tail hold them as
	// two little-endian words, from the first byte (head) or ending at
	// the last (tail), for PutScore's stores.
	short      bool
	head, tail [2]uint64
}

// Prepare encodes ops for (*Call).Prepared.
func Prepare(ops ...Op) *Prepared {
	p := &Prepared{ops: ops}
	for i := range p.ops {
		p.enc = appendOp(p.enc, &p.ops[i])
	}
	if n := len(p.enc); n <= 16 {
		var h, t [16]byte
		copy(h[:], p.enc)
		copy(t[16-n:], p.enc)
		p.short = true
		p.head = [2]uint64{get64(h[:]), get64(h[8:])}
		p.tail = [2]uint64{get64(t[:]), get64(t[8:])}
	}
	return p
}

// Prepared adds the prepared ops to the call, as adding each of them
// would.
func (c *Call) Prepared(p *Prepared) *Call {
	if !c.encoded {
		c.Ops = append(c.Ops, p.ops...)
		return c
	}
	c.enc = append(c.enc, p.enc...)
	c.nenc += uint32(len(p.ops))
	return c
}

// MapPutScore is MapPut of one member (a blob) and its score (a float):
// a ZADD or GEOADD of one member. It encodes with one growth and no loop.
func (c *Call) MapPutScore(bin string, flags uint32, member []byte, score float64) *Call {
	if !c.encoded {
		return c.op(Op{Code: OpMapPut, Bin: bin, Flags: flags, Values: []Value{Bytes(member), Float(score)}})
	}
	c.enc = appendMapPutScore(c.enc, bin, flags, member, score)
	c.nenc++
	return c
}

// ScorePut is a map put of one member (a blob) and its score (a float)
// between two prepared sequences, with the bin, the flags and the ops
// around it fixed once by PrepareScorePut: a ZADD or GEOADD of one member
// between the reads and writes around it (the set's size, its type tag).
type ScorePut struct {
	pre, post *Prepared
	bin       string
	flags     uint32
	// words: PutScore's word stores apply (pre and post short, a
	// one-byte bin), with these constants: the put's first word (head),
	// the length of pre (a) and of the put's score and flags (tail), the
	// bytes besides the member (n), the ops added (nops).
	words      bool
	head       uint64
	a, tail, n int
	nops       uint32
}

// PrepareScorePut fixes a ScorePut: pre, a map put in bin with flags,
// post.
func PrepareScorePut(pre *Prepared, bin string, flags uint32, post *Prepared) *ScorePut {
	p := &ScorePut{pre: pre, post: post, bin: bin, flags: flags}
	if pre.short && post.short && len(bin) == 1 {
		m, tail := uint64(opBin|opValues), 9
		if flags != 0 {
			m, tail = m|opFlags, 13
		}
		// code, presence bits, the bin's name (length 1), two values.
		p.head = uint64(OpMapPut) | m<<8 | 1<<16 | uint64(bin[0])<<48 | 2<<56
		p.words, p.a, p.tail = true, len(pre.enc), tail
		p.n = len(pre.enc) + 16 + tail + len(post.enc)
		p.nops = uint32(len(pre.ops) + 1 + len(post.ops))
	}
	return p
}

// PutScore adds p's ops around a put of member and score, as
// Prepared(pre).MapPutScore(bin, flags, member, score).Prepared(post)
// would. On an encoded call with p's short form it writes them with one
// growth and a few word stores, without another call: in WebAssembly
// each call passes its arguments through memory, and the chain of
// builder calls was ~2,500 instructions of a GEOADD (two calls, ~1,400,
// in the twelfth pass's form).
//
// Each prepared sequence is written as a 16-byte window of two word
// stores, pre's from the first byte and post's ending at the last, past
// their own bytes into the put's place (the put is at least 25 bytes);
// the put is written after them, over those bytes. A member of 8 to 24
// bytes is copied as overlapping words: copy is a call to memmove in
// WebAssembly and, under wazero, another on the host.
func (c *Call) PutScore(p *ScorePut, member []byte, score float64) {
	if !c.encoded || !p.words {
		c.Prepared(p.pre).MapPutScore(p.bin, p.flags, member, score).Prepared(p.post)
		return
	}
	ml := len(member)
	n := p.n + ml
	dst, w := extendOp(c.enc, n)
	c.enc = dst
	c.nenc += p.nops
	binary.LittleEndian.PutUint64(w[n-16:], p.post.tail[0])
	binary.LittleEndian.PutUint64(w[n-8:], p.post.tail[1])
	binary.LittleEndian.PutUint64(w, p.pre.head[0])
	binary.LittleEndian.PutUint64(w[8:], p.pre.head[1])
	// The put: its first word (PrepareScorePut), the member's kind and
	// length, then the member and the score (and the flags).
	q := w[p.a:]
	binary.LittleEndian.PutUint64(q, p.head)
	binary.LittleEndian.PutUint64(q[8:], uint64(KindBytes)<<24|uint64(ml)<<32)
	if ml >= 8 && ml <= 24 {
		binary.LittleEndian.PutUint64(q[16:], binary.LittleEndian.Uint64(member))
		binary.LittleEndian.PutUint64(q[8+ml:], binary.LittleEndian.Uint64(member[ml-8:]))
		if ml > 16 {
			binary.LittleEndian.PutUint64(q[24:], binary.LittleEndian.Uint64(member[8:]))
		}
	} else {
		copy(q[16:], member)
	}
	r := q[16+ml:]
	_ = r[8]
	r[0] = byte(KindFloat)
	binary.LittleEndian.PutUint64(r[1:], math.Float64bits(score))
	if p.flags != 0 {
		binary.LittleEndian.PutUint32(r[9:], p.flags)
	}
}

// Get reads one bin; bin "" reads all bins as a map of bin name → value.
func (c *Call) Get(bin string) *Call { return c.binOp(OpGet, bin) }

// Header makes the call report the record's generation and TTL without
// reading bins.
func (c *Call) Header() *Call { return c.binOp(OpGetHeader, "") }

// Put writes a bin.
func (c *Call) Put(bin string, v Value) *Call { return c.valueOp(OpPut, bin, &v) }

// Add adds an integer or float to a numeric bin (a missing bin counts as 0).
func (c *Call) Add(bin string, delta Value) *Call { return c.valueOp(OpAdd, bin, &delta) }

// Append appends bytes to a blob bin (a missing bin counts as empty).
func (c *Call) Append(bin string, b []byte) *Call {
	return c.bytesOp(OpAppend, bin, b, 0, 0)
}

// Delete deletes the record.
func (c *Call) Delete() *Call { return c.binOp(OpDelete, "") }

// Touch applies the policy's TTL to an existing record.
func (c *Call) Touch() *Call { return c.binOp(OpTouch, "") }

// Op appends any op.
func (c *Call) Op(o Op) *Call { return c.op(o) }

// MapPut writes key,value pairs into a map bin with MapWrite* and MapOrder* flags.
func (c *Call) MapPut(bin string, flags uint32, kv []Value) *Call {
	return c.fieldsOp(OpMapPut, 0, bin, kv, 0, 0, flags)
}

// MapIncrement adds delta to the value under key (missing counts as 0) and
// returns the new value. flags carries MapOrder* for a map it creates.
func (c *Call) MapIncrement(bin string, flags uint32, key, delta Value) *Call {
	return c.op(Op{Code: OpMapIncrement, Bin: bin, Flags: flags, Value: key, Value2: delta})
}

// MapSize returns the number of items in a map bin (0 when absent).
func (c *Call) MapSize(bin string) *Call { return c.binOp(OpMapSize, bin) }

// MapGetByKeys returns the items with the given keys, per ret.
func (c *Call) MapGetByKeys(bin string, ret MapReturn, keys []Value) *Call {
	return c.fieldsOp(OpMapGetByKeys, ret, bin, keys, 0, 0, 0)
}

// MapRemoveByKeys removes the items with the given keys and returns them per ret.
func (c *Call) MapRemoveByKeys(bin string, ret MapReturn, keys []Value) *Call {
	return c.fieldsOp(OpMapRemoveByKeys, ret, bin, keys, 0, 0, 0)
}

// MapGetByIndex returns count items from index in key order (count < 0: to the end).
func (c *Call) MapGetByIndex(bin string, ret MapReturn, index, count int64) *Call {
	return c.fieldsOp(OpMapGetByIndex, ret, bin, nil, index, count, 0)
}

// MapRemoveByIndex removes count items from index in key order and returns them per ret.
func (c *Call) MapRemoveByIndex(bin string, ret MapReturn, index, count int64) *Call {
	return c.fieldsOp(OpMapRemoveByIndex, ret, bin, nil, index, count, 0)
}

// MapGetByRank returns count items from rank in value order (ties by key).
func (c *Call) MapGetByRank(bin string, ret MapReturn, rank, count int64) *Call {
	return c.fieldsOp(OpMapGetByRank, ret, bin, nil, rank, count, 0)
}

// MapGetByValueRange returns the items whose value is in [begin, end).
func (c *Call) MapGetByValueRange(bin string, ret MapReturn, begin, end Value) *Call {
	return c.op(Op{Code: OpMapGetByValues, Bin: bin, Return: ret, Value: begin, Value2: end})
}

// MapGetByKeyRange returns the items whose key is in [begin, end).
func (c *Call) MapGetByKeyRange(bin string, ret MapReturn, begin, end Value) *Call {
	return c.op(Op{Code: OpMapGetByKeyRange, Bin: bin, Return: ret, Value: begin, Value2: end})
}

// MapRemoveByRank removes count items from rank in value order (equal
// values by key; a negative rank counts from the highest, -1 being the
// highest; count < 0: to the end) and returns them per ret, in rank order.
// A range partly out of bounds removes its in-bounds part. With
// ReturnInverted it removes every item outside the range: to keep the n
// highest-ranked items, remove (-n, n) inverted.
func (c *Call) MapRemoveByRank(bin string, ret MapReturn, rank, count int64) *Call {
	return c.fieldsOp(OpMapRemoveByRank, ret, bin, nil, rank, count, 0)
}

// MapRemoveByValueRange removes the items whose value is in [begin, end)
// (Nil begin: from the lowest; Nil end: to the highest) and returns them per
// ret, in rank order. Values compare as Aerospike orders them: by type
// first, so every integer is below every float.
func (c *Call) MapRemoveByValueRange(bin string, ret MapReturn, begin, end Value) *Call {
	return c.op(Op{Code: OpMapRemoveByValueRange, Bin: bin, Return: ret, Value: begin, Value2: end})
}

// MapRemoveByKeyRange removes the items whose key is in [begin, end) (Nil
// begin: from the first; Nil end: to the last) and returns them per ret, in
// key order.
func (c *Call) MapRemoveByKeyRange(bin string, ret MapReturn, begin, end Value) *Call {
	return c.op(Op{Code: OpMapRemoveByKeyRange, Bin: bin, Return: ret, Value: begin, Value2: end})
}

// MapGetByValueRelRank returns count items (count < 0: to the end) from
// the rank rel counted from the first item whose value is at least anchor
// (so rel 0 starts there, rel -1 one below), in rank order. A range partly
// out of bounds returns its in-bounds part. ZRANGEBYSCORE … LIMIT reads
// exactly its page with it.
func (c *Call) MapGetByValueRelRank(bin string, ret MapReturn, anchor Value, rel, count int64) *Call {
	return c.op(Op{Code: OpMapGetByValueRelRank, Bin: bin, Return: ret, Value: anchor, Index: rel, Count: count})
}

// MapGetByKeyRelIndex returns count items (count < 0: to the end) from the
// index rel counted from the first key at least anchor, in key order. A
// range partly out of bounds returns its in-bounds part.
func (c *Call) MapGetByKeyRelIndex(bin string, ret MapReturn, anchor Value, rel, count int64) *Call {
	return c.op(Op{Code: OpMapGetByKeyRelIndex, Bin: bin, Return: ret, Value: anchor, Index: rel, Count: count})
}

// MapGeoSearch reads the items of a geo set inside the area (as
// geo.Shape.AppendFilter encodes it), in the order Redis visits them, up
// to count of them (0: all); see OpMapGeoSearch.
func (c *Call) MapGeoSearch(bin string, area []byte, count int64) *Call {
	return c.op(Op{Code: OpMapGeoSearch, Bin: bin, Value: Bytes(area), Count: count})
}

// MapClear removes every item of a map bin.
func (c *Call) MapClear(bin string) *Call { return c.binOp(OpMapClear, bin) }

// ListAppend appends items at the tail of a list bin (created when
// missing) and returns the size after.
func (c *Call) ListAppend(bin string, items []Value) *Call {
	return c.fieldsOp(OpListAppend, 0, bin, items, 0, 0, 0)
}

// ListInsert inserts items before index (0: at the head; the size: at the
// tail; negative: from the tail) and returns the size after. An index
// beyond the list fails the call with OpNotApplicable. Redis's LPUSH
// a b c inserts c, b, a at index 0.
func (c *Call) ListInsert(bin string, index int64, items []Value) *Call {
	return c.fieldsOp(OpListInsert, 0, bin, items, index, 0, 0)
}

// ListSize returns the number of items of a list bin (0 when absent).
func (c *Call) ListSize(bin string) *Call { return c.binOp(OpListSize, bin) }

// ListGetByIndex returns count items from index (count < 0: to the end)
// per ret. A range partly out of bounds selects its in-bounds part: index
// -5 count 10 of a 3-item list selects the items at 0..2 that fall in
// -5..4, that is all three.
func (c *Call) ListGetByIndex(bin string, ret MapReturn, index, count int64) *Call {
	return c.fieldsOp(OpListGetByIndex, ret, bin, nil, index, count, 0)
}

// ListRemoveByIndex removes count items from index (count < 0: to the end)
// and returns them per ret. With ReturnInverted it keeps only the range:
// Redis's LTRIM.
func (c *Call) ListRemoveByIndex(bin string, ret MapReturn, index, count int64) *Call {
	return c.fieldsOp(OpListRemoveByIndex, ret, bin, nil, index, count, 0)
}

// ListSet replaces the item at index; an index out of bounds fails the call.
func (c *Call) ListSet(bin string, index int64, v Value) *Call {
	return c.op(Op{Code: OpListSet, Bin: bin, Index: index, Value: v})
}

// ListGetByValue selects every item equal to v and returns them per ret
// (ReturnIndex: their indexes, ascending).
func (c *Call) ListGetByValue(bin string, ret MapReturn, v Value) *Call {
	return c.op(Op{Code: OpListGetByValue, Bin: bin, Return: ret, Value: v})
}

// ListRemoveByValue removes every item equal to v and returns them per ret.
func (c *Call) ListRemoveByValue(bin string, ret MapReturn, v Value) *Call {
	return c.op(Op{Code: OpListRemoveByValue, Bin: bin, Return: ret, Value: v})
}

// ExpectListItem makes the call fail with FilteredOut, changing nothing,
// unless the list in bin has an item at index equal to v: "pop the end
// item if it is still the one I read" without trusting a generation (see
// OpExpectListItem). An absent record passes.
func (c *Call) ExpectListItem(bin string, index int64, v Value) *Call {
	return c.op(Op{Code: OpExpectListItem, Bin: bin, Index: index, Value: v})
}

// ExpectBlobSize makes the call fail with FilteredOut unless bin holds a
// blob of exactly size bytes (a condition checked before the ops:
// OpExpectBlobSize). An absent record passes.
func (c *Call) ExpectBlobSize(bin string, size int64) *Call {
	return c.fieldsOp(OpExpectBlobSize, 0, bin, nil, size, 0, 0)
}

// Guard makes the call fail with FilteredOut unless the record is absent or
// of type tag t.
func (c *Call) Guard(t string) *Call { c.Policy.Guard = t; return c }

// Exists sets the exists policy of a write.
func (c *Call) Exists(p ExistsPolicy) *Call { c.Policy.Exists = p; return c }

// TTLKeep leaves the record's expiry as it is (the default).
func (c *Call) TTLKeep() *Call { c.Policy.TTL, c.Policy.Seconds = TTLKeep, 0; return c }

// TTLNever makes the record never expire.
func (c *Call) TTLNever() *Call { c.Policy.TTL, c.Policy.Seconds = TTLNever, 0; return c }

// Expire makes the record expire in seconds (at least 1).
func (c *Call) Expire(seconds int64) *Call {
	c.Policy.TTL, c.Policy.Seconds = TTLSeconds, seconds
	return c
}

// ExpireAt makes the record expire at the Unix time unixMs in
// milliseconds, exactly (TTLAt).
func (c *Call) ExpireAt(unixMs int64) *Call {
	c.Policy.TTL, c.Policy.Seconds = TTLAt, unixMs
	return c
}

// Generation makes the call fail with GenerationError unless the record's
// generation is g.
func (c *Call) Generation(g uint32) *Call { c.Policy.Generation = g; return c }

// DeleteIfEmpty deletes the record when the collection bin is empty after the ops.
func (c *Call) DeleteIfEmpty(bin string) *Call { c.Policy.DeleteIfEmpty = bin; return c }

// OK reports whether the call succeeded.
func (r *Result) OK() bool { return r.Code == OK }

// Value returns the value of op i, or Nil when there is none.
func (r *Result) Value(i int) Value {
	if i < 0 || i >= len(r.Values) {
		return Nil
	}
	return r.Values[i]
}

// IntAt returns the integer of op i's value: 0 when there is none or it is
// not an integer. Unlike Value(i).Int it copies no Value: in Go's
// WebAssembly a 72-byte Value is copied with memory.copy and zeroed with
// memory.fill, which wazero runs as calls to memmove (seven for the fill),
// so reading one field through Value costs hundreds of instructions.
func (r *Result) IntAt(i int) int64 {
	if uint(i) < uint(len(r.Values)) {
		if v := &r.Values[i]; v.Kind == KindInt {
			return v.Int
		}
	}
	return 0
}

// BytesAt returns the bytes of op i's value (nil when there is none), as
// Value(i).Bytes without copying the Value (see IntAt).
func (r *Result) BytesAt(i int) []byte {
	if uint(i) < uint(len(r.Values)) {
		return r.Values[i].Bytes
	}
	return nil
}

// BitGrow pads the blob in bin with zero bytes to at least size bytes
// (creating it when absent); it never shrinks it (OpBitGrow).
func (c *Call) BitGrow(bin string, size int64) *Call {
	return c.fieldsOp(OpBitGrow, 0, bin, nil, 0, size, 0)
}

// BitGet returns n bits of the blob in bin from bit offset off, as bytes,
// left-aligned (OpBitGet).
func (c *Call) BitGet(bin string, off, n int64) *Call {
	return c.fieldsOp(OpBitGet, 0, bin, nil, off, n, 0)
}

// BitSet overwrites n bits of the blob in bin from bit offset off with the
// first n bits of v (OpBitSet).
func (c *Call) BitSet(bin string, off, n int64, v []byte) *Call {
	return c.bytesOp(OpBitSet, bin, v, off, n)
}

// BitCount returns how many of n bits of the blob in bin from bit offset
// off are 1 (OpBitCount).
func (c *Call) BitCount(bin string, off, n int64) *Call {
	return c.fieldsOp(OpBitCount, 0, bin, nil, off, n, 0)
}

// HLLRaise raises registers of the dense HyperLogLog in bin: regs holds
// three bytes per register, its index (big-endian) and its count
// (OpHLLRaise). The op's value is Int(1) when a register rose, else
// Int(0) (and nothing was written).
func (c *Call) HLLRaise(bin string, regs []byte) *Call {
	if c.encoded && len(bin) == 1 {
		// Every PFADD of a few elements: the op without bytesOp's and
		// appendBytesOp's general cases (~1,300 instructions of a
		// PFADD's ~13,900 in WebAssembly).
		c.enc = appendBlobOp(c.enc, OpHLLRaise, bin[0], regs)
		c.nenc++
		return c
	}
	return c.bytesOp(OpHLLRaise, bin, regs, 0, 0)
}
