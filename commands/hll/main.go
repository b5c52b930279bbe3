// Command hll is respike's module of Redis HyperLogLog commands: PFADD,
// PFCOUNT, PFMERGE and PFDEBUG.
//
// Data model: a HyperLogLog is a string, exactly as in Redis: the strings
// module's record (bin "t" = "string", bin "v" = the bytes) holding Redis
// 7.0's representation (hll.go): "HYLL", a sparse or dense register
// encoding and a cached cardinality. GET of an HLL answers the bytes
// redis-server would hold after the same commands, an HLL SET from a
// redis-server dump works here, and TYPE says string.
//
// Atomicity: PFADD and PFMERGE read the value(s) in one operate (a batch
// for several keys), compute in the module and write the key under the
// generation read (create-only for a new key), starting again when
// another client wrote in between. PFCOUNT of one key reads it and, when
// the cached cardinality was not valid, writes the new cache back under
// the generation read, as Redis updates it; PFCOUNT of several keys reads
// them in one batch and writes nothing. A PFADD of a few elements to a
// dense HLL and a PFCOUNT of one dense key with a valid cache read and
// write only the bytes they need (partial.go).
package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("hll", "1.0.0") }

// tagString is the type tag of a string record, built once because
// codec.Str allocates.
var tagString = codec.Str(codec.TypeString)

// Error texts of the HyperLogLog commands (Redis 7.0).
const (
	errNotHLL  = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errCorrupt = "INVALIDOBJ Corrupted HLL object detected"
)

// readHLL reads the value of key under the string guard.
func readHLL(c *sdk.Ctx, key []byte) {
	c.Record(key).Guard(codec.TypeString).Get(codec.BinValue)
}

// loaded is a key's HLL as read: its bytes, whether it exists, and its
// generation. The bytes alias the store's response (a dense HLL is 12 KB):
// valid for the current step, and to be copied (own) before changing
// them.
type loaded struct {
	h      []byte
	exists bool
	gen    uint32
}

// load checks one read of readHLL: the HLL, or false once it has replied
// with the error (WRONGTYPE for another type, errNotHLL for a string that
// is not an HLL).
func load(c *sdk.Ctx, r *codec.Result) (loaded, bool) {
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		return loaded{}, true
	default:
		kit.GuardFailed(c, r)
		return loaded{}, false
	}
	v := r.Value(0)
	h := v.Bytes
	if v.Kind != codec.KindBytes && v.Kind != codec.KindStr {
		h = kit.AppendStr(nil, v) // an integer or a float: never an HLL
	}
	if !valid(h) {
		c.Error(errNotHLL)
		return loaded{}, false
	}
	return loaded{h: h, exists: true, gen: r.Generation}, true
}

// own returns a copy of h that the command may change.
func own(h []byte) []byte { return append([]byte(nil), h...) }

// write stores h as key's value: under the generation read when the key
// existed (its TTL kept), else as a new key. Then it answers with reply,
// or, when another client wrote the key since it was read, runs again
// from restart (within kit.RetryFor).
func write(c *sdk.Ctx, key []byte, l loaded, h []byte, restart sdk.Step, reply sdk.Step) {
	call := c.Record(key)
	if l.exists {
		call.Generation(l.gen).Exists(codec.ExistsUpdateOnly).TTLKeep()
	} else {
		call.Exists(codec.ExistsCreateOnly).TTLNever()
	}
	call.Put(codec.BinType, tagString).Put(codec.BinValue, codec.Bytes(h))
	c.Exec(func(c *sdk.Ctx) {
		r := c.Result(0)
		switch r.Code {
		case codec.OK:
			reply(c)
		case codec.GenerationError, codec.Exists, codec.NotFound:
			if !kit.Again(c) {
				c.Error(kit.Contention)
				return
			}
			restart(c)
		default:
			kit.StoreError(c, r)
		}
	})
}
