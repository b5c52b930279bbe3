package main

import (
	"strings"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestAppendStrlen(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeSet)
		cmdtest.Script(t, h, `
APPEND a Hello => (integer) 5
APPEND a " World" => (integer) 11
GET a => "Hello World"
STRLEN a => (integer) 11
STRLEN nokey => (integer) 0
APPEND e "" => (integer) 0
EXISTS e => (integer) 1
GET e => ""
STRLEN e => (integer) 0
SET i 12345 => OK
STRLEN i => (integer) 5
APPEND i x => (integer) 6
GET i => "12345x"
SET j 12 => OK
APPEND j 3 => (integer) 3
INCR j => (integer) 124
SET n -9223372036854775808 => OK
STRLEN n => (integer) 20
APPEND bin "\x00\r\n" => (integer) 3
APPEND bin "\xff" => (integer) 4
GET bin => "\x00\r\n\xff"
STRLEN h => `+wrongType+`
APPEND h x => `+wrongType+`
SET t v EX 100 => OK
APPEND t w => (integer) 2
TTL t => (integer) 100
SET ti 1 EX 100 => OK
APPEND ti 0 => (integer) 2
TTL ti => (integer) 100
`)
		// "12"+"3" is stored as an integer again, so INCR stays one add.
		if v := stored(t, h, "j"); v.Kind != codec.KindInt {
			t.Errorf("APPEND result stored as kind %d", v.Kind)
		}
	})
}

func TestGetRange(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeZSet)
		cmdtest.Script(t, h, `
GETRANGE nokey 0 -1 => ""
SET s "Hello World" => OK
GETRANGE s 0 4 => "Hello"
GETRANGE s -5 -1 => "World"
GETRANGE s -1 -5 => ""
GETRANGE s 5 3 => ""
GETRANGE s 0 100 => "Hello World"
GETRANGE s -100 2 => "Hel"
GETRANGE s -100 -90 => "H"
GETRANGE s 10 10 => "d"
GETRANGE s 11 11 => ""
GETRANGE s abc 1 => (error) ERR value is not an integer or out of range
GETRANGE s 1 " 1" => (error) ERR value is not an integer or out of range
GETRANGE s 0 9223372036854775807 => "Hello World"
GETRANGE s -9223372036854775808 -1 => "Hello World"
SET e "" => OK
GETRANGE e 0 -1 => ""
GETRANGE e 0 0 => ""
SET i 12345 => OK
GETRANGE i 1 2 => "23"
GETRANGE i -2 -1 => "45"
SUBSTR s 0 4 => "Hello"
SUBSTR s -3 -1 => "rld"
GETRANGE h 0 1 => `+wrongType+`
GETRANGE h x 1 => (error) ERR value is not an integer or out of range
SET b "\x00\x01\x02\x03" => OK
GETRANGE b 1 2 => "\x01\x02"
`)
	})
}

func TestSetRange(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.PutType(t, h.Store, "h", codec.TypeList)
		cmdtest.Script(t, h, `
SETRANGE nk 5 "" => (integer) 0
EXISTS nk => (integer) 0
SETRANGE nk 3 abc => (integer) 6
GET nk => "\x00\x00\x00abc"
SETRANGE nk 1 X => (integer) 6
GET nk => "\x00X\x00abc"
SETRANGE nk 8 Z => (integer) 9
GET nk => "\x00X\x00abc\x00\x00Z"
SETRANGE nk -1 x => (error) ERR offset is out of range
SETRANGE nk abc x => (error) ERR value is not an integer or out of range
SETRANGE nk 536870912 x => (error) ERR string exceeds maximum allowed size (proto-max-bulk-len)
SETRANGE nk 536870911 "" => (integer) 9
SETRANGE nk 9223372036854775807 x => (error) ERR string exceeds maximum allowed size (proto-max-bulk-len)
SETRANGE new2 536870912 x => (error) ERR string exceeds maximum allowed size (proto-max-bulk-len)
SETRANGE new3 536870912 "" => (integer) 0
SETRANGE new4 20000000 x => (error) ERR respike: the value is too large for the store's record size limit (code 13): respike builds values up to 16 MiB
SET i 12345 => OK
SETRANGE i 0 9 => (integer) 5
GET i => "92345"
INCR i => (integer) 92346
SETRANGE i 5 0 => (integer) 6
GET i => "923460"
SETRANGE h 0 x => `+wrongType+`
SETRANGE h 0 "" => `+wrongType+`
SETRANGE h -1 "" => (error) ERR offset is out of range
SET t abc EX 100 => OK
SETRANGE t 1 X => (integer) 3
GET t => "aXc"
TTL t => (integer) 100
`)
		if v := stored(t, h, "i"); v.Kind != codec.KindInt || v.Int != 923460 {
			t.Errorf("SETRANGE result stored as %+v", v)
		}
		// A store whose record limit is smaller refuses with a clear error.
		big := strings.Repeat("x", 9<<20)
		if got := h.Do("SETRANGE", "big", "0", big); !strings.HasPrefix(got, "(error) ERR respike: the value is too large") {
			t.Errorf("SETRANGE of 9 MiB = %.100s", got)
		}
		if got := h.Do("SET", "big", big); !strings.HasPrefix(got, "(error) ERR respike: the value is too large") {
			t.Errorf("SET of 9 MiB = %.100s", got)
		}
	})
}

func TestManifest(t *testing.T) {
	m := sdktest.Manifest()
	if m.Module != "strings" || m.Version != "1.0.0" {
		t.Errorf("module %q %q", m.Module, m.Version)
	}
	want := map[string]int{
		"get": 2, "set": -3, "setnx": 3, "setex": 4, "psetex": 4, "getset": 3, "getdel": 2,
		"getex": -2, "mget": -2, "mset": -3, "msetnx": -3, "incr": 2, "decr": 2, "incrby": 3,
		"decrby": 3, "incrbyfloat": 3, "append": 3, "strlen": 2, "getrange": 4, "setrange": 4,
		"substr": 4,
	}
	got := map[string]codec.CommandInfo{}
	for _, c := range m.Commands {
		got[c.Name] = c
	}
	for name, arity := range want {
		c, ok := got[name]
		if !ok {
			t.Errorf("%s not registered", name)
			continue
		}
		if c.Arity != arity || c.FirstKey != 1 || c.Summary == "" || c.Group != "string" {
			t.Errorf("%s: %+v", name, c)
		}
	}
}
