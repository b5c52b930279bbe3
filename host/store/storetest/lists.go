package storetest

import (
	"fmt"

	"github.com/respike/respike/guest-sdk/codec"
)

// List cases run before TruncateAll, which must stay last.
func init() {
	last := cases[len(cases)-1]
	cases = append(append(cases[:len(cases)-1:len(cases)-1], listCases...), last)
}

var listCases = []testCase{
	{"ListAppendInsert", testListAppendInsert},
	{"ListInsertBounds", testListInsertBounds},
	{"ListByIndex", testListByIndex},
	{"ListRemoveByIndex", testListRemoveByIndex},
	{"ListTrimInverted", testListTrimInverted},
	{"ListSet", testListSet},
	{"ListByValue", testListByValue},
	{"ListPutGet", testListPutGet},
	{"ListDeleteIfEmpty", testListDeleteIfEmpty},
	{"ListOnNonList", testListOnNonList},
	{"ListMissing", testListMissing},
	{"ListAtomicCall", testListAtomicCall},
	{"ListRecordTooBig", testListRecordTooBig},
	{"ListBulks", testListBulks},
	{"ListExpectItem", testListExpectItem},
	{"ListTrimBothSigns", testListTrimBothSigns},
	{"GenerationAfterRecreate", testGenerationAfterRecreate},
}

func bs(ss ...string) []codec.Value {
	out := make([]codec.Value, len(ss))
	for i, s := range ss {
		out[i] = b(s)
	}
	return out
}

// lst writes a list bin "v" with type "list".
func (e *env) lst(name string, items ...string) {
	e.t.Helper()
	e.ok(e.rec(name).Put(codec.BinType, codec.Str(codec.TypeList)).ListAppend(codec.BinValue, bs(items...)))
}

// items reads the whole list bin.
func (e *env) items(name string) codec.Value {
	e.t.Helper()
	return e.ok(e.rec(name).ListGetByIndex(codec.BinValue, codec.ReturnValue, 0, -1)).Values[0]
}

func testListAppendInsert(e *env) {
	r := e.ok(e.rec("k").ListAppend(codec.BinValue, bs("a")).ListAppend(codec.BinValue, bs("b", "c")))
	e.eq("size after one", r.Values[0], i64(1))
	e.eq("size after two more", r.Values[1], i64(3))
	// LPUSH x y: y first, so insert [y x] at 0.
	r = e.ok(e.rec("k").ListInsert(codec.BinValue, 0, bs("y", "x")).ListSize(codec.BinValue))
	e.eq("size after insert", r.Values[0], i64(5))
	e.eq("size", r.Values[1], i64(5))
	e.ok(e.rec("k").ListInsert(codec.BinValue, 3, bs("m")))
	e.ok(e.rec("k").ListInsert(codec.BinValue, -1, bs("n")))
	e.ok(e.rec("k").ListInsert(codec.BinValue, 7, bs("z")))
	e.eq("list", e.items("k"), list(bs("y", "x", "a", "m", "b", "n", "c", "z")...))
	// An insert at 0 of a missing bin creates it.
	e.ok(e.rec("new").ListInsert(codec.BinValue, 0, bs("p")))
	e.eq("created", e.items("new"), list(b("p")))
	// Mixed kinds are kept as they are.
	e.ok(e.rec("kinds").ListAppend(codec.BinValue, []codec.Value{i64(1), b("1"), f64(1.5), codec.Str("s")}))
	e.eq("kinds", e.items("kinds"), list(i64(1), b("1"), f64(1.5), codec.Str("s")))
}

// failsSomehow runs a call that must fail (with wantCode when not OK is
// not enough to say) and change nothing.
func (e *env) failsSomehow(what string, c *codec.Call) {
	e.t.Helper()
	r := e.do(c)[0]
	if r.Code == codec.OK {
		e.t.Errorf("%s: succeeded, want a failure", what)
	}
}

