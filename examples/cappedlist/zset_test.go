package main

import (
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestZAddKeepsHighest(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		do(t, h, "[]", "CAPPED.ZRANGE", "top")
		do(t, h, "(integer) 0", "CAPPED.ZADD", "top", "3", "10", "ann")
		do(t, h, "(integer) 0", "CAPPED.ZADD", "top", "3", "5", "bob")
		do(t, h, "(integer) 0", "CAPPED.ZADD", "top", "3", "20", "cid")
		do(t, h, `["bob" "ann" "cid"]`, "CAPPED.ZRANGE", "top")
		// Over the cap: the lowest score goes.
		do(t, h, "(integer) 1", "CAPPED.ZADD", "top", "3", "15", "dee")
		do(t, h, `["ann" "dee" "cid"]`, "CAPPED.ZRANGE", "top")
		// A score below everything kept is evicted at once.
		do(t, h, "(integer) 1", "CAPPED.ZADD", "top", "3", "1", "eve")
		do(t, h, `["ann" "dee" "cid"]`, "CAPPED.ZRANGE", "top")
		// A member is unique: adding it again moves it.
		do(t, h, "(integer) 0", "CAPPED.ZADD", "top", "3", "0", "cid")
		do(t, h, `["cid" "ann" "dee"]`, "CAPPED.ZRANGE", "top")
		do(t, h, "(integer) 1", "CAPPED.ZADD", "top", "3", "30", "eve")
		do(t, h, `["eve" "dee" "ann"]`, "CAPPED.ZRANGE", "top", "REV")
		// Lowering the cap evicts the excess in one step.
		do(t, h, "(integer) 3", "capped.zadd", "top", "1", "12", "fay")
		do(t, h, `["eve"]`, "capped.zrange", "top")
	})
}

func TestZAddScores(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		for _, a := range [][2]string{{"1.5", "a"}, {"-2", "b"}, {"1e20", "c"}, {"+inf", "d"}, {"-inf", "e"}, {".5", "f"}, {"3", "g"}, {"1.5", "h"}} {
			do(t, h, "(integer) 0", "CAPPED.ZADD", "z", "10", a[0], a[1])
		}
		// Lowest first; equal scores by member.
		do(t, h, `["e" "b" "f" "a" "h" "g" "c" "d"]`, "CAPPED.ZRANGE", "z")
		do(t, h, `["e" "-inf" "b" "-2" "f" "0.5" "a" "1.5" "h" "1.5" "g" "3" "c" "1e+20" "d" "inf"]`,
			"CAPPED.ZRANGE", "z", "WITHSCORES")
		do(t, h, `["d" "inf" "c" "1e+20" "g" "3" "h" "1.5" "a" "1.5" "f" "0.5" "b" "-2" "e" "-inf"]`,
			"CAPPED.ZRANGE", "z", "rev", "withscores", "WITHSCORES")
		h.Proto = 3
		do(t, h, `[["d" (double) inf] ["c" (double) 1e+20] ["g" (double) 3] ["h" (double) 1.5] ["a" (double) 1.5] ["f" (double) 0.5] ["b" (double) -2] ["e" (double) -inf]]`,
			"CAPPED.ZRANGE", "z", "WITHSCORES", "REV")
		do(t, h, `["e" "b" "f" "a" "h" "g" "c" "d"]`, "CAPPED.ZRANGE", "z")

		// Scores are stored as float64, even when given as integers:
		// Aerospike ranks every integer below every float.
		call := codec.Call{Key: []byte("z")}
		call.MapGetByKeys(codec.BinValue, codec.ReturnValue, []codec.Value{codec.Bytes([]byte("g"))})
		r := h.Exec(call)[0]
		if v := r.Value(0); r.Code != codec.OK || v.Len() != 1 || v.List[0].Kind != codec.KindFloat || v.List[0].Float != 3 {
			t.Errorf("stored score of g = %+v, want the float 3", v)
		}

		// Binary members survive.
		do(t, h, "(integer) 1", "CAPPED.ZADD", "z", "8", "2", "\x00\xff\r\n")
		do(t, h, `["b" "f" "a" "h" "\x00\xff\r\n" "g" "c" "d"]`, "CAPPED.ZRANGE", "z")
	})
}

func TestZErrors(t *testing.T) {
	each(t, func(t *testing.T, h *sdktest.Host) {
		for _, s := range []string{"abc", "nan", "1e400", "-1e400", "1e-400", "1_0", " 1", "1 ", ""} {
			do(t, h, "(error) ERR value is not a valid float", "CAPPED.ZADD", "k", "3", s, "m")
		}
		do(t, h, "(error) ERR value is not an integer or out of range", "CAPPED.ZADD", "k", "x", "1", "m")
		do(t, h, "(error) ERR cap must be positive", "CAPPED.ZADD", "k", "0", "1", "m")
		do(t, h, "(error) ERR syntax error", "CAPPED.ZRANGE", "k", "WITHSCORE")
		do(t, h, "(error) ERR syntax error", "CAPPED.ZRANGE", "k", "REV", "REV")
		do(t, h, "[]", "CAPPED.ZRANGE", "k") // nothing was written

		// Accepted forms strtod also accepts.
		for _, s := range []string{"0", "-0", "1e-310", "0x1p4", "5.", "1.0e1", "INF", "-Infinity"} {
			do(t, h, "(integer) 0", "CAPPED.ZADD", "ok", "100", s, "m"+s)
		}

		// Capped logs, capped sorted sets and other types do not mix.
		put(t, h, "s", codec.TypeString)
		do(t, h, "(integer) 0", "CAPPED.ADD", "log", "3", "1", "m")
		const wrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"
		do(t, h, wrongType, "CAPPED.ZADD", "s", "3", "1", "m")
		do(t, h, wrongType, "CAPPED.ZRANGE", "s")
		do(t, h, wrongType, "CAPPED.ZADD", "log", "3", "1", "m")
		do(t, h, wrongType, "CAPPED.ZRANGE", "log")
		do(t, h, wrongType, "CAPPED.ADD", "ok", "3", "1", "m")
		do(t, h, wrongType, "CAPPED.RANGE", "ok")
	})
}

func TestZManifest(t *testing.T) {
	got := map[string]codec.CommandInfo{}
	for _, c := range sdktest.Manifest().Commands {
		got[c.Name] = c
	}
	add, rng := got["capped.zadd"], got["capped.zrange"]
	if add.Arity != 5 || add.FirstKey != 1 || add.Flags[0] != "write" || rng.Arity != -2 || rng.Flags[0] != "readonly" {
		t.Errorf("capped.zadd %+v, capped.zrange %+v", add, rng)
	}
}
