package main

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

const (
	errWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errContention = "ERR respike: the key kept changing during a read-modify-write; try again"

	// maxAttempts bounds the read → generation-checked write loop.
	maxAttempts = 10

	// nAttempts is the Ctx.N slot counting attempts: Ctx.N survives from
	// step to step and is zeroed when a command starts.
	nAttempts = 0
)

// Type-tag values, built once: codec.Str allocates.
var (
	tagString = codec.Str(codec.TypeString)
	tagHash   = codec.Str(codec.TypeHash)
)

// retry starts the command again from step first after a lost race, or
// gives up with an error after maxAttempts.
func retry(c *sdk.Ctx, first sdk.Step) {
	c.N[nAttempts]++
	if c.N[nAttempts] >= maxAttempts {
		c.Error(errContention)
		return
	}
	first(c)
}

// sameString reports whether a stored value reads back as the string b.
// Built-in modules store a canonical integer as an integer (so INCR and
// HINCRBY are one atomic add), a float after INCRBYFLOAT-like commands, and
// anything else as bytes.
func sameString(v codec.Value, b []byte) bool {
	var tmp [32]byte
	switch v.Kind {
	case codec.KindBytes, codec.KindStr:
		return string(v.Bytes) == string(b)
	case codec.KindInt:
		return string(strconv.AppendInt(tmp[:0], v.Int, 10)) == string(b)
	case codec.KindFloat:
		return string(strconv.AppendFloat(tmp[:0], v.Float, 'g', -1, 64)) == string(b)
	}
	return false
}

// stringValue is how the strings module stores a value: a canonical integer
// as an integer, anything else as bytes. Both read back as the same bytes.
func stringValue(b []byte) codec.Value {
	if n, ok := parseInt(b); ok {
		return codec.Int(n)
	}
	return codec.Bytes(b)
}

// parseInt parses b as Redis's string2ll: an optional '-', no '+', no
// leading zeros, no spaces, within int64. Only such strings are stored as
// integers, so that every value reads back byte-identical.
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

// storeError answers a store failure the command has no meaning for.
func storeError(c *sdk.Ctx, r *codec.Result) {
	c.Error("ERR respike: store error (code " + strconv.Itoa(int(r.Code)) + "): " + r.Msg)
}
