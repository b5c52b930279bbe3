package main

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestDelExistsTouchType(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		putStr(t, h, "a", "1")
		putStr(t, h, "b", "2")
		putStr(t, h, "c", "3")
		putStr(t, h, "\x00 bin key", "")
		cmdtest.PutType(t, h.Store, "l", codec.TypeList)
		cmdtest.Script(t, h, `
EXISTS a => (integer) 1
EXISTS a a nokey l => (integer) 3
EXISTS "\x00 bin key" => (integer) 1
TOUCH c c nokey => (integer) 2
TYPE a => string
TYPE l => list
TYPE nokey => none
TYPE "\x00 bin key" => string
DEL a a b nokey => (integer) 2
DEL a => (integer) 0
EXISTS a b => (integer) 0
UNLINK c l nokey => (integer) 2
DEL "\x00 bin key" => (integer) 1
EXISTS c l "\x00 bin key" => (integer) 0
`)
		// Many keys, some repeated: the batch dedup path with a map.
		args := []string{"DEL"}
		for i := range 40 {
			putStr(t, h, "k"+strconv.Itoa(i), "v")
			args = append(args, "k"+strconv.Itoa(i), "k"+strconv.Itoa(i%7))
		}
		if got := h.Do(args...); got != "(integer) 40" {
			t.Errorf("DEL of 40 keys with repeats = %s", got)
		}
	})
}

func TestExpire(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
EXPIRE k 100 nx xx => (error) ERR NX and XX, GT or LT options at the same time are not compatible
EXPIRE k 100 gt lt => (error) ERR GT and LT options at the same time are not compatible
EXPIRE k 100 nx gt => (error) ERR NX and XX, GT or LT options at the same time are not compatible
EXPIRE k 100 foo => (error) ERR Unsupported option foo
EXPIRE k abc nx xx => (error) ERR NX and XX, GT or LT options at the same time are not compatible
EXPIRE k abc => (error) ERR value is not an integer or out of range
EXPIRE k 100 NX => (integer) 1
EXPIRE k 200 NX => (integer) 0
EXPIRE k 200 XX => (integer) 1
TTL k => (integer) 200
EXPIRE k 100 GT => (integer) 0
EXPIRE k 300 GT => (integer) 1
TTL k => (integer) 300
EXPIRE k 400 LT => (integer) 0
EXPIRE k 100 LT => (integer) 1
TTL k => (integer) 100
PERSIST k => (integer) 1
PERSIST k => (integer) 0
TTL k => (integer) -1
EXPIRE k 100 XX => (integer) 0
EXPIRE k 100 GT => (integer) 0
EXPIRE k 100 LT => (integer) 1
TTL k => (integer) 100
PERSIST k => (integer) 1
PERSIST nokey => (integer) 0
EXPIRE nokey 100 => (integer) 0
EXPIRE nokey 100 NX => (integer) 0
EXPIRE k 9223372036854776 => (error) ERR invalid expire time in 'expire' command
EXPIRE k -9223372036854776 => (error) ERR invalid expire time in 'expire' command
EXPIRE k 9223372036854775 => (error) ERR invalid expire time in 'expire' command
PEXPIRE k 9223372036854775807 => (error) ERR invalid expire time in 'pexpire' command
EXPIREAT k 9223372036854775807 => (error) ERR invalid expire time in 'expireat' command
PEXPIREAT k 9223372036854775807 => (integer) 1
PEXPIRETIME k => (integer) 9223372036854775807
EXPIRE k 400000000 => (integer) 1
PEXPIRE k 100000 => (integer) 1
EXPIRE k -1 => (integer) 1
EXISTS k => (integer) 0
EXPIRE k -1 => (integer) 0
`)
		if got := h.Do("EXPIRE", "k", "100", ""); got != "(error) ERR Unsupported option " {
			t.Errorf("EXPIRE with an empty option = %q", got)
		}
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
EXPIRE k 0 => (integer) 1
EXISTS k => (integer) 0
`)
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
EXPIREAT k 1 => (integer) 1
EXISTS k => (integer) 0
`)
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
PEXPIREAT k 1 => (integer) 1
EXISTS k => (integer) 0
`)
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
EXPIRE k -5 xx => (integer) 0
EXISTS k => (integer) 1
EXPIRE k -5 gt => (integer) 0
EXPIRE k -5 nx => (integer) 1
EXISTS k => (integer) 0
`)
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
EXPIRE k 100 => (integer) 1
EXPIRE k -5 nx => (integer) 0
EXPIRE k -5 gt => (integer) 0
EXPIRE k -5 lt => (integer) 1
EXISTS k => (integer) 0
`)
		// A whole-second absolute time: EXPIRETIME gives it back (within
		// the one second of rounding the embedded store's clock allows).
		putStr(t, h, "k", "v")
		at := time.Now().Unix() + 1000
		h.Do("EXPIREAT", "k", strconv.FormatInt(at, 10))
		checkAbout(t, h.Do("EXPIRETIME", "k"), at, 1)
		checkAbout(t, h.Do("PEXPIRETIME", "k"), at*1000, 1000)
		checkAbout(t, h.Do("TTL", "k"), 1000, 1)
		h.Do("PEXPIREAT", "k", strconv.FormatInt((at+1000)*1000, 10))
		checkAbout(t, h.Do("EXPIRETIME", "k"), at+1000, 1)
		cmdtest.Script(t, h, `
TTL nokey => (integer) -2
PTTL nokey => (integer) -2
EXPIRETIME nokey => (integer) -2
PEXPIRETIME nokey => (integer) -2
PERSIST k => (integer) 1
TTL k => (integer) -1
PTTL k => (integer) -1
EXPIRETIME k => (integer) -1
PEXPIRETIME k => (integer) -1
`)
	})
}

