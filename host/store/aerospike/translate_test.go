package aerospike

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/respike/respike/guest-sdk/codec"
)

// dump renders a client operation (whose fields are unexported) through
// reflection, so tests can compare what a call translates to with what the
// client's own constructors build.
func dump(op *as.Operation) string {
	var sb strings.Builder
	dumpValue(&sb, reflect.ValueOf(op).Elem())
	return sb.String()
}

func dumpValue(sb *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Func:
		if v.IsNil() {
			sb.WriteString("nofunc")
		} else {
			sb.WriteString("func")
		}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			sb.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Interface {
			fmt.Fprintf(sb, "%s:", v.Elem().Type())
		}
		dumpValue(sb, v.Elem())
	case reflect.Struct:
		sb.WriteString("{")
		for i := 0; i < v.NumField(); i++ {
			fmt.Fprintf(sb, "%s=", v.Type().Field(i).Name)
			dumpValue(sb, v.Field(i))
			sb.WriteString(" ")
		}
		sb.WriteString("}")
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			fmt.Fprintf(sb, "%q", v.Bytes())
			return
		}
		sb.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			dumpValue(sb, v.Index(i))
			sb.WriteString(",")
		}
		sb.WriteString("]")
	case reflect.Map:
		keys := make([]string, 0, v.Len())
		vals := map[string]string{}
		for _, k := range v.MapKeys() {
			var ks, vs strings.Builder
			dumpValue(&ks, k)
			dumpValue(&vs, v.MapIndex(k))
			keys = append(keys, ks.String())
			vals[ks.String()] = vs.String()
		}
		sort.Strings(keys)
		sb.WriteString("map[")
		for _, k := range keys {
			fmt.Fprintf(sb, "%s:%s,", k, vals[k])
		}
		sb.WriteString("]")
	case reflect.String:
		fmt.Fprintf(sb, "%q", v.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(sb, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		fmt.Fprint(sb, v.Uint())
	case reflect.Float32, reflect.Float64:
		fmt.Fprint(sb, v.Float())
	case reflect.Bool:
		fmt.Fprint(sb, v.Bool())
	default:
		fmt.Fprintf(sb, "<%s>", v.Kind())
	}
}

func dumpOps(ops []*as.Operation) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = dump(op)
	}
	return out
}

