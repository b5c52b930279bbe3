package main

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// each runs f on a fresh host resuming after every store request (the
// remote-store path) and on one running requests inline (the embedded one).
func each(t *testing.T, f func(t *testing.T, h *sdktest.Host)) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			h := sdktest.New()
			h.Inline = inline
			t.Cleanup(func() { h.Store.Close() })
			f(t, h)
		})
	}
}

// do runs a command and compares its reply in redis-cli notation.
func do(t *testing.T, h *sdktest.Host, want string, args ...string) {
	t.Helper()
	if got := h.Do(args...); got != want {
		t.Errorf("%q:\n got %s\nwant %s", args, got, want)
	}
}

func TestKeepsNewest(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		do(t, h, "[]", "CAPPED.RANGE", "log")
		do(t, h, "(integer) 0", "CAPPED.ADD", "log", "3", "100", "a")
		do(t, h, "(integer) 0", "CAPPED.ADD", "log", "3", "300", "c")
		do(t, h, "(integer) 0", "CAPPED.ADD", "log", "3", "200", "b")
		do(t, h, `["c" "b" "a"]`, "CAPPED.RANGE", "log")
		do(t, h, "(integer) 1", "CAPPED.ADD", "log", "3", "400", "d")
		do(t, h, `["d" "c" "b"]`, "CAPPED.RANGE", "log")
		// An entry older than everything kept is evicted at once.
		do(t, h, "(integer) 1", "CAPPED.ADD", "log", "3", "50", "old")
		do(t, h, `["d" "c" "b"]`, "CAPPED.RANGE", "log")
		// The same pair again changes nothing; the same member at
		// another score is another entry.
		do(t, h, "(integer) 0", "CAPPED.ADD", "log", "3", "400", "d")
		do(t, h, "(integer) 1", "CAPPED.ADD", "log", "3", "500", "d")
		do(t, h, `["d" "d" "c"]`, "capped.range", "log")
		// Lowering the cap evicts the excess in one step.
		do(t, h, "(integer) 3", "CAPPED.ADD", "log", "1", "600", "e")
		do(t, h, `["e"]`, "CAPPED.RANGE", "log")
	})
}

func TestScoresAndTies(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		lo, hi := strconv.FormatInt(math.MinInt64, 10), strconv.FormatInt(math.MaxInt64, 10)
		for _, a := range [][2]string{{"0", "zero"}, {"-1", "minus"}, {lo, "lo"}, {hi, "hi"}, {"1", "b"}, {"1", "a"}} {
			do(t, h, "(integer) 0", "CAPPED.ADD", "k", "10", a[0], a[1])
		}
		// Highest score first; equal scores by member.
		do(t, h, `["hi" "a" "b" "zero" "minus" "lo"]`, "CAPPED.RANGE", "k")
		do(t, h, `["hi" "`+hi+`" "a" "1" "b" "1" "zero" "0" "minus" "-1" "lo" "`+lo+`"]`, "CAPPED.RANGE", "k", "WITHSCORES")
		h.Proto = 3
		do(t, h, `[["hi" (integer) `+hi+`] ["a" (integer) 1] ["b" (integer) 1] ["zero" (integer) 0] ["minus" (integer) -1] ["lo" (integer) `+lo+`]]`,
			"CAPPED.RANGE", "k", "withscores")
		// Binary members survive.
		do(t, h, "(integer) 1", "CAPPED.ADD", "k", "6", hi, "\x00\xff\r\n")
		do(t, h, `["\x00\xff\r\n" "hi" "a" "b" "zero" "minus"]`, "CAPPED.RANGE", "k")
	})
}

func TestErrors(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		do(t, h, "(error) ERR value is not an integer or out of range", "CAPPED.ADD", "k", "x", "1", "m")
		do(t, h, "(error) ERR value is not an integer or out of range", "CAPPED.ADD", "k", "+3", "1", "m")
		do(t, h, "(error) ERR cap must be positive", "CAPPED.ADD", "k", "0", "1", "m")
		do(t, h, "(error) ERR cap must be positive", "CAPPED.ADD", "k", "-2", "1", "m")
		do(t, h, "(error) ERR value is not an integer or out of range", "CAPPED.ADD", "k", "3", "1.5", "m")
		do(t, h, "(error) ERR value is not an integer or out of range", "CAPPED.ADD", "k", "3", "9223372036854775808", "m")
		do(t, h, "(error) ERR syntax error", "CAPPED.RANGE", "k", "WITHSCORE")
		do(t, h, "(error) ERR syntax error", "CAPPED.RANGE", "k", "WITHSCORES", "x")
		do(t, h, "[]", "CAPPED.RANGE", "k") // nothing was written

		put(t, h, "s", codec.TypeString)
		do(t, h, "(error) WRONGTYPE Operation against a key holding the wrong kind of value", "CAPPED.ADD", "s", "3", "1", "m")
		do(t, h, "(error) WRONGTYPE Operation against a key holding the wrong kind of value", "CAPPED.RANGE", "s")
	})
}

func TestManifest(t *testing.T) {
	m := sdktest.Manifest()
	got := map[string]codec.CommandInfo{}
	for _, c := range m.Commands {
		got[c.Name] = c
	}
	if m.Module != "cappedlist" || got["capped.add"].Arity != 5 || got["capped.range"].Arity != -2 ||
		got["capped.add"].FirstKey != 1 || got["capped.range"].Flags[0] != "readonly" {
		t.Errorf("manifest: %+v", m)
	}
}

// put writes a record of type tag directly to the host's store.
func put(t *testing.T, h *sdktest.Host, key, tag string) {
	t.Helper()
	var resp codec.Response
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(key)}}}
	req.Calls[0].Put(codec.BinType, codec.Str(tag)).Put(codec.BinValue, codec.Bytes([]byte("x")))
	h.Store.Exec(context.Background(), h.DB, &req, &resp)
	if resp.Code != codec.OK || resp.Results[0].Code != codec.OK {
		t.Fatalf("put %s: %+v", key, resp)
	}
}
