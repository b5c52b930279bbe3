// Package codec is the wire format between the respike host and its command
// modules: store requests, their results, command start messages and module
// manifests. Host and guest both import it, so they can never disagree about a
// byte. It depends on the standard library only and builds for wasip1.
//
// The vocabulary mirrors Aerospike's: one Call is one atomic operate on one
// record; a Request carries one or more Calls (several become a batch), or one
// keyspace-wide action (scan page, count, truncate).
package codec

import "strconv"

// ABIVersion is the version of the host↔guest ABI. A module exports it as
// respike_abi; the host refuses modules with a version outside
// MinABIVersion..ABIVersion.
//
// 4 adds batches (respike_batch, respike.reply); a module of version 3 runs
// one command per guest call. A host that speaks only 3 refuses a module
// of version 4, which imports respike.reply, with a clear message.
//
// 5 adds blocking commands: the answer StatusBlock. Modules of versions 3
// and 4 never give it, so they run unchanged; a host that speaks only 3 or
// 4 refuses a module of version 5 by its version, rather than answering an
// error the first time one of its commands blocks.
//
// 6 adds guest logs (the import respike.log); modules of versions 3 to 5
// do not import it. A host that speaks only 5 refuses a module of version
// 6 by its version.
//
// 7 adds final answers (StatusFinal, see final.go) and Start.Restart.
// Modules of versions 3 to 6 never give one and run unchanged; a host
// that speaks only 6 refuses a module of version 7 by its version, rather
// than answering an error the first time a command ends with one.
//
// 8 adds recipe actions (ActFirst, ActLen, ActFirstLen, ActFirstEach,
// ActNulls) and final answers inside a batch (BatchFinals). Modules of
// versions 3 to 7 use neither (the host sets BatchFinals only for a
// module of version 8 or later) and run unchanged; a host that speaks only 7 refuses a
// module of version 8 by its version, rather than answering "malformed
// recipe" the first time a command uses a new action.
const ABIVersion = 8

// MinABIVersion is the oldest module ABI the host still runs.
const MinABIVersion = 3

// Bin names and type tags shared by every built-in module. Bin names must stay
// within Aerospike's 15-byte limit.
const (
	BinType  = "t" // the type-tag bin present on every record respike writes
	BinValue = "v" // the value bin (string value, hash map, set map, ...)
	// BinExpire holds a record's exact expiry, Unix milliseconds, on a
	// record written with TTLAt. The store writes and deletes it; a module
	// reads it (OpGet) for PTTL and the like, and never writes it. Every
	// call treats a record whose BinExpire has passed as absent.
	BinExpire = "x"

	TypeString = "string"
	TypeHash   = "hash"
	TypeList   = "list"
	TypeSet    = "set"
	TypeZSet   = "zset"
)

// Kind is the type of a Value.
type Kind uint8

// Value kinds. They match Aerospike particle types that respike uses.
const (
	KindNil   Kind = iota // absent bin or no value
	KindInt               // int64
	KindFloat             // float64
	KindBytes             // blob: Redis strings, map keys
	KindStr               // UTF-8 string particle (type tags)
	KindList              // ordered list of values (List)
	KindMap               // map as flattened key,value pairs (List)
	KindBool              // boolean (Int is 0 or 1)
)

// Value is one datum moving between guest and store. Collections hold their
// elements in List; a map holds key0, value0, key1, value1, ...
//
// Bytes and List returned by a decoder alias the decoder's buffers: copy what
// must outlive the current step.
type Value struct {
	Kind  Kind
	Int   int64
	Float float64
	Bytes []byte
	List  []Value
}

// Nil is the absent value.
var Nil = Value{}

// Int returns an integer value.
func Int(n int64) Value { return Value{Kind: KindInt, Int: n} }

// Float returns a float64 value.
func Float(f float64) Value { return Value{Kind: KindFloat, Float: f} }

// Bytes returns a blob value. The slice is not copied.
func Bytes(b []byte) Value { return Value{Kind: KindBytes, Bytes: b} }

