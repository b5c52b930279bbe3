package kit

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// The sorted-set layout, shared by the modules whose commands work on
// sorted sets: zset, and geo (a geo set is a sorted set whose scores are
// geohashes). A sorted set is a record tagged "zset" whose value bin is a
// key-value-ordered map member → score, a score always a float64
// (docs/data-model.md).

// TagZSet is the type tag of every sorted-set record, built once because
// codec.Str allocates.
var TagZSet = codec.Str(codec.TypeZSet)

// StoreScore is the value a score is stored as: always a float, -0 as 0
// (as Redis 7.0 stores a small sorted set's scores).
func StoreScore(f float64) codec.Value {
	if f == 0 {
		f = 0
	}
	return codec.Float(f)
}

// ZADD's options, as the bits of a flags word (GEOADD takes NX, XX, CH).
const (
	ZAddNX = 1 << iota
	ZAddXX
	ZAddCH
	ZAddIncr
	ZAddGT
	ZAddLT
)

// SetMemberScore writes a member and its stored score (StoreScore) into
// kv[0] and kv[1], field by field: building them as Values (codec.Bytes,
// StoreScore) and copying them in is, in Go's WebAssembly, a memory.fill
// and a memory.copy per Value, which wazero runs as calls to memmove
// (see codec.Result.IntAt). kv may hold an earlier command's values
// (sdk.Ctx.Values): every field is written.
func SetMemberScore(kv []codec.Value, member []byte, score float64) {
	if score == 0 {
		score = 0 // -0 as 0, as StoreScore
	}
	m, s := &kv[0], &kv[1]
	m.Kind, m.Int, m.Float, m.Bytes, m.List = codec.KindBytes, 0, 0, member, nil
	s.Kind, s.Int, s.Float, s.Bytes, s.List = codec.KindFloat, 0, score, nil, nil
}

// ZAddOptions reads ZADD's option words from argument i on, as Redis's
// zaddGenericCommand does: any of allowed (ZAdd* bits: NX, XX, CH, INCR,
// GT, LT), in any order and case, up to the first other word. It returns
// the flags and the index of that word.
func ZAddOptions(c *sdk.Ctx, i int, allowed int64) (int64, int) {
	var flags int64
	for ; i < c.NArg(); i++ {
		bit := zaddOption(c.Arg(i)) & allowed
		if bit == 0 {
			break
		}
		flags |= bit
	}
	return flags, i
}

// zaddOption is the ZAdd* bit of the option word a names, in any case, or
// 0. A GEOADD or ZADD of one member tests its first score or longitude
// here: by its length, and a two-letter word by its two bytes folded into
// one number (the options' letters fold onto lower case with 0x20, and
// only the two cases of a letter do), where trying the six names in turn
// was six loop turns and three calls in WebAssembly.
func zaddOption(a []byte) int64 {
	switch len(a) {
	case 2:
		switch uint16(a[0]|0x20) | uint16(a[1]|0x20)<<8 {
		case 'n' | 'x'<<8:
			return ZAddNX
		case 'x' | 'x'<<8:
			return ZAddXX
		case 'c' | 'h'<<8:
			return ZAddCH
		case 'g' | 't'<<8:
			return ZAddGT
		case 'l' | 't'<<8:
			return ZAddLT
		}
	case 4:
		if Fold(a, "incr") {
			return ZAddIncr
		}
	}
	return 0
}

// ZAddResult is what Redis's zsetAdd calls of one ZADD add up to.
type ZAddResult struct {
	Added, Updated, Processed int
	Score                     float64 // the last new score
	NaN                       bool
}

// ZAddApply applies ZADD's pairs (members[i] with scores[i], in argument
// order) to the old scores (flattened member, score pairs, as a map read
// returns them) member by member, as Redis's zsetAdd does, and appends to
// *writes (when not nil) the final score of every member that changed.
func ZAddApply(flags int64, members [][]byte, scores []float64, old []codec.Value, writes *[]codec.Value) ZAddResult {
	cur := make(map[string]float64, len(old)/2)
	for i := 0; i+1 < len(old); i += 2 {
		cur[string(old[i].Bytes)] = codec.ScoreOf(&old[i+1])
	}
	var res ZAddResult
	var dirty []string
	for j, mb := range members {
		s := scores[j]
		m := string(mb)
		v, exists := cur[m]
		if !exists {
			if flags&ZAddXX != 0 {
				continue
			}
			cur[m] = s
			res.Added++
			res.Processed++
			res.Score = s
			dirty = append(dirty, m)
			continue
		}
		if flags&ZAddNX != 0 {
			continue
		}
		if flags&ZAddIncr != 0 {
			s += v
			if s != s {
				res.NaN = true
				return res
			}
		}
		if (flags&ZAddLT != 0 && s >= v) || (flags&ZAddGT != 0 && s <= v) {
			continue
		}
		res.Processed++
		res.Score = s
		if s != v {
			cur[m] = s
			res.Updated++
			dirty = append(dirty, m)
		}
	}
	if writes != nil {
		seen := make(map[string]bool, len(dirty))
		for _, m := range dirty {
			if !seen[m] {
				seen[m] = true
				*writes = append(*writes, codec.Bytes([]byte(m)), StoreScore(cur[m]))
			}
		}
	}
	return res
}