func testListInsertBounds(e *env) {
	e.lst("k", "a", "b")
	e.fails(e.rec("k").ListInsert(codec.BinValue, 3, bs("x")), codec.OpNotApplicable)
	e.fails(e.rec("k").ListInsert(codec.BinValue, 10, bs("x")), codec.OpNotApplicable)
	// Below -size: Aerospike refuses it too (the code differs by server
	// path; callers need only know that nothing happened).
	e.failsSomehow("insert at -3 of 2", e.rec("k").ListInsert(codec.BinValue, -3, bs("x")))
	e.ok(e.rec("k").ListInsert(codec.BinValue, -2, bs("h")))
	e.ok(e.rec("k").ListInsert(codec.BinValue, 3, bs("t")))
	e.eq("list", e.items("k"), list(bs("h", "a", "b", "t")...))
	e.fails(e.rec("empty").ListInsert(codec.BinValue, 1, bs("x")), codec.OpNotApplicable)
	e.missing("empty")
}

func testListByIndex(e *env) {
	e.lst("k", "a", "b", "c", "d", "e")
	for _, c := range []struct {
		index, count int64
		want         []string
	}{
		{0, 2, []string{"a", "b"}},
		{1, 1, []string{"b"}},
		{3, -1, []string{"d", "e"}},
		{-2, -1, []string{"d", "e"}},
		{-2, 1, []string{"d"}},
		{3, 10, []string{"d", "e"}},
		{-7, 4, []string{"a", "b"}},
		{-10, 3, nil},
		{5, 1, nil},
		{9, -1, nil},
		{0, 0, nil},
		{-100, -1, []string{"a", "b", "c", "d", "e"}},
	} {
		r := e.ok(e.rec("k").ListGetByIndex(codec.BinValue, codec.ReturnValue, c.index, c.count).
			ListGetByIndex(codec.BinValue, codec.ReturnCount, c.index, c.count).
			ListGetByIndex(codec.BinValue, codec.ReturnValue|codec.ReturnInverted, c.index, c.count))
		e.eq(fmt.Sprintf("values of index %d count %d", c.index, c.count), r.Values[0], list(bs(c.want...)...))
		e.eq(fmt.Sprintf("count of index %d count %d", c.index, c.count), r.Values[1], i64(int64(len(c.want))))
		e.eqInt(fmt.Sprintf("inverted count of index %d count %d", c.index, c.count), int64(r.Values[2].Len()), int64(5-len(c.want)))
	}
	r := e.ok(e.rec("k").ListGetByIndex(codec.BinValue, codec.ReturnIndex, 1, 2).
		ListGetByIndex(codec.BinValue, codec.ReturnExists, 9, 1).
		ListGetByIndex(codec.BinValue, codec.ReturnNone, 0, 1))
	e.eq("indexes", r.Values[0], list(i64(1), i64(2)))
	e.eq("exists out of range", r.Values[1], codec.Bool(false))
	e.eq("none", r.Values[2], codec.Nil)
}

func testListRemoveByIndex(e *env) {
	e.lst("k", "a", "b", "c", "d", "e", "f", "g")
	r := e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 2))
	e.eq("popped head", r.Values[0], list(bs("a", "b")...))
	// RPOP 2: the last two, in list order.
	r = e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnValue, -2, 2))
	e.eq("popped tail", r.Values[0], list(bs("f", "g")...))
	r = e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 7, 1))
	e.eq("popped out of range", r.Values[0], list())
	r = e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnCount, 1, 1))
	e.eq("removed middle", r.Values[0], i64(1))
	e.eq("list", e.items("k"), list(b("c"), b("e")))
	// More than there is: everything, the bin stays as an empty list.
	r = e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnValue, -5, 5).ListSize(codec.BinValue))
	e.eq("popped all", r.Values[0], list(b("c"), b("e")))
	e.eq("size", r.Values[1], i64(0))
	e.eq("type kept", e.get("k", codec.BinType), codec.Str(codec.TypeList))
}

func testListTrimInverted(e *env) {
	for _, c := range []struct {
		index, count int64
		want         []string
	}{
		{1, 2, []string{"b", "c"}},  // LTRIM 1 2
		{-2, 2, []string{"d", "e"}}, // LTRIM -2 -1
		{-9, 3, nil},                // LTRIM -9 -7: nothing left
		{0, 0, nil},                 // start after stop
		{7, 3, nil},                 // past the end
		{-9, 11, []string{"a", "b", "c", "d", "e"}}, // a range that starts before the head keeps its in-bounds part
		{0, -1, []string{"a", "b", "c", "d", "e"}},
	} {
		name := fmt.Sprintf("k%d_%d", c.index, c.count)
		e.lst(name, "a", "b", "c", "d", "e")
		r := e.ok(e.rec(name).ListRemoveByIndex(codec.BinValue, codec.ReturnCount|codec.ReturnInverted, c.index, c.count).
			ListGetByIndex(codec.BinValue, codec.ReturnValue, 0, -1))
		e.eq("trimmed count "+name, r.Values[0], i64(int64(5-len(c.want))))
		e.eq("kept "+name, r.Values[1], list(bs(c.want...)...))
	}
}

