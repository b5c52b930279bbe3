package main

import (
	"strings"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

const wrongType = "(error) WRONGTYPE Operation against a key holding the wrong kind of value"

func TestHSet(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hset h a 1 b => (error) ERR wrong number of arguments for 'hset' command
			hmset h a 1 b => (error) ERR wrong number of arguments for 'hmset' command
			exists h => (integer) 0
			hset h a 1 b 2 => (integer) 2
			hset h a 1 c 3 => (integer) 1
			hset h a x a y d 4 => (integer) 1
			hget h a => "y"
			hmset h x 1 => OK
			hmset h x 2 z 3 => OK
			hlen h => (integer) 6
			hsetnx h a 5 => (integer) 0
			hget h a => "y"
			hsetnx h n 5 => (integer) 1
			hget h n => "5"
			hsetnx fresh f v => (integer) 1
			type fresh => hash
			hset h "" "" => (integer) 1
			hget h "" => ""
			hset h "bin\x00\xff" "v\r\n" => (integer) 1
			hget h "bin\x00\xff" => "v\r\n"
			set s v => OK
			hset s a 1 => `+wrongType+`
			hmset s a 1 => `+wrongType+`
			hsetnx s a 1 => `+wrongType+`
			hset s a 1 b => (error) ERR wrong number of arguments for 'hset' command
		`)
	})
}

// Values that are canonical integers are stored as integers (so HINCRBY is
// one atomic increment) and read back byte for byte; others stay bytes.
func TestHSetStoredForm(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hset h i 42 n -7 z 0 big 9223372036854775807 lz 05 sp " 5" m0 -0 plus +1 huge 9223372036854775808 f 1.5 => (integer) 10
			hmget h i n z big lz sp m0 plus huge f => ["42" "-7" "0" "9223372036854775807" "05" " 5" "-0" "+1" "9223372036854775808" "1.5"]
			hstrlen h big => (integer) 19
			hstrlen h n => (integer) 2
			hstrlen h sp => (integer) 2
		`)
		for f, want := range map[string]codec.Kind{"i": codec.KindInt, "n": codec.KindInt, "z": codec.KindInt,
			"big": codec.KindInt, "lz": codec.KindBytes, "sp": codec.KindBytes, "m0": codec.KindBytes,
			"plus": codec.KindBytes, "huge": codec.KindBytes, "f": codec.KindBytes} {
			if got := stored(t, h, "h", f).Kind; got != want {
				t.Errorf("field %s stored as kind %d, want %d", f, got, want)
			}
		}
	})
}

func TestHashReads(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hget nokey a => (nil)
			hmget nokey a b => [(nil) (nil)]
			hgetall nokey => []
			hkeys nokey => []
			hvals nokey => []
			hlen nokey => (integer) 0
			hexists nokey a => (integer) 0
			hstrlen nokey a => (integer) 0
			hset h b 2 a 1 c three => (integer) 3
			hget h a => "1"
			hget h nope => (nil)
			hmget h a nope b a => ["1" (nil) "2" "1"]
			hgetall h => ["a" "1" "b" "2" "c" "three"]
			hkeys h => ["a" "b" "c"]
			hvals h => ["1" "2" "three"]
			hlen h => (integer) 3
			hexists h b => (integer) 1
			hexists h q => (integer) 0
			hstrlen h c => (integer) 5
			hstrlen h a => (integer) 1
			hstrlen h q => (integer) 0
			set s v => OK
			hget s a => `+wrongType+`
			hmget s a => `+wrongType+`
			hgetall s => `+wrongType+`
			hkeys s => `+wrongType+`
			hvals s => `+wrongType+`
			hlen s => `+wrongType+`
			hexists s a => `+wrongType+`
			hstrlen s a => `+wrongType+`
		`)
		h.Proto = 3
		cmdtest.Script(t, h, `
			hgetall h => {"a": "1", "b": "2", "c": "three"}
			hgetall nokey => {}
			hget nokey a => (nil)
			hmget h a nope => ["1" (nil)]
		`)
		if got := string(h.DoRaw([]byte("hmget"), []byte("h"), []byte("nope"))); got != "*1\r\n_\r\n" {
			t.Errorf("RESP3 HMGET of a missing field = %q", got)
		}
		if got := string(h.DoRaw([]byte("hgetall"), []byte("h"))); !strings.HasPrefix(got, "%3\r\n") {
			t.Errorf("RESP3 HGETALL = %q, want a map", got)
		}
	})
}

// HMGET of many fields looks them up through an index.
func TestHMGetMany(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		args := []string{"hset", "h"}
		get := []string{"hmget", "h"}
		var want []string
		for i := range 40 {
			f := "f" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			args = append(args, f, "v"+f)
			get = append(get, f, "x"+f)
			want = append(want, `"v`+f+`"`, "(nil)")
		}
		h.Do(args...)
		if got := h.Do(get...); got != "["+strings.Join(want, " ")+"]" {
			t.Errorf("HMGET = %s", got)
		}
	})
}

func TestHDel(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hdel nokey a => (integer) 0
			exists nokey => (integer) 0
			hset h a 1 b 2 c 3 => (integer) 3
			hdel h a nope => (integer) 1
			hdel h a => (integer) 0
			hdel h b b b => (integer) 1
			hlen h => (integer) 1
			exists h => (integer) 1
			hdel h c => (integer) 1
			exists h => (integer) 0
			type h => none
			hset h x 1 y 2 => (integer) 2
			hdel h x y z => (integer) 2
			exists h => (integer) 0
			set s v => OK
			hdel s a => `+wrongType+`
		`)
	})
}

// Writes keep the key's TTL, as Redis's hash commands do.
func TestHashWritesKeepTTL(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hset h a 1 b 2 => (integer) 2
			expire h 100 => (integer) 1
			hset h c 3 => (integer) 1
			hmset h d 4 => OK
			hsetnx h e 5 => (integer) 1
			hsetnx h e 6 => (integer) 0
			hdel h a => (integer) 1
			hincrby h b 1 => (integer) 3
			hincrbyfloat h b 1.5 => "4.5"
			ttl h => (integer) 100
			hset fresh a 1 => (integer) 1
			ttl fresh => (integer) -1
		`)
	})
}
