package codec

import "testing"

func TestRequestWrites(t *testing.T) {
	read := Call{Key: []byte("k")}
	read.Get("").Header().MapSize(BinValue)
	write := Call{Key: []byte("k")}
	write.Get(BinValue).Put(BinValue, Int(1))
	for _, tc := range []struct {
		name string
		req  Request
		want bool
	}{
		{"reads", Request{Kind: ReqRecords, Calls: []Call{read, read}}, false},
		{"a write among reads", Request{Kind: ReqRecords, Calls: []Call{read, write}}, true},
		{"scan", Request{Kind: ReqScan}, false},
		{"count", Request{Kind: ReqCount}, false},
		{"truncate", Request{Kind: ReqTruncate}, true},
	} {
		if got := tc.req.Writes(); got != tc.want {
			t.Errorf("%s: Writes() = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, c := range []OpCode{OpDelete, OpTouch, OpMapPut, OpMapIncrement, OpMapRemoveByKeys, OpMapClear, OpAppend} {
		if !c.Writes() {
			t.Errorf("op %d does not write", c)
		}
	}
	for _, c := range []OpCode{OpGet, OpGetHeader, OpMapSize, OpMapGetByKeys, OpMapGetByIndex, OpMapGetByRank} {
		if c.Writes() {
			t.Errorf("op %d writes", c)
		}
	}
}