func testListSet(e *env) {
	e.lst("k", "a", "b", "c")
	e.ok(e.rec("k").ListSet(codec.BinValue, 1, b("B")).ListSet(codec.BinValue, -1, b("C")).ListSet(codec.BinValue, -3, b("A")))
	e.eq("list", e.items("k"), list(bs("A", "B", "C")...))
	e.fails(e.rec("k").ListSet(codec.BinValue, 3, b("x")), codec.OpNotApplicable)
	e.failsSomehow("set at -4 of 3", e.rec("k").ListSet(codec.BinValue, -4, b("x")))
	e.eq("list after refused sets", e.items("k"), list(bs("A", "B", "C")...))
}

func testListByValue(e *env) {
	e.lst("k", "a", "b", "a", "c", "a")
	r := e.ok(e.rec("k").ListGetByValue(codec.BinValue, codec.ReturnIndex, b("a")).
		ListGetByValue(codec.BinValue, codec.ReturnCount, b("a")).
		ListGetByValue(codec.BinValue, codec.ReturnIndex, b("z")).
		ListGetByValue(codec.BinValue, codec.ReturnValue, b("c")).
		ListGetByValue(codec.BinValue, codec.ReturnIndex|codec.ReturnInverted, b("a")))
	e.eq("indexes of a", r.Values[0], list(i64(0), i64(2), i64(4)))
	e.eq("count of a", r.Values[1], i64(3))
	e.eq("indexes of z", r.Values[2], list())
	e.eq("values c", r.Values[3], list(b("c")))
	e.eq("indexes of not a", r.Values[4], list(i64(1), i64(3)))
	// A blob and a string of the same bytes differ.
	r = e.ok(e.rec("k").ListGetByValue(codec.BinValue, codec.ReturnCount, codec.Str("a")))
	e.eq("string a", r.Values[0], i64(0))
	r = e.ok(e.rec("k").ListRemoveByValue(codec.BinValue, codec.ReturnCount, b("a")))
	e.eq("removed a", r.Values[0], i64(3))
	e.eq("list", e.items("k"), list(b("b"), b("c")))
	r = e.ok(e.rec("k").ListRemoveByValue(codec.BinValue, codec.ReturnCount, b("zz")))
	e.eq("removed none", r.Values[0], i64(0))
}

func testListPutGet(e *env) {
	// A list written whole (COPY, RENAME) answers list ops; list ops
	// answer a whole read.
	e.ok(e.rec("k").Put(codec.BinValue, list(b("a"), b("b"))))
	r := e.ok(e.rec("k").ListAppend(codec.BinValue, bs("c")).Get(codec.BinValue))
	e.eq("size", r.Values[0], i64(3))
	e.eq("whole", r.Values[1], list(bs("a", "b", "c")...))
	e.ok(e.rec("k").ListInsert(codec.BinValue, 0, bs("z")).ListRemoveByIndex(codec.BinValue, codec.ReturnNone, -1, 1))
	e.eq("read back", e.get("k", codec.BinValue), list(bs("z", "a", "b")...))
}

func testListDeleteIfEmpty(e *env) {
	e.lst("k", "a", "b")
	e.ok(e.rec("k").DeleteIfEmpty(codec.BinValue).ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1))
	e.eq("kept while not empty", e.items("k"), list(b("b")))
	r := e.ok(e.rec("k").DeleteIfEmpty(codec.BinValue).ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1))
	e.eq("popped last", r.Values[0], list(b("b")))
	e.missing("k")

	// Popping and pushing in one call keeps the record.
	e.lst("k2", "a")
	e.ok(e.rec("k2").DeleteIfEmpty(codec.BinValue).ListRemoveByIndex(codec.BinValue, codec.ReturnNone, 0, 1).ListAppend(codec.BinValue, bs("b")))
	e.eq("refilled", e.items("k2"), list(b("b")))

	// Trim to nothing, by value to nothing.
	e.lst("k3", "a", "a")
	e.ok(e.rec("k3").DeleteIfEmpty(codec.BinValue).ListRemoveByValue(codec.BinValue, codec.ReturnCount, b("a")))
	e.missing("k3")
	e.lst("k4", "a", "b")
	e.ok(e.rec("k4").DeleteIfEmpty(codec.BinValue).ListRemoveByIndex(codec.BinValue, codec.ReturnNone|codec.ReturnInverted, 5, 1))
	e.missing("k4")
}