// Str returns a string-particle value (used for type tags).
func Str(s string) Value { return Value{Kind: KindStr, Bytes: []byte(s)} }

// Bool returns a boolean value.
func Bool(b bool) Value {
	if b {
		return Value{Kind: KindBool, Int: 1}
	}
	return Value{Kind: KindBool}
}

// List returns a list value.
func List(vs ...Value) Value { return Value{Kind: KindList, List: vs} }

// Map returns a map value from flattened key, value pairs.
func Map(kv ...Value) Value { return Value{Kind: KindMap, List: kv} }

// IsNil reports whether v is absent.
func (v Value) IsNil() bool { return v.Kind == KindNil }

// Len is the element count of a list, or the pair count of a map.
func (v Value) Len() int {
	if v.Kind == KindMap {
		return len(v.List) / 2
	}
	return len(v.List)
}

// Equal reports whether two values are identical in kind and content.
func (v Value) Equal(o Value) bool {
	if v.Kind != o.Kind {
		return false
	}
	switch v.Kind {
	case KindNil:
		return true
	case KindInt, KindBool:
		return v.Int == o.Int
	case KindFloat:
		return v.Float == o.Float
	case KindBytes, KindStr:
		return string(v.Bytes) == string(o.Bytes)
	default:
		if len(v.List) != len(o.List) {
			return false
		}
		for i := range v.List {
			if !v.List[i].Equal(o.List[i]) {
				return false
			}
		}
		return true
	}
}

// Code is a per-record result code. Values below 1000 are Aerospike's own
// result codes, so an operator can look them up; 1000 and above are respike's.
type Code int32

// Result codes.
const (
	OK               Code = 0
	NotFound         Code = 2  // KEY_NOT_FOUND_ERROR: read or update-only write of a missing record
	GenerationError  Code = 3  // GENERATION_ERROR: generation check failed
	Exists           Code = 5  // KEY_EXISTS_ERROR: create-only write of an existing record
	BinTypeError     Code = 12 // BIN_TYPE_ERROR: e.g. integer add on a blob bin
	BinNotFound      Code = 17 // BIN_NOT_FOUND: e.g. a bit set on an absent bin
	RecordTooBig     Code = 13 // RECORD_TOO_BIG
	OpNotApplicable  Code = 26 // OP_NOT_APPLICABLE: e.g. pop of an empty list
	FilteredOut      Code = 27 // FILTERED_OUT: the type guard rejected the call (WRONGTYPE)
	ElementNotFound  Code = 23 // ELEMENT_NOT_FOUND (CDT)
	ElementExists    Code = 24 // ELEMENT_EXISTS (CDT create-only)
	ParameterError   Code = 4  // PARAMETER_ERROR
	ServerError      Code = 1  // SERVER_ERROR
	Timeout          Code = 9  // TIMEOUT
	Overflow         Code = 1000
	BackendError     Code = 1001 // any other failure; Msg says what
	BackendUnavail   Code = 1002
	InvalidOperation Code = 1003 // the request itself is malformed (guest bug)
)

// ExistsPolicy says what a write requires of the record's existence.
type ExistsPolicy uint8

// Exists policies, as Aerospike's RecordExistsAction.
const (
	ExistsUpdate      ExistsPolicy = iota // create or update bins (default)
	ExistsUpdateOnly                      // record must exist; update bins
	ExistsReplace                         // create or replace all bins
	ExistsReplaceOnly                     // record must exist; replace all bins
	ExistsCreateOnly                      // record must not exist
)

// TTLMode says what a write does to the record's expiry.
type TTLMode uint8

// TTL modes. A read-only call ignores the TTL.
const (
	TTLKeep    TTLMode = iota // leave the record's expiry as it is (new records never expire)
	TTLNever                  // never expire
	TTLSeconds                // expire TTL seconds from now (TTL >= 1)
	// TTLAt expires the record at the Unix time in milliseconds held in
	// Policy.Seconds, exactly: the store keeps that time in BinExpire
	// (replacing any earlier one) and every call treats the record as
	// absent from that millisecond on, whatever the horizon. TTLKeep keeps
	// BinExpire, even through a replacing write; TTLNever and TTLSeconds
	// delete it.
	TTLAt
)

