package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

const wrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"

func TestGetSet(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
GET k => (nil)
SET k v => OK
GET k => "v"
SET k "" => OK
GET k => ""
SET "a key\x00with nul" "\x00\xff\r\n" => OK
GET "a key\x00with nul" => "\x00\xff\r\n"
SET "" empty-key => OK
GET "" => "empty-key"
SET n 123 => OK
GET n => "123"
SET n -0 => OK
GET n => "-0"
SET n 007 => OK
GET n => "007"
SET n 9223372036854775808 => OK
GET n => "9223372036854775808"
GET h => `+wrongType+`
SET h v => OK
GET h => "v"
`)
	})
}

func TestIntegersStoredAsIntegers(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, c := range []struct {
			v    string
			kind codec.Kind
		}{
			{"0", codec.KindInt}, {"-1", codec.KindInt}, {"9223372036854775807", codec.KindInt},
			{"-9223372036854775808", codec.KindInt}, {"9223372036854775808", codec.KindBytes},
			{"-0", codec.KindBytes}, {"01", codec.KindBytes}, {"+1", codec.KindBytes},
			{" 1", codec.KindBytes}, {"1 ", codec.KindBytes}, {"", codec.KindBytes}, {"1.5", codec.KindBytes},
		} {
			h.Do("SET", "k", c.v)
			if got := stored(t, h, "k"); got.Kind != c.kind {
				t.Errorf("SET k %q stored as kind %d, want %d", c.v, got.Kind, c.kind)
			}
			if got := h.Do("GET", "k"); got != strconv.Quote(c.v) {
				t.Errorf("GET after SET %q = %s", c.v, got)
			}
		}
	})
}

func TestSetOptions(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
SET k v NX => OK
SET k w NX => (nil)
GET k => "v"
SET k w XX => OK
GET k => "w"
SET missing v XX => (nil)
GET missing => (nil)
SET k x nx => (nil)
SET k x xX => OK
SET k v NX XX => (error) ERR syntax error
SET k v XX NX => (error) ERR syntax error
SET k v NX NX => (nil)
SET k v EX 10 PX 100 => (error) ERR syntax error
SET k v EX 10 KEEPTTL => (error) ERR syntax error
SET k v KEEPTTL EX 10 => (error) ERR syntax error
SET k v EXAT 10 PXAT 10 => (error) ERR syntax error
SET k v PX 10 EXAT 10 => (error) ERR syntax error
SET k v EX => (error) ERR syntax error
SET k v PERSIST => (error) ERR syntax error
SET k v FOO => (error) ERR syntax error
SET k v EX abc NX XX => (error) ERR syntax error
SET k v EX abc => (error) ERR value is not an integer or out of range
SET k v EX 1.5 => (error) ERR value is not an integer or out of range
SET k v EX 0 => (error) ERR invalid expire time in 'set' command
SET k v EX -1 => (error) ERR invalid expire time in 'set' command
SET k v PX 0 => (error) ERR invalid expire time in 'set' command
SET k v EXAT 0 => (error) ERR invalid expire time in 'set' command
SET k v PXAT -5 => (error) ERR invalid expire time in 'set' command
SET k v EX 9223372036854776 => (error) ERR invalid expire time in 'set' command
SET k v EX 9223372036854775 => (error) ERR invalid expire time in 'set' command
SET k v PX 9223372036854775807 => (error) ERR invalid expire time in 'set' command
SET k v EX 400000000 => OK
GET k => "v"
SET k x => OK
SET h v GET => `+wrongType+`
SET h v NX GET => `+wrongType+`
SET h v XX GET => `+wrongType+`
SET h v NX => (nil)
SET h v EX abc GET => (error) ERR value is not an integer or out of range
SET g v GET => (nil)
SET g w GET => "v"
SET g x NX GET => "w"
GET g => "w"
SET g2 v NX GET => (nil)
GET g2 => "v"
SET g3 v XX GET => (nil)
GET g3 => (nil)
SET g3 v GET XX => (nil)
SET g2 new XX GET => "v"
GET g2 => "new"
SET g2 7 GET => "new"
SET g2 8 GET => "7"
`)
	})
}

