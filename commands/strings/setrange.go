package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "setrange", Arity: 4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.",
		Run:     runSetRange,
	})
}

// maxBulk is Redis's default proto-max-bulk-len, the largest string SETRANGE
// may build.
const maxBulk = 512 << 20

// runSetRange: SETRANGE key offset value. A read-modify-write: read the
// value, splice in the module, write it back guarded by the generation read
// (create-only for a new key), retrying when another client wrote the key
// in between. The TTL is kept. Offset is in Ctx.N[0], tries in N[1].
func runSetRange(c *sdk.Ctx) {
	off, ok := kit.ParseInt(c.Arg(2))
	if !ok {
		c.Error(kit.NotInt)
		return
	}
	if off < 0 {
		c.Error("ERR offset is out of range")
		return
	}
	c.N[0] = off
	setRangeRead(c)
}

func setRangeRead(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(setRangeSplice)
}

func setRangeSplice(c *sdk.Ctx) {
	r := c.Result(0)
	off, val := c.N[0], c.Arg(3)
	switch r.Code {
	case codec.OK, codec.NotFound:
	case codec.FilteredOut:
		c.Error(kit.WrongType)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	exists := r.Code == codec.OK
	if len(val) == 0 {
		// Nothing to write: the current length (0 for a missing key, which
		// is not created).
		if exists {
			c.Reply().Int(int64(kit.StrLen(r.Value(0))))
		} else {
			c.Reply().Int(0)
		}
		return
	}
	if off > maxBulk-int64(len(val)) { // also catches overflow of off+len

		c.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
		return
	}
	total := off + int64(len(val))
	if total > kit.MaxBuild {
		c.Error(kit.StoreErrorText(codec.RecordTooBig, "respike builds values up to 16 MiB"))
		return
	}
	b := c.B[:0]
	if exists {
		b = kit.AppendStr(b, r.Value(0))
	}
	if pad := total - int64(len(b)); pad > 0 {
		b = append(b, make([]byte, pad)...) // zero bytes, as Redis pads
	}
	copy(b[off:], val)
	c.B = b
	if exists {
		c.Record(c.Arg(1)).Generation(r.Generation).Exists(codec.ExistsUpdateOnly).TTLKeep().
			Put(codec.BinValue, kit.StrValue(b))
	} else {
		c.Record(c.Arg(1)).Exists(codec.ExistsCreateOnly).TTLNever().
			Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(b))
	}
	c.Exec(setRangeWritten)
}

func setRangeWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(int64(len(c.B)))
	case codec.GenerationError, codec.NotFound, codec.Exists:
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		setRangeRead(c)
	default:
		kit.StoreError(c, r)
	}
}