// Policy is what one Call requires and does besides its ops.
type Policy struct {
	Exists ExistsPolicy
	TTL    TTLMode
	// Seconds is the relative expiry when TTL is TTLSeconds (at least
	// 1), and the absolute expiry in Unix milliseconds when TTL is TTLAt.
	Seconds int64
	// Generation, when non-zero, makes the call fail with GenerationError
	// unless the record's generation equals it.
	Generation uint32
	// Guard, when non-empty, makes the call fail with FilteredOut (nothing is
	// read or written) unless the record is absent or its type bin equals Guard.
	Guard string
	// DeleteIfEmpty names a collection bin: when it is empty after the ops,
	// the record is deleted (Redis deletes emptied collections).
	DeleteIfEmpty string
}

// OpCode is the operation of an Op.
type OpCode uint8

// Record and bin operations. The comments give the Op fields each uses and
// what it returns in Result.Values.
const (
	OpGet       OpCode = iota + 1 // Bin ("" = all bins as a map bin→value); returns the value
	OpPut                         // Bin, Value; returns nil
	OpAdd                         // Bin, Value (int or float); returns nil; Overflow on int64 overflow
	OpAppend                      // Bin, Value (bytes); returns nil
	OpPrepend                     // Bin, Value (bytes); returns nil
	OpDelete                      // deletes the record; returns nil
	OpTouch                       // applies the policy's TTL, fails with NotFound on a missing record; returns nil
	OpGetHeader                   // returns nil; makes the call report Generation and TTL without reading bins

	// Map operations on Bin. Keys and members are Values (respike uses bytes).
	// Return selects what a map read/remove returns (see MapReturn).
	OpMapPut           // Values = k0,v0,k1,v1...; Flags = MapWriteFlags; returns the map size after
	OpMapIncrement     // Value = key, Value2 = delta (int or float); returns the new value
	OpMapSize          // returns the size
	OpMapGetByKeys     // Values = keys; returns per Return (order of the map)
	OpMapRemoveByKeys  // Values = keys; returns per Return
	OpMapGetByIndex    // Index, Count (Count < 0: to the end); returns per Return
	OpMapRemoveByIndex // Index, Count; returns per Return
	OpMapGetByRank     // Index = rank, Count; returns per Return
	OpMapGetByValues   // Value = begin (Nil = -inf), Value2 = end exclusive (Nil = +inf); returns per Return
	OpMapGetByKeyRange // Value = begin (Nil = -inf), Value2 = end exclusive (Nil = +inf); returns per Return
	OpMapClear         // removes every item; returns nil

	// Added after ABI 2 shipped: new codes go at the end, so that modules
	// built earlier keep their numbers. A host that predates a code answers
	// it with InvalidOperation.
	OpMapRemoveByRank       // Index = rank, Count (Count < 0: to the end); returns per Return
	OpMapRemoveByValueRange // Value = begin (Nil = -inf), Value2 = end exclusive (Nil = +inf); returns per Return
	OpMapRemoveByKeyRange   // Value = begin (Nil = -inf), Value2 = end exclusive (Nil = +inf); returns per Return
	OpMapGetByValueRelRank  // Value = anchor, Index = rank relative to the first item whose value is >= anchor, Count (< 0: to the end); returns per Return, in rank order
	OpMapGetByKeyRelIndex   // Value = anchor key, Index = index relative to the first key >= anchor, Count (< 0: to the end); returns per Return, in key order

	// List operations on Bin, an unordered list (Aerospike's list CDT
	// operations). Index 0 is the head; a negative index counts from the
	// tail, -1 being the last item. Return selects what a list read or
	// remove returns: ReturnNone, ReturnCount, ReturnValue (items in list
	// order), ReturnIndex (ascending indexes) or ReturnExists, optionally
	// or-ed with ReturnInverted. A read of a missing bin returns Nil; a
	// remove from a missing bin changes nothing and returns Nil.
	OpListAppend        // Values = items appended at the tail; returns the size after
	OpListInsert        // Index, Values = items inserted before Index (-size..size); returns the size after; OpNotApplicable when Index is out of bounds
	OpListSize          // returns the size (0 when the bin is absent)
	OpListGetByIndex    // Index, Count (Count < 0: to the end); returns per Return; a range partly out of bounds selects its in-bounds part
	OpListRemoveByIndex // Index, Count (Count < 0: to the end); returns per Return
	OpListSet           // Index, Value: replaces the item at Index; returns nil; fails (OpNotApplicable on the memory store) when Index is out of bounds
	OpListGetByValue    // Value; selects every item equal to Value; returns per Return
	OpListRemoveByValue // Value; removes every item equal to Value; returns per Return

	// OpExpectListItem is a condition, not an action: Index, Value. The
	// call fails with FilteredOut, reading and writing nothing, unless the
	// list in Bin has an item at Index equal to Value. It is checked
	// against the record as it was before the call's ops, wherever it
	// stands among them; an absent record passes, as with Policy.Guard
	// (pair it with ExistsUpdateOnly). Returns nil. A generation cannot
	// stand in for it: a record deleted and created again starts again at
	// generation 1, so "same generation" does not mean "same record".
	OpExpectListItem

	// Bit operations on a blob bin (Aerospike's bitwise operations), for
	// SETBIT, GETBIT and BITCOUNT. Bits are numbered from the most
	// significant bit of the first byte (bit 0) on; Index is a bit offset
	// (>= 0) and Count a number of bits (>= 1): any other is refused with
	// InvalidOperation. A bin holding anything but a blob (an integer, a
	// string particle, a collection) fails the call with BinTypeError; a
	// range reaching past the end of the blob fails it with
	// OpNotApplicable; an Index beyond 2^30 with ParameterError (as
	// Aerospike CE 8.1.2 answers). A failed call writes nothing.
	OpBitGrow  // Count = a size in bytes: pads the blob with zero bytes to at least Count bytes, or creates it of Count zero bytes when the bin is absent; never shrinks; returns nil
	OpBitGet   // Index, Count: returns the Count bits from Index as bytes, left-aligned (the first bit is the top bit of the first byte; the last byte's unused bits are 0); Nil when the bin is absent
	OpBitSet   // Index, Count, Value (bytes, left-aligned, at least (Count+7)/8 of them: fewer is ParameterError): overwrites Count bits from Index; returns nil; BinNotFound when the bin is absent
	OpBitCount // Index, Count: returns how many of the Count bits from Index are 1; Nil when the bin is absent

	// OpHLLRaise is PFADD's edit of a dense Redis HyperLogLog in place:
	// one atomic op where a read and a guarded write would race under
	// many writers of one key. Value is bytes, three per register: its
	// index (0..16383, two bytes big-endian), then the count to raise it
	// to (0..63). The blob in Bin must be a dense HLL: "HYLL", encoding
	// byte 0, exactly 12,304 bytes (HLLDenseSize). Each register (6 bits, packed from byte 16 on, least
	// significant bits first, as Redis packs them) whose value is below
	// its count is set to it; a register given twice takes the larger
	// count. When any rose, the top bit of byte 15 (the cached
	// cardinality's "not valid" flag) is set too, and the op returns
	// Int(1). When none rose it returns Int(0) and the call writes
	// nothing: the record keeps its bytes, generation and TTL (the
	// policy's TTL is not applied), as Redis's PFADD that changes no
	// register touches nothing (WATCH); the result then reports
	// Generation and TTL 0 (on Aerospike such a call is filtered out,
	// and that answer carries no record metadata). It must be its call's only op,
	// with ExistsUpdateOnly (anything else is InvalidOperation, as is a
	// malformed Value). An absent bin fails the call with BinNotFound, a
	// bin that is not a blob with BinTypeError, a blob that is not a
	// dense HLL with OpNotApplicable.
	OpHLLRaise

	// OpExpectBlobSize is a condition, not an action, as OpExpectListItem
	// is: Index = a size in bytes (>= 0; a negative one is
	// InvalidOperation). The call fails with FilteredOut, reading and
	// writing nothing, unless Bin holds a blob of exactly Index bytes; a
	// missing bin or one that is not a blob fails it too. It is checked
	// against the record as it was before the call's ops; an absent record
	// passes. Returns nil. No read tells a blob's length without reading
	// it: PFCOUNT reads a dense HLL's header only, and Redis refuses a dense
	// HLL of the wrong length.
	OpExpectBlobSize

	// OpMapGeoSearch is a geo search's read of a sorted set (a map bin of
	// member → score whose scores are 52-bit geohashes, the geo module's
	// layout), filtered by the store. Value is the search area (bytes, as
	// geo.Shape.AppendFilter encodes it: a circle or a box around a
	// centre, in a unit). The store reads the score ranges that cover the
	// area (geo.Shape.ScanRanges: the cells Redis 7.0 visits, in its
	// order, narrowed to the sub-cells that can hold a member inside),
	// each range's items in rank order as OpMapGetByValues would, and
	// keeps those inside the area as Redis decides it (geo.Shape.Test);
	// with Count > 0 it stops once Count items are kept (COUNT ANY). The
	// arithmetic is package geo's, which the module uses too. It returns
	// a list of two values: Int(how many kept), and one blob holding each
	// kept item in that order, as geo.AppendPoint lays it out: the score,
	// the distance from the centre in meters and its error bound (0:
	// exact), the member's length and the member. Return must be
	// ReturnNone. A missing bin returns Nil; anything else malformed is
	// InvalidOperation. So the members a search reads never cross the ABI
	// one by one, and the module neither covers the area with cells nor
	// decodes and measures a candidate: Go-compiled WebAssembly is several
	// times slower than the host at that arithmetic.
	OpMapGeoSearch
)