func expBase64(t *testing.T, e *as.Expression) string {
	t.Helper()
	if e == nil {
		return ""
	}
	s, err := e.Base64()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bv(s string) codec.Value { return codec.Bytes([]byte(s)) }

func translateCall(t *testing.T, c *codec.Call) *plan {
	t.Helper()
	var p plan
	newTranslator().translate(c, &p, 0)
	return &p
}

func TestTranslateOps(t *testing.T) {
	tr := newTranslator()
	keyOrdered := tr.mapPolicy(codec.MapOrderKey)
	kvOrdered := tr.mapPolicy(codec.MapOrderKeyValue)
	nofail := tr.mapPolicy(codec.MapOrderKey | codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial)
	for _, c := range []struct {
		name  string
		op    codec.Op
		want  []*as.Operation
		slots []slot
	}{
		{"get", codec.Op{Code: codec.OpGet, Bin: "v"},
			[]*as.Operation{as.GetBinOp("v")},
			[]slot{{bin: "v", dec: decValue, entry: true, resp: true}}},
		{"get all", codec.Op{Code: codec.OpGet},
			[]*as.Operation{as.GetOp()},
			[]slot{{dec: decValue}}},
		{"header", codec.Op{Code: codec.OpGetHeader},
			[]*as.Operation{as.GetHeaderOp()},
			[]slot{{entry: true}}},
		{"put blob", codec.Op{Code: codec.OpPut, Bin: "v", Value: bv("x")},
			[]*as.Operation{as.PutOp(as.NewBin("v", []byte("x")))},
			[]slot{{bin: "v", entry: true}}},
		{"put string particle", codec.Op{Code: codec.OpPut, Bin: "t", Value: codec.Str("hash")},
			[]*as.Operation{as.PutOp(as.NewBin("t", "hash"))},
			[]slot{{bin: "t", entry: true}}},
		{"put int", codec.Op{Code: codec.OpPut, Bin: "v", Value: codec.Int(7)},
			[]*as.Operation{as.PutOp(&as.Bin{Name: "v", Value: as.LongValue(7)})},
			[]slot{{bin: "v", entry: true}}},
		{"put nil deletes the bin", codec.Op{Code: codec.OpPut, Bin: "v"},
			[]*as.Operation{as.PutOp(as.NewBin("v", nil))},
			[]slot{{bin: "v", entry: true}}},
		{"put map: delete bin, put items key ordered", codec.Op{Code: codec.OpPut, Bin: "v", Value: codec.Map(bv("a"), codec.Int(1))},
			[]*as.Operation{as.PutOp(as.NewBin("v", nil)), as.MapPutItemsOp(keyOrdered, "v", map[any]any{blobKey("a"): int64(1)})},
			[]slot{{bin: "v", entry: true}, {bin: "v", op: -1, entry: true, resp: true}}},
		{"add", codec.Op{Code: codec.OpAdd, Bin: "n", Value: codec.Int(-3)},
			[]*as.Operation{as.AddOp(&as.Bin{Name: "n", Value: as.LongValue(-3)})},
			[]slot{{bin: "n", entry: true}}},
		{"append", codec.Op{Code: codec.OpAppend, Bin: "v", Value: bv("z")},
			[]*as.Operation{as.AppendOp(as.NewBin("v", []byte("z")))},
			[]slot{{bin: "v", entry: true}}},
		{"prepend", codec.Op{Code: codec.OpPrepend, Bin: "v", Value: bv("z")},
			[]*as.Operation{as.PrependOp(as.NewBin("v", []byte("z")))},
			[]slot{{bin: "v", entry: true}}},
		{"delete", codec.Op{Code: codec.OpDelete},
			[]*as.Operation{as.DeleteOp()},
			[]slot{{entry: true}}},
		{"touch answers nothing", codec.Op{Code: codec.OpTouch},
			[]*as.Operation{as.TouchOp()},
			[]slot{{}}},
		{"map put one", codec.Op{Code: codec.OpMapPut, Bin: "v", Flags: codec.MapOrderKey, Values: []codec.Value{bv("f"), bv("1")}},
			[]*as.Operation{as.MapPutOp(keyOrdered, "v", []byte("f"), []byte("1"))},
			[]slot{{bin: "v", dec: decValue, entry: true, resp: true}}},
		{"map put several, repeated key keeps the last", codec.Op{Code: codec.OpMapPut, Bin: "v", Flags: codec.MapOrderKey | codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial,
			Values: []codec.Value{bv("a"), codec.Nil, bv("b"), codec.Nil, bv("a"), codec.Int(2)}},
			[]*as.Operation{as.MapPutItemsOp(nofail, "v", map[any]any{blobKey("a"): int64(2), blobKey("b"): nil})},
			[]slot{{bin: "v", dec: decValue, entry: true, resp: true}}},
		{"map put nothing answers the size", codec.Op{Code: codec.OpMapPut, Bin: "v"},
			[]*as.Operation{as.MapSizeOp("v")},
			[]slot{{bin: "v", dec: decSize, entry: true, resp: true}}},
		{"zset increment", codec.Op{Code: codec.OpMapIncrement, Bin: "v", Flags: codec.MapOrderKeyValue, Value: bv("m"), Value2: codec.Float(1.5)},
			[]*as.Operation{as.MapIncrementOp(kvOrdered, "v", []byte("m"), 1.5)},
			[]slot{{bin: "v", dec: decValue, entry: true, resp: true}}},
		{"map size", codec.Op{Code: codec.OpMapSize, Bin: "v"},
			[]*as.Operation{as.MapSizeOp("v")},
			[]slot{{bin: "v", dec: decSize, entry: true, resp: true}}},
		{"map get by keys", codec.Op{Code: codec.OpMapGetByKeys, Bin: "v", Return: codec.ReturnValue, Values: []codec.Value{bv("a")}},
			[]*as.Operation{as.MapGetByKeyListOp("v", []any{[]byte("a")}, as.MapReturnType.VALUE)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnValue, entry: true, resp: true}}},
		{"map remove by keys", codec.Op{Code: codec.OpMapRemoveByKeys, Bin: "v", Return: codec.ReturnCount, Values: []codec.Value{bv("a"), bv("b")}},
			[]*as.Operation{as.MapRemoveByKeyListOp("v", []any{[]byte("a"), []byte("b")}, as.MapReturnType.COUNT)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnCount, entry: true, resp: true}}},
		{"map get by index to the end", codec.Op{Code: codec.OpMapGetByIndex, Bin: "v", Return: codec.ReturnKey, Index: -2, Count: -1},
			[]*as.Operation{as.MapGetByIndexRangeOp("v", -2, as.MapReturnType.KEY)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map get by index, count", codec.Op{Code: codec.OpMapGetByIndex, Bin: "v", Return: codec.ReturnKeyValue, Index: 1, Count: 2},
			[]*as.Operation{as.MapGetByIndexRangeCountOp("v", 1, 2, as.MapReturnType.KEY_VALUE)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKeyValue, entry: true, resp: true}}},
		{"map remove by index", codec.Op{Code: codec.OpMapRemoveByIndex, Bin: "v", Return: codec.ReturnExists, Index: 0, Count: 1},
			[]*as.Operation{as.MapRemoveByIndexRangeCountOp("v", 0, 1, as.MapReturnType.EXISTS)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnExists, entry: true, resp: true}}},
		{"map get by rank", codec.Op{Code: codec.OpMapGetByRank, Bin: "v", Return: codec.ReturnKey, Index: -3, Count: 3},
			[]*as.Operation{as.MapGetByRankRangeCountOp("v", -3, 3, as.MapReturnType.KEY)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKey, entry: true, resp: true}}},
		// Aerospike answers value ranges in key order: respike asks for the
		// pairs and sorts them by rank.
		{"map get by value range, open end", codec.Op{Code: codec.OpMapGetByValues, Bin: "v", Return: codec.ReturnKey, Value: codec.Float(2)},
			[]*as.Operation{as.MapGetByValueRangeOp("v", 2.0, nil, as.MapReturnType.KEY_VALUE)},
			[]slot{{bin: "v", dec: decValueRange, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map count by value range", codec.Op{Code: codec.OpMapGetByValues, Bin: "v", Return: codec.ReturnCount, Value: codec.Float(2), Value2: codec.Float(3)},
			[]*as.Operation{as.MapGetByValueRangeOp("v", 2.0, 3.0, as.MapReturnType.COUNT)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnCount, entry: true, resp: true}}},
		{"map get by key range, open start", codec.Op{Code: codec.OpMapGetByKeyRange, Bin: "v", Return: codec.ReturnNone, Value2: bv("c")},
			[]*as.Operation{as.MapGetByKeyRangeOp("v", nil, []byte("c"), as.MapReturnType.NONE)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnNone, entry: true, resp: true}}},
		{"map clear", codec.Op{Code: codec.OpMapClear, Bin: "v"},
			[]*as.Operation{as.MapClearOp("v")},
			[]slot{{bin: "v", entry: true, resp: true}}},
		{"map remove by rank, count", codec.Op{Code: codec.OpMapRemoveByRank, Bin: "v", Return: codec.ReturnKey, Index: 0, Count: 2},
			[]*as.Operation{as.MapRemoveByRankRangeCountOp("v", 0, 2, as.MapReturnType.KEY)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map remove by rank to the end", codec.Op{Code: codec.OpMapRemoveByRank, Bin: "v", Return: codec.ReturnCount, Index: -2, Count: -1},
			[]*as.Operation{as.MapRemoveByRankRangeOp("v", -2, as.MapReturnType.COUNT)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnCount, entry: true, resp: true}}},
		{"map keep the top ranks", codec.Op{Code: codec.OpMapRemoveByRank, Bin: "v", Return: codec.ReturnCount | codec.ReturnInverted, Index: -3, Count: 3},
			[]*as.Operation{as.MapRemoveByRankRangeCountOp("v", -3, 3, as.MapReturnType.COUNT|as.MapReturnType.INVERTED)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnCount, entry: true, resp: true}}},
		// An inverted rank range comes back in key order unless it is one
		// run of ranks: respike asks for the pairs and sorts them.
		{"map get by rank inverted", codec.Op{Code: codec.OpMapGetByRank, Bin: "v", Return: codec.ReturnValue | codec.ReturnInverted, Index: 1, Count: 2},
			[]*as.Operation{as.MapGetByRankRangeCountOp("v", 1, 2, as.MapReturnType.KEY_VALUE|as.MapReturnType.INVERTED)},
			[]slot{{bin: "v", dec: decValueRange, ret: codec.ReturnValue, entry: true, resp: true}}},
		{"map exists inverted is a count", codec.Op{Code: codec.OpMapGetByRank, Bin: "v", Return: codec.ReturnExists | codec.ReturnInverted, Index: 1, Count: 2},
			[]*as.Operation{as.MapGetByRankRangeCountOp("v", 1, 2, as.MapReturnType.COUNT|as.MapReturnType.INVERTED)},
			[]slot{{bin: "v", dec: decExistsCount, ret: codec.ReturnExists, entry: true, resp: true}}},
		{"map remove by value range", codec.Op{Code: codec.OpMapRemoveByValueRange, Bin: "v", Return: codec.ReturnKeyValue, Value: codec.Float(1), Value2: codec.Float(2)},
			[]*as.Operation{as.MapRemoveByValueRangeOp("v", 1.0, 2.0, as.MapReturnType.KEY_VALUE)},
			[]slot{{bin: "v", dec: decValueRange, ret: codec.ReturnKeyValue, entry: true, resp: true}}},
		{"map remove by value range inverted", codec.Op{Code: codec.OpMapRemoveByValueRange, Bin: "v", Return: codec.ReturnKey | codec.ReturnInverted, Value2: codec.Float(2)},
			[]*as.Operation{as.MapRemoveByValueRangeOp("v", nil, 2.0, as.MapReturnType.KEY_VALUE|as.MapReturnType.INVERTED)},
			[]slot{{bin: "v", dec: decValueRange, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map remove by key range", codec.Op{Code: codec.OpMapRemoveByKeyRange, Bin: "v", Return: codec.ReturnNone, Value: bv("a"), Value2: bv("c")},
			[]*as.Operation{as.MapRemoveByKeyRangeOp("v", []byte("a"), []byte("c"), as.MapReturnType.NONE)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnNone, entry: true, resp: true}}},
		{"map get by key range inverted", codec.Op{Code: codec.OpMapGetByKeyRange, Bin: "v", Return: codec.ReturnKey | codec.ReturnInverted, Value: bv("a")},
			[]*as.Operation{as.MapGetByKeyRangeOp("v", []byte("a"), nil, as.MapReturnType.KEY|as.MapReturnType.INVERTED)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map remove by keys inverted", codec.Op{Code: codec.OpMapRemoveByKeys, Bin: "v", Return: codec.ReturnCount | codec.ReturnInverted, Values: []codec.Value{bv("a")}},
			[]*as.Operation{as.MapRemoveByKeyListOp("v", []any{[]byte("a")}, as.MapReturnType.COUNT|as.MapReturnType.INVERTED)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnCount, entry: true, resp: true}}},
		// Sorted sets: relative rank and index pages, ranks.
		{"map get by value relative rank", codec.Op{Code: codec.OpMapGetByValueRelRank, Bin: "v", Return: codec.ReturnKey, Value: codec.Float(2), Index: 3, Count: 10},
			[]*as.Operation{as.MapGetByValueRelativeRankRangeCountOp("v", 2.0, 3, 10, as.MapReturnType.KEY_VALUE)},
			[]slot{{bin: "v", dec: decValueRange, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map get by value relative rank to the end", codec.Op{Code: codec.OpMapGetByValueRelRank, Bin: "v", Return: codec.ReturnCount, Value: codec.Float(2), Index: -1, Count: -1},
			[]*as.Operation{as.MapGetByValueRelativeRankRangeOp("v", 2.0, -1, as.MapReturnType.COUNT)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnCount, entry: true, resp: true}}},
		{"map get by key relative index", codec.Op{Code: codec.OpMapGetByKeyRelIndex, Bin: "v", Return: codec.ReturnKeyValue, Value: bv("b"), Index: -2, Count: 5},
			[]*as.Operation{as.MapGetByKeyRelativeIndexRangeCountOp("v", []byte("b"), -2, 5, as.MapReturnType.KEY_VALUE)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKeyValue, entry: true, resp: true}}},
		{"map get by key relative index to the end", codec.Op{Code: codec.OpMapGetByKeyRelIndex, Bin: "v", Return: codec.ReturnKey, Value: bv(""), Count: -1},
			[]*as.Operation{as.MapGetByKeyRelativeIndexRangeOp("v", []byte(""), 0, as.MapReturnType.KEY)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKey, entry: true, resp: true}}},
		// Aerospike CE 8.1.2 refuses a rank return on a key list: the
		// single-key op answers it.
		{"map rank of a key", codec.Op{Code: codec.OpMapGetByKeys, Bin: "v", Return: codec.ReturnRank, Values: []codec.Value{bv("a")}},
			[]*as.Operation{as.MapGetByKeyOp("v", []byte("a"), as.MapReturnType.RANK)},
			[]slot{{bin: "v", dec: decRankOne, ret: codec.ReturnRank, entry: true, resp: true}}},
		{"map reverse rank of a key", codec.Op{Code: codec.OpMapGetByKeys, Bin: "v", Return: codec.ReturnReverseRank, Values: []codec.Value{bv("a")}},
			[]*as.Operation{as.MapGetByKeyOp("v", []byte("a"), as.MapReturnType.REVERSE_RANK)},
			[]slot{{bin: "v", dec: decRankOne, ret: codec.ReturnReverseRank, entry: true, resp: true}}},
		{"map remove of a key answering its rank", codec.Op{Code: codec.OpMapRemoveByKeys, Bin: "v", Return: codec.ReturnRank, Values: []codec.Value{bv("a")}},
			[]*as.Operation{as.MapRemoveByKeyOp("v", []byte("a"), as.MapReturnType.RANK)},
			[]slot{{bin: "v", dec: decRankOne, ret: codec.ReturnRank, entry: true, resp: true}}},
		// Aerospike CE 8.1.2 crashes on an inverted get by an empty key list.
		{"map get by no keys inverted is every item", codec.Op{Code: codec.OpMapGetByKeys, Bin: "v", Return: codec.ReturnKey | codec.ReturnInverted},
			[]*as.Operation{as.MapGetByIndexRangeOp("v", 0, as.MapReturnType.KEY)},
			[]slot{{bin: "v", dec: decMapRead, ret: codec.ReturnKey, entry: true, resp: true}}},
		{"map remove by no keys inverted, exists", codec.Op{Code: codec.OpMapRemoveByKeys, Bin: "v", Return: codec.ReturnExists | codec.ReturnInverted},
			[]*as.Operation{as.MapRemoveByIndexRangeOp("v", 0, as.MapReturnType.COUNT)},
			[]slot{{bin: "v", dec: decExistsCount, ret: codec.ReturnExists, entry: true, resp: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := translateCall(t, &codec.Call{Key: []byte("k"), Ops: []codec.Op{c.op}})
			if p.static != codec.OK {
				t.Fatalf("static %d: %s", p.static, p.staticMsg)
			}
			got, want := dumpOps(p.ops), dumpOps(c.want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ops\n got %v\nwant %v", got, want)
			}
			if !reflect.DeepEqual(p.slots, c.slots) {
				t.Errorf("slots\n got %+v\nwant %+v", p.slots, c.slots)
			}
		})
	}
}