func testListOnNonList(e *env) {
	e.ok(e.rec("k").Put(codec.BinValue, b("str")))
	e.hash("h", b("f"), b("1"))
	for _, name := range []string{"k", "h"} {
		e.fails(e.rec(name).ListAppend(codec.BinValue, bs("a")), codec.BinTypeError)
		e.fails(e.rec(name).ListInsert(codec.BinValue, 0, bs("a")), codec.BinTypeError)
		e.fails(e.rec(name).ListSize(codec.BinValue), codec.BinTypeError)
		e.fails(e.rec(name).ListGetByIndex(codec.BinValue, codec.ReturnValue, 0, 1), codec.BinTypeError)
		e.fails(e.rec(name).ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1), codec.BinTypeError)
		e.fails(e.rec(name).ListGetByValue(codec.BinValue, codec.ReturnIndex, b("a")), codec.BinTypeError)
		e.fails(e.rec(name).ListRemoveByValue(codec.BinValue, codec.ReturnCount, b("a")), codec.BinTypeError)
	}
	e.lst("l", "a")
	e.fails(e.rec("l").MapSize(codec.BinValue), codec.BinTypeError)
	e.fails(e.rec("l").MapPut(codec.BinValue, 0, []codec.Value{b("a"), b("1")}), codec.BinTypeError)
	e.fails(e.rec("l").Add(codec.BinValue, i64(1)), codec.BinTypeError)
	e.fails(e.rec("l").Append(codec.BinValue, []byte("x")), codec.BinTypeError)
	e.eq("list after refused ops", e.items("l"), list(b("a")))
}

func testListMissing(e *env) {
	// A missing record: reads are NotFound, update-only removes too.
	e.fails(e.rec("none").ListSize(codec.BinValue), codec.NotFound)
	e.fails(e.rec("none").Exists(codec.ExistsUpdateOnly).ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1), codec.NotFound)
	e.fails(e.rec("none").Exists(codec.ExistsUpdateOnly).ListAppend(codec.BinValue, bs("a")), codec.NotFound)
	e.missing("none")
	// An existing record without the bin: size 0, reads find nothing,
	// removes are no-ops.
	e.ok(e.rec("k").Put(codec.BinType, codec.Str(codec.TypeList)))
	r := e.ok(e.rec("k").ListSize(codec.BinValue).
		ListGetByIndex(codec.BinValue, codec.ReturnValue, 0, -1).
		ListGetByValue(codec.BinValue, codec.ReturnCount, b("a")))
	e.eq("size of a missing bin", r.Values[0], i64(0))
	if r.Values[1].Len() != 0 || r.Values[2].Int != 0 {
		e.t.Errorf("reads of a missing bin matched something: %s, %s", show(r.Values[1]), show(r.Values[2]))
	}
	r = e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1))
	if r.Values[0].Len() != 0 {
		e.t.Errorf("pop of a missing bin = %s", show(r.Values[0]))
	}
	e.eq("type after no-op removes", e.get("k", codec.BinType), codec.Str(codec.TypeList))
}

