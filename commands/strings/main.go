// Command strings is respike's module of Redis string commands: GET, SET and
// their variants, counters (INCR ...), APPEND, ranges, the multi-key MGET,
// MSET, MSETNX, the bitmap commands (SETBIT, GETBIT, BITCOUNT, BITPOS,
// BITOP, BITFIELD, BITFIELD_RO) and LCS.
//
// Data model: one key is one record with bin "t" = "string" and bin "v" =
// the value. A value whose bytes are a canonical int64 is stored as an
// integer so that INCR is one atomic add; anything else as bytes. Either
// reads back as the exact bytes written.
//
// WRONGTYPE: every call carries the type guard (Guard(codec.TypeString)),
// so a read or write of a key holding another type fails atomically with
// FilteredOut and costs no extra round trip. Only SET without GET (and
// MSET, SETEX ...) overwrite any type, as in Redis.
//
// Expiries are exact to the millisecond at any horizon (codec.TTLAt: the
// store keeps the time and treats a record past it as absent). SET without
// KEEPTTL clears the expiry; INCR, APPEND, SETRANGE, SETBIT ... keep it.
package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("strings", "1.0.0") }

// tagString is the type tag value every string record carries. It is built
// once because codec.Str allocates and the hot path must not.
var tagString = codec.Str(codec.TypeString)

// Option flags of SET and GETEX, kept in Ctx.N[0] across steps.
const (
	optNX = 1 << iota
	optXX
	optGet
	optKeepTTL
	optPersist
	optEX
	optPX
	optEXAT
	optPXAT

	optExpire = optEX | optPX | optEXAT | optPXAT
)

// parseOpts parses the options of SET (isSet) or GETEX from argument from
// on, with exactly the conflict rules of Redis's
// parseExtendedStringArgumentsOrReply: a conflicting or unknown option is a
// syntax error; a repeated option is allowed and the last value wins. It
// returns the flags and the index of the expiry value (0 when none).
func parseOpts(c *sdk.Ctx, from int, isSet bool) (flags int64, expArg int, ok bool) {
	for j := from; j < c.NArg(); j++ {
		opt := c.Arg(j)
		hasNext := j+1 < c.NArg()
		switch {
		case isSet && kit.Fold(opt, "nx") && flags&optXX == 0:
			flags |= optNX
		case isSet && kit.Fold(opt, "xx") && flags&optNX == 0:
			flags |= optXX
		case isSet && kit.Fold(opt, "get"):
			flags |= optGet
		case isSet && kit.Fold(opt, "keepttl") && flags&(optPersist|optExpire) == 0:
			flags |= optKeepTTL
		case !isSet && kit.Fold(opt, "persist") && flags&(optExpire|optKeepTTL) == 0:
			flags |= optPersist
		case kit.Fold(opt, "ex") && hasNext && flags&(optKeepTTL|optPersist|optEXAT|optPX|optPXAT) == 0:
			flags |= optEX
			j++
			expArg = j
		case kit.Fold(opt, "px") && hasNext && flags&(optKeepTTL|optPersist|optEX|optEXAT|optPXAT) == 0:
			flags |= optPX
			j++
			expArg = j
		case kit.Fold(opt, "exat") && hasNext && flags&(optKeepTTL|optPersist|optEX|optPX|optPXAT) == 0:
			flags |= optEXAT
			j++
			expArg = j
		case kit.Fold(opt, "pxat") && hasNext && flags&(optKeepTTL|optPersist|optEX|optEXAT|optPX) == 0:
			flags |= optPXAT
			j++
			expArg = j
		default:
			return 0, 0, false
		}
	}
	return flags, expArg, true
}

// Reasons an expiry is refused, kept in Ctx.N when the reply must wait for
// a lookup (GETEX reports a missing key before a bad expiry, as Redis does).
const (
	expOK = iota
	expNotInt
	expInvalid
)

// expireAt turns an expiry option into the exact expiry, Unix ms: in the
// future, or 0 when an absolute time (EXAT, PXAT) has passed.
func expireAt(c *sdk.Ctx, flags int64, arg []byte) (at int64, why int) {
	n, ok := kit.ParseInt(arg)
	if !ok {
		return 0, expNotInt
	}
	now := kit.NowMs(c)
	when, ok := kit.SetExpiry(n, flags&(optEX|optEXAT) != 0, flags&(optEX|optPX) != 0, now)
	if !ok {
		return 0, expInvalid
	}
	if when <= now {
		return 0, expOK
	}
	return when, expOK
}

// expireError is the reply text for a refused expiry of command cmd.
func expireError(why int, cmd string) string {
	switch why {
	case expNotInt:
		return kit.NotInt
	}
	return kit.InvalidExpire(cmd)
}

// replyGet answers a call whose first op read the value bin under the string
// guard: the value, nil for a missing key, or WRONGTYPE.
func replyGet(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		kit.ReplyStr(c, &r.Values[0])
	case codec.NotFound:
		c.Reply().Null()
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}