// HLLDenseSize is the length of a dense Redis HyperLogLog: a 16-byte
// header and 16,384 registers of 6 bits (OpHLLRaise).
const HLLDenseSize = 16 + 16384*6/8

// CheckHLLRaise says what is wrong with the Value of an OpHLLRaise, or ""
// when it is whole 3-byte entries of registers and counts in range. Both
// stores refuse a wrong one with InvalidOperation.
func CheckHLLRaise(v Value) string {
	if v.Kind != KindBytes || len(v.Bytes) == 0 || len(v.Bytes)%3 != 0 {
		return "OpHLLRaise needs 3 bytes per register"
	}
	for k := 0; k < len(v.Bytes); k += 3 {
		if int(v.Bytes[k])<<8|int(v.Bytes[k+1]) >= 16384 || v.Bytes[k+2] > 63 {
			return "OpHLLRaise: register index or count out of range"
		}
	}
	return ""
}

// ReadOnly reports whether an op only reads: a call of read-only ops
// changes nothing, so it wakes no blocked client. Any other code, including
// one added after this function was last edited, counts as a write: a new
// read op missing here costs a blocked client a needless re-run, where a
// write op wrongly listed would leave it asleep. List new read ops here.
func (c OpCode) ReadOnly() bool {
	switch c {
	case OpGet, OpGetHeader, OpMapSize, OpMapGetByKeys, OpMapGetByIndex, OpMapGetByRank,
		OpMapGetByValues, OpMapGetByKeyRange, OpMapGetByValueRelRank, OpMapGetByKeyRelIndex,
		OpListSize, OpListGetByIndex, OpListGetByValue, OpExpectListItem,
		OpBitGet, OpBitCount, OpExpectBlobSize, OpMapGeoSearch:
		return true
	}
	return false
}