func TestMapPolicyOrder(t *testing.T) {
	for _, c := range []struct {
		flags uint32
		order as.MapOrderTypes
		write int
	}{
		{0, as.MapOrder.KEY_ORDERED, 0},
		{codec.MapOrderKey, as.MapOrder.KEY_ORDERED, 0},
		{codec.MapOrderKeyValue | codec.MapWriteUpdateOnly, as.MapOrder.KEY_VALUE_ORDERED, as.MapWriteFlagsUpdateOnly},
		{codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial,
			as.MapOrder.KEY_ORDERED, as.MapWriteFlagsCreateOnly | as.MapWriteFlagsNoFail | as.MapWriteFlagsPartial},
	} {
		// The maps respike creates carry a persisted index, except on a
		// cluster older than Aerospike 7.0.
		if got, want := newTranslator().mapPolicy(c.flags), as.NewMapPolicyWithFlagsAndPersistedIndex(c.order, c.write); !reflect.DeepEqual(got, want) {
			t.Errorf("flags %#x: policy %+v, want %+v", c.flags, got, want)
		}
		if got, want := newTranslatorIndexed(false).mapPolicy(c.flags), as.NewMapPolicyWithFlags(c.order, c.write); !reflect.DeepEqual(got, want) {
			t.Errorf("flags %#x without index: policy %+v, want %+v", c.flags, got, want)
		}
	}
}

