package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/commands/internal/rdb"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// restoreRaw runs RESTORE key ttl payload [opts...] with a binary payload.
func restoreRaw(h *sdktest.Host, key, ttl string, payload []byte, opts ...string) string {
	args := [][]byte{[]byte("RESTORE"), []byte(key), []byte(ttl), payload}
	for _, o := range opts {
		args = append(args, []byte(o))
	}
	return string(h.DoRaw(args...))
}

func TestRestoreLayout(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		objs := map[string]*rdb.Object{
			"h": {Kind: rdb.Hash, Elems: [][]byte{[]byte("b"), []byte("12"), []byte("a"), []byte("x")}},
			"z": {Kind: rdb.ZSet, Elems: [][]byte{[]byte("m")}, Scores: []float64{2}},
			"s": {Kind: rdb.Set, Elems: [][]byte{[]byte("1"), []byte("x")}},
			"l": {Kind: rdb.List, Elems: [][]byte{[]byte("1"), []byte("x")}},
			"i": {Kind: rdb.String, Value: []byte("-42")},
		}
		for k, o := range objs {
			if got := restoreRaw(h, k, "0", rdb.Encode(o)); got != "+OK\r\n" {
				t.Fatalf("RESTORE %s: %q", k, got)
			}
		}
		want := map[string][2]codec.Value{
			"h": {codec.Str(codec.TypeHash), codec.Map(codec.Bytes([]byte("a")), codec.Bytes([]byte("x")), codec.Bytes([]byte("b")), codec.Int(12))},
			"z": {codec.Str(codec.TypeZSet), codec.Map(codec.Bytes([]byte("m")), codec.Float(2))},
			"s": {codec.Str(codec.TypeSet), codec.Map(codec.Bytes([]byte("1")), codec.Int(1), codec.Bytes([]byte("x")), codec.Int(1))},
			"l": {codec.Str(codec.TypeList), codec.List(codec.Bytes([]byte("1")), codec.Bytes([]byte("x")))},
			"i": {codec.Str(codec.TypeString), codec.Int(-42)},
		}
		for k, w := range want {
			tag, v := bins(t, h, k)
			if !tag.Equal(w[0]) || !v.Equal(w[1]) {
				t.Errorf("%s stored as %+v tagged %q, want %+v", k, v, tag.Bytes, w[1])
			}
		}
		if got := h.Do("TTL", "h"); got != "(integer) -1" {
			t.Errorf("TTL after RESTORE 0: %s", got)
		}
	})
}

// bins reads a record's type tag and value.
func bins(t *testing.T, h *sdktest.Host, key string) (tag, v codec.Value) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Get("")
	r := cmdtest.Exec(t, h.Store, call)
	if r.Code != codec.OK {
		t.Fatalf("reading %s: code %d", key, r.Code)
	}
	for i := 0; i+1 < len(r.Values[0].List); i += 2 {
		switch string(r.Values[0].List[i].Bytes) {
		case codec.BinValue:
			v = r.Values[0].List[i+1]
		case codec.BinType:
			tag = r.Values[0].List[i+1]
		}
	}
	return tag, v
}

// TestDumpForeignRecords dumps records another application wrote: an
// untyped map reads as a hash, an untyped list as a list of its string
// forms; an unknown type tag cannot be serialized.
func TestDumpForeignRecords(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		var c codec.Call
		c.Key = []byte("m")
		c.Put(codec.BinValue, codec.Map(codec.Str("f"), codec.Int(7)))
		cmdtest.Exec(t, h.Store, c)
		c = codec.Call{Key: []byte("l")}
		c.Put(codec.BinValue, codec.List(codec.Int(1), codec.Float(2.5), codec.Str("s")))
		cmdtest.Exec(t, h.Store, c)
		cmdtest.PutType(t, h.Store, "odd", "stream")
		for key, want := range map[string]string{
			"m": "hash f=7",
			"l": "list 1,2.5,s",
		} {
			reply, _ := cmdtest.ParseRESP(h.DoRaw([]byte("DUMP"), []byte(key)))
			p, ok := reply.(string)
			if !ok {
				t.Fatalf("DUMP %s: %v", key, reply)
			}
			o, err := rdb.Decode([]byte(p))
			if err != nil {
				t.Fatalf("DUMP %s: %v", key, err)
			}
			got := ""
			switch o.Kind {
			case rdb.Hash:
				got = "hash " + string(o.Elems[0]) + "=" + string(o.Elems[1])
			case rdb.List:
				got = "list " + string(o.Elems[0]) + "," + string(o.Elems[1]) + "," + string(o.Elems[2])
			}
			if got != want {
				t.Errorf("DUMP %s decodes to %q, want %q", key, got, want)
			}
		}
		if got := h.Do("DUMP", "odd"); got != "(error) ERR respike: DUMP cannot serialize this value (type tag 'stream')" {
			t.Errorf("DUMP of an unknown type: %s", got)
		}
		if got := h.Do("DUMP", "nokey"); got != "(nil)" {
			t.Errorf("DUMP of a missing key: %s", got)
		}
	})
}

// TestRestoreWritesNothingOnFailure: a store refusal (a record too big)
// answers the store's error, and the key stays as it was.
func TestRestoreWritesNothingOnFailure(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		putStr(t, h, "k", "old")
		inner := h.Store
		refused := false
		h.Store = &cmdtest.InterceptStore{Store: inner, Before: func(req *codec.Request) {
			// The write of the value becomes a read, and its answer the
			// store's refusal of a record beyond its size limit.
			if req.Kind == codec.ReqRecords && req.Calls[0].Policy.Exists == codec.ExistsReplace {
				var c codec.Call
				c.Key = req.Calls[0].Key
				c.Header()
				req.Calls[0] = c
				refused = true
			}
		}, After: func(resp *codec.Response) {
			if refused {
				resp.Results[0].Code = codec.RecordTooBig
			}
		}}
		payload := rdb.Encode(&rdb.Object{Kind: rdb.String, Value: []byte("new")})
		got := restoreRaw(h, "k", "0", payload, "REPLACE")
		h.Store = inner
		if !refused || got != "-ERR respike: the value is too large for the store's record size limit (code 13)\r\n" {
			t.Errorf("RESTORE refused by the store: %q", got)
		}
		if got2 := get(t, h, "k"); got2 != "old" {
			t.Errorf("after a refused RESTORE the key holds %q (reply %q)", got2, got)
		}
	})
}
