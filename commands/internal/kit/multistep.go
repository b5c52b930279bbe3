package kit

import (
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
const RetryFor int64 = 2e9 // nanoseconds

// Again reports whether a command that lost a race for a key may try its
// read-modify-write once more: while it has run less than RetryFor. When it
// reports false, the command answers Contention.
func Again(c *sdk.Ctx) bool {
	return now()-c.Now() < RetryFor
}

// RetryAfterUndo is the step after a command that lost a race wrote back
// what its first step had changed (its undo, conditional on the generation
// that step left): whether the undo applied, or found the record written
// or removed since (that writer's version then stands), the command starts
// over through start, within RetryFor (Retry); a store failure is
// answered.
func RetryAfterUndo(c *sdk.Ctx, start func(*sdk.Ctx)) {
	switch r := c.Result(0); r.Code {
	case codec.OK, codec.GenerationError, codec.NotFound:
		if Retry(c) {
			start(c)
		}
	default:
		StoreError(c, r)
	}
}

// Yield spends one store round trip, a header read of key, before next.
// A command that lost a race to a command crossing it (RENAME a b against
// RENAME b a: each overwrote the other's source) would otherwise start over
// in step with it — a remote store's batch call gathers both commands'
// requests — and both would lose again in every round until RetryFor. When
// exactly one of the two yields, the other's next write is in the store
// before the yielding one reads again, and it waits for that write's
// pending mark instead of crossing it (TestRenameSwapInLockstep).
func Yield(c *sdk.Ctx, key []byte, next sdk.Step) {
	c.Record(key).Header()
	c.Exec(next)
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

// PendingBin marks a record that a RENAME wrote as its destination and has
// not committed yet (it has not deleted its source): the rename may still
// put the destination back as it was. It holds the time of the write in
// Unix milliseconds; the rename removes it when it commits. A command that
// would commit on such a value (another RENAME reading it as its source)
// waits for the mark to go instead: committing on a value that is then
// taken back produced outcomes no serial order gives (RENAME a b racing
// RENAME b a lost a value). A mark older than PendingFor is left by a
// proxy that died mid-rename, and is ignored.
const PendingBin = "p"

// PendingFor is how long a pending mark is honoured: longer than a rename
// can take (RetryFor plus a round trip), so only a dead writer's mark
// outlives it.
const PendingFor = RetryFor + 1e9 // nanoseconds

// Pending reports whether all, an all-bins read (or the value of
// PendingBin alone), carries a pending mark that is still honoured.
func Pending(all codec.Value) bool {
	mark := all
	if all.Kind == codec.KindMap {
		mark = codec.Nil
		for i := 0; i+1 < len(all.List); i += 2 {
			if string(all.List[i].Bytes) == PendingBin {
				mark = all.List[i+1]
			}
		}
	}
	if mark.Kind != codec.KindInt {
		return false
	}
	age := now()/1e6 - mark.Int // milliseconds
	return age < PendingFor/1e6 && age > -PendingFor/1e6
}

// MarkPending adds the pending mark to a rename's write of its
// destination.
func MarkPending(call *codec.Call) *codec.Call {
	return call.Put(PendingBin, codec.Int(now()/1e6))
}

// CopyBins turns all, an all-bins read, into a write of the same record on
// call, with the exact expiry in all (codec.BinExpire) when it has one,
// else the TTL ttl (as codec.Result.TTL: -1 never expires). Map bins are
// written with map puts that carry the order their type needs (key order
// for hashes and sets, key-value order for sorted sets): a plain put would
// create an unordered map.
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
		name, v := string(all.List[i].Bytes), all.List[i+1]
		if name == codec.BinType && string(v.Bytes) == codec.TypeZSet {
			order = codec.MapOrderKeyValue
		}
		if name == codec.BinExpire && v.Kind == codec.KindInt {
			call.ExpireAt(v.Int) // the exact expiry, which the store writes
		}
	}
	for i := 0; i+1 < len(all.List); i += 2 {
		name, v := string(all.List[i].Bytes), all.List[i+1]
		if name == PendingBin || name == codec.BinExpire {
			continue // the mark and the expiry belong to the record, not to its value
		}
		if v.Kind == codec.KindMap {
			call.MapPut(name, order, v.List)
			continue
		}
		call.Put(name, v)
	}
}