// MapWriteFlags are Aerospike's map write flags.
const (
	MapWriteDefault    uint32 = 0
	MapWriteCreateOnly uint32 = 1
	MapWriteUpdateOnly uint32 = 2
	MapWriteNoFail     uint32 = 4
	MapWritePartial    uint32 = 8
)

// MapOrder values for Op.Flags of the first write that creates a map bin
// (ignored afterwards); key order suits hashes and sets, key-value order
// sorted sets.
const (
	MapOrderKey      uint32 = 1 << 8
	MapOrderKeyValue uint32 = 3 << 8
)

// MapReturn selects what a map read or remove returns, as Aerospike's
// MapReturnType: one of the Return* types, optionally or-ed with
// ReturnInverted.
//
// Items come back in the order of the op's selection, inverted or not: key
// order for the key, index and key-range ops; rank order (by value, equal
// values by key) for the rank and value-range ops.
type MapReturn uint8

// Map return types.
const (
	ReturnNone     MapReturn = iota // nil
	ReturnCount                     // int: how many items matched
	ReturnKey                       // list of keys
	ReturnValue                     // list of values
	ReturnKeyValue                  // map of matched items (flattened pairs)
	ReturnExists                    // bool: whether any item matched
	// Added after ReturnExists (new types go at the end); see RankReturn:
	ReturnRank        // list of at most one int: the item's rank (0 = lowest value); empty if the key is absent
	ReturnReverseRank // list of at most one int: the item's rank counted from the highest (0 = highest)
	ReturnIndex       // list ops only: list of the selected items' indexes, ascending
	// ReturnBulks (list reads only) returns the selected items as a list
	// of two values: Int(how many), and one blob holding each item's RESP
	// bulk string ("$3\r\nabc\r\n"), in order (see AppendBulks). A reply
	// of many elements (LRANGE) is then one copy for the module instead of
	// a step per element, which is what costs in WebAssembly.
	ReturnBulks
	// The reply return types (map reads only) return the selected items
	// as a list of two values: Int(how many items), and one blob holding
	// their elements of a sorted-set reply (ZRANGE and the like), in order
	// (see AppendReplyItem), so that the module copies a range's reply
	// whole instead of writing it item by item, which is what costs in
	// WebAssembly:
	ReturnRESPKeys    // each key as a bulk string
	ReturnRESPScores  // each key, then its value as a score in a bulk string (RESP2 WITHSCORES)
	ReturnRESP3Scores // each item as an array of the key and its value as a RESP3 double
	// ReturnScoredKeys is a reply return type whose blob is not RESP but
	// packed for the module to read: each item as its score (ScoreOf its
	// value; 8 bytes, the float64's bits little-endian), the key's length
	// (4 bytes, little-endian) and the key's bytes (as AppendBulks writes
	// an item). A geo search reads its members' positions from it, with no
	// list of values on either side of the ABI (see AppendReplyItem).
	ReturnScoredKeys
)

