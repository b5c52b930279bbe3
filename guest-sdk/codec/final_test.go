package codec

import (
	"errors"
	"testing"
)

// oneCall is a request of one call of n ops, as the host decodes one.
func oneCall(n int) *Request {
	return &Request{Kind: ReqRecords, Calls: []Call{{Key: []byte("k"), Ops: make([]Op, n)}}}
}

func TestRecipeApply(t *testing.T) {
	r := NewRecipe(0).
		Value(OK, 1).
		Null(NotFound).
		Int(Exists, 2).
		Error(FilteredOut, "WRONGTYPE Operation against a key holding the wrong kind of value").
		Restart(BinTypeError).
		OK(ElementExists).
		StoreError(ElementNotFound).
		Reply(RecipeAnyCode, ":7\r\n")
	var p ParsedRecipe
	if err := ParseRecipe(r.Bytes(), oneCall(3), &p); err != nil {
		t.Fatal(err)
	}
	res := func(code Code, vals ...Value) *Response {
		return &Response{Results: []Result{{Code: code, Msg: "why", Values: vals}}}
	}
	vals := func(v Value) []Value { return []Value{Nil, v, Int(42)} }
	for _, c := range []struct {
		proto   int
		resp    *Response
		want    string
		restart bool
	}{
		{2, res(OK, vals(Bytes([]byte("v")))...), "$1\r\nv\r\n", false},
		{3, res(OK, vals(Bytes([]byte("v")))...), "$1\r\nv\r\n", false},
		{2, res(OK, vals(Int(-10))...), "$3\r\n-10\r\n", false},
		{2, res(OK, vals(Float(1.5))...), "$3\r\n1.5\r\n", false},
		{2, res(OK, vals(Nil)...), "$0\r\n\r\n", false},
		{2, res(OK, vals(Str("abcdefghijkl"))...), "$12\r\nabcdefghijkl\r\n", false},
		{2, res(OK), StoreErrorRESP(OK, "why"), false}, // no value for op 1: the store error
		{2, res(NotFound), "$-1\r\n", false},
		{3, res(NotFound), "_\r\n", false},
		{2, res(Exists, vals(Nil)...), ":42\r\n", false},
		{2, res(FilteredOut), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", false},
		{2, res(BinTypeError), "", true},
		{3, res(ElementExists), "+OK\r\n", false},
		{2, res(ElementNotFound), StoreErrorRESP(ElementNotFound, "why"), false},
		{2, res(Timeout), ":7\r\n", false},
		{2, &Response{Code: BackendUnavail, Msg: "down"}, "-ERR backend unavailable: down\r\n", false},
		{3, &Response{Code: ParameterError, Msg: ErrDBRange}, "-ERR DB index is out of range\r\n", false},
		{2, &Response{}, "-ERR respike: malformed store response\r\n", false},
	} {
		got, restart := p.Apply([]byte("x"), c.proto, c.resp)
		if restart != c.restart || !c.restart && string(got) != "x"+c.want || c.restart && string(got) != "x" {
			t.Errorf("RESP%d %+v: %q restart %v, want %q restart %v", c.proto, c.resp, got, restart, c.want, c.restart)
		}
	}
}

// TestRecipeApplyListActions covers the actions of ABI 8: the first item
// of a list value (HGET), lengths (STRLEN, HSTRLEN), one first item per op
// (HMGET) and an array of nulls.
func TestRecipeApplyListActions(t *testing.T) {
	list := func(vs ...Value) Value { return Value{Kind: KindList, List: vs} }
	vals := []Value{list(Bytes([]byte("abc"))), list(), list(Int(-12)), list(Float(2.5)), Nil, Bytes([]byte("hello")), Int(100)}
	res := &Response{Results: []Result{{Code: OK, Values: vals}}}
	short := &Response{Results: []Result{{Code: OK, Msg: "why", Values: vals[:2]}}}
	for _, c := range []struct {
		name  string
		r     *Recipe
		proto int
		resp  *Response
		want  string
	}{
		{"first", NewRecipe(0).First(OK, 0), 2, res, "$3\r\nabc\r\n"},
		{"first of empty", NewRecipe(0).First(OK, 1), 2, res, "$-1\r\n"},
		{"first of empty RESP3", NewRecipe(0).First(OK, 1), 3, res, "_\r\n"},
		{"first int", NewRecipe(0).First(OK, 2), 2, res, "$3\r\n-12\r\n"},
		{"first float", NewRecipe(0).First(OK, 3), 3, res, "$3\r\n2.5\r\n"},
		{"first of no list", NewRecipe(0).First(OK, 4), 2, res, "$-1\r\n"},
		{"first of no value", NewRecipe(0).First(OK, 4), 2, short, StoreErrorRESP(OK, "why")},
		{"len bytes", NewRecipe(0).Len(OK, 5), 2, res, ":5\r\n"},
		{"len int", NewRecipe(0).Len(OK, 6), 2, res, ":3\r\n"},
		{"len nil", NewRecipe(0).Len(OK, 4), 2, res, ":0\r\n"},
		{"first len", NewRecipe(0).FirstLen(OK, 2), 2, res, ":3\r\n"},
		{"first len float", NewRecipe(0).FirstLen(OK, 3), 2, res, ":3\r\n"},
		{"first len of empty", NewRecipe(0).FirstLen(OK, 1), 2, res, ":0\r\n"},
		{"first each", NewRecipe(0).FirstEach(OK, 0, 5), 2, res, "*5\r\n$3\r\nabc\r\n$-1\r\n$3\r\n-12\r\n$3\r\n2.5\r\n$-1\r\n"},
		{"first each RESP3", NewRecipe(0).FirstEach(OK, 1, 2), 3, res, "*2\r\n_\r\n$3\r\n-12\r\n"},
		{"first each short", NewRecipe(0).FirstEach(OK, 0, 3), 2, short, StoreErrorRESP(OK, "why")},
		{"nulls", NewRecipe(0).Nulls(OK, 2), 2, res, "*2\r\n$-1\r\n$-1\r\n"},
		{"nulls RESP3", NewRecipe(0).Nulls(OK, 3), 3, short, "*3\r\n_\r\n_\r\n_\r\n"},
	} {
		var p ParsedRecipe
		if err := ParseRecipe(c.r.Bytes(), oneCall(len(vals)), &p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got, restart := p.Apply(nil, c.proto, c.resp); string(got) != c.want || restart {
			t.Errorf("%s: %q restart %v, want %q", c.name, got, restart, c.want)
		}
	}
}

// StoreErrorRESP is the error reply of StoreErrorText.
func StoreErrorRESP(code Code, msg string) string { return "-" + StoreErrorText(code, msg) + "\r\n" }

func TestRecipeWithoutDefaultAnswersStoreError(t *testing.T) {
	var p ParsedRecipe
	if err := ParseRecipe(NewRecipe(0).OK(OK).Bytes(), oneCall(1), &p); err != nil {
		t.Fatal(err)
	}
	got, _ := p.Apply(nil, 2, &Response{Results: []Result{{Code: Timeout, Msg: "t"}}})
	if want := "-ERR respike: store timeout; the command may or may not have been applied (code 9): t\r\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseRecipeRefusesMalformed(t *testing.T) {
	good := NewRecipe(0).Value(OK, 0).Bytes()
	for _, c := range []struct {
		name string
		b    []byte
		req  *Request
	}{
		{"empty", nil, oneCall(1)},
		{"version", []byte{2, 0, 1, 0, 0, 0, 0, 3}, oneCall(1)},
		{"no rule", []byte{1, 0, 0}, oneCall(1)},
		{"too many rules", []byte{1, 0, MaxRecipeRules + 1}, oneCall(1)},
		{"call out of range", NewRecipe(1).Null(OK).Bytes(), oneCall(1)},
		{"op out of range", NewRecipe(0).Value(OK, 1).Bytes(), oneCall(1)},
		{"int op out of range", NewRecipe(0).Int(OK, 5).Bytes(), oneCall(2)},
		{"missing op", []byte{1, 0, 1, 0, 0, 0, 0, 1}, oneCall(1)},
		{"truncated rule", []byte{1, 0, 1, 0, 0, 0}, oneCall(1)},
		{"unknown action", []byte{1, 0, 1, 0, 0, 0, 0, 0}, oneCall(1)},
		{"unknown action past the last", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActNulls) + 1}, oneCall(1)},
		{"first op out of range", NewRecipe(0).First(OK, 1).Bytes(), oneCall(1)},
		{"len op out of range", NewRecipe(0).Len(OK, 2).Bytes(), oneCall(2)},
		{"first len op out of range", NewRecipe(0).FirstLen(OK, 1).Bytes(), oneCall(1)},
		{"first each past the ops", NewRecipe(0).FirstEach(OK, 1, 3).Bytes(), oneCall(3)},
		{"first each of none", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActFirstEach), 0, 0}, oneCall(1)},
		{"first each without count", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActFirstEach), 0}, oneCall(1)},
		{"no nulls", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActNulls), 0}, oneCall(1)},
		{"nulls without count", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActNulls)}, oneCall(1)},
		{"restart on OK", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActRestart)}, oneCall(1)},
		{"restart on timeout", []byte{1, 0, 1, 9, 0, 0, 0, byte(ActRestart)}, oneCall(1)},
		{"reply without length", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActReply), 3}, oneCall(1)},
		{"reply too short", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActReply), 2, 0, '\r', '\n'}, oneCall(1)},
		{"reply without CRLF", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActReply), 3, 0, '+', 'O', 'K'}, oneCall(1)},
		{"reply past the end", []byte{1, 0, 1, 0, 0, 0, 0, byte(ActReply), 9, 0, '+', '\r', '\n'}, oneCall(1)},
		{"trailing bytes", append(append([]byte(nil), good...), 0), oneCall(1)},
		{"fewer rules than said", []byte{1, 0, 2, 0, 0, 0, 0, byte(ActNull)}, oneCall(1)},
		{"not a records request", good, &Request{Kind: ReqCount}},
	} {
		var p ParsedRecipe
		if err := ParseRecipe(c.b, c.req, &p); !errors.Is(err, ErrRecipe) {
			t.Errorf("%s: %v, want ErrRecipe", c.name, err)
		}
	}
}