// TestMapIndexRequested checks that every op that can create a map asks
// Aerospike for a persisted index: the writes of SADD, HSET, ZADD and
// ZINCRBY, and a whole map written at once (COPY, RESTORE, the stores of
// SUNIONSTORE and ZUNIONSTORE).
func TestMapIndexRequested(t *testing.T) {
	kv := as.MapOrder.KEY_VALUE_ORDERED
	k := as.MapOrder.KEY_ORDERED
	nofail := as.MapWriteFlagsCreateOnly | as.MapWriteFlagsNoFail | as.MapWriteFlagsPartial
	for _, c := range []struct {
		name string
		op   codec.Op
		want *as.Operation // the op that creates the map
		at   int           // its position among the call's ops
	}{
		{"SADD", codec.Op{Code: codec.OpMapPut, Bin: "v", Flags: codec.MapOrderKey | codec.MapWriteCreateOnly | codec.MapWriteNoFail | codec.MapWritePartial, Values: []codec.Value{bv("m"), codec.Int(1)}},
			as.MapPutOp(as.NewMapPolicyWithFlagsAndPersistedIndex(k, nofail), "v", []byte("m"), int64(1)), 0},
		{"HSET of two fields", codec.Op{Code: codec.OpMapPut, Bin: "v", Flags: codec.MapOrderKey, Values: []codec.Value{bv("a"), bv("1"), bv("b"), codec.Int(2)}},
			as.MapPutItemsOp(as.NewMapPolicyWithFlagsAndPersistedIndex(k, 0), "v", map[any]any{blobKey("a"): []byte("1"), blobKey("b"): int64(2)}), 0},
		{"ZADD", codec.Op{Code: codec.OpMapPut, Bin: "v", Flags: codec.MapOrderKeyValue, Values: []codec.Value{bv("m"), codec.Float(2)}},
			as.MapPutOp(as.NewMapPolicyWithFlagsAndPersistedIndex(kv, 0), "v", []byte("m"), 2.0), 0},
		{"ZINCRBY", codec.Op{Code: codec.OpMapIncrement, Bin: "v", Flags: codec.MapOrderKeyValue, Value: bv("m"), Value2: codec.Float(1.5)},
			as.MapIncrementOp(as.NewMapPolicyWithFlagsAndPersistedIndex(kv, 0), "v", []byte("m"), 1.5), 0},
		{"whole map", codec.Op{Code: codec.OpPut, Bin: "v", Flags: codec.MapOrderKeyValue, Value: codec.Map(bv("m"), codec.Float(1))},
			as.MapPutItemsOp(as.NewMapPolicyWithFlagsAndPersistedIndex(kv, 0), "v", map[any]any{blobKey("m"): 1.0}), 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := translateCall(t, &codec.Call{Key: []byte("k"), Ops: []codec.Op{c.op}})
			if got, want := dumpOps(p.ops), dump(c.want); len(got) <= c.at || got[c.at] != want {
				t.Fatalf("ops %v, want at %d %v", got, c.at, want)
			}
		})
	}
}

func TestTranslatePolicy(t *testing.T) {
	for _, c := range []struct {
		name   string
		pol    codec.Policy
		exists as.RecordExistsAction
		expire uint32
		gen    uint32
		first  *as.Operation // a leading op respike adds, or nil
		add    bool          // an add after the put: not a plain replacing write
	}{
		{"defaults keep the TTL", codec.Policy{}, as.UPDATE, as.TTLDontUpdate, 0, nil, false},
		{"never", codec.Policy{TTL: codec.TTLNever}, as.UPDATE, as.TTLDontExpire, 0, nil, false},
		{"seconds", codec.Policy{TTL: codec.TTLSeconds, Seconds: 100}, as.UPDATE, 100, 0, nil, false},
		{"exact, rounded up", codec.Policy{TTL: codec.TTLAt, Seconds: 100_001}, as.UPDATE, 101, 0, nil, false},
		{"exact, one ms", codec.Policy{TTL: codec.TTLAt, Seconds: 1}, as.UPDATE, 1, 0, nil, false},
		{"exact, beyond ten years", codec.Policy{TTL: codec.TTLAt, Seconds: 11 * 365 * 86400 * 1000}, as.UPDATE, as.TTLDontExpire, 0, nil, false},
		{"update only", codec.Policy{Exists: codec.ExistsUpdateOnly}, as.UPDATE_ONLY, as.TTLDontUpdate, 0, nil, false},
		{"create only", codec.Policy{Exists: codec.ExistsCreateOnly}, as.CREATE_ONLY, as.TTLDontUpdate, 0, nil, false},
		{"plain puts replace", codec.Policy{Exists: codec.ExistsReplace}, as.REPLACE, as.TTLDontUpdate, 0, nil, false},
		{"plain puts replace only", codec.Policy{Exists: codec.ExistsReplaceOnly}, as.REPLACE_ONLY, as.TTLDontUpdate, 0, nil, false},
		{"replace with a modify op deletes every bin first", codec.Policy{Exists: codec.ExistsReplace}, as.UPDATE, as.TTLDontUpdate, 0, as.DeleteOp(), true},
		{"replace only with a modify op", codec.Policy{Exists: codec.ExistsReplaceOnly}, as.UPDATE_ONLY, as.TTLDontUpdate, 0, as.DeleteOp(), true},
		{"generation", codec.Policy{Generation: 9}, as.UPDATE, as.TTLDontUpdate, 9, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			call := &codec.Call{Key: []byte("k"), Policy: c.pol, Ops: []codec.Op{{Code: codec.OpPut, Bin: "v", Value: codec.Int(1)}}}
			n := 1
			if c.add {
				call.Ops = append(call.Ops, codec.Op{Code: codec.OpAdd, Bin: "n", Value: codec.Int(1)})
				n++
			}
			p := translateCall(t, call)
			if p.static != codec.OK {
				t.Fatalf("static %d: %s", p.static, p.staticMsg)
			}
			if p.exists != c.exists || p.expire != c.expire || p.gen != c.gen {
				t.Errorf("exists %v expire %d gen %d, want %v %d %d", p.exists, p.expire, p.gen, c.exists, c.expire, c.gen)
			}
			if c.first != nil {
				n++
				if dump(p.ops[0]) != dump(c.first) || p.slots[0].op != -1 {
					t.Errorf("first op %s (slot %+v), want %s", dump(p.ops[0]), p.slots[0], dump(c.first))
				}
			}
			if c.pol.TTL != codec.TTLKeep {
				n++ // the write or delete of the exact expiry bin
				if last := p.slots[len(p.slots)-1]; last.bin != codec.BinExpire || last.op != -1 {
					t.Errorf("last slot %+v, want the write of %s", last, codec.BinExpire)
				}
			}
			if len(p.ops) != n {
				t.Errorf("%d ops, want %d", len(p.ops), n)
			}
			x := &execCtx{s: &Store{cfg: Config{SocketTimeout: 1, TotalTimeout: 1}}, timeout: 1}
			wp := x.writePolicy(p, p.filter, p.gen, false)
			if wp.RecordExistsAction != c.exists || wp.Expiration != c.expire || !wp.SendKey || !wp.RespondPerEachOp || wp.MaxRetries != 0 {
				t.Errorf("write policy %+v", wp)
			}
			if c.gen != 0 && (wp.GenerationPolicy != as.EXPECT_GEN_EQUAL || wp.Generation != c.gen) {
				t.Errorf("generation policy %v %d", wp.GenerationPolicy, wp.Generation)
			}
			if c.gen == 0 && wp.GenerationPolicy != as.NONE {
				t.Errorf("generation policy %v without a generation", wp.GenerationPolicy)
			}
		})
	}
}