// ReturnReversed, or-ed into a reply return type (ReturnRESPKeys and the
// like), lays the items out in the reverse of the order the op selects
// them in: highest rank first, for ZREVRANGE. Both stores refuse it on any
// other return type with InvalidOperation.
const ReturnReversed MapReturn = 0x40

// ReplyReturn reports whether r's type is one of the reply return types.
func (r MapReturn) ReplyReturn() bool {
	t := r.Type()
	return t == ReturnRESPKeys || t == ReturnRESPScores || t == ReturnRESP3Scores || t == ReturnScoredKeys
}

// RankReturn reports whether op may carry ReturnRank or ReturnReverseRank.
// They answer one item's rank, so they go only on a map get or remove by
// exactly one key, not inverted; both stores refuse every other use with
// InvalidOperation. Aerospike CE 8.1.2 answers OP_NOT_APPLICABLE for a
// rank return on a key-list selection, even of one key, and answers rank
// returns of ranges in orders of its own (observed); its single-key get and
// remove answer a rank, or -1 for an absent key.
func RankReturn(op *Op) bool {
	return (op.Code == OpMapGetByKeys || op.Code == OpMapRemoveByKeys) &&
		len(op.Values) == 1 && !op.Return.Inverted()
}

// ReturnInverted, or-ed into the return type of a map get or remove by
// keys, index, rank, value range or key range (ReturnCount|ReturnInverted),
// makes the op select every item that the keys or range do not: Aerospike's
// INVERTED return flag. So MapRemoveByRank(bin, ReturnCount|ReturnInverted,
// -n, n) keeps only the n highest-ranked items, whatever the map's size. A
// range that selects nothing (out of bounds, empty, reversed) inverts to
// every item. Other ops refuse it with InvalidOperation.
//
// It is a bit of the return type, rather than an op flag, because that is
// how Aerospike spells it and because the builder encodes each op as it is
// added: a flag set on an op afterwards would mean re-encoding it.
const ReturnInverted MapReturn = 0x80