func TestRecipeBuilderRefusesWhatTheHostWould(t *testing.T) {
	for name, f := range map[string]func(){
		"restart on OK":       func() { NewRecipe(0).Restart(OK) },
		"restart on timeout":  func() { NewRecipe(0).Restart(Timeout) },
		"reply without CRLF":  func() { NewRecipe(0).Reply(OK, "+OK") },
		"op 256":              func() { NewRecipe(0).Value(OK, 256) },
		"first each of none":  func() { NewRecipe(0).FirstEach(OK, 0, 0) },
		"first each past 255": func() { NewRecipe(0).FirstEach(OK, 200, 60) },
		"no nulls":            func() { NewRecipe(0).Nulls(OK, 0) },
		"256 nulls":           func() { NewRecipe(0).Nulls(OK, 256) },
		"call -1":             func() { NewRecipe(-1) },
		"17 rules": func() {
			r := NewRecipe(0)
			for range MaxRecipeRules + 1 {
				r.Null(OK)
			}
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestRestartSafe(t *testing.T) {
	for _, c := range []Code{OK, Timeout, BackendUnavail, BackendError, ServerError, ParameterError, InvalidOperation, 14, 18} {
		if RestartSafe(c) {
			t.Errorf("code %d is restart-safe: a write with that outcome may have applied", c)
		}
	}
	for _, c := range []Code{NotFound, GenerationError, Exists, BinTypeError, FilteredOut} {
		if !RestartSafe(c) {
			t.Errorf("code %d is not restart-safe", c)
		}
	}
}

func TestApplyDoesNotAllocate(t *testing.T) {
	var p ParsedRecipe
	if err := ParseRecipe(NewRecipe(0).Value(OK, 0).Null(NotFound).Bytes(), oneCall(1), &p); err != nil {
		t.Fatal(err)
	}
	resp := &Response{Results: []Result{{Values: []Value{Bytes([]byte("value"))}}}}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf, _ = p.Apply(buf[:0], 2, resp) }); n != 0 {
		t.Errorf("Apply allocates %v times", n)
	}
}