func TestTranslateStatic(t *testing.T) {
	for _, c := range []struct {
		name string
		call codec.Call
		want codec.Code
	}{
		{"no ops", codec.Call{}, codec.InvalidOperation},
		{"unknown op", codec.Call{Ops: []codec.Op{{Code: 200, Bin: "v"}}}, codec.InvalidOperation},
		{"odd map put", codec.Call{Ops: []codec.Op{{Code: codec.OpMapPut, Bin: "v", Values: []codec.Value{bv("a")}}}}, codec.InvalidOperation},
		{"inverted map size", codec.Call{Ops: []codec.Op{{Code: codec.OpMapSize, Bin: "v", Return: codec.ReturnInverted}}}, codec.InvalidOperation},
		{"unknown map return type", codec.Call{Ops: []codec.Op{{Code: codec.OpMapRemoveByRank, Bin: "v", Return: 9 | codec.ReturnInverted}}}, codec.InvalidOperation},
		{"add of bytes", codec.Call{Ops: []codec.Op{{Code: codec.OpAdd, Bin: "v", Value: bv("1")}}}, codec.InvalidOperation},
		{"TTL 0", codec.Call{Policy: codec.Policy{TTL: codec.TTLSeconds}, Ops: []codec.Op{{Code: codec.OpTouch}}}, codec.InvalidOperation},
		{"TTL over 10 years", codec.Call{Policy: codec.Policy{TTL: codec.TTLSeconds, Seconds: maxTTL + 1}, Ops: []codec.Op{{Code: codec.OpTouch}}}, codec.ParameterError},
		{"read of all bins with another read", codec.Call{Ops: []codec.Op{{Code: codec.OpGet}, {Code: codec.OpGet, Bin: "v"}}}, codec.InvalidOperation},
		{"read of all bins with a map op", codec.Call{Ops: []codec.Op{{Code: codec.OpMapSize, Bin: "v"}, {Code: codec.OpGet}}}, codec.InvalidOperation},
		{"overflow decided by the call's own values", codec.Call{Ops: []codec.Op{
			{Code: codec.OpPut, Bin: "n", Value: codec.Int(math.MaxInt64)},
			{Code: codec.OpAdd, Bin: "n", Value: codec.Int(1)}}}, codec.Overflow},
		{"overflow after a delete counts from zero", codec.Call{Ops: []codec.Op{
			{Code: codec.OpDelete},
			{Code: codec.OpAdd, Bin: "n", Value: codec.Int(math.MaxInt64)},
			{Code: codec.OpAdd, Bin: "n", Value: codec.Int(1)}}}, codec.Overflow},
		{"map increment after a put of the key", codec.Call{Ops: []codec.Op{
			{Code: codec.OpMapPut, Bin: "v", Values: []codec.Value{bv("f"), codec.Int(math.MinInt64)}},
			{Code: codec.OpMapIncrement, Bin: "v", Value: bv("f"), Value2: codec.Int(-1)}}}, codec.Overflow},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := translateCall(t, &c.call)
			if p.static != c.want {
				t.Errorf("static %d (%s), want %d", p.static, p.staticMsg, c.want)
			}
		})
	}
	// Reads of all bins beside plain writes are fine.
	p := translateCall(t, &codec.Call{Ops: []codec.Op{{Code: codec.OpGet}, {Code: codec.OpDelete}}})
	if p.static != codec.OK || p.getAll != 0 {
		t.Errorf("read all + delete: static %d getAll %d", p.static, p.getAll)
	}
}

func TestHeaderDroppedBesideOtherOps(t *testing.T) {
	p := translateCall(t, &codec.Call{Ops: []codec.Op{{Code: codec.OpGetHeader}, {Code: codec.OpGet, Bin: "v"}}})
	if got := dumpOps(p.ops); !reflect.DeepEqual(got, dumpOps([]*as.Operation{as.GetBinOp("v")})) {
		t.Errorf("ops %v", got)
	}
	if p.slots[0].op != 1 {
		t.Errorf("the read answers op %d", p.slots[0].op)
	}
}

func TestGuardExpression(t *testing.T) {
	p := translateCall(t, &codec.Call{Policy: codec.Policy{Guard: "hash"}, Ops: []codec.Op{{Code: codec.OpGet, Bin: "v"}}})
	want := as.ExpOr(
		as.ExpEq(as.ExpStringBin("t"), as.ExpStringVal("hash")),
		as.ExpNot(as.ExpBinExists("t")),
	)
	if got := expBase64(t, p.filter); got != expBase64(t, want) {
		t.Errorf("guard %s, want %s", got, expBase64(t, want))
	}
	if p.bound != nil {
		t.Error("a read has no bound")
	}
	// The packed form is shared between calls.
	q := translateCall(t, &codec.Call{Policy: codec.Policy{Guard: "hash"}, Ops: []codec.Op{{Code: codec.OpGet, Bin: "v"}}})
	tr := newTranslator()
	if tr.guards.get("hash") != tr.guards.get("hash") {
		t.Error("guard not cached")
	}
	_ = q
}