// checkAbout checks that reply is an integer within slack above want (the
// embedded store rounds remaining time up).
func checkAbout(t *testing.T, reply string, want, slack int64) {
	t.Helper()
	n, err := strconv.ParseInt(strings.TrimPrefix(reply, "(integer) "), 10, 64)
	if err != nil || n < want-slack || n > want+slack {
		t.Errorf("got %s, want %d (±%d)", reply, want, slack)
	}
}

func TestExpireRetriesOnConcurrentWrite(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		inner := h.Store
		n := 0
		h.Store = &cmdtest.InterceptStore{Store: inner, Before: func(req *codec.Request) {
			// Another client rewrites the key before each guarded write,
			// the second time giving it a long TTL, which GT must see.
			if req.Kind == codec.ReqRecords && req.Calls[0].Policy.Generation != 0 && n < 2 {
				n++
				var c codec.Call
				c.Key = []byte("k")
				c.Put(codec.BinValue, codec.Bytes([]byte("v")))
				if n == 2 {
					c.Expire(500)
				}
				var resp codec.Response
				inner.Exec(t.Context(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{c}}, &resp)
			}
		}}
		putStr(t, h, "k", "v")
		h.Do("EXPIRE", "k", "100")
		if got := h.Do("EXPIRE", "k", "200", "GT"); got != "(integer) 0" {
			t.Errorf("EXPIRE GT after a concurrent EXPIRE 500 = %s", got)
		}
		if got := h.Do("TTL", "k"); got != "(integer) 500" {
			t.Errorf("TTL = %s", got)
		}
	})
}

