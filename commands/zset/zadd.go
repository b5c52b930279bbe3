package main

import (
	"math"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "zadd", Arity: -4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "sorted_set", Since: "1.2.0",
		Summary: "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.",
		Run:     runZAdd,
	}, sdk.Command{
		Name: "zincrby", Arity: 4, Flags: []string{"write", "denyoom", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "sorted_set", Since: "1.2.0",
		Summary: "Increments the score of a member in a sorted set.",
		Run:     runZIncrBy,
	})
}

// ZADD and ZINCRBY.
//
// Without GT, LT or INCR, ZADD is one operate: the map's size, (with CH)
// the old scores of the members given, then a map put whose flags do NX
// (create only) or XX (update only, on an existing record): the size
// before and after give the members added, and the old scores what CH
// counts as changed. A member given twice is written once, with the value
// Redis would leave: the first under NX, the last otherwise.
//
// GT and LT compare with the old score, which no map write can do, so they
// read the members' scores, work out Redis's result member by member, and
// write it under the generation they read (create-only when the key was
// missing), starting again when another client wrote in between. INCR
// (and ZINCRBY) without NX, XX, GT or LT, by a finite increment, is one
// atomic map increment, which cannot give NaN; otherwise it is the same
// read-modify-write, so that NaN is refused before anything is written.
//
// Ctx.N: [0] the zadd* flags, [1] the argument index of the first score,
// [2] attempts, [3] the generation read, [4] 1 when the key existed.

func runZIncrBy(c *sdk.Ctx) {
	if _, ok := kit.ParseDouble(c.Arg(2)); !ok {
		c.Error(kit.NotFloat)
		return
	}
	c.N[0], c.N[1] = kit.ZAddIncr, 2
	zaddStart(c)
}

func runZAdd(c *sdk.Ctx) {
	flags, i := kit.ZAddOptions(c, 2, kit.ZAddNX|kit.ZAddXX|kit.ZAddCH|kit.ZAddIncr|kit.ZAddGT|kit.ZAddLT)
	elems := c.NArg() - i
	if elems == 0 || elems%2 != 0 {
		c.Error(kit.Syntax)
		return
	}
	has := func(f int64) bool { return flags&f != 0 }
	if has(kit.ZAddNX) && has(kit.ZAddXX) {
		c.Error("ERR XX and NX options at the same time are not compatible")
		return
	}
	if (has(kit.ZAddGT) && has(kit.ZAddNX)) || (has(kit.ZAddLT) && has(kit.ZAddNX)) || (has(kit.ZAddGT) && has(kit.ZAddLT)) {
		c.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	}
	if has(kit.ZAddIncr) && elems > 2 {
		c.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	for j := i; j < c.NArg(); j += 2 {
		if _, ok := kit.ParseDouble(c.Arg(j)); !ok {
			c.Error(kit.NotFloat)
			return
		}
	}
	c.N[0], c.N[1] = flags, int64(i)
	zaddStart(c)
}

// zaddStart picks the path: one operate, one increment, or a
// read-modify-write.
func zaddStart(c *sdk.Ctx) {
	flags := c.N[0]
	first := int(c.N[1])
	if flags&(kit.ZAddGT|kit.ZAddLT) != 0 || flags&kit.ZAddIncr != 0 && flags&(kit.ZAddNX|kit.ZAddXX) != 0 {
		zaddRead(c)
		return
	}
	if flags&kit.ZAddIncr != 0 {
		delta, _ := kit.ParseDouble(c.Arg(first))
		// The store increments a new member from 0, so a delta of -0
		// answers 0 (Aerospike CE 8.1.2, observed); Redis answers -0 for
		// a new member: the read-modify-write path knows which it is.
		if math.IsInf(delta, 0) || delta == 0 && math.Signbit(delta) {
			zaddRead(c)
			return
		}
		c.Record(c.Arg(1)).Guard(codec.TypeZSet).
			Put(codec.BinType, kit.TagZSet).
			MapIncrement(codec.BinValue, codec.MapOrderKeyValue, codec.Bytes(c.Arg(first+1)), codec.Float(delta))
		c.Exec(zincrDone)
		return
	}
	n := (c.NArg() - first) / 2
	var keep []bool // nil: every member distinct
	if n > 1 {
		ms := make([][]byte, n)
		for j := range n {
			ms[j] = c.Arg(first + 2*j + 1)
		}
		keep = kit.Dedup(ms, flags&kit.ZAddNX == 0)
	}
	kv := c.Values(2 * n)[:0]
	for j := range n {
		if keep == nil || keep[j] {
			s, _ := kit.ParseDouble(c.Arg(first + 2*j))
			kv = append(kv, codec.Bytes(c.Arg(first+2*j+1)), kit.StoreScore(s))
		}
	}
	kit.ZAddCall(c, c.Arg(1), flags, kv)
	c.Exec(zaddDone)
}

// zaddDone answers the one-operate ZADD.
func zaddDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0) // XX on a missing key
		return
	default:
		failed(c, r)
		return
	}
	members, scores := zaddPairs(c)
	c.Reply().Int(kit.ZAddCount(r, c.N[0], members, scores))
}

