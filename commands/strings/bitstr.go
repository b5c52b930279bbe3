package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// Helpers shared by the bit commands (SETBIT, GETBIT, BITCOUNT, BITPOS,
// BITFIELD) and LCS: Redis's argument rules and the read-modify-write of
// one string value.

// Error texts of Redis's bitops.c.
const (
	errBitOffset = "ERR bit offset is not an integer or out of range"
	errBitValue  = "ERR bit is not an integer or out of range"
)

// maxBitBytes is Redis's default proto-max-bulk-len: a bit offset's byte
// (offset >> 3) must be below it, so offsets go up to 2^32-1.
const maxBitBytes = 512 << 20

// tooBig answers a write that would build a value larger than the module
// builds (kit.MaxBuild; the store's record limit is lower still), as
// SETRANGE does: nothing is changed.
func tooBig(c *sdk.Ctx) {
	c.Error(kit.StoreErrorText(codec.RecordTooBig, "respike builds values up to 16 MiB"))
}

// parseBitOffset parses a bit offset as Redis's getBitOffsetFromArgument:
// a strict integer, or with hash set "#n" meaning n*bits (the product
// wraps as Redis's does), at least 0 and within proto-max-bulk-len bytes.
func parseBitOffset(b []byte, hash bool, bits int64) (int64, bool) {
	usehash := hash && len(b) > 1 && b[0] == '#'
	if usehash {
		b = b[1:]
	}
	n, ok := kit.ParseInt(b)
	if !ok {
		return 0, false
	}
	if usehash {
		n *= bits
	}
	if n < 0 || n>>3 >= maxBitBytes {
		return 0, false
	}
	return n, true
}

// strBytes is the Redis string form of a stored value: its bytes, or an
// integer's decimal digits written to tmp.
func strBytes(v codec.Value, tmp []byte) []byte {
	if v.Kind == codec.KindInt || v.Kind == codec.KindFloat {
		return kit.AppendStr(tmp[:0], v)
	}
	return v.Bytes
}

// readStr reads key's value under the string guard (its generation comes
// with the result) and runs next.
func readStr(c *sdk.Ctx, key []byte, next sdk.Step) {
	c.Record(key).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(next)
}

// strRead classifies the result of readStr: ok with exists false for a
// missing key; on WRONGTYPE or a store failure it has answered and ok is
// false.
func strRead(c *sdk.Ctx, r *codec.Result) (exists, ok bool) {
	switch r.Code {
	case codec.OK:
		return true, true
	case codec.NotFound:
		return false, true
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
	return false, false
}

// bitRMW is the read-modify-write of one string value that SETBIT and
// BITFIELD's writes do: the value is read with its generation, edited in
// the module, and written back guarded by that generation and the string
// type (create-only for a new key), keeping the TTL, as SETRANGE does.
// Losing the race to another client's write starts over from the read,
// within kit.RetryFor. The key is argument 1 (read at each step: an
// argument's bytes move when the command first waits for the store).
type bitRMW struct {
	// edit gets the current bytes (c.B, which it may grow and change) and
	// whether the key exists. It returns the new value and whether to
	// write it; ok false means it has answered (an error).
	edit func(c *sdk.Ctx, b []byte, exists bool) (nb []byte, write, ok bool)
	// reply answers once the write (if any) succeeded.
	reply func(c *sdk.Ctx)
}

func (m *bitRMW) run(c *sdk.Ctx) { readStr(c, c.Arg(1), m.read) }

func (m *bitRMW) read(c *sdk.Ctx) {
	r := c.Result(0)
	exists, ok := strRead(c, r)
	if !ok {
		return
	}
	b := c.B[:0]
	if exists {
		b = kit.AppendStr(b, r.Value(0))
	}
	b, write, ok := m.edit(c, b, exists)
	if !ok {
		return
	}
	c.B = b
	if !write {
		m.reply(c)
		return
	}
	if exists {
		c.Record(c.Arg(1)).Guard(codec.TypeString).Generation(r.Generation).
			Exists(codec.ExistsUpdateOnly).TTLKeep().Put(codec.BinValue, kit.StrValue(b))
	} else {
		c.Record(c.Arg(1)).Exists(codec.ExistsCreateOnly).TTLNever().
			Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(b))
	}
	c.Exec(m.written)
}

func (m *bitRMW) written(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		m.reply(c)
	case codec.GenerationError, codec.NotFound, codec.Exists, codec.FilteredOut:
		// Another client wrote (or deleted, or retyped) the key since the
		// read: read again.
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		m.run(c)
	default:
		kit.StoreError(c, r)
	}
}

// grow extends b with zero bytes to at least n bytes, as Redis pads a
// string a bit write reaches past.
func grow(b []byte, n int64) []byte {
	if pad := n - int64(len(b)); pad > 0 {
		b = append(b, make([]byte, pad)...)
	}
	return b
}

// bitRange turns BITCOUNT's and BITPOS's start and end (bytes, or bits
// when isBit) into an inclusive range of bits of a string of n bytes, as
// Redis normalises them: negative indexes count from the end, both are
// clamped into the string. empty reports a range with nothing in it.
func bitRange(start, end, n int64, isBit bool) (first, last int64, empty bool) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start += total
	}
	if end < 0 {
		end += total
	}
	start, end = max(start, 0), max(end, 0)
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, true
	}
	if isBit {
		return start, end, false
	}
	return start << 3, end<<3 + 7, false
}

// parseRangeUnit parses BITCOUNT's and BITPOS's BYTE|BIT option.
func parseRangeUnit(b []byte) (isBit, ok bool) {
	switch {
	case kit.Fold(b, "bit"):
		return true, true
	case kit.Fold(b, "byte"):
		return false, true
	}
	return false, false
}
