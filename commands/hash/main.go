// Command hash is respike's module of Redis hash commands: HSET, HSETNX,
// HGET, HMSET, HMGET, HGETALL, HDEL, HEXISTS, HLEN, HKEYS, HVALS, HINCRBY,
// HINCRBYFLOAT, HSTRLEN, HRANDFIELD and HSCAN.
//
// Data model: one key is one record with bin "t" = "hash" and bin "v" = a
// key-ordered map field → value. Fields are bytes. A value whose bytes are
// a canonical int64 (what Redis's string2ll accepts) is stored as an
// integer, so that HINCRBY is one atomic map increment; any other value is
// stored as bytes. Either reads back as the exact bytes written.
//
// Atomicity: every command but HINCRBYFLOAT and HRANDFIELD is one atomic
// operate on its record. Writes carry the type guard, so WRONGTYPE is
// decided atomically with the write; reads carry it too. A write that
// empties the map deletes the record in the same operate, and writes leave
// the record's TTL as it is. HINCRBYFLOAT is a read-modify-write guarded by
// the record's generation (retried when another client wrote in between);
// HRANDFIELD reads the size, then the items at random indexes, and starts
// again if the record changed in between.
//
// HSCAN's cursor is an index into the key-ordered map and COUNT the page
// size; see hscan.go for what that means under concurrent writes.
package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("hash", "1.0.0") }

// tagHash is the type tag of every hash record, built once because
// codec.Str allocates.
var tagHash = codec.Str(codec.TypeHash)

// putFlags are the map flags of HSET: create or update, and key order for
// a map the write creates.
const putFlags = codec.MapWriteDefault | codec.MapOrderKey

// createFlags write only fields that do not exist yet, skipping the others
// without failing the call: column-level HSETNX.
const createFlags = codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial | codec.MapOrderKey

// wrongArgs is Redis's arity error for command name (lower case).
func wrongArgs(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

// maxAttempts bounds HRANDFIELD's redraws when the record changed in
// between. Read-modify-writes (HINCRBYFLOAT, HINCRBY on an integer stored
// as bytes) retry without a count limit within kit.RetryFor instead.
const maxAttempts = 100