// AppendBulks appends the RESP bulk string of each item to dst, as
// ReturnBulks returns them: bytes and strings as they are, an integer in
// decimal, a float in Go's shortest 'g' form, anything else (nil, bool,
// list, map) as the empty string.
func AppendBulks(dst []byte, items []Value) []byte {
	for i := range items {
		dst = appendBulk(dst, &items[i])
	}
	return dst
}

// appendBulk appends one item of AppendBulks.
func appendBulk(dst []byte, v *Value) []byte {
	var num [32]byte
	b := v.Bytes
	switch v.Kind {
	case KindBytes, KindStr:
	case KindInt:
		b = strconv.AppendInt(num[:0], v.Int, 10)
	case KindFloat:
		b = strconv.AppendFloat(num[:0], v.Float, 'g', -1, 64)
	default:
		b = nil
	}
	switch n := len(b); {
	case n < 10:
		dst = append(dst, '$', byte('0'+n), '\r', '\n')
	case n < 100:
		dst = append(dst, '$', byte('0'+n/10), byte('0'+n%10), '\r', '\n')
	default:
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, '\r', '\n')
	}
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// Type is r without ReturnInverted and ReturnReversed.
func (r MapReturn) Type() MapReturn { return r &^ (ReturnInverted | ReturnReversed) }

// Reversed reports whether r has ReturnReversed.
func (r MapReturn) Reversed() bool { return r&ReturnReversed != 0 }

// Inverted reports whether r has ReturnInverted.
func (r MapReturn) Inverted() bool { return r&ReturnInverted != 0 }

// Op is one operation inside a Call.
type Op struct {
	Code   OpCode
	Bin    string
	Value  Value
	Value2 Value
	Values []Value
	Index  int64
	Count  int64
	Flags  uint32
	Return MapReturn
}

// Call is one atomic operation on one record.
type Call struct {
	Key    []byte
	Policy Policy
	Ops    []Op

	// A call begun with BeginEncoded keeps its ops encoded in enc (nenc of
	// them) instead of in Ops.
	enc     []byte
	nenc    uint32
	encoded bool
}

// RequestKind is what a Request asks of the store.
type RequestKind uint8

// Request kinds.
const (
	ReqRecords  RequestKind = iota + 1 // Calls: each atomic on its record; several are a batch
	ReqScan                            // one page of keys: Scan
	ReqCount                           // number of records in the database
	ReqTruncate                        // delete every record: of this database, or of all when AllDBs
)

// ScanArgs is a scan page request. The cursor is opaque to the guest and 0
// starts a scan; Count is a hint of how many keys to return.
type ScanArgs struct {
	Cursor uint64
	Count  int64
	// WithType asks for each key's type tag in ScanPage.Types.
	WithType bool
}

// ErrDBRange is the Msg of a request (Code ParameterError) addressing a
// database the server does not have; the SDK replies it as is.
const ErrDBRange = "ERR DB index is out of range"