func TestScan(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
SCAN abc => (error) ERR invalid cursor
SCAN " 1" => (error) ERR invalid cursor
SCAN 18446744073709551616 => (error) ERR invalid cursor
SCAN - => (error) ERR invalid cursor
SCAN -1 => ["0" []]
SCAN +0 => ["0" []]
SCAN "" => ["0" []]
SCAN 0 count 0 => (error) ERR syntax error
SCAN 0 count -1 => (error) ERR syntax error
SCAN 0 count abc => (error) ERR value is not an integer or out of range
SCAN 0 match => (error) ERR syntax error
SCAN 0 foo bar => (error) ERR syntax error
SCAN 0 type => (error) ERR syntax error
SCAN 0 count 10 match * type string => ["0" []]
`)
		for _, k := range []string{"a", "b", "c", "ab", "\x00x"} {
			putStr(t, h, k, "v")
		}
		cmdtest.PutType(t, h.Store, "l", codec.TypeList)
		cmdtest.PutType(t, h.Store, "hh", codec.TypeHash)
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"COUNT", "100"}, "\x00x a ab b c hh l"},
			{[]string{"COUNT", "100", "TYPE", "STRING"}, "\x00x a ab b c"},
			{[]string{"type", "list", "count", "100"}, "l"},
			{[]string{"TYPE", "nonsense", "COUNT", "100"}, ""},
			{[]string{"MATCH", "[a-b]", "COUNT", "100"}, "a b"},
			{[]string{"MATCH", "a*", "COUNT", "100", "MATCH", "*b"}, "ab b"},
			{[]string{"MATCH", "h*", "TYPE", "hash", "COUNT", "100"}, "hh"},
		} {
			got := scanAll(t, h, c.args...)
			if strings.Join(got, " ") != c.want {
				t.Errorf("SCAN %q = %q, want %q", c.args, got, c.want)
			}
		}
		// Iterating with a small COUNT visits every key exactly once.
		for i := range 200 {
			putStr(t, h, "many"+strconv.Itoa(i), "v")
		}
		if got := scanAll(t, h, "MATCH", "many*", "COUNT", "3"); len(got) != 200 {
			t.Errorf("SCAN with COUNT 3 found %d keys, want 200", len(got))
		}
	})
}

// scanAll iterates SCAN with args to the end and returns the keys sorted.
func scanAll(t *testing.T, h *sdktest.Host, args ...string) []string {
	t.Helper()
	cursor := "0"
	var keys []string
	for range 10000 {
		raw := string(h.DoRaw(bytesArgs(append([]string{"SCAN", cursor}, args...))...))
		// *2 $n cursor *m ($len key)...
		parts := strings.Split(raw, "\r\n")
		if len(parts) < 4 || parts[0] != "*2" {
			t.Fatalf("SCAN reply %q", raw)
		}
		cursor = parts[2]
		m, _ := strconv.Atoi(strings.TrimPrefix(parts[3], "*"))
		for i := range m {
			keys = append(keys, parts[5+2*i])
		}
		if cursor == "0" {
			sort.Strings(keys)
			return keys
		}
	}
	t.Fatal("SCAN did not finish")
	return nil
}

func bytesArgs(args []string) [][]byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return b
}

func TestKeys(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `KEYS * => []`)
		for _, k := range []string{"a", "b", "c", "ab", "a*b", "\x00"} {
			putStr(t, h, k, "v")
		}
		cmdtest.PutType(t, h.Store, "l", codec.TypeList)
		for pat, want := range map[string]string{
			"*":     "\x00 a a*b ab b c l",
			"[ac]":  "a c",
			"?":     "\x00 a b c l",
			"\\a":   "a",
			"[^a]":  "\x00 b c l",
			"[":     "",
			"a[":    "",
			"*[":    "",
			"a\\*b": "a*b",
			"a*b":   "a*b ab",
			"*b":    "a*b ab b",
		} {
			raw := h.DoRaw([]byte("KEYS"), []byte(pat))
			got := parseArray(t, raw)
			sort.Strings(got)
			if strings.Join(got, " ") != want {
				t.Errorf("KEYS %q = %q, want %q", pat, got, want)
			}
		}
		// More keys than one page.
		for i := range 2500 {
			putStr(t, h, "p"+strconv.Itoa(i), "v")
		}
		if got := parseArray(t, h.DoRaw([]byte("KEYS"), []byte("p*"))); len(got) != 2500 {
			t.Errorf("KEYS p* found %d, want 2500", len(got))
		}
	})
}

// parseArray reads a flat RESP array of bulk strings.
func parseArray(t *testing.T, raw []byte) []string {
	t.Helper()
	s := string(raw)
	line, rest, _ := strings.Cut(s, "\r\n")
	n, err := strconv.Atoi(strings.TrimPrefix(line, "*"))
	if err != nil || line[0] != '*' {
		t.Fatalf("not an array: %q", raw)
	}
	out := make([]string, 0, n)
	for range n {
		line, rest, _ = strings.Cut(rest, "\r\n")
		l, _ := strconv.Atoi(strings.TrimPrefix(line, "$"))
		out = append(out, rest[:l])
		rest = rest[l+2:]
	}
	return out
}

func TestRandomKey(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `RANDOMKEY => (nil)`)
		putStr(t, h, "only", "v")
		cmdtest.Script(t, h, `RANDOMKEY => "only"`)
		putStr(t, h, "other", "v")
		seen := map[string]bool{}
		for range 200 {
			seen[h.Do("RANDOMKEY")] = true
		}
		if !seen[`"only"`] || !seen[`"other"`] || len(seen) != 2 {
			t.Errorf("RANDOMKEY over 200 draws gave %v", seen)
		}
	})
}

func TestRenameCopy(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		putStr(t, h, "c", "3")
		putStr(t, h, "d", "4")
		cmdtest.Script(t, h, `
RENAME nokey x => (error) ERR no such key
RENAME c c => OK
RENAMENX c c => (integer) 0
RENAMENX nokey x => (error) ERR no such key
RENAMENX c d => (integer) 0
RENAME c d => OK
EXISTS c => (integer) 0
EXPIRE d 100 => (integer) 1
RENAME d f => OK
TTL f => (integer) 100
EXISTS d => (integer) 0
RENAMENX f "new\x00key" => (integer) 1
TTL "new\x00key" => (integer) 100
COPY "new\x00key" "new\x00key" => (error) ERR source and destination objects are the same
COPY nokey x => (integer) 0
COPY "new\x00key" g => (integer) 1
TTL g => (integer) 100
COPY "new\x00key" g => (integer) 0
COPY d g db abc => (error) ERR value is not an integer or out of range
COPY d g db 2147483648 => (error) ERR value is out of range, value must between -2147483648 and 2147483647
COPY d g db -1 => (error) ERR DB index is out of range
COPY d g db 1 => (integer) 0
COPY d g db 0 foo => (error) ERR syntax error
COPY d g db => (error) ERR syntax error
COPY d g foo => (error) ERR syntax error
`)
		if got := get(t, h, "g"); got != "3" {
			t.Errorf("copied value = %q", got)
		}
		putStr(t, h, "h", "other")
		cmdtest.Script(t, h, `
COPY h g REPLACE => (integer) 1
TTL g => (integer) -1
COPY g g2 db 0 replace replace => (integer) 1
`)
		if got := get(t, h, "g"); got != "other" {
			t.Errorf("COPY REPLACE value = %q", got)
		}
		// Collections keep their map order type: a sorted set is copied
		// with key-value order, so its ranks work at the destination.
		var call codec.Call
		call.Key = []byte("z")
		call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(codec.TypeZSet)).
			MapPut(codec.BinValue, codec.MapOrderKeyValue, []codec.Value{
				codec.Bytes([]byte("m1")), codec.Float(3), codec.Bytes([]byte("m2")), codec.Float(1),
			})
		cmdtest.Exec(t, h.Store, call)
		cmdtest.Script(t, h, `
RENAME z z2 => OK
TYPE z2 => zset
EXISTS z => (integer) 0
`)
		var rank codec.Call
		rank.Key = []byte("z2")
		rank.MapGetByRank(codec.BinValue, codec.ReturnKey, 0, 1)
		if r := cmdtest.Exec(t, h.Store, rank); r.Code != codec.OK || len(r.Values[0].List) != 1 || string(r.Values[0].List[0].Bytes) != "m2" {
			t.Errorf("rank 0 of the renamed zset: %+v", r)
		}
	})
}

func TestManifest(t *testing.T) {
	m := sdktest.Manifest()
	if m.Module != "keys" {
		t.Errorf("module %q", m.Module)
	}
	names := map[string]bool{}
	for _, c := range m.Commands {
		names[c.Name] = true
		if c.Summary == "" || c.Group != "generic" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	for _, n := range strings.Fields("del unlink exists type touch expire pexpire expireat pexpireat ttl pttl expiretime pexpiretime persist scan keys randomkey rename renamenx copy") {
		if !names[n] {
			t.Errorf("%s not registered", n)
		}
	}
}

// TestExpiryArithmeticUsesTheCommandClock fixes the clock commands read
// (sdk.Ctx.Now, the host's clock at the command's start) and the store's:
// absolute and relative expiries then come out exact.
func TestExpiryArithmeticUsesTheCommandClock(t *testing.T) {
	now := time.Unix(2_000_000_000, 250e6) // a quarter second past a whole second
	h := sdktest.NewWithClock(func() time.Time { return now })
	h.Inline = true
	putStr(t, h, "k", "v")
	at := strconv.FormatInt(now.Unix()+100, 10)
	cmdtest.Script(t, h, `
EXPIREAT k `+at+` => (integer) 1
EXPIRETIME k => (integer) `+at+`
TTL k => (integer) 100
EXPIRE k 10 => (integer) 1
TTL k => (integer) 10
EXPIRETIME k => (integer) 2000000010
`)
	now = now.Add(5 * time.Second)
	cmdtest.Script(t, h, `
TTL k => (integer) 5
`)
}

// TestExpiryExactToTheMillisecond moves the command and store clock by
// single milliseconds: a PEXPIRE of 1500 ms is gone at the 1500th, and
// the TTL commands and the GT/LT conditions see milliseconds.
func TestExpiryExactToTheMillisecond(t *testing.T) {
	now := time.Unix(2_000_000_000, 250e6)
	h := sdktest.NewWithClock(func() time.Time { return now })
	for _, inline := range []bool{false, true} {
		h.Inline = inline
		putStr(t, h, "k", "v")
		at := now.UnixMilli() + 1500
		cmdtest.Script(t, h, `
PEXPIRE k 1500 => (integer) 1
PTTL k => (integer) 1500
TTL k => (integer) 2
PEXPIRETIME k => (integer) `+strconv.FormatInt(at, 10)+`
EXPIRETIME k => (integer) `+strconv.FormatInt((at+500)/1000, 10)+`
PEXPIRE k 1500 GT => (integer) 0
PEXPIRE k 1501 GT => (integer) 1
PEXPIRE k 1501 LT => (integer) 0
PEXPIRE k 1500 LT => (integer) 1
PEXPIRE k 1500 NX => (integer) 0
`)
		now = now.Add(1499 * time.Millisecond)
		cmdtest.Script(t, h, `
PTTL k => (integer) 1
TTL k => (integer) 0
EXISTS k => (integer) 1
`)
		now = now.Add(time.Millisecond)
		cmdtest.Script(t, h, `
EXISTS k => (integer) 0
PTTL k => (integer) -2
TYPE k => none
PERSIST k => (integer) 0
EXPIRE k 100 => (integer) 0
`)
		// Far beyond Aerospike's ten-year TTL: kept exactly.
		putStr(t, h, "k", "v")
		cmdtest.Script(t, h, `
EXPIREAT k 4102444800 => (integer) 1
EXPIRETIME k => (integer) 4102444800
PEXPIRETIME k => (integer) 4102444800000
PEXPIREAT k 4102444800001 GT => (integer) 1
PEXPIRETIME k => (integer) 4102444800001
PERSIST k => (integer) 1
TTL k => (integer) -1
PERSIST k => (integer) 0
`)
	}
}

func TestMoveAndCopyDB(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		putStr(t, h, "a", "1")
		cmdtest.Script(t, h, `
PEXPIREAT a 4102444800123 => (integer) 1
MOVE a 1 => (integer) 1
`)
		putStr(t, h, "a", "2")
		cmdtest.Script(t, h, `
MOVE a 0 => (error) ERR source and destination objects are the same
MOVE a x => (error) ERR value is not an integer or out of range
MOVE a 2147483648 => (error) ERR value is out of range, value must between -2147483648 and 2147483647
MOVE a -1 => (error) ERR DB index is out of range
MOVE nokey 1 => (integer) 0
MOVE a 1 => (integer) 0
COPY a a DB 1 => (integer) 0
COPY a b DB 1 REPLACE => (integer) 1
`)
		h.DB = 1
		cmdtest.Script(t, h, `
EXISTS a b => (integer) 2
PEXPIRETIME a => (integer) 4102444800123
OBJECT ENCODING b => "int"
MOVE a 0 => (integer) 0
`)
	})
}

func TestObject(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		putStr(t, h, "i", "123")
		putStr(t, h, "s", "hello")
		putStr(t, h, "r", "123456789012345678901234567890123456789012345")
		cmdtest.Script(t, h, `
OBJECT ENCODING i => "int"
OBJECT ENCODING s => "embstr"
OBJECT ENCODING r => "raw"
OBJECT ENCODING nokey => (nil)
OBJECT REFCOUNT i => (integer) 2147483647
OBJECT REFCOUNT s => (integer) 1
OBJECT IDLETIME s => (integer) 0
OBJECT FREQ nokey => (nil)
OBJECT foo => (error) ERR unknown subcommand 'foo'. Try OBJECT HELP.
OBJECT ENCODING => (error) ERR wrong number of arguments for 'object|encoding' command
`)
	})
}
