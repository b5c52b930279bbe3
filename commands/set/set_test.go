package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

const wrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"

func TestSAddSRem(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			sadd s a b a => (integer) 2
			sadd s a => (integer) 0
			sadd s c "" "\x00\xff" => (integer) 3
			type s => set
			scard s => (integer) 5
			srem s a z => (integer) 1
			srem s a => (integer) 0
			srem s b b b => (integer) 1
			srem nokey a => (integer) 0
			exists nokey => (integer) 0
			scard s => (integer) 3
			srem s c "" "\x00\xff" => (integer) 3
			exists s => (integer) 0
			type s => none
			set str v => OK
			sadd str a => `+wrongType+`
			srem str a => `+wrongType+`
		`)
	})
	// Members are stored with the placeholder value 1.
	h := sdktest.New()
	h.Do("sadd", "s", "m")
	var call codec.Call
	call.Key = []byte("s")
	call.Get(codec.BinValue)
	r := cmdtest.Exec(t, h.Store, call)
	if v := r.Values[0]; v.Kind != codec.KindMap || len(v.List) != 2 || !v.List[1].Equal(codec.Int(1)) {
		t.Errorf("stored set: %+v", v)
	}
}

func TestSetReads(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			scard nokey => (integer) 0
			sismember nokey a => (integer) 0
			smismember nokey a b => [(integer) 0 (integer) 0]
			smembers nokey => []
			sadd s c a b => (integer) 3
			sismember s b => (integer) 1
			sismember s z => (integer) 0
			smismember s a z b a => [(integer) 1 (integer) 0 (integer) 1 (integer) 1]
			smembers s => ["a" "b" "c"]
			set str v => OK
			scard str => `+wrongType+`
			sismember str a => `+wrongType+`
			smismember str a => `+wrongType+`
			smembers str => `+wrongType+`
		`)
		h.Proto = 3
		cmdtest.Script(t, h, `
			smembers s => ["a" "b" "c"]
			smembers nokey => []
		`)
		if got := string(h.DoRaw([]byte("smembers"), []byte("s"))); got != "~3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n" {
			t.Errorf("RESP3 SMEMBERS = %q, want a set", got)
		}
		if got := string(h.DoRaw([]byte("smembers"), []byte("nokey"))); got != "~0\r\n" {
			t.Errorf("RESP3 SMEMBERS of a missing key = %q", got)
		}
	})
}

// SMISMEMBER with many members.
func TestSMIsMemberMany(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		add := []string{"sadd", "s"}
		ask := []string{"smismember", "s"}
		want := "["
		for i := range 30 {
			m := string(rune('A' + i))
			if i%2 == 0 {
				add = append(add, m)
			}
			ask = append(ask, m)
			if i > 0 {
				want += " "
			}
			if i%2 == 0 {
				want += "(integer) 1"
			} else {
				want += "(integer) 0"
			}
		}
		h.Do(add...)
		if got := h.Do(ask...); got != want+"]" {
			t.Errorf("SMISMEMBER = %s", got)
		}
	})
}

// Writes keep the key's TTL, as Redis's set commands do.
func TestSetWritesKeepTTL(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			sadd s a b c d e => (integer) 5
			expire s 100 => (integer) 1
			sadd s f => (integer) 1
			srem s a => (integer) 1
			ttl s => (integer) 100
			sadd d x => (integer) 1
			expire d 50 => (integer) 1
			smove s d b => (integer) 1
			ttl s => (integer) 100
			ttl d => (integer) 50
			sadd fresh a => (integer) 1
			ttl fresh => (integer) -1
		`)
		h.Do("spop", "s")
		h.Do("spop", "s", "2")
		cmdtest.Script(t, h, `
			scard s => (integer) 1
			ttl s => (integer) 100
		`)
	})
}

func TestSMove(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			set str v => OK
			smove nokey str a => (integer) 0
			smove str nokey a => `+wrongType+`
			sadd s2 x y => (integer) 2
			smove s2 str x => `+wrongType+`
			smove s2 str nothere => `+wrongType+`
			smismember s2 x y => [(integer) 1 (integer) 1]
			smove s2 s2 x => (integer) 1
			smove s2 s2 z => (integer) 0
			smove s2 s3 nothere => (integer) 0
			exists s3 => (integer) 0
			smove s2 s3 x => (integer) 1
			smembers s2 => ["y"]
			smembers s3 => ["x"]
			sadd s3 y => (integer) 1
			smove s2 s3 y => (integer) 1
			exists s2 => (integer) 0
			smembers s3 => ["x" "y"]
			type s3 => set
		`)
	})
}

// When the destination turns into another type between SMOVE's check and
// its write, the member goes back into the source.
func TestSMoveDestinationRace(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("sadd", "src", "m", "n")
		base := h.Store
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			c := &req.Calls[0]
			if string(c.Key) == "dst" && len(c.Ops) == 2 && c.Ops[1].Code == codec.OpMapPut {
				var call codec.Call
				call.Key = []byte("dst")
				call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("v")))
				cmdtest.Exec(t, base, call)
			}
		}}
		cmdtest.Script(t, h, `
			smove src dst m => `+wrongType+`
			smembers src => ["m" "n"]
			type dst => string
		`)
	})
}

// A record without a type tag whose value bin is not a map (written by
// something other than respike) passes the type guard; map operations on
// it fail with BIN_TYPE_ERROR, answered as WRONGTYPE.
func TestForeignRecord(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		var call codec.Call
		call.Key = []byte("raw")
		call.Put(codec.BinValue, codec.Bytes([]byte("blob")))
		cmdtest.Exec(t, h.Store, call)
		cmdtest.Script(t, h, `
			sadd raw m => `+wrongType+`
			srem raw m => `+wrongType+`
			smembers raw => `+wrongType+`
			spop raw => `+wrongType+`
			srandmember raw 2 => `+wrongType+`
			sinter raw => `+wrongType+`
			sscan raw 0 => `+wrongType+`
			smove raw other m => `+wrongType+`
		`)
	})
}

// When another client removes the member between SMOVE's check and its
// removal, SMOVE answers 0 and adds nothing.
func TestSMoveMemberGone(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("sadd", "src", "m", "n")
		base := h.Store
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			c := &req.Calls[0]
			if string(c.Key) == "src" && c.Policy.DeleteIfEmpty != "" {
				var call codec.Call
				call.Key = []byte("src")
				call.MapRemoveByKeys(codec.BinValue, codec.ReturnNone, []codec.Value{codec.Bytes([]byte("m"))})
				cmdtest.Exec(t, base, call)
			}
		}}
		cmdtest.Script(t, h, `
			smove src dst m => (integer) 0
			exists dst => (integer) 0
			smembers src => ["n"]
		`)
	})
}
