package aerospike

import (
	"testing"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
)

// Each list op becomes the Aerospike list operation with respike's
// policies: unordered lists, INSERT_BOUNDED inserts and sets, inverted
// selections.
func TestTranslateListOps(t *testing.T) {
	a, b := codec.Bytes([]byte("a")), codec.Bytes([]byte("b"))
	for _, c := range []struct {
		name string
		op   codec.Op
		want *as.Operation
		dec  decodeKind
	}{
		{"append one", codec.Op{Code: codec.OpListAppend, Bin: "v", Values: []codec.Value{a}},
			as.ListAppendWithPolicyOp(listAppendPolicy, "v", []byte("a")), decValue},
		{"append items", codec.Op{Code: codec.OpListAppend, Bin: "v", Values: []codec.Value{a, b}},
			as.ListAppendWithPolicyOp(listAppendPolicy, "v", []byte("a"), []byte("b")), decValue},
		{"insert", codec.Op{Code: codec.OpListInsert, Bin: "v", Index: -1, Values: []codec.Value{a, b}},
			as.ListInsertWithPolicyOp(listBoundedPolicy, "v", -1, []byte("a"), []byte("b")), decValue},
		{"size", codec.Op{Code: codec.OpListSize, Bin: "v"}, as.ListSizeOp("v"), decSize},
		{"set from the tail", codec.Op{Code: codec.OpListSet, Bin: "v", Index: -2, Value: a},
			as.ListSetWithPolicyOp(listBoundedPolicy, "v", -2, []byte("a")), decNone},
		{"get range", codec.Op{Code: codec.OpListGetByIndex, Bin: "v", Return: codec.ReturnValue, Index: 1, Count: 3},
			as.ListGetByIndexRangeCountOp("v", 1, 3, as.ListReturnTypeValue), decMapRead},
		{"get to the end", codec.Op{Code: codec.OpListGetByIndex, Bin: "v", Return: codec.ReturnValue, Index: -2, Count: -1},
			as.ListGetByIndexRangeOp("v", -2, as.ListReturnTypeValue), decMapRead},
		{"bulks", codec.Op{Code: codec.OpListGetByIndex, Bin: "v", Return: codec.ReturnBulks, Index: 0, Count: 100},
			as.ListGetByIndexRangeCountOp("v", 0, 100, as.ListReturnTypeValue), decBulks},
		{"pop", codec.Op{Code: codec.OpListRemoveByIndex, Bin: "v", Return: codec.ReturnValue, Index: -2, Count: 2},
			as.ListRemoveByIndexRangeCountOp("v", -2, 2, as.ListReturnTypeValue), decMapRead},
		{"trim", codec.Op{Code: codec.OpListRemoveByIndex, Bin: "v", Return: codec.ReturnNone | codec.ReturnInverted, Index: 1, Count: 0},
			as.ListRemoveByIndexRangeCountOp("v", 1, 0, as.ListReturnTypeNone|as.ListReturnTypeInverted), decMapRead},
		{"remove to the end", codec.Op{Code: codec.OpListRemoveByIndex, Bin: "v", Return: codec.ReturnCount, Index: 3, Count: -1},
			as.ListRemoveByIndexRangeOp("v", 3, as.ListReturnTypeCount), decMapRead},
		{"indexes of", codec.Op{Code: codec.OpListGetByValue, Bin: "v", Return: codec.ReturnIndex, Value: a},
			as.ListGetByValueOp("v", []byte("a"), as.ListReturnTypeIndex), decMapRead},
		{"remove value", codec.Op{Code: codec.OpListRemoveByValue, Bin: "v", Return: codec.ReturnCount, Value: a},
			as.ListRemoveByValueOp("v", []byte("a"), as.ListReturnTypeCount), decMapRead},
	} {
		p := translateCall(t, &codec.Call{Ops: []codec.Op{c.op}})
		if p.static != codec.OK {
			t.Errorf("%s: static %d %s", c.name, p.static, p.staticMsg)
			continue
		}
		if len(p.ops) != 1 || dump(p.ops[0]) != dump(c.want) {
			t.Errorf("%s: %v\nwant %v", c.name, dumpOps(p.ops), dump(c.want))
		}
		if p.slots[0].dec != c.dec || p.slots[0].op != 0 || !p.slots[0].entry {
			t.Errorf("%s: slot %+v", c.name, p.slots[0])
		}
		if wantWrite := c.op.Code.Writes(); p.write != wantWrite {
			t.Errorf("%s: write = %v", c.name, p.write)
		}
	}
}

func TestTranslateListRefusals(t *testing.T) {
	for name, op := range map[string]codec.Op{
		"append nothing":      {Code: codec.OpListAppend, Bin: "v"},
		"insert nothing":      {Code: codec.OpListInsert, Bin: "v"},
		"keys of a list":      {Code: codec.OpListGetByIndex, Bin: "v", Return: codec.ReturnKey},
		"inverted size":       {Code: codec.OpListSize, Bin: "v", Return: codec.ReturnInverted},
		"list op without bin": {Code: codec.OpListSize},
		"bulks of a remove":   {Code: codec.OpListRemoveByIndex, Bin: "v", Return: codec.ReturnBulks},
	} {
		if p := translateCall(t, &codec.Call{Ops: []codec.Op{op}}); p.static != codec.InvalidOperation {
			t.Errorf("%s: static %d", name, p.static)
		}
	}
}

// A list value answered as ReturnBulks: the count and the RESP blob.
func TestDecodeBulks(t *testing.T) {
	got := decodeSlot(slot{dec: decBulks}, []any{[]byte("ab"), 7})
	want := codec.List(codec.Int(2), codec.Bytes([]byte("$2\r\nab\r\n$1\r\n7\r\n")))
	if !got.Equal(want) {
		t.Errorf("decoded %+v", got)
	}
	if v := decodeSlot(slot{dec: decBulks}, nil); !v.IsNil() {
		t.Errorf("missing bin decoded as %+v", v)
	}
}

// A set at an index from the head gets that index first, in the same
// operate: Aerospike CE 8.1.2 sets at index = size by appending, and the
// get fails the operate there (OP_NOT_APPLICABLE).
func TestTranslateListSetBound(t *testing.T) {
	p := translateCall(t, &codec.Call{Ops: []codec.Op{{Code: codec.OpListSet, Bin: "v", Index: 2, Value: codec.Bytes([]byte("a"))}}})
	want := []*as.Operation{
		as.ListGetByIndexOp("v", 2, as.ListReturnTypeNone),
		as.ListSetWithPolicyOp(listBoundedPolicy, "v", 2, []byte("a")),
	}
	if p.static != codec.OK || len(p.ops) != 2 || dump(p.ops[0]) != dump(want[0]) || dump(p.ops[1]) != dump(want[1]) {
		t.Fatalf("set at 2: %v %s\nwant %v", dumpOps(p.ops), p.staticMsg, dumpOps(want))
	}
	if p.slots[0].op != -1 || p.slots[1].op != 0 || p.slots[1].dec != decNone {
		t.Fatalf("set at 2: slots %+v", p.slots)
	}
}