func TestSetTTL(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
SET k v EX 100 => OK
TTL k => (integer) 100
SET k v KEEPTTL => OK
TTL k => (integer) 100
SET k v => OK
TTL k => (integer) -1
SET k v PX 1500 => OK
TTL k => (integer) 2
SET k v PX 400 => OK
TTL k => (integer) 1
SET k v ex 10 EX 20 => OK
TTL k => (integer) 20
SET k w XX EX 30 GET => "v"
TTL k => (integer) 30
SET k w KEEPTTL GET => "w"
TTL k => (integer) 30
SET k2 v NX KEEPTTL => OK
TTL k2 => (integer) -1
SETEX k 50 v => OK
TTL k => (integer) 50
GETSET k x => "v"
TTL k => (integer) -1
PSETEX k 2400 v => OK
TTL k => (integer) 3
`)
		now := time.Now().Unix()
		cmdtest.Script(t, h, `
SET a v EXAT `+strconv.FormatInt(now+100, 10)+` => OK
SET b v PXAT `+strconv.FormatInt((now+200)*1000, 10)+` => OK
GET a => "v"
`)
		for key, want := range map[string]int64{"a": 100, "b": 200} {
			got := h.Do("TTL", key)
			if got != "(integer) "+strconv.FormatInt(want, 10) && got != "(integer) "+strconv.FormatInt(want-1, 10) {
				t.Errorf("TTL %s = %s, want about %d", key, got, want)
			}
		}
	})
}

func TestSetPastTime(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
SET k v EXAT 1 => OK
GET k => (nil)
SET k v => OK
SET k w PXAT 1000 => OK
GET k => (nil)
SET k v => OK
SET k w EXAT 1 NX => (nil)
GET k => "v"
SET k w EXAT 1 GET => "v"
GET k => (nil)
SET k w EXAT 1 XX => (nil)
SET k v => OK
SET k w EXAT 1 XX => OK
GET k => (nil)
SET k w EXAT 1 NX => OK
GET k => (nil)
SET k v => OK
SET k w EXAT 1 NX GET => "v"
GET k => "v"
SET k2 w EXAT 1 NX GET => (nil)
GET k2 => (nil)
SET k2 w EXAT 1 XX GET => (nil)
SET h w EXAT 1 GET => `+wrongType+`
SET h w EXAT 1 => OK
GET h => (nil)
`)
	})
}

func TestSetNXSetExGetSetGetDel(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
SETNX k v => (integer) 1
SETNX k w => (integer) 0
GET k => "v"
SETNX h v => (integer) 0
SETEX k 0 v => (error) ERR invalid expire time in 'setex' command
SETEX k -5 v => (error) ERR invalid expire time in 'setex' command
SETEX k abc v => (error) ERR value is not an integer or out of range
SETEX k 9223372036854776 v => (error) ERR invalid expire time in 'setex' command
PSETEX k 0 v => (error) ERR invalid expire time in 'psetex' command
PSETEX k x v => (error) ERR value is not an integer or out of range
SETEX h 10 v => OK
GET h => "v"
GETSET k new => "v"
GETSET fresh new => (nil)
GET fresh => "new"
GETDEL k => "new"
GETDEL k => (nil)
EXISTS k => (integer) 0
`)
		cmdtest.PutType(t, h.Store, "h2", codec.TypeList)
		cmdtest.Script(t, h, `
GETSET h2 v => `+wrongType+`
GETDEL h2 => `+wrongType+`
TYPE h2 => list
`)
	})
}

func TestGetEx(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
GETEX nokey => (nil)
GETEX nokey EX 10 => (nil)
GETEX nokey EX 0 => (nil)
GETEX nokey EX abc => (nil)
GETEX h => `+wrongType+`
GETEX h EX 0 => `+wrongType+`
SET k v => OK
GETEX k => "v"
TTL k => (integer) -1
GETEX k EX 100 => "v"
TTL k => (integer) 100
GETEX k PX 5500 => "v"
TTL k => (integer) 6
GETEX k PERSIST => "v"
TTL k => (integer) -1
GETEX k EX 0 => (error) ERR invalid expire time in 'getex' command
GETEX k PX -1 => (error) ERR invalid expire time in 'getex' command
GETEX k EX abc => (error) ERR value is not an integer or out of range
GETEX k EX 400000000 => "v"
GETEX k EX 10 PX 10 => (error) ERR syntax error
GETEX k PERSIST EX 10 => (error) ERR syntax error
GETEX k EX 10 PERSIST => (error) ERR syntax error
GETEX k NX => (error) ERR syntax error
GETEX k KEEPTTL => (error) ERR syntax error
GETEX k GET => (error) ERR syntax error
GETEX k EX => (error) ERR syntax error
GETEX k EX 10 EX 20 => "v"
TTL k => (integer) 20
GETEX k EXAT 1 => "v"
EXISTS k => (integer) 0
SET k v => OK
GETEX k PXAT 1 => "v"
GET k => (nil)
`)
		now := time.Now().Unix()
		h.Do("SET", "k", "v")
		if got := h.Do("GETEX", "k", "EXAT", strconv.FormatInt(now+50, 10)); got != `"v"` {
			t.Fatalf("GETEX EXAT = %s", got)
		}
		if got := h.Do("TTL", "k"); got != "(integer) 50" && got != "(integer) 49" {
			t.Errorf("TTL after GETEX EXAT now+50 = %s", got)
		}
	})
}

