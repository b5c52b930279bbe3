package memory

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestMapIndexAgainstModel grows a map bin past the hash index's bound
// (idxMin) and shrinks it below half of it several times, with blob,
// string and integer keys of the same text (distinct keys), puts under
// create-only and update-only, removals, clears and calls that fail after
// changing the map (rolled back), and checks every key's read and the
// whole map against a model after each step.
func TestMapIndexAgainstModel(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	rng := rand.New(rand.NewSource(7))
	model := map[string]int64{} // kind:text → value
	mkey := func(kind, i int) (codec.Value, string) {
		text := fmt.Sprintf("m%d", i)
		switch kind {
		case 0:
			return codec.Bytes([]byte(text)), "b:" + text
		case 1:
			return codec.Str(text), "s:" + text
		}
		return codec.Int(int64(i)), fmt.Sprintf("i:%d", i)
	}
	// randomKey draws mostly blob keys, as sorted sets and hashes use.
	randomKey := func() (codec.Value, string) {
		kind := 0
		if rng.Intn(8) == 0 {
			kind = 1 + rng.Intn(2)
		}
		return mkey(kind, rng.Intn(600))
	}
	call := func() *codec.Call { return &codec.Call{Key: key(1)} }
	check := func(step int) {
		t.Helper()
		var keys []codec.Value
		var names []string
		for i := range 600 {
			for kind := range 3 {
				k, name := mkey(kind, i)
				keys = append(keys, k)
				names = append(names, name)
			}
		}
		r := one(t, s, 0, call().MapGetByKeys("m", codec.ReturnKeyValue, keys))
		if r.Code == codec.NotFound && len(model) == 0 {
			return
		}
		if r.Code != codec.OK {
			t.Fatalf("step %d: read code %d", step, r.Code)
		}
		got := map[string]int64{}
		kv := r.Values[0].List
		for i := 0; i < len(kv); i += 2 {
			j := slices.IndexFunc(keys, func(k codec.Value) bool { return k.Equal(kv[i]) })
			if j < 0 {
				t.Fatalf("step %d: read an unknown key %+v", step, kv[i])
			}
			got[names[j]] = kv[i+1].Int
		}
		if len(got) != len(model) {
			t.Fatalf("step %d: %d items read, model %d", step, len(got), len(model))
		}
		for name, v := range model {
			if got[name] != v {
				t.Fatalf("step %d: %s = %d, model %d", step, name, got[name], v)
			}
		}
		if r := one(t, s, 0, call().MapSize("m")); r.Values[0].Int != int64(len(model)) {
			t.Fatalf("step %d: size %d, model %d", step, r.Values[0].Int, len(model))
		}
		if msg := indexFault(s, key(1), "m"); msg != "" {
			t.Fatalf("step %d: %s", step, msg)
		}
	}
	for step := range 400 {
		phase := step / 50 % 2 // grow, then shrink
		switch op := rng.Intn(10); {
		case op < 5-2*phase || op == 9 && phase == 0:
			var kv []codec.Value
			add := map[string]int64{}
			for range 1 + rng.Intn(40) {
				k, name := randomKey()
				v := rng.Int63n(1000)
				kv = append(kv, k, codec.Int(v))
				add[name] = v
			}
			flags := uint32(codec.MapWriteDefault)
			switch rng.Intn(4) {
			case 0:
				flags = codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial
			case 1:
				flags = codec.MapWriteUpdateOnly | codec.MapWriteNoFail | codec.MapWritePartial
			}
			one(t, s, 0, call().MapPut("m", flags, kv))
			empty := len(model) == 0
			for name, v := range add {
				_, had := model[name]
				if flags&codec.MapWriteCreateOnly != 0 && had || flags&codec.MapWriteUpdateOnly != 0 && !had && !empty {
					continue
				}
				model[name] = v
			}
		case op < 8:
			var ks []codec.Value
			for range 1 + rng.Intn(60) {
				k, name := randomKey()
				ks = append(ks, k)
				delete(model, name)
			}
			one(t, s, 0, call().MapRemoveByKeys("m", codec.ReturnNone, ks))
		case op == 8:
			// A call that changes the map, then fails: nothing changes.
			k, _ := randomKey()
			c := call().MapPut("m", codec.MapWriteDefault, []codec.Value{k, codec.Int(-1)}).
				MapRemoveByKeys("m", codec.ReturnNone, []codec.Value{k}).
				MapClear("m").
				MapPut("m", codec.MapWriteDefault, []codec.Value{k, codec.Int(-2)}).
				Op(codec.Op{Code: codec.OpMapGetByKeys, Bin: "m", Return: 9})
			var resp codec.Response
			s.Exec(t.Context(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*c}}, &resp)
			if resp.Code == codec.OK && len(resp.Results) == 1 && resp.Results[0].Code == codec.OK {
				t.Fatalf("step %d: the failing call succeeded", step)
			}
		default:
			if rng.Intn(4) == 0 {
				one(t, s, 0, call().MapClear("m"))
				clear(model)
			}
		}
		check(step)
	}
}