func testListAtomicCall(e *env) {
	e.lst("k", "a", "b", "c")
	gen := e.ok(e.rec("k").Header()).Generation
	// Every change before the failing op is undone: pops at both ends,
	// pushes at both ends, a set, a middle insert and a removal by value.
	e.fails(e.rec("k").
		ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1).
		ListRemoveByIndex(codec.BinValue, codec.ReturnValue, -1, 1).
		ListInsert(codec.BinValue, 0, bs("x", "y")).
		ListAppend(codec.BinValue, bs("z")).
		ListSet(codec.BinValue, 1, b("S")).
		ListInsert(codec.BinValue, 2, bs("m")).
		ListRemoveByValue(codec.BinValue, codec.ReturnCount, b("b")).
		ListSet(codec.BinValue, 99, b("x")), codec.OpNotApplicable)
	e.eq("list after a failed call", e.items("k"), list(bs("a", "b", "c")...))
	e.eqInt("generation", int64(e.ok(e.rec("k").Header()).Generation), int64(gen))
	// The same ops succeed and read their own writes.
	r := e.ok(e.rec("k").
		ListRemoveByIndex(codec.BinValue, codec.ReturnValue, 0, 1).
		ListRemoveByIndex(codec.BinValue, codec.ReturnValue, -1, 1).
		ListInsert(codec.BinValue, 0, bs("x", "y")).
		ListAppend(codec.BinValue, bs("z")).
		ListGetByIndex(codec.BinValue, codec.ReturnValue, 0, -1))
	e.eq("popped head", r.Values[0], list(b("a")))
	e.eq("popped tail", r.Values[1], list(b("c")))
	e.eq("in-call read", r.Values[4], list(bs("x", "y", "b", "z")...))
	// Rotation in one call (LMOVE k k RIGHT LEFT with the element known).
	e.ok(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnNone, -1, 1).ListInsert(codec.BinValue, 0, bs("z")))
	e.eq("rotated", e.items("k"), list(bs("z", "x", "y", "b")...))
}

func testListRecordTooBig(e *env) {
	e.lst("k", "a")
	big := make([]byte, 9<<20)
	e.fails(e.rec("k").ListAppend(codec.BinValue, []codec.Value{codec.Bytes(big)}), codec.RecordTooBig)
	e.fails(e.rec("k").ListInsert(codec.BinValue, 0, []codec.Value{codec.Bytes(big)}), codec.RecordTooBig)
	e.eq("after refused pushes", e.items("k"), list(b("a")))
	e.fails(e.rec("new").Put(codec.BinType, codec.Str(codec.TypeList)).ListAppend(codec.BinValue, []codec.Value{codec.Bytes(big)}), codec.RecordTooBig)
	e.missing("new")
}

func testListBulks(e *env) {
	e.ok(e.rec("k").ListAppend(codec.BinValue, []codec.Value{b("a"), b(""), i64(-12), f64(1.5), codec.Str("s"), b("0123456789")}))
	r := e.ok(e.rec("k").ListGetByIndex(codec.BinValue, codec.ReturnBulks, 0, -1).
		ListGetByIndex(codec.BinValue, codec.ReturnBulks, 9, 2).
		ListGetByValue(codec.BinValue, codec.ReturnBulks, b("a")).
		ListGetByIndex(codec.BinValue, codec.ReturnBulks|codec.ReturnInverted, 1, 4))
	e.eq("all", r.Values[0], list(i64(6), b("$1\r\na\r\n$0\r\n\r\n$3\r\n-12\r\n$3\r\n1.5\r\n$1\r\ns\r\n$10\r\n0123456789\r\n")))
	e.eq("none", r.Values[1], list(i64(0), b("")))
	e.eq("by value", r.Values[2], list(i64(1), b("$1\r\na\r\n")))
	e.eq("inverted", r.Values[3], list(i64(2), b("$1\r\na\r\n$10\r\n0123456789\r\n")))
	// Only reads return bulks.
	e.fails(e.rec("k").ListRemoveByIndex(codec.BinValue, codec.ReturnBulks, 0, 1), codec.InvalidOperation)
	e.eq("after the refused remove", e.ok(e.rec("k").ListSize(codec.BinValue)).Values[0], i64(6))
	// A missing bin returns nothing.
	e.ok(e.rec("nobin").Put(codec.BinType, codec.Str(codec.TypeList)))
	r = e.ok(e.rec("nobin").ListGetByIndex(codec.BinValue, codec.ReturnBulks, 0, -1))
	e.eq("missing bin", r.Values[0], codec.Nil)
}