func TestMGetMSet(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
MSET a 1 b 2 c "" => OK
MGET a b c nokey h a => ["1" "2" "" (nil) (nil) "1"]
MSET a => (error) ERR wrong number of arguments for 'mset' command
MSET a 1 b => (error) ERR wrong number of arguments for 'mset' command
MSET a x a y a z => OK
GET a => "z"
MSET h v => OK
GET h => "v"
SET t v EX 100 => OK
MSET t w => OK
TTL t => (integer) -1
MSETNX a 1 new 2 => (integer) 0
EXISTS new => (integer) 0
MSETNX n1 1 n2 2 => (integer) 1
MGET n1 n2 => ["1" "2"]
MSETNX n3 x n3 y => (integer) 1
GET n3 => "y"
MSETNX n4 => (error) ERR wrong number of arguments for 'msetnx' command
`)
	})
}

func TestMSetNXUndo(t *testing.T) {
	// A key created by someone else between the check and the create must
	// leave nothing of this command behind: simulate it by intercepting the
	// create of y. Keys are created in sorted order whatever the argument
	// order, so x exists then and is undone, z is never created.
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		inner := h.Store
		var created []string
		h.Store = &cmdtest.InterceptStore{Store: inner, Before: func(req *codec.Request) {
			if len(req.Calls) != 1 || req.Calls[0].Policy.Exists != codec.ExistsCreateOnly {
				return
			}
			created = append(created, string(req.Calls[0].Key))
			if string(req.Calls[0].Key) == "y" {
				var c codec.Call
				c.Key = []byte("y")
				c.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes([]byte("theirs")))
				var resp codec.Response
				inner.Exec(t.Context(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{c}}, &resp)
			}
		}}
		cmdtest.Script(t, h, `
MSETNX z 3 y 2 x 1 => (integer) 0
MGET x y z => [(nil) "theirs" (nil)]
`)
		if strings.Join(created, " ") != "x y" {
			t.Errorf("creates %q, want x then y", created)
		}
		created = nil
		cmdtest.Script(t, h, `
MSETNX c 1 b 2 a 3 b 4 => (integer) 1
MGET a b c => ["3" "4" "1"]
`)
		if strings.Join(created, " ") != "a b c" {
			t.Errorf("creates %q, want a b c", created)
		}
	})
}

func TestIncr(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
INCR n => (integer) 1
INCR n => (integer) 2
DECR n => (integer) 1
INCRBY n 10 => (integer) 11
DECRBY n 20 => (integer) -9
GET n => "-9"
TYPE n => string
INCRBY n abc => (error) ERR value is not an integer or out of range
INCRBY n " 1" => (error) ERR value is not an integer or out of range
INCRBY n "" => (error) ERR value is not an integer or out of range
INCRBY n 01 => (error) ERR value is not an integer or out of range
INCRBY n 9223372036854775808 => (error) ERR value is not an integer or out of range
DECRBY n -9223372036854775808 => (error) ERR decrement would overflow
INCR h => `+wrongType+`
INCRBY h abc => (error) ERR value is not an integer or out of range
SET m 9223372036854775807 => OK
INCR m => (error) ERR increment or decrement would overflow
DECR m => (integer) 9223372036854775806
SET m -9223372036854775808 => OK
DECR m => (error) ERR increment or decrement would overflow
INCRBY m -1 => (error) ERR increment or decrement would overflow
DECRBY m 1 => (error) ERR increment or decrement would overflow
INCRBY m 9223372036854775807 => (integer) -1
SET s " 1" => OK
INCR s => (error) ERR value is not an integer or out of range
SET s 01 => OK
INCR s => (error) ERR value is not an integer or out of range
SET s +1 => OK
INCR s => (error) ERR value is not an integer or out of range
SET s -0 => OK
INCR s => (error) ERR value is not an integer or out of range
SET s "" => OK
INCR s => (error) ERR value is not an integer or out of range
SET s abc => OK
INCR s => (error) ERR value is not an integer or out of range
GET s => "abc"
APPEND a 1 => (integer) 1
APPEND a 0 => (integer) 2
INCR a => (integer) 11
GET a => "11"
SET t 5 EX 100 => OK
INCR t => (integer) 6
TTL t => (integer) 100
`)
		// A canonical integer stored as bytes (by another writer) takes the
		// read-modify-write path, and is an integer afterwards.
		cmdtest.PutString(t, h.Store, "raw", codec.Bytes([]byte("41")))
		cmdtest.Script(t, h, `
INCR raw => (integer) 42
INCRBY raw 9223372036854775807 => (error) ERR increment or decrement would overflow
`)
		if v := stored(t, h, "raw"); v.Kind != codec.KindInt || v.Int != 42 {
			t.Errorf("raw after INCR stored as %+v", v)
		}
		cmdtest.PutString(t, h.Store, "rawmax", codec.Bytes([]byte("9223372036854775807")))
		cmdtest.Script(t, h, `INCR rawmax => (error) ERR increment or decrement would overflow`)
	})
}

