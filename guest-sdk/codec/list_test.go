package codec

import "testing"

// List op codes come after every map op code, in one run, so modules
// built earlier keep their numbers.
func TestListOpCodesAppended(t *testing.T) {
	codes := []OpCode{OpListAppend, OpListInsert, OpListSize, OpListGetByIndex,
		OpListRemoveByIndex, OpListSet, OpListGetByValue, OpListRemoveByValue}
	for i, c := range codes {
		if c <= OpMapRemoveByKeyRange || (i > 0 && c != codes[i-1]+1) {
			t.Errorf("list op code #%d is %d", i, c)
		}
	}
	// Return types, like op codes, only ever go at the end.
	if ReturnIndex <= ReturnExists || ReturnBulks != ReturnIndex+1 {
		t.Errorf("ReturnIndex = %d, ReturnBulks = %d", ReturnIndex, ReturnBulks)
	}
}

// The list builders encode as the same ops built into Ops, and decode to
// the ops given.
func TestListOpsEncode(t *testing.T) {
	items := []Value{Bytes([]byte("a")), Bytes([]byte("b"))}
	build := func(c *Call) {
		c.ListAppend(BinValue, items).
			ListInsert(BinValue, -1, items[:1]).
			ListSize(BinValue).
			ListGetByIndex(BinValue, ReturnValue, -2, -1).
			ListRemoveByIndex(BinValue, ReturnNone|ReturnInverted, 1, 0).
			ListSet(BinValue, 3, Bytes([]byte("x"))).
			ListGetByValue(BinValue, ReturnIndex, Bytes([]byte("a"))).
			ListRemoveByValue(BinValue, ReturnCount, Bytes(nil))
	}
	want := []Op{
		{Code: OpListAppend, Bin: BinValue, Values: items},
		{Code: OpListInsert, Bin: BinValue, Index: -1, Values: items[:1]},
		{Code: OpListSize, Bin: BinValue},
		{Code: OpListGetByIndex, Bin: BinValue, Return: ReturnValue, Index: -2, Count: -1},
		{Code: OpListRemoveByIndex, Bin: BinValue, Return: ReturnInverted, Index: 1},
		{Code: OpListSet, Bin: BinValue, Index: 3, Value: Bytes([]byte("x"))},
		{Code: OpListGetByValue, Bin: BinValue, Return: ReturnIndex, Value: Bytes([]byte("a"))},
		{Code: OpListRemoveByValue, Bin: BinValue, Return: ReturnCount, Value: Bytes(nil)},
	}
	checkEncodes(t, build, want)
}
