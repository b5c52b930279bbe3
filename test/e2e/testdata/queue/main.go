// Command queue is the test module of the blocking-command tests: a FIFO
// queue of strings per key, with a blocking pop shaped as BLPOP's.
//
//	QPUSH key elem [elem ...]   appends; replies the queue's length
//	QPOP key                    removes the oldest element; null when empty
//	BQPOP key [key ...] timeout as BLPOP: [key, elem] from the first
//	                            non-empty queue, or waits; *-1 (RESP3 _)
//	                            when the timeout passes
//	QTAG                        the build's tag
//
// A queue is a map bin whose keys order the elements: the push time, then
// a counter. Its builds differ by linker flags: -X main.tag=B makes BQPOP
// answer "B:<elem>", so that the tests see which version served it.
package main

import (
	"encoding/binary"
	"fmt"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

var tag = "" // prefixes BQPOP's elements when set

// typeQueue is the queue's type tag.
const typeQueue = "queue"

const wrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

var seq uint64 // orders the elements one instance pushes in one nanosecond

func main() {}

func init() {
	sdk.Module("queue", "1.0.0")
	sdk.Register(
		sdk.Command{Name: "qpush", Arity: -3, Flags: []string{"write", "denyoom"}, FirstKey: 1, LastKey: 1, Step: 1,
			Run: qpush},
		sdk.Command{Name: "qpop", Arity: 2, Flags: []string{"write", "fast"}, FirstKey: 1, LastKey: 1, Step: 1,
			Run: func(c *sdk.Ctx) { pop(c, c.Arg(1), qpopped) }},
		sdk.Command{Name: "bqpop", Arity: -3, Flags: []string{"write", "blocking"}, FirstKey: 1, LastKey: -2, Step: 1,
			Run: bqpop},
		sdk.Command{Name: "qtag", Arity: 1, Run: func(c *sdk.Ctx) { c.Reply().BulkString(tag) }},
	)
}

func qpush(c *sdk.Ctx) {
	elems := c.Args()[2:]
	kv := c.Values(2 * len(elems))
	now := uint64(c.Now())
	for i, e := range elems {
		seq++
		k := make([]byte, 16)
		binary.BigEndian.PutUint64(k, now)
		binary.BigEndian.PutUint64(k[8:], seq)
		kv[2*i], kv[2*i+1] = codec.Bytes(k), codec.Bytes(e)
	}
	c.Record(c.Arg(1)).Guard(typeQueue).
		Put(codec.BinType, codec.Str(typeQueue)).
		MapPut(codec.BinValue, codec.MapOrderKey, kv)
	c.Exec(func(c *sdk.Ctx) {
		r := c.Result(0)
		switch r.Code {
		case codec.OK:
			c.Reply().Int(r.Value(1).Int)
		case codec.FilteredOut:
			c.Error(wrongType)
		default:
			c.Error(fmt.Sprintf("ERR store code %d: %s", r.Code, r.Msg))
		}
	})
}

// pop removes the oldest element of key's queue; next reads it with popped.
func pop(c *sdk.Ctx, key []byte, next sdk.Step) {
	c.Record(key).Guard(typeQueue).DeleteIfEmpty(codec.BinValue).
		MapRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1)
	c.Exec(next)
}

// popped returns the element the last pop removed; ok is false when the
// queue was empty, and msg is an error reply when the pop failed.
func popped(c *sdk.Ctx) (elem []byte, ok bool, msg string) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if v := r.Value(0); len(v.List) > 0 {
			return v.List[0].Bytes, true, ""
		}
		return nil, false, ""
	case codec.NotFound:
		return nil, false, ""
	case codec.FilteredOut:
		return nil, false, wrongType
	}
	return nil, false, fmt.Sprintf("ERR store code %d: %s", r.Code, r.Msg)
}

func qpopped(c *sdk.Ctx) {
	elem, ok, msg := popped(c)
	switch {
	case msg != "":
		c.Error(msg)
	case !ok:
		c.Reply().Null()
	default:
		c.Reply().Bulk(elem)
	}
}

// bqpop tries its keys in order (N[1] is the one tried), then blocks on
// them all for the timeout (N[0], nanoseconds).
func bqpop(c *sdk.Ctx) {
	timeout, msg, ok := c.ParseTimeout(c.Arg(c.NArg() - 1))
	if !ok {
		c.Error(msg)
		return
	}
	c.N[0], c.N[1] = int64(timeout), 1
	pop(c, c.Arg(1), bqpopped)
}

func bqpopped(c *sdk.Ctx) {
	elem, ok, msg := popped(c)
	if msg != "" {
		c.Error(msg)
		return
	}
	if ok {
		w := c.Reply()
		w.Array(2)
		w.Bulk(c.Arg(int(c.N[1])))
		if tag != "" {
			elem = append([]byte(tag+":"), elem...)
		}
		w.Bulk(elem)
		return
	}
	if c.N[1]++; int(c.N[1]) < c.NArg()-1 {
		pop(c, c.Arg(int(c.N[1])), bqpopped)
		return
	}
	c.Reply().NullArray()
	c.Block(c.Args()[1:c.NArg()-1], sdk.Duration(c.N[0]))
}
