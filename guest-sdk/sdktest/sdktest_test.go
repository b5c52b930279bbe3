package sdktest_test

import (
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestExecSeedsAndInspects(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	h := sdktest.NewWithClock(func() time.Time { return now })
	var put codec.Call
	put.Key = []byte("k")
	put.Expire(10).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("v")))
	if r := h.Exec(put); r[0].Code != codec.OK {
		t.Fatalf("put: %+v", r[0])
	}
	var get codec.Call
	get.Key = []byte("k")
	get.Get(codec.BinValue)
	if r := h.Exec(get); string(r[0].Value(0).Bytes) != "v" || r[0].TTL != 10 {
		t.Fatalf("get: %+v", r[0])
	}
	now = now.Add(11 * time.Second)
	if r := h.Exec(get); r[0].Code != codec.NotFound {
		t.Fatalf("after expiry: %+v", r[0])
	}
}

func TestFormat(t *testing.T) {
	cases := map[string]string{
		"+OK\r\n": "OK", "$-1\r\n": "(nil)", "_\r\n": "(nil)", ":5\r\n": "(integer) 5",
		"-ERR x\r\n": "(error) ERR x", "$2\r\na \r\n": `"a "`, "*2\r\n$1\r\na\r\n:1\r\n": `["a" (integer) 1]`,
		"%1\r\n$1\r\nk\r\n,1.5\r\n": `{"k": (double) 1.5}`, "#t\r\n": "(true)", "*-1\r\n": "(nil)",
	}
	for in, want := range cases {
		if got := sdktest.Format([]byte(in)); got != want {
			t.Errorf("Format(%q) = %s, want %s", in, got, want)
		}
	}
}