func TestIncrRetriesOnConcurrentWrite(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		inner := h.Store
		writes, limit := 0, 3
		h.Store = &cmdtest.InterceptStore{Store: inner, Before: func(req *codec.Request) {
			// Before each generation-guarded write, another client
			// rewrites the key (still as bytes): 10, 100, 1000, ...
			if req.Kind == codec.ReqRecords && req.Calls[0].Policy.Generation != 0 && writes < limit {
				writes++
				cmdtest.PutString(t, inner, "k", codec.Bytes([]byte("1"+strings.Repeat("0", writes%6))))
			}
		}}
		cmdtest.PutString(t, h.Store, "k", codec.Bytes([]byte("5")))
		if got := h.Do("INCRBY", "k", "1"); got != "(integer) 1001" {
			t.Errorf("INCRBY under contention = %s, want 1001", got)
		}
		// Endless contention gives up with an error, never a wrong answer.
		writes, limit = 0, 1<<30
		cmdtest.PutString(t, h.Store, "k", codec.Bytes([]byte("5")))
		if got := h.Do("INCR", "k"); got != "(error) ERR respike: the key kept changing during a read-modify-write; try again" {
			t.Errorf("INCR under endless contention = %s", got)
		}
		// APPEND to an integer value is a read-modify-write too: a
		// concurrent write of "10" makes it start over and append to that.
		writes, limit = 0, 1
		cmdtest.PutString(t, h.Store, "k", codec.Int(5))
		if got := h.Do("APPEND", "k", "x"); got != "(integer) 3" {
			t.Errorf("APPEND under contention = %s", got)
		}
		if got := h.Do("GET", "k"); got != `"10x"` {
			t.Errorf("GET after APPEND under contention = %s", got)
		}
	})
}

