package main

import (
	"github.com/respike/respike/commands/internal/kit"
	"github.com/respike/respike/commands/internal/rdb"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "dump", Arity: 2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
		Summary: "Returns a serialized representation of the value stored at a key.",
		Run:     dumpStart,
	})
}

// dumpStart: DUMP key. One read of every bin; the value is serialized as
// redis-server 7.0 would serialize it (commands/internal/rdb), so the
// payload restores in Redis as in respike. HyperLogLogs and geo sets are
// a string and a sorted set, as in Redis. The expiry is not part of the
// payload, as in Redis.
func dumpStart(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get("")
	c.Exec(dumpRead)
}

func dumpRead(c *sdk.Ctx) {
	r, ok := kit.Found(c)
	if !ok {
		return
	}
	all := r.Value(0)
	if kit.Pending(all) {
		// A RENAME wrote the key and may still take it back (kit.PendingBin).
		if !kit.Again(c) {
			c.Error(kit.Contention)
			return
		}
		dumpStart(c)
		return
	}
	var tag string
	var v codec.Value
	for i := 0; i+1 < len(all.List); i += 2 {
		switch string(all.List[i].Bytes) {
		case codec.BinType:
			tag = string(all.List[i+1].Bytes)
		case codec.BinValue:
			v = all.List[i+1]
		}
	}
	o, ok := dumpObject(tag, v)
	if !ok {
		c.Error("ERR respike: DUMP cannot serialize this value (type tag '" + tag + "')")
		return
	}
	c.Reply().Bulk(rdb.Encode(o))
}

// dumpObject is a record's value as an rdb.Object, from its type tag and
// value bin (docs/data-model.md). An untyped record (another
// application's) is typed by its value, as the other commands see it.
func dumpObject(tag string, v codec.Value) (*rdb.Object, bool) {
	if tag == "" {
		switch v.Kind {
		case codec.KindMap:
			tag = codec.TypeHash
		case codec.KindList:
			tag = codec.TypeList
		default:
			tag = codec.TypeString
		}
	}
	// The string form of an element: its bytes as they are (the read's
	// buffer outlives the encoding), numbers in decimal from shared chunks
	// (one allocation per 4 KiB, not per element).
	var chunk []byte
	str := func(x codec.Value) []byte {
		if x.Kind == codec.KindBytes || x.Kind == codec.KindStr {
			return x.Bytes
		}
		if cap(chunk)-len(chunk) < 32 { // the longest number
			chunk = make([]byte, 0, 4096)
		}
		start := len(chunk)
		chunk = kit.AppendStr(chunk, x)
		return chunk[start:len(chunk):len(chunk)]
	}
	switch tag {
	case codec.TypeString:
		if v.Kind == codec.KindMap || v.Kind == codec.KindList {
			return nil, false
		}
		return &rdb.Object{Kind: rdb.String, Value: str(v)}, true
	case codec.TypeList:
		if v.Kind != codec.KindList {
			return nil, false
		}
		o := &rdb.Object{Kind: rdb.List, Elems: make([][]byte, len(v.List))}
		for i := range v.List {
			o.Elems[i] = str(v.List[i])
		}
		return o, true
	case codec.TypeHash, codec.TypeSet, codec.TypeZSet:
		if v.Kind != codec.KindMap {
			return nil, false
		}
		o := &rdb.Object{}
		for i := 0; i+1 < len(v.List); i += 2 {
			k, x := v.List[i], v.List[i+1]
			switch tag {
			case codec.TypeHash:
				o.Kind = rdb.Hash
				o.Elems = append(o.Elems, str(k), str(x))
			case codec.TypeSet:
				o.Kind = rdb.Set
				o.Elems = append(o.Elems, str(k))
			default:
				o.Kind = rdb.ZSet
				score := x.Float
				if x.Kind == codec.KindInt {
					score = float64(x.Int)
				}
				o.Elems, o.Scores = append(o.Elems, str(k)), append(o.Scores, score)
			}
		}
		return o, o.Kind != 0
	}
	return nil, false
}
