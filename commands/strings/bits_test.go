package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestSetBitStorage(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		// The store's bit ops write a blob, even when the bytes read as
		// an integer; INCR then still works on them.
		cmdtest.Script(t, h, `
SETBIT k 2 1 => (integer) 0
SETBIT k 3 1 => (integer) 0
SETBIT k 7 1 => (integer) 0
GET k => "1"
`)
		if v := stored(t, h, "k"); v.Kind != codec.KindBytes {
			t.Errorf("SETBIT stored kind %d, want bytes", v.Kind)
		}
		cmdtest.Script(t, h, `
INCR k => (integer) 2
GETBIT k 6 => (integer) 1
GETBIT k 7 => (integer) 0
`)
		// On an integer the bit ops are refused: a read-modify-write of
		// its digits, stored as an integer again when they still are one.
		if v := stored(t, h, "k"); v.Kind != codec.KindInt {
			t.Fatalf("after INCR, kind %d", v.Kind)
		}
		cmdtest.Script(t, h, `
SETBIT k 7 1 => (integer) 0
GET k => "3"
SETBIT k 7 1 => (integer) 1
BITCOUNT k 0 0 => (integer) 4
BITFIELD k INCRBY u8 0 1 => [(integer) 52]
GET k => "4"
`)
		if v := stored(t, h, "k"); v.Kind != codec.KindInt {
			t.Errorf("after the read-modify-writes, kind %d, want int", v.Kind)
		}
	})
}

func TestBitWritesRetryOnConcurrentWrite(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		inner := h.Store
		writes, limit := 0, 2
		h.Store = &cmdtest.InterceptStore{Store: inner, Before: func(req *codec.Request) {
			// Before each generation-guarded write, another client
			// rewrites the key.
			if req.Kind == codec.ReqRecords && req.Calls[0].Policy.Generation != 0 && writes < limit {
				writes++
				cmdtest.PutString(t, inner, "k", codec.Bytes([]byte{byte(writes)}))
			}
		}}
		cmdtest.PutString(t, h.Store, "k", codec.Bytes([]byte{0}))
		if got := h.Do("BITFIELD", "k", "INCRBY", "u8", "0", "10"); got != "[(integer) 12]" {
			t.Errorf("BITFIELD under contention = %s, want 12", got)
		}
		writes, limit = 0, 1<<30
		if got := h.Do("BITFIELD", "k", "SET", "u8", "0", "1"); got != "(error) ERR respike: the key kept changing during a read-modify-write; try again" {
			t.Errorf("BITFIELD under endless contention = %s", got)
		}
		// SETBIT on an integer value takes the same path.
		writes, limit = 0, 1
		cmdtest.PutString(t, h.Store, "k", codec.Int(5))
		if got := h.Do("SETBIT", "k", "15", "1"); got != "(integer) 0" {
			t.Errorf("SETBIT under contention = %s", got)
		}
		if got := h.Do("GET", "k"); got != `"\x01\x01"` {
			t.Errorf("GET after SETBIT under contention = %s", got)
		}
	})
}

func TestBitFieldOverflow(t *testing.T) {
	for _, c := range []struct {
		value, incr int64
		bits        uint
		ow          int
		want        int64
		overflow    bool
	}{
		{100, 100, 8, owWrap, -56, true},
		{100, 100, 8, owSat, 127, true},
		{-100, -100, 8, owSat, -128, true},
		{-100, -100, 8, owWrap, 56, true},
		{127, 0, 8, owWrap, 127, false},
		{200, 0, 8, owWrap, -56, true}, // a SET of 200 into i8
		{1<<63 - 1, 1, 64, owWrap, -1 << 63, true},
		{1<<63 - 1, 1, 64, owSat, 1<<63 - 1, true},
		{-1 << 63, -1, 64, owSat, -1 << 63, true},
		{-1 << 63, 1<<63 - 1, 64, owSat, -1, false},
		{0, -1, 1, owWrap, -1, false},
		{-1, -1, 1, owWrap, 0, true},
	} {
		got, of := signedOverflow(c.value, c.incr, c.bits, c.ow)
		if got != c.want || of != c.overflow {
			t.Errorf("signed %d+%d in %d bits (ow %d) = %d, %v; want %d, %v", c.value, c.incr, c.bits, c.ow, got, of, c.want, c.overflow)
		}
	}
	for _, c := range []struct {
		value    uint64
		incr     int64
		bits     uint
		ow       int
		want     uint64
		overflow bool
	}{
		{200, 100, 8, owWrap, 44, true},
		{200, 100, 8, owSat, 255, true},
		{5, -10, 8, owSat, 0, true},
		{5, -10, 8, owWrap, 251, true},
		{1<<64 - 1, 0, 8, owSat, 255, true}, // a SET of -1 into u8
		{1<<63 - 1, 1, 63, owWrap, 0, true},
		{0, 1<<63 - 1, 63, owWrap, 1<<63 - 1, false},
	} {
		got, of := unsignedOverflow(c.value, c.incr, c.bits, c.ow)
		if got != c.want || of != c.overflow {
			t.Errorf("unsigned %d+%d in %d bits (ow %d) = %d, %v; want %d, %v", c.value, c.incr, c.bits, c.ow, got, of, c.want, c.overflow)
		}
	}
}