// ZAddCall builds the one-operate ZADD (no GT, LT or INCR) on key: the
// map's size, (with CH) the old scores of the members, then a map put of
// kv (flattened member, stored score pairs, each member once) whose flags
// do NX (create only) or XX (update only, on an existing record). The
// result's op 0 is the size before; with CH op 1 the old pairs and op 2
// the size after, else op 1 the size after (see ZAddCount).
func ZAddCall(c *sdk.Ctx, key []byte, flags int64, kv []codec.Value) {
	call, put := zaddRecord(c, key, flags)
	call.MapSize(codec.BinValue)
	if flags&ZAddCH != 0 {
		keys := c.Values(len(kv) / 2)
		for j := range keys {
			keys[j] = kv[2*j]
		}
		call.MapGetByKeys(codec.BinValue, codec.ReturnKeyValue, keys)
	}
	call.MapPut(codec.BinValue, put, kv).Put(codec.BinType, TagZSet)
}

// zaddRecord starts ZADD's call on key for flags (NX, XX or neither):
// the call, guarded and for XX update-only, and the map write flags of
// its put.
func zaddRecord(c *sdk.Ctx, key []byte, flags int64) (*codec.Call, uint32) {
	call := c.Record(key).Guard(codec.TypeZSet)
	switch {
	case flags&ZAddNX != 0:
		return call, zaddPutFlagsNX
	case flags&ZAddXX != 0:
		return call.Exists(codec.ExistsUpdateOnly), zaddPutFlagsXX
	}
	return call, zaddPutFlags
}

// The map write flags of ZADD's put: without options, with NX, with XX.
const (
	zaddPutFlags   = codec.MapWriteDefault | codec.MapOrderKeyValue
	zaddPutFlagsNX = codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial | codec.MapOrderKeyValue
	zaddPutFlagsXX = codec.MapWriteUpdateOnly | codec.MapWriteNoFail | codec.MapWritePartial | codec.MapOrderKeyValue
)

// ZAddOne's call around its put, encoded once (codec.Prepared,
// codec.PrepareScorePut): the size before, and the type tag after, each
// short enough for PutScore's word stores (7 and 16 bytes); the put's
// flags without options (ZAddPut), with NX, with XX (zaddRecord's).
var (
	zaddSize = codec.Prepare(codec.Op{Code: codec.OpMapSize, Bin: codec.BinValue})
	zaddTag  = codec.Prepare(codec.Op{Code: codec.OpPut, Bin: codec.BinType, Value: TagZSet})
	// ZAddPut is ZAddOne's call without flags after its record: a
	// caller whose score is never -0 (a geohash) writes it as
	// c.Record(key).Guard(codec.TypeZSet).PutScore(kit.ZAddPut, member,
	// score), ZAddOne's request without ZAddOne's call.
	ZAddPut   = codec.PrepareScorePut(zaddSize, codec.BinValue, zaddPutFlags, zaddTag)
	zaddPutNX = codec.PrepareScorePut(zaddSize, codec.BinValue, zaddPutFlagsNX, zaddTag)
	zaddPutXX = codec.PrepareScorePut(zaddSize, codec.BinValue, zaddPutFlagsXX, zaddTag)
)

// ZAddOne is ZAddCall of one member and its score without CH (flags NX
// or XX or neither): the same request, built from prepared ops around one
// map put (codec.Call.PutScore), where the builder methods one by one
// were most of a GEOADD's guest work in WebAssembly. The result is
// ZAddCall's. Without flags (GEOADD's and ZADD's common form) it opens
// the record itself rather than through zaddRecord: a call fewer.
func ZAddOne(c *sdk.Ctx, key []byte, flags int64, member []byte, score float64) {
	// -0 as 0, as StoreScore, without a branch: -0 + 0 is +0 and x + 0
	// is x for every other score.
	score += 0
	if flags == 0 {
		c.Record(key).Guard(codec.TypeZSet).PutScore(ZAddPut, member, score)
		return
	}
	call, _ := zaddRecord(c, key, flags)
	put := zaddPutNX
	if flags&ZAddNX == 0 {
		put = zaddPutXX
	}
	call.PutScore(put, member, score)
}

// ZAddCount is the reply of a ZAddCall that succeeded: the members added,
// or with CH added or changed (members and scores as ZAddApply takes them).
func ZAddCount(r *codec.Result, flags int64, members [][]byte, scores []float64) int64 {
	if flags&ZAddCH == 0 {
		return r.IntAt(1) - r.IntAt(0) // no Value copied (codec.Result.IntAt)
	}
	res := ZAddApply(flags, members, scores, r.Value(1).List, nil)
	return int64(res.Added + res.Updated)
}

// StoreZSet writes st.Dst as a sorted set of the items (flattened
// member, score pairs), or deletes it when there are none, and answers the
// count, as DestStore does (the write clears the key's TTL, as Redis's
// does). d is the destination's all-bins read when the sources' batch read
// it, or nil to read it first.
func StoreZSet(c *sdk.Ctx, st *DestStore, kv []codec.Value, d *codec.Result) {
	n := len(kv) / 2
	st.Size = int64(n)
	if n > 0 {
		// Copied: reading the destination first reuses the result.
		out := make([]codec.Value, 2*n)
		for i := range n {
			out[2*i] = Clone(kv[2*i])
			out[2*i+1] = StoreScore(codec.ScoreOf(&kv[2*i+1]))
		}
		st.Fill = func(call *codec.Call) {
			call.Put(codec.BinType, TagZSet).MapPut(codec.BinValue, codec.MapWriteDefault|codec.MapOrderKeyValue, out)
		}
	}
	if d == nil {
		st.Start(c)
		return
	}
	st.Write(c, d)
}