func TestAddBoundExpression(t *testing.T) {
	p := translateCall(t, &codec.Call{Policy: codec.Policy{Guard: "string"}, Ops: []codec.Op{{Code: codec.OpAdd, Bin: "v", Value: codec.Int(5)}}})
	bound := as.ExpCond(
		as.ExpEq(as.ExpBinType("v"), as.ExpIntVal(1)), as.ExpLessEq(as.ExpIntBin("v"), as.ExpIntVal(math.MaxInt64-5)),
		as.ExpBinExists("v"), as.ExpBoolVal(true),
		as.ExpBoolVal(true),
	)
	if p.bound == nil {
		t.Error("no bound")
	}
	want := as.ExpAnd(guardExp("string"), bound)
	if got := expBase64(t, p.filter); got != expBase64(t, want) {
		t.Errorf("filter %s\nwant %s", got, expBase64(t, want))
	}

	// A negative delta bounds from below; a map increment reads the key.
	p = translateCall(t, &codec.Call{Ops: []codec.Op{{Code: codec.OpMapIncrement, Bin: "v", Value: bv("f"), Value2: codec.Int(-2)}}})
	key := as.ExpBlobVal([]byte("f"))
	mapBound := as.ExpCond(
		as.ExpEq(as.ExpBinType("v"), as.ExpIntVal(19)),
		as.ExpCond(
			as.ExpEq(as.ExpMapGetByKey(as.MapReturnType.COUNT, as.ExpTypeINT, key, as.ExpMapBin("v")), as.ExpIntVal(0)),
			as.ExpBoolVal(true),
			as.ExpGreaterEq(as.ExpMapGetByKey(as.MapReturnType.VALUE, as.ExpTypeINT, key, as.ExpMapBin("v")), as.ExpIntVal(math.MinInt64+2))),
		as.ExpBoolVal(true),
	)
	if got := expBase64(t, p.filter); got != expBase64(t, mapBound) {
		t.Errorf("map bound %s\nwant %s", got, expBase64(t, mapBound))
	}

	// Float adds, zero adds and adds on values the call set itself need no
	// bound.
	for _, ops := range [][]codec.Op{
		{{Code: codec.OpAdd, Bin: "v", Value: codec.Float(1e308)}},
		{{Code: codec.OpAdd, Bin: "v", Value: codec.Int(0)}},
		{{Code: codec.OpPut, Bin: "v", Value: codec.Int(1)}, {Code: codec.OpAdd, Bin: "v", Value: codec.Int(1)}},
		{{Code: codec.OpMapClear, Bin: "v"}, {Code: codec.OpMapIncrement, Bin: "v", Value: bv("f"), Value2: codec.Int(1)}},
	} {
		if p := translateCall(t, &codec.Call{Ops: ops}); p.filter != nil || p.static != codec.OK {
			t.Errorf("ops %v: filter %v static %d", ops, p.filter != nil, p.static)
		}
	}
}

func TestIntInterval(t *testing.T) {
	for _, c := range []struct {
		deltas []int64
		lo, hi int64
		empty  bool
	}{
		{[]int64{1}, math.MinInt64, math.MaxInt64 - 1, false},
		{[]int64{-1}, math.MinInt64 + 1, math.MaxInt64, false},
		{[]int64{math.MaxInt64}, math.MinInt64, 0, false},
		{[]int64{math.MinInt64}, 0, math.MaxInt64, false},
		{[]int64{5, -10}, math.MinInt64 + 5, math.MaxInt64 - 5, false},
		// Prefix sums beyond int64: only base values that come back in range.
		{[]int64{math.MaxInt64, math.MaxInt64}, math.MinInt64, math.MinInt64 + 1, false},
		{[]int64{math.MaxInt64, math.MinInt64, math.MaxInt64}, math.MinInt64 + 1, 0, false},
		{[]int64{math.MaxInt64, math.MaxInt64, math.MaxInt64}, 0, 0, true},
		{[]int64{math.MinInt64, math.MinInt64}, 0, 0, true},
		{[]int64{math.MinInt64, math.MaxInt64, -1}, 0, math.MaxInt64, false},
	} {
		lo, hi, empty := intInterval(c.deltas)
		if empty != c.empty || (!empty && (lo != c.lo || hi != c.hi)) {
			t.Errorf("%v: [%d, %d] empty %v, want [%d, %d] %v", c.deltas, lo, hi, empty, c.lo, c.hi, c.empty)
		}
		// The interval agrees with replaying the adds.
		tr := addTrack{ints: c.deltas}
		for _, base := range []int64{math.MinInt64, math.MinInt64 + 1, -1, 0, 1, math.MaxInt64 - 1, math.MaxInt64, c.lo, c.hi} {
			inside := !empty && base >= lo && base <= hi
			if over := tr.replay(codec.Int(base)); over == inside {
				t.Errorf("%v: base %d: replay overflow %v, interval says inside %v", c.deltas, base, over, inside)
			}
		}
	}
}

func TestDeleteIfEmptyOps(t *testing.T) {
	p := translateCall(t, &codec.Call{Policy: codec.Policy{DeleteIfEmpty: "v"},
		Ops: []codec.Op{{Code: codec.OpMapRemoveByKeys, Bin: "v", Return: codec.ReturnCount, Values: []codec.Value{bv("a")}}}})
	if len(p.ops) != 4 {
		t.Fatalf("%d ops", len(p.ops))
	}
	ops := deleteEmptyOps("v")
	for i, op := range ops {
		if dump(p.ops[1+i]) != dump(op) {
			t.Errorf("delete-if-empty op %d differs", i)
		}
	}
	if p.slots[1].bin != "t" || p.slots[2].bin != "x" || p.slots[3].bin != "v" || p.slots[1].op != -1 || p.slots[2].op != -1 || p.slots[3].op != -1 {
		t.Errorf("slots %+v", p.slots)
	}
	// Reads never delete.
	if p := translateCall(t, &codec.Call{Policy: codec.Policy{DeleteIfEmpty: "v"}, Ops: []codec.Op{{Code: codec.OpMapSize, Bin: "v"}}}); len(p.ops) != 1 {
		t.Errorf("read with DeleteIfEmpty: %d ops", len(p.ops))
	}
}

// clientBytes is how the client packs x inside a CDT argument: packed
// through a quoted-list expression, whose 3-byte header is dropped.
func clientBytes(t *testing.T, x any) []byte {
	t.Helper()
	s, err := as.ExpListValueVal(x).Base64()
	if err != nil {
		t.Fatal(err)
	}
	b, err2 := base64.StdEncoding.DecodeString(s)
	if err2 != nil || len(b) < 3 || b[0] != 0x92 || b[2] != 0x91 {
		t.Fatalf("unexpected expression % x", b)
	}
	return b[3:]
}

