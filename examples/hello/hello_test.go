package main

import (
	"context"
	"fmt"
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestGreet(t *testing.T) {
	h := sdktest.New()
	if got := h.Do("GREET", "Ada"); got != `"hello, Ada"` {
		t.Errorf("GREET Ada = %s", got)
	}
	if got := h.Do("greet", "Grace"); got != `"hello, Grace"` {
		t.Errorf("greet Grace = %s", got)
	}
}

func TestVisit(t *testing.T) {
	// Inline false: the host resumes the module after each store
	// request, as with Aerospike; true: it answers during the call, as
	// with the embedded store. A command must work both ways.
	for _, inline := range []bool{false, true} {
		h := sdktest.New()
		h.Inline = inline
		for n := 1; n <= 3; n++ {
			want := fmt.Sprintf("(integer) %d", n)
			if got := h.Do("VISIT", "home"); got != want {
				t.Errorf("inline=%v: visit %d: got %s, want %s", inline, n, got, want)
			}
		}
		if got := h.Do("VISIT", "about"); got != "(integer) 1" {
			t.Errorf("inline=%v: another key: got %s", inline, got)
		}
		h.Store.Close()
	}
}

// TestVisitWrongType: VISIT refuses a key that holds another type. The
// record is written straight to the test host's store, as another module
// would have written it.
func TestVisitWrongType(t *testing.T) {
	h := sdktest.New()
	defer h.Store.Close()
	var resp codec.Response
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte("s")}}}
	req.Calls[0].Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("x")))
	h.Store.Exec(context.Background(), h.DB, &req, &resp)
	if got := h.Do("VISIT", "s"); got != "(error) WRONGTYPE Operation against a key holding the wrong kind of value" {
		t.Errorf("VISIT on a string: %s", got)
	}
}

// Baselines with the same store traffic as GREET (none) and VISIT, doing
// nothing else: what the test host and the store allocate anyway.
func init() {
	sdk.Register(sdk.Command{Name: "baseline.reply", Arity: -1, Run: func(c *sdk.Ctx) { c.Reply().Null() }},
		sdk.Command{Name: "baseline.visit", Arity: 2, Run: func(c *sdk.Ctx) {
			c.Record(c.Arg(1)).Guard(typeVisits).Put(codec.BinType, tagVisits).Add(codec.BinValue, one).Get(codec.BinValue)
			c.Exec(func(c *sdk.Ctx) { c.Reply().Null() })
		}})
}

// TestNoAllocations backs the tutorial's claim: once warm, GREET and VISIT
// allocate nothing in the module (allocation is 15-20× dearer in wasm).
func TestNoAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	h := sdktest.New()
	defer h.Store.Close()
	h.Inline = true
	for _, tc := range []struct{ cmd, baseline [][]byte }{
		{bytesOf("GREET", "Ada"), bytesOf("BASELINE.REPLY", "Ada")},
		{bytesOf("VISIT", "k"), bytesOf("BASELINE.VISIT", "k")},
	} {
		h.DoRaw(tc.cmd...)
		h.DoRaw(tc.baseline...)
		base := testing.AllocsPerRun(100, func() { h.DoRaw(tc.baseline...) })
		got := testing.AllocsPerRun(100, func() { h.DoRaw(tc.cmd...) })
		if got > base {
			t.Errorf("%s: %.1f allocations per run, baseline %.1f", tc.cmd[0], got, base)
		}
	}
}

func bytesOf(s ...string) [][]byte {
	b := make([][]byte, len(s))
	for i := range s {
		b[i] = []byte(s[i])
	}
	return b
}