func zincrDone(c *sdk.Ctx) {
	r := c.Result(0)
	if r.Code != codec.OK {
		failed(c, r)
		return
	}
	v := r.Value(1)
	f := v.Float
	if v.Kind == codec.KindInt {
		f = float64(v.Int)
	}
	replyScore(c, f)
}

// zaddRead reads the old scores of the members given, for a
// read-modify-write.
func zaddRead(c *sdk.Ctx) {
	first := int(c.N[1])
	n := (c.NArg() - first) / 2
	keys := c.Values(n)
	for j := range n {
		keys[j] = codec.Bytes(c.Arg(first + 2*j + 1))
	}
	c.Record(c.Arg(1)).Guard(codec.TypeZSet).MapGetByKeys(codec.BinValue, codec.ReturnKeyValue, keys)
	c.Exec(zaddModify)
}

// zaddModify works out Redis's result from the old scores and writes it
// under the generation read.
func zaddModify(c *sdk.Ctx) {
	r := c.Result(0)
	var old []codec.Value
	switch r.Code {
	case codec.OK:
		old = r.Value(0).List
		c.N[3], c.N[4] = int64(r.Generation), 1
	case codec.NotFound:
		c.N[3], c.N[4] = 0, 0
	default:
		failed(c, r)
		return
	}
	var writes []codec.Value
	members, scores := zaddPairs(c)
	res := kit.ZAddApply(c.N[0], members, scores, old, &writes)
	if res.NaN {
		c.Error(errNaN)
		return
	}
	c.B = c.B[:0]
	if res.Processed > 0 {
		c.B = appendFloatBits(c.B, res.Score)
	}
	c.N[5] = int64(res.Added + res.Updated)
	if c.N[0]&kit.ZAddCH == 0 {
		c.N[5] = int64(res.Added)
	}
	if len(writes) == 0 {
		zaddReply(c)
		return
	}
	call := c.Record(c.Arg(1)).Guard(codec.TypeZSet)
	if c.N[4] == 1 {
		call.Generation(uint32(c.N[3])).Exists(codec.ExistsUpdateOnly)
	} else {
		call.Exists(codec.ExistsCreateOnly)
	}
	call.Put(codec.BinType, kit.TagZSet).MapPut(codec.BinValue, codec.MapWriteDefault|codec.MapOrderKeyValue, writes)
	c.Exec(zaddWritten)
}

func zaddWritten(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		zaddReply(c)
	case codec.GenerationError, codec.Exists, codec.NotFound:
		if kit.Retry(c) {
			zaddRead(c)
		}
	default:
		failed(c, r)
	}
}

// zaddReply answers a read-modify-write ZADD: the score (INCR; nil when
// nothing was done) or the count.
func zaddReply(c *sdk.Ctx) {
	if c.N[0]&kit.ZAddIncr == 0 {
		c.Reply().Int(c.N[5])
		return
	}
	if len(c.B) < 8 {
		c.Reply().Null()
		return
	}
	replyScore(c, floatBits(c.B))
}

// zaddPairs is the members and scores of the ZADD arguments, in order.
func zaddPairs(c *sdk.Ctx) ([][]byte, []float64) {
	first := int(c.N[1])
	n := (c.NArg() - first) / 2
	members, scores := make([][]byte, n), make([]float64, n)
	for j := range n {
		scores[j], _ = kit.ParseDouble(c.Arg(first + 2*j))
		members[j] = c.Arg(first + 2*j + 1)
	}
	return members, scores
}

// appendFloatBits and floatBits keep a float in Ctx.B between steps.
func appendFloatBits(b []byte, f float64) []byte {
	u := math.Float64bits(f)
	for i := range 8 {
		b = append(b, byte(u>>(8*i)))
	}
	return b
}

func floatBits(b []byte) float64 {
	var u uint64
	for i := range 8 {
		u |= uint64(b[i]) << (8 * i)
	}
	return math.Float64frombits(u)
}