func TestIncrByFloat(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeHash)
		cmdtest.Script(t, h, `
SET f 10 => OK
INCRBYFLOAT f 10.5 => "20.5"
INCRBYFLOAT f 0.1 => "20.6"
INCRBYFLOAT f 3.0e3 => "3020.60000000000000009"
INCRBYFLOAT f -3020.6 => "0"
GET f => "0"
SET g 1 => OK
INCRBYFLOAT g 0.333333333333333333 => "1.33333333333333333"
SET h2 5 => OK
INCRBYFLOAT h2 "\x00" => (error) ERR value is not a valid float
INCRBYFLOAT h2 "1\x00abc" => (error) ERR value is not a valid float
INCRBYFLOAT h2 " 1" => (error) ERR value is not a valid float
INCRBYFLOAT h2 "1 " => (error) ERR value is not a valid float
INCRBYFLOAT h2 inf => (error) ERR increment would produce NaN or Infinity
INCRBYFLOAT h2 -INFINITY => (error) ERR increment would produce NaN or Infinity
INCRBYFLOAT h2 nan => (error) ERR value is not a valid float
INCRBYFLOAT h2 0x10 => "21"
INCRBYFLOAT h2 0x1p-2 => "21.25"
INCRBYFLOAT h2 1e5000 => (error) ERR value is not a valid float
INCRBYFLOAT h2 1e-5000 => (error) ERR value is not a valid float
INCRBYFLOAT h2 "" => (error) ERR value is not a valid float
INCRBYFLOAT h2 . => (error) ERR value is not a valid float
INCRBYFLOAT h2 5. => "26.25"
INCRBYFLOAT h2 .5 => "26.75"
INCRBYFLOAT h2 1e => (error) ERR value is not a valid float
INCRBYFLOAT h2 +1 => "27.75"
SET z 0 => OK
INCRBYFLOAT z -0.00000000000000000001 => "0"
INCRBYFLOAT z 1.5e-17 => "0.00000000000000002"
INCRBYFLOAT z -1 => "-0.99999999999999998"
INCRBYFLOAT nokey 2.5 => "2.5"
TTL nokey => (integer) -1
INCRBYFLOAT nokey2 1e20 => "100000000000000000000"
INCRBYFLOAT nokey3 12345678901234567890 => "12345678901234567890"
INCRBYFLOAT nokey4 0.1 => "0.1"
INCRBYFLOAT nokey4 0.2 => "0.3"
SET n -0 => OK
INCRBYFLOAT n 0 => "0"
SET s abc => OK
INCRBYFLOAT s 1 => (error) ERR value is not a valid float
INCRBYFLOAT s abc => (error) ERR value is not a valid float
INCRBYFLOAT missing abc => (error) ERR value is not a valid float
EXISTS missing => (integer) 0
INCRBYFLOAT h abc => `+wrongType+`
SET big 9223372036854775807 => OK
INCRBYFLOAT big 1 => "9223372036854775808"
SET e 1.5 EX 100 => OK
INCRBYFLOAT e 1 => "2.5"
TTL e => (integer) 100
`)
		if got := h.Do("INCRBYFLOAT", "g", "1e300"); got != strconv.Quote(sum1e300) {
			t.Errorf("INCRBYFLOAT g 1e300 = %s", got)
		}
		if got := h.Do("INCRBYFLOAT", "k", "1.18e4932"); len(got) != 4935 || !strings.HasPrefix(got, `"1180000000000000000000652812918093699`) {
			t.Errorf("INCRBYFLOAT k 1.18e4932 = %.60s... (%d bytes)", got, len(got))
		}
		cmdtest.Script(t, h, `
INCRBYFLOAT k 1.18e4932 => (error) ERR increment would produce NaN or Infinity
INCRBYFLOAT kk -0x1p3 => "-8"
`)
		// The result is stored as an integer when it is one.
		if v := stored(t, h, "f"); v.Kind != codec.KindInt {
			t.Errorf("INCRBYFLOAT result 0 stored as kind %d", v.Kind)
		}
	})
}

// sum1e300 is what Redis 7.0 (x86-64) answers to INCRBYFLOAT on "1.33333333333333333" by 1e300.
const sum1e300 = "1000000000000000000008997324079559193870523944273290747938260082321265646596180935755849152083750497190350372508614274835903592556184672983913096260520748646287327135641843653294084255107606016789726652932370030551382947620994540294772781889620606179267611627097410650567187386105690089424915104006144"

func TestStoreFailures(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		code := codec.Timeout
		h.Store = &cmdtest.InterceptStore{Store: h.Store, Before: func(*codec.Request) {}, After: func(resp *codec.Response) {
			for i := range resp.Results {
				resp.Results[i] = codec.Result{Code: code, Msg: "injected", Values: resp.Results[i].Values}
			}
		}}
		for _, c := range []struct {
			code codec.Code
			want string
		}{
			{codec.Timeout, "(error) ERR respike: store timeout; the command may or may not have been applied (code 9): injected"},
			{codec.BackendUnavail, "(error) ERR respike: store unavailable (code 1002): injected"},
			{codec.BackendError, "(error) ERR respike: store error (code 1001): injected"},
			{codec.RecordTooBig, "(error) ERR respike: the value is too large for the store's record size limit (code 13): injected"},
		} {
			code = c.code
			for _, cmd := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"INCR", "k"}, {"MGET", "a", "b"}, {"MSET", "a", "1"}, {"APPEND", "k", "x"}, {"SETRANGE", "k", "0", "x"}, {"INCRBYFLOAT", "k", "1"},
				{"SETBIT", "k", "0", "1"}, {"GETBIT", "k", "0"}, {"BITCOUNT", "k"}, {"BITCOUNT", "k", "0", "1"}, {"BITPOS", "k", "1"},
				{"BITFIELD", "k", "GET", "u8", "0"}, {"BITFIELD", "k", "SET", "u8", "0", "1"}, {"BITOP", "AND", "d", "a"}, {"LCS", "a", "b"}} {
				if got := h.Do(cmd...); got != c.want {
					t.Errorf("%v with code %d: %s", cmd, c.code, got)
				}
			}
		}
	})
}
