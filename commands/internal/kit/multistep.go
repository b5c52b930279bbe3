package kit

import (
	"time"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// RetryFor is how long a command may keep retrying a step that lost a race
// for a key (a generation mismatch: another client wrote in between),
// counted from the command's start (sdk.Ctx.Now). There is no count limit:
// each retry means another client's write succeeded, so the keyspace makes
// progress, and a popular counter must not fail because it is popular. The
// time bound keeps a command from outliving the client's patience when
// something keeps writing the key for ever (clients time out after 3 s by
// default, go-redis and redis-py alike).
const RetryFor = 2 * time.Second

// Again reports whether a command that lost a race for a key may try its
// read-modify-write once more: while it has run less than RetryFor. When it
// reports false, the command answers Contention.
func Again(c *sdk.Ctx) bool {
	return time.Now().UnixNano()-c.Now() < int64(RetryFor)
}

// Clone returns a deep copy of v: results alias the response buffer, which
// the next request reuses, so a value a later step needs (the previous
// value of a key a multi-step command overwrote, to put it back) is
// cloned.
func Clone(v codec.Value) codec.Value {
	out := codec.Value{Kind: v.Kind, Int: v.Int, Float: v.Float}
	if v.Bytes != nil {
		out.Bytes = append([]byte{}, v.Bytes...)
	}
	if v.List != nil {
		out.List = make([]codec.Value, len(v.List))
		for i := range v.List {
			out.List[i] = Clone(v.List[i])
		}
	}
	return out
}

// CopyBins turns all, an all-bins read, into a write of the same record on
// call, with the TTL ttl (as codec.Result.TTL: -1 never expires). Map bins are written with map puts that carry
// the order their type needs (key order for hashes and sets, key-value
// order for sorted sets): a plain put would create an unordered map.
func CopyBins(call *codec.Call, ttl int64, all codec.Value) {
	if ttl > 0 {
		call.Expire(ttl)
	} else if ttl == 0 {
		call.Expire(1) // expiring this very second
	} else {
		call.TTLNever()
	}
	order := codec.MapOrderKey
	for i := 0; i+1 < len(all.List); i += 2 {
		if string(all.List[i].Bytes) == codec.BinType && string(all.List[i+1].Bytes) == codec.TypeZSet {
			order = codec.MapOrderKeyValue
		}
	}
	for i := 0; i+1 < len(all.List); i += 2 {
		name, v := string(all.List[i].Bytes), all.List[i+1]
		if v.Kind == codec.KindMap {
			call.MapPut(name, order, v.List)
			continue
		}
		call.Put(name, v)
	}
}
