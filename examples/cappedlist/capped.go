package main

import (
	"encoding/binary"
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "capped.add", Arity: 5, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Adds member at score and keeps only the cap highest scores; returns how many entries were evicted.",
		Run:     runAdd,
	}, sdk.Command{
		Name: "capped.range", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "1.0.0",
		Summary: "Returns the entries of a capped log, highest score first, optionally WITHSCORES.",
		Run:     runRange,
	})
}

const typeTag = "capped"

// tag is the type-tag value, built once: codec.Str allocates.
var tag = codec.Str(typeTag)

const (
	errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNotInt    = "ERR value is not an integer or out of range"
	errCap       = "ERR cap must be positive"
	errSyntax    = "ERR syntax error"
)

// runAdd: CAPPED.ADD key cap score member. One call, atomic on the record:
// tag the record, put the entry, remove every entry past the cap.
func runAdd(c *sdk.Ctx) {
	limit, ok := parseInt(c.Arg(2))
	if !ok {
		c.Error(errNotInt)
		return
	}
	if limit < 1 {
		c.Error(errCap)
		return
	}
	score, ok := parseInt(c.Arg(3))
	if !ok {
		c.Error(errNotInt)
		return
	}

	// The map key is built in Ctx.B, the command's scratch bytes, and the
	// key,value pair in a scratch slice from Ctx.Values: both stay valid
	// until the request is sent, and neither allocates once warm.
	c.B = appendEntry(c.B[:0], score, c.Arg(4))
	kv := c.Values(2)
	kv[0], kv[1] = codec.Bytes(c.B), codec.Nil

	c.Record(c.Arg(1)).Guard(typeTag).
		Put(codec.BinType, tag).
		MapPut(codec.BinValue, codec.MapOrderKey, kv).
		MapRemoveByIndex(codec.BinValue, codec.ReturnCount, limit, -1)
	c.Exec(added)
}

// added replies with the count of evicted entries: the third op's result.
func added(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Int(r.Value(2).Int) // Nil (nothing removed) reads as 0
	case codec.FilteredOut, codec.BinTypeError:
		c.Error(errWrongType)
	default:
		storeError(c, r)
	}
}

// runRange: CAPPED.RANGE key [WITHSCORES]. The map's key order is already
// newest first.
func runRange(c *sdk.Ctx) {
	switch {
	case c.NArg() == 2:
	case c.NArg() == 3 && fold(c.Arg(2), "withscores"):
		c.N[0] = 1 // remembered for the next step
	default:
		c.Error(errSyntax)
		return
	}
	c.Record(c.Arg(1)).Guard(typeTag).
		MapGetByIndex(codec.BinValue, codec.ReturnKey, 0, -1)
	c.Exec(ranged)
}

// ranged replies with the entries read, in map order: newest first.
func ranged(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Array(0)
		return
	case codec.FilteredOut, codec.BinTypeError:
		c.Error(errWrongType)
		return
	default:
		storeError(c, r)
		return
	}
	keys := r.Value(0).List
	w := c.Reply()
	withScores := c.N[0] == 1
	switch {
	case !withScores:
		w.Array(len(keys))
	case w.RESP3():
		// RESP3: an array of [member, score] pairs, as Redis 7 answers
		// ZRANGE ... WITHSCORES; the score keeps its integer type.
		w.Array(len(keys))
	default:
		// RESP2: a flat array with scores as bulk strings, as ZRANGE.
		w.Array(2 * len(keys))
	}
	for _, k := range keys {
		score, member, ok := parseEntry(k.Bytes)
		if !ok {
			// Written by something else: reply what we can, never a
			// malformed array.
			score, member = 0, k.Bytes
		}
		switch {
		case !withScores:
			w.Bulk(member)
		case w.RESP3():
			w.Array(2)
			w.Bulk(member)
			w.Int(score)
		default:
			w.Bulk(member)
			w.BulkInt(score)
		}
	}
}

// appendEntry appends the map key of (score, member): the score mapped to
// an unsigned integer whose big-endian bytes sort in descending score
// order, then the member.
func appendEntry(dst []byte, score int64, member []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, ^(uint64(score) ^ 1<<63))
	return append(dst, member...)
}

// parseEntry undoes appendEntry.
func parseEntry(k []byte) (score int64, member []byte, ok bool) {
	if len(k) < 8 {
		return 0, nil, false
	}
	return int64(^binary.BigEndian.Uint64(k) ^ 1<<63), k[8:], true
}

// parseInt parses b as Redis parses integer arguments (string2ll): an
// optional '-', no '+', no leading zeros, no spaces, within int64.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var u uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' || u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(ch-'0')
	}
	switch {
	case neg && u <= 1<<63:
		return -int64(u), true
	case !neg && u < 1<<63:
		return int64(u), true
	}
	return 0, false
}

// fold reports whether b is the lower-case word s, ignoring ASCII case.
func fold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}

// storeError answers a store failure the command has no meaning for.
func storeError(c *sdk.Ctx, r *codec.Result) {
	c.Error("ERR respike: store error (code " + strconv.Itoa(int(r.Code)) + "): " + r.Msg)
}