// Request is what a guest step asks of the store.
type Request struct {
	Kind   RequestKind
	Calls  []Call
	Scan   ScanArgs
	AllDBs bool // with ReqTruncate
	// OtherDB (with ReqRecords) runs the calls in database DB instead of
	// the connection's: MOVE and COPY ... DB address a second database.
	// The host refuses a DB beyond its configured databases.
	OtherDB bool
	DB      uint16
}

// Writes reports whether op code c may change the record: every op that is
// not ReadOnly, so the two can never disagree.
func (c OpCode) Writes() bool { return !c.ReadOnly() }

// Writes reports whether running r may change the store: a truncate, or a
// call with a write op. The host lets a command whose client went away
// stop before such a request, never after it (a multi-step write finishes).
func (r *Request) Writes() bool {
	if r.Kind == ReqTruncate {
		return true
	}
	for i := range r.Calls {
		for j := range r.Calls[i].Ops {
			if r.Calls[i].Ops[j].Code.Writes() {
				return true
			}
		}
	}
	return false
}

// Result is the outcome of one Call.
type Result struct {
	Code Code
	// Msg explains a non-OK code.
	Msg string
	// Generation of the record after the call; 0 when it does not exist.
	Generation uint32
	// TTL is the record's remaining life in seconds after the call; -1 when it
	// never expires; meaningful only when the record exists.
	TTL int64
	// Values has exactly one entry per Op of the Call, Nil where an op
	// returns nothing.
	Values []Value
}

// ScanPage is one page of a scan.
type ScanPage struct {
	// Cursor continues the scan; 0 when it is complete.
	Cursor uint64
	Keys   [][]byte
	// Types holds each key's type tag when ScanArgs.WithType was set.
	Types [][]byte
}

// Response answers a Request.
type Response struct {
	// Code is OK unless the whole request failed (backend unavailable, timeout);
	// then Msg says why and Results is empty.
	Code    Code
	Msg     string
	Results []Result // ReqRecords: one per Call, in order
	Scan    ScanPage // ReqScan
	Count   int64    // ReqCount
}

// Start is the message that starts a command on a guest.
type Start struct {
	Proto uint8 // 2 or 3: the RESP version of the connection
	// Restart (ABI 7) counts the times the host ran the command again
	// from the start because a final answer's recipe said so
	// (ActRestart); 0 on its first run. It sits in what was padding, so
	// the layout older modules read is unchanged.
	Restart uint8
	DB      uint16 // the connection's selected database
	// Cmd is the command's position in the module's manifest plus one, so
	// the guest needs no name lookup; 0 when unknown (look Args[0] up).
	Cmd      uint32
	ClientID uint64
	// Now is when the command started, in Unix nanoseconds by the host's
	// clock: the base of expiry arithmetic, as Redis takes the time once
	// per command. Reading it costs the guest nothing; a WASI clock call
	// costs a host call.
	Now  int64
	Args [][]byte // Args[0] is the command name as the client sent it
}

// Status bytes that open a guest's answer to start/resume.
const (
	StatusDone    byte = 1 // followed by the RESP reply bytes
	StatusPending byte = 2 // followed by a 4-byte little-endian handle and an encoded Request
	// StatusBlock (ABI 5) ends the command without a reply for now: the
	// client waits until one of the keys is written or the timeout passes
	// (see AppendBlock for what follows the byte). The command has ended on
	// the guest's side; a write makes the host run it again from the start.
	StatusBlock byte = 3
	// StatusFinal (ABI 7) is declared in final.go.
)

// CommandInfo is a module's description of one command (its manifest entry).
type CommandInfo struct {
	Name     string   // lower case
	Arity    int      // Redis arity: n exact, -n at least n; counts the name
	Flags    []string // Redis command flags: write, readonly, fast, denyoom, ...
	FirstKey int
	LastKey  int
	Step     int
	Group    string // Redis command group: string, generic, hash, set, ...
	Summary  string
	Since    string
}

// Manifest describes a module.
type Manifest struct {
	Module   string // module name
	Version  string
	Commands []CommandInfo
}