// indexFault checks the hash index of map bin bin of record k in database
// 0: present at idxMin items, and holding exactly the items of blob keys.
// It returns what is wrong, or "".
func indexFault(s *Store, k []byte, bin string) string {
	for i := range s.dbs[0].shards {
		sh := &s.dbs[0].shards[i]
		for _, part := range sh.parts {
			r := part[string(k)]
			if r == nil {
				continue
			}
			b := findBin(r.bins, bin)
			if b == nil || b.m == nil {
				return ""
			}
			m := b.m
			if m.n() >= idxMin && m.idx == nil {
				return fmt.Sprintf("a map of %d items without its index", m.n())
			}
			if m.idx == nil {
				return ""
			}
			blobs := 0
			for _, e := range m.keys.all(nil) {
				if e.k.Kind == codec.KindBytes {
					blobs++
					if m.idx[string(e.k.Bytes)] != e {
						return fmt.Sprintf("key %q not indexed", e.k.Bytes)
					}
				}
			}
			if len(m.idx) != blobs {
				return fmt.Sprintf("index of %d keys, map of %d blob keys", len(m.idx), blobs)
			}
			return ""
		}
	}
	return ""
}

// TestMapPutSameValue: a put of the value an item already has keeps it
// (mapPutItems skips the rewrite), and everything else is still written:
// -0 over 0 and 0 over -0 (the same value to compare, not the same bits),
// an integer over the float of the same number, a rolled-back call, keys
// of 0, 32 and 33 bytes (in and beyond entry.kbuf), and the rank order.
func TestMapPutSameValue(t *testing.T) {
	s := New(Options{SweepInterval: -1})
	defer s.Close()
	call := func() *codec.Call { return &codec.Call{Key: key(1)} }
	keys := []codec.Value{
		codec.Bytes([]byte{}),
		codec.Bytes([]byte(strings.Repeat("k", 32))),
		codec.Bytes([]byte(strings.Repeat("k", 33))),
		codec.Str("zset"), // a type tag's text, as a string key
	}
	get := func(k codec.Value) codec.Value {
		t.Helper()
		r := one(t, s, 0, call().MapGetByKeys("m", codec.ReturnValue, []codec.Value{k}))
		if r.Code != codec.OK || len(r.Values[0].List) != 1 {
			t.Fatalf("read %v: code %d, %v", k, r.Code, r.Values)
		}
		return r.Values[0].List[0]
	}
	put := func(k, v codec.Value) {
		t.Helper()
		if r := one(t, s, 0, call().MapPut("m", codec.MapWriteDefault, []codec.Value{k, v})); r.Code != codec.OK {
			t.Fatalf("put %v: code %d", k, r.Code)
		}
	}
	negZero := math.Copysign(0, -1)
	for _, k := range keys {
		for _, step := range []struct{ put, want codec.Value }{
			{codec.Float(0), codec.Float(0)},
			{codec.Float(0), codec.Float(0)},
			{codec.Float(negZero), codec.Float(negZero)},
			{codec.Float(negZero), codec.Float(negZero)},
			{codec.Float(0), codec.Float(0)},
			{codec.Int(0), codec.Int(0)},
			{codec.Int(0), codec.Int(0)},
			{codec.Bytes([]byte("v")), codec.Bytes([]byte("v"))},
			{codec.Bytes([]byte("v")), codec.Bytes([]byte("v"))},
			{codec.Str("v"), codec.Str("v")},
			{codec.Float(1), codec.Float(1)},
		} {
			put(k, step.put)
			got := get(k)
			if got.Kind != step.want.Kind || math.Float64bits(got.Float) != math.Float64bits(step.want.Float) ||
				got.Int != step.want.Int || string(got.Bytes) != string(step.want.Bytes) {
				t.Fatalf("key %v: put %v, read %v", k, step.put, got)
			}
		}
		// The same value, then a failing op: the call is rolled back
		// and the value stays.
		var resp codec.Response
		c := call().MapPut("m", codec.MapWriteDefault, []codec.Value{k, codec.Float(1)}).
			MapPut("m", codec.MapWriteCreateOnly, []codec.Value{k, codec.Float(2)})
		s.Exec(t.Context(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{*c}}, &resp)
		if resp.Results[0].Code != codec.ElementExists {
			t.Fatalf("key %v: create-only over an item: code %d", k, resp.Results[0].Code)
		}
		if got := get(k); got.Kind != codec.KindFloat || got.Float != 1 {
			t.Fatalf("key %v: after a failed call, %v", k, got)
		}
	}
	// Rank order with the value tree built, through puts of the same and
	// of other values.
	one(t, s, 0, call().MapGetByRank("m", codec.ReturnKey, 0, -1))
	for i, k := range keys {
		put(k, codec.Float(float64(len(keys)-i)))
		put(k, codec.Float(float64(len(keys)-i)))
	}
	r := one(t, s, 0, call().MapGetByRank("m", codec.ReturnKey, 0, -1))
	got := r.Values[0].List
	if len(got) != len(keys) {
		t.Fatalf("rank read: %v", got)
	}
	for i := range keys {
		if compare(&got[i], &keys[len(keys)-1-i]) != 0 {
			t.Fatalf("rank %d: %v, want %v", i, got[i], keys[len(keys)-1-i])
		}
	}
}