// OpExpectListItem: "pop the tail if it is still x" holds only while the
// tail is x, whatever the record's generation.
func testListExpectItem(e *env) {
	pop := func(name string, idx int64, want string) *codec.Call {
		return e.rec(name).Guard(codec.TypeList).Exists(codec.ExistsUpdateOnly).DeleteIfEmpty(codec.BinValue).
			ExpectListItem(codec.BinValue, idx, b(want)).
			ListRemoveByIndex(codec.BinValue, codec.ReturnValue, idx, 1)
	}
	e.lst("k", "a", "b", "c")
	e.fails(pop("k", -1, "b"), codec.FilteredOut)
	e.fails(pop("k", 0, "c"), codec.FilteredOut)
	e.fails(pop("k", 5, "c"), codec.FilteredOut)  // past the end
	e.fails(pop("k", -9, "a"), codec.FilteredOut) // before the head
	e.eq("unchanged", e.items("k"), list(b("a"), b("b"), b("c")))
	r := e.ok(pop("k", -1, "c"))
	e.eq("expect answers nil", r.Values[0], codec.Nil)
	e.eq("popped", r.Values[1], list(b("c")))
	e.ok(pop("k", 0, "a"))
	e.ok(pop("k", 0, "b"))
	e.missing("k")
	e.fails(pop("k", 0, "b"), codec.NotFound)

	// Checked before the ops: pushing the expected item in the same call
	// does not make it pass.
	e.lst("k2", "a")
	e.fails(e.rec("k2").ListAppend(codec.BinValue, bs("z")).ExpectListItem(codec.BinValue, -1, b("z")), codec.FilteredOut)
	e.eq("nothing pushed", e.items("k2"), list(b("a")))
	// Rotation: pop the tail and push it at the head, if the tail is a.
	e.lst("k3", "a", "b")
	e.ok(e.rec("k3").ExpectListItem(codec.BinValue, -1, b("b")).
		ListRemoveByIndex(codec.BinValue, codec.ReturnNone, -1, 1).ListInsert(codec.BinValue, 0, bs("b")))
	e.eq("rotated", e.items("k3"), list(b("b"), b("a")))

	// A read with the condition, and a bin that is not a list.
	r = e.ok(e.rec("k3").ExpectListItem(codec.BinValue, 0, b("b")).ListSize(codec.BinValue))
	e.eq("read under the condition", r.Values[1], i64(2))
	e.fails(e.rec("k3").ExpectListItem(codec.BinValue, 0, b("a")).ListSize(codec.BinValue), codec.FilteredOut)
	e.ok(e.rec("s").Put(codec.BinValue, b("a")))
	e.fails(e.rec("s").ExpectListItem(codec.BinValue, 0, b("a")).Put(codec.BinValue, b("x")), codec.FilteredOut)
	e.fails(e.rec("s").ExpectListItem("nobin", 0, b("a")).Put(codec.BinValue, b("x")), codec.FilteredOut)
	e.fails(e.rec("s").ExpectListItem(codec.BinValue, 0, codec.Nil).Put(codec.BinValue, b("x")), codec.InvalidOperation)

	// An absent record passes (as the guard does): a call that creates
	// the record is not filtered.
	e.ok(e.rec("new").ExpectListItem(codec.BinValue, 0, b("a")).ListAppend(codec.BinValue, bs("x")))
	e.eq("created", e.items("new"), list(b("x")))
}

// A record deleted and written again starts again at generation 1 on both
// stores (seen on Aerospike CE 8.1.2), so a generation read before the
// delete matches the new record: why moves use OpExpectListItem.
func testGenerationAfterRecreate(e *env) {
	r := e.ok(e.rec("g").Put(codec.BinValue, b("old")))
	first := r.Generation
	e.ok(e.rec("g").Delete())
	r = e.ok(e.rec("g").Put(codec.BinValue, b("new")))
	e.eqInt("generation of the new record", int64(r.Generation), int64(first))
	e.ok(e.rec("g").Generation(first).Put(codec.BinValue, b("stale write")))
}

// LTRIM start stop with start >= 0 > stop, in one call: remove from stop+1
// (counted from the tail) to the end, then the first start items.
func testListTrimBothSigns(e *env) {
	trim := func(name string, tailFrom, head int64) {
		e.ok(e.rec(name).DeleteIfEmpty(codec.BinValue).
			ListRemoveByIndex(codec.BinValue, codec.ReturnNone, tailFrom, -1).
			ListRemoveByIndex(codec.BinValue, codec.ReturnNone, 0, head))
	}
	e.lst("k", "a", "b", "c", "d", "e")
	trim("k", -2, 1) // LTRIM k 1 -3
	e.eq("kept", e.items("k"), list(b("b"), b("c")))
	e.lst("k2", "a", "b", "c", "d", "e")
	trim("k2", -10, 0) // LTRIM k2 0 -11: a tail start before the head takes all
	e.missing("k2")
	e.lst("k3", "a", "b", "c")
	trim("k3", -1, 5) // LTRIM k3 5 -2: a head count past the end takes the rest
	e.missing("k3")
}