func TestPackValues(t *testing.T) {
	for _, c := range []struct {
		v    codec.Value
		want []byte
	}{
		{codec.Int(5), []byte{0x05}},
		{codec.Int(-1), []byte{0xff}},
		{codec.Float(1), []byte{0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0}},
		// Blobs and strings are msgpack strings whose first byte is the
		// particle type: 4 blob, 3 string.
		{bv("ab"), []byte{0xa3, 0x04, 'a', 'b'}},
		{bv(""), []byte{0xa1, 0x04}},
		{codec.Str("ab"), []byte{0xa3, 0x03, 'a', 'b'}},
		{codec.Bool(true), []byte{0xc3}},
		{codec.Nil, []byte{0xc0}},
		{codec.List(codec.Int(1), bv("x")), []byte{0x92, 0x01, 0xa2, 0x04, 'x'}},
		{codec.Map(bv("k"), codec.Float(0)), []byte{0x81, 0xa2, 0x04, 'k', 0xcb, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		if got := clientBytes(t, toClient(c.v)); string(got) != string(c.want) {
			t.Errorf("%+v: packed % x, want % x", c.v, got, c.want)
		}
		if m, _ := packValue(nil, c.v); m != len(c.want) {
			t.Errorf("%+v: measured %d, want %d", c.v, m, len(c.want))
		}
	}
	// Map keys for a multi-item put: a blob key packs as a blob.
	got := clientBytes(t, map[any]any{toClientKey(bv("k")): nil})
	if want := []byte{0x81, 0xa2, 0x04, 'k', 0xc0}; string(got) != string(want) {
		t.Errorf("blob map key packed % x, want % x", got, want)
	}
}

func TestFromClient(t *testing.T) {
	for _, c := range []struct {
		in   any
		want codec.Value
	}{
		{nil, codec.Nil},
		{7, codec.Int(7)},
		{int64(-7), codec.Int(-7)},
		{2.5, codec.Float(2.5)},
		{[]byte("x"), bv("x")},
		{"t", codec.Str("t")},
		{true, codec.Bool(true)},
		{[]any{1, []byte("a")}, codec.List(codec.Int(1), bv("a"))},
		// Blob map keys arrive as byte arrays; ordered maps as pairs in
		// server order.
		{[]as.MapPair{{Key: [2]byte{'b', 'b'}, Value: 1}, {Key: [1]byte{'a'}, Value: 2.5}},
			codec.Map(bv("bb"), codec.Int(1), bv("a"), codec.Float(2.5))},
		{[]as.MapPair{{Key: [0]byte{}, Value: nil}}, codec.Map(bv(""), codec.Nil)},
		// Unordered maps come back sorted by key: ints, strings, blobs.
		{map[any]any{[1]byte{'z'}: 1, "s": 2, 3: 3, [1]byte{'a'}: 4},
			codec.Map(codec.Int(3), codec.Int(3), codec.Str("s"), codec.Int(2), bv("a"), codec.Int(4), bv("z"), codec.Int(1))},
	} {
		if got := fromClient(c.in); !got.Equal(c.want) {
			t.Errorf("%#v → %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestDecode(t *testing.T) {
	// [Put t, MapPut v, MapSize v, Get t, MapGetByKeys v, Touch, Get missing]
	call := &codec.Call{Ops: []codec.Op{
		{Code: codec.OpPut, Bin: "t", Value: codec.Str("hash")},
		{Code: codec.OpMapPut, Bin: "v", Values: []codec.Value{bv("a"), bv("1")}},
		{Code: codec.OpMapSize, Bin: "v"},
		{Code: codec.OpGet, Bin: "t"},
		{Code: codec.OpMapGetByKeys, Bin: "v", Return: codec.ReturnKey, Values: []codec.Value{bv("a")}},
		{Code: codec.OpTouch},
		{Code: codec.OpGet, Bin: "w"},
	}}
	p := translateCall(t, call)
	rec := &as.Record{
		Generation: 4,
		Expiration: 100,
		Bins: as.BinMap{
			"t": as.OpResults{nil, "hash"},
			"v": as.OpResults{1, 1, []any{[]byte("a")}},
			"w": nil,
		},
	}
	var res codec.Result
	resetResult(&res, len(call.Ops))
	if !decode(p, rec, &res, true) {
		t.Fatal("decode failed")
	}
	want := []codec.Value{codec.Nil, codec.Int(1), codec.Int(1), codec.Str("hash"), codec.List(bv("a")), codec.Nil, codec.Nil}
	for i := range want {
		if !res.Values[i].Equal(want[i]) {
			t.Errorf("value %d = %+v, want %+v", i, res.Values[i], want[i])
		}
	}
	if res.Generation != 4 || res.TTL != 100 {
		t.Errorf("generation %d TTL %d", res.Generation, res.TTL)
	}

	// Never-expiring and deleted records.
	rec = &as.Record{Generation: 2, Expiration: math.MaxUint32, Bins: as.BinMap{}}
	decode(p, rec, &res, true)
	if res.TTL != -1 {
		t.Errorf("never expires: TTL %d", res.TTL)
	}
	rec = &as.Record{Generation: 0, Expiration: math.MaxUint32}
	decode(p, rec, &res, true)
	if res.TTL != 0 || res.Generation != 0 {
		t.Errorf("deleted: generation %d TTL %d", res.Generation, res.TTL)
	}
}

func TestDecodeBatchRead(t *testing.T) {
	// Batch reads answer only reads that found something.
	call := &codec.Call{Ops: []codec.Op{
		{Code: codec.OpMapSize, Bin: "v"},
		{Code: codec.OpGet, Bin: "t"},
		{Code: codec.OpMapGetByKeys, Bin: "v", Return: codec.ReturnCount, Values: []codec.Value{bv("a")}},
	}}
	p := translateCall(t, call)
	var res codec.Result
	resetResult(&res, 3)
	if !decode(p, &as.Record{Generation: 1, Bins: as.BinMap{"v": as.OpResults{2, 1}}}, &res, false) {
		t.Fatal("decode failed")
	}
	if !res.Values[0].Equal(codec.Int(2)) || !res.Values[1].IsNil() || !res.Values[2].Equal(codec.Int(1)) {
		t.Errorf("values %+v", res.Values)
	}
	// One answer for two reads of a bin: ambiguous.
	if decode(p, &as.Record{Generation: 1, Bins: as.BinMap{"v": 2}}, &res, false) {
		t.Error("ambiguous answers accepted")
	}
}

func TestRankOrder(t *testing.T) {
	// Key order in, rank order (value, then key; ints below floats) out.
	in := codec.Map(bv("a"), codec.Float(3), bv("b"), codec.Float(1), bv("c"), codec.Float(2), bv("d"), codec.Float(2), bv("i"), codec.Int(9))
	for _, c := range []struct {
		ret  codec.MapReturn
		want codec.Value
	}{
		{codec.ReturnKey, codec.List(bv("i"), bv("b"), bv("c"), bv("d"), bv("a"))},
		{codec.ReturnValue, codec.List(codec.Int(9), codec.Float(1), codec.Float(2), codec.Float(2), codec.Float(3))},
		{codec.ReturnKeyValue, codec.Map(bv("i"), codec.Int(9), bv("b"), codec.Float(1), bv("c"), codec.Float(2), bv("d"), codec.Float(2), bv("a"), codec.Float(3))},
	} {
		m := codec.Map(append([]codec.Value(nil), in.List...)...)
		if got := rankOrder(m, c.ret); !got.Equal(c.want) {
			t.Errorf("return %d: %+v, want %+v", c.ret, got, c.want)
		}
	}
	if got := rankOrder(codec.Nil, codec.ReturnKey); !got.IsNil() {
		t.Errorf("missing bin: %+v", got)
	}
}

func TestDecodeAllBins(t *testing.T) {
	p := translateCall(t, &codec.Call{Ops: []codec.Op{{Code: codec.OpGet}}})
	var res codec.Result
	resetResult(&res, 1)
	decode(p, &as.Record{Generation: 1, Bins: as.BinMap{"v": []byte("x"), "t": "string", "n": 3}}, &res, false)
	want := codec.Map(codec.Str("n"), codec.Int(3), codec.Str("t"), codec.Str("string"), codec.Str("v"), bv("x"))
	if !res.Values[0].Equal(want) {
		t.Errorf("all bins %+v", res.Values[0])
	}
}

func TestCursor(t *testing.T) {
	if next, span := decodeCursor(0); next != 0 || span != 1 {
		t.Errorf("start: %d %d", next, span)
	}
	for _, c := range []struct{ next, span int }{{1, 1}, {4095, 4096 - 1}, {100, 37}, {2048, 4095}} {
		cur := encodeCursor(c.next, c.span)
		if cur == 0 {
			t.Fatalf("%v encodes to 0", c)
		}
		if next, span := decodeCursor(cur); next != c.next || span != c.span {
			t.Errorf("%v → %d → %d %d", c, cur, next, span)
		}
	}
	if encodeCursor(partitions, 5) != 0 {
		t.Error("the end is not 0")
	}
	// Any number is a valid cursor.
	if next, span := decodeCursor(math.MaxUint64); next != 4095 || span != 4095 {
		t.Errorf("max: %d %d", next, span)
	}
	for _, c := range []struct{ span, found, wanted, want int }{
		{1, 0, 10, 4},
		{1024, 0, 10, 4096},
		{8, 4, 10, 20},
		{8, 40, 0, 8},
		{100, 1000, 1, 1},
	} {
		if got := nextSpan(c.span, c.found, c.wanted); got != c.want {
			t.Errorf("nextSpan(%d, %d, %d) = %d, want %d", c.span, c.found, c.wanted, got, c.want)
		}
	}
}

func TestMapCode(t *testing.T) {
	for _, c := range []struct {
		rc   types.ResultCode
		want codec.Code
	}{
		{types.OK, codec.OK},
		{types.KEY_NOT_FOUND_ERROR, codec.NotFound},
		{types.GENERATION_ERROR, codec.GenerationError},
		{types.KEY_EXISTS_ERROR, codec.Exists},
		{types.BIN_TYPE_ERROR, codec.BinTypeError},
		{types.RECORD_TOO_BIG, codec.RecordTooBig},
		{types.OP_NOT_APPLICABLE, codec.OpNotApplicable},
		{types.FILTERED_OUT, codec.FilteredOut},
		{types.FAIL_ELEMENT_NOT_FOUND, codec.ElementNotFound},
		{types.FAIL_ELEMENT_EXISTS, codec.ElementExists},
		{types.PARAMETER_ERROR, codec.ParameterError},
		{types.SERVER_ERROR, codec.ServerError},
		{types.TIMEOUT, codec.Timeout},
		{types.FAIL_FORBIDDEN, codec.BackendError},
		{types.DEVICE_OVERLOAD, codec.BackendError},
		{types.NO_RESPONSE, codec.BackendUnavail},
	} {
		code, msg := mapCode(c.rc)
		if code != c.want {
			t.Errorf("%s: code %d, want %d", codeName(c.rc), code, c.want)
		}
		if code == codec.BackendError && !strings.Contains(msg, fmt.Sprintf("Aerospike code %d", c.rc)) {
			t.Errorf("%s: message %q lacks the code", codeName(c.rc), msg)
		}
	}
	if _, msg := mapCode(types.FAIL_FORBIDDEN); !strings.Contains(msg, "nsup-period") {
		t.Errorf("forbidden message %q does not mention nsup-period", msg)
	}
	if c := classify(&recordError{rc: types.TIMEOUT}); c != classRecord {
		t.Errorf("a batch record's code is the record's: %d", c)
	}
}

func TestSetNames(t *testing.T) {
	if setName("rs", 0) != "rs" || setName("rs", 15) != "rs_15" {
		t.Error("set names")
	}
}

func TestGroupEnd(t *testing.T) {
	keys := []string{"a", "b", "a", "c", "a", "x", "x"}
	calls := make([]codec.Call, len(keys))
	plans := make([]plan, len(keys))
	for i, k := range keys {
		calls[i].Key = []byte(k)
	}
	plans[5].static = codec.InvalidOperation // an invalid call never splits a group
	for _, seen := range []map[string]struct{}{nil, {}} {
		var groups [][2]int
		for start := 0; start < len(calls); {
			end := groupEnd(calls, plans, start, seen)
			groups = append(groups, [2]int{start, end})
			start = end
		}
		if want := [][2]int{{0, 2}, {2, 4}, {4, 7}}; !reflect.DeepEqual(groups, want) {
			t.Errorf("seen %v: groups %v, want %v", seen != nil, groups, want)
		}
	}
}

// TestLiveAndShared: calls of one millisecond with the same cached guard
// share one packed "guard and not expired" filter; the next millisecond
// gets its own, and a guard with expected items is not cached.
func TestLiveAndShared(t *testing.T) {
	tr := newTranslator()
	get := codec.Call{Key: []byte("k"), Policy: codec.Policy{Guard: codec.TypeString}, Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}
	plan := func(call codec.Call, now int64) *plan {
		p := &plan{}
		tr.translate(&call, p, now)
		if p.sharedExp { // as execCtx.plan does
			p.withLiveShared(tr.live.get(now), &tr.live)
		} else {
			p.withLive(tr.live.get(now))
		}
		return p
	}
	a, b := plan(get, 1000), plan(get, 1000)
	if !a.sharedExp || a.filter != b.filter || a.guard != b.guard {
		t.Errorf("two guarded reads in one millisecond: shared %v, filters %p %p", a.sharedExp, a.filter, b.filter)
	}
	if c := plan(get, 1001); c.filter == a.filter {
		t.Error("the next millisecond reused the last one's filter")
	}
	withItem := get
	withItem.Ops = []codec.Op{{Code: codec.OpExpectBlobSize, Bin: codec.BinValue, Index: 3}, {Code: codec.OpGet, Bin: codec.BinValue}}
	if p := plan(withItem, 1001); p.sharedExp {
		t.Error("a guard with an expected blob size was taken as shared")
	}
}

// The filters of a millisecond, made by patching it into packed bytes, are
// the bytes building and packing them gives: the live filter, and its AND
// with a shared guard, for milliseconds around now and far from it; a
// clock before 2^32 ms (tests') builds them.
func TestLivePatchedBytes(t *testing.T) {
	var live liveCache
	if liveTmpl().b == nil {
		t.Fatal("the live filter has no template: every millisecond builds its filter")
	}
	guard := packed(guardExp(codec.TypeString))
	now := time.Now().UnixMilli()
	for _, ms := range []int64{1000, 1<<32 - 1, 1 << 32, now, now + 1, now + 86_400_000*365*50, 1<<62 + 12345} {
		l := live.get(ms)
		got, _ := packedBytes(l)
		want, _ := packedBytes(liveExpAt(ms))
		if !bytes.Equal(got, want) {
			t.Errorf("live filter at %d: %x, want %x", ms, got, want)
		}
		and := live.and(l, guard)
		got, _ = packedBytes(and)
		want, _ = packedBytes(as.ExpAnd(liveExpAt(ms), guard))
		if !bytes.Equal(got, want) {
			t.Errorf("live AND guard at %d: %x, want %x", ms, got, want)
		}
	}
	if p, _ := live.tmpl.Load(guard); p == nil || p.(*patchable).b == nil {
		t.Error("no template kept for the AND with a shared guard")
	}
}
