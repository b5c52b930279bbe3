package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestSetAlgebra(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			sadd a 1 2 3 4 => (integer) 4
			sadd b 3 4 5 => (integer) 3
			sadd c 4 5 6 "" => (integer) 4
			sinter a => ["1" "2" "3" "4"]
			sinter a b => ["3" "4"]
			sinter a b c => ["4"]
			sinter a nokey => []
			sinter nokey a => []
			sinter a a => ["1" "2" "3" "4"]
			sunion a => ["1" "2" "3" "4"]
			sunion a b c => ["" "1" "2" "3" "4" "5" "6"]
			sunion nokey => []
			sunion nokey b => ["3" "4" "5"]
			sdiff a => ["1" "2" "3" "4"]
			sdiff a b => ["1" "2"]
			sdiff a b c => ["1" "2"]
			sdiff c a => ["" "5" "6"]
			sdiff nokey a => []
			sdiff a nokey => ["1" "2" "3" "4"]
			sdiff a a => []
			set str v => OK
			sinter nokey str => `+wrongType+`
			sinter str nokey => `+wrongType+`
			sinter a str => `+wrongType+`
			sunion a str => `+wrongType+`
			sdiff nokey str => `+wrongType+`
			sdiff str nokey => `+wrongType+`
			sdiff a str => `+wrongType+`
		`)
		h.Proto = 3
		if got := string(h.DoRaw(cmdtest.RawArgs("sinter", "a", "b")...)); got != "~2\r\n$1\r\n3\r\n$1\r\n4\r\n" {
			t.Errorf("RESP3 SINTER = %q", got)
		}
		for _, cmd := range []string{"sinter", "sunion", "sdiff"} {
			if got := string(h.DoRaw(cmdtest.RawArgs(cmd, "nokey")...)); got != "~0\r\n" {
				t.Errorf("RESP3 %s of a missing key = %q", cmd, got)
			}
		}
	})
}

func TestSetAlgebraStore(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			sadd a 1 2 3 4 => (integer) 4
			sadd b 3 4 5 => (integer) 3
			sinterstore d a b => (integer) 2
			smembers d => ["3" "4"]
			type d => set
			sunionstore d a b => (integer) 5
			smembers d => ["1" "2" "3" "4" "5"]
			sdiffstore d a b => (integer) 2
			smembers d => ["1" "2"]
			sinterstore d a nokey => (integer) 0
			exists d => (integer) 0
			sinterstore d a nokey => (integer) 0
			sunionstore d nokey => (integer) 0
			sdiffstore d a a => (integer) 0
			exists d => (integer) 0
			set str v => OK
			expire str 100 => (integer) 1
			sinterstore str a => (integer) 4
			type str => set
			ttl str => (integer) -1
			smembers str => ["1" "2" "3" "4"]
			sadd e x => (integer) 1
			expire e 100 => (integer) 1
			sunionstore e e a => (integer) 5
			smembers e => ["1" "2" "3" "4" "x"]
			ttl e => (integer) -1
			sdiffstore a a b => (integer) 2
			smembers a => ["1" "2"]
			sinterstore b b a => (integer) 0
			exists b => (integer) 0
			set s v => OK
			sinterstore d nokey s => `+wrongType+`
			sunionstore d s => `+wrongType+`
			sdiffstore d a s => `+wrongType+`
			sinterstore s a => (integer) 2
			type s => set
		`)
	})
}

func TestSInterCard(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			sintercard 0 a => (error) ERR numkeys should be greater than 0
			sintercard -1 a => (error) ERR numkeys should be greater than 0
			sintercard x a => (error) ERR numkeys should be greater than 0
			sintercard 9223372036854775808 a => (error) ERR numkeys should be greater than 0
			sintercard 2 a => (error) ERR Number of keys can't be greater than number of args
			sintercard 1 a limit => (error) ERR syntax error
			sintercard 1 a limit -1 => (error) ERR LIMIT can't be negative
			sintercard 1 a limit x => (error) ERR LIMIT can't be negative
			sintercard 1 a limit 9223372036854775808 => (error) ERR LIMIT can't be negative
			sintercard 1 a foo 1 => (error) ERR syntax error
			set str v => OK
			sintercard 1 nokey str => (error) ERR syntax error
			sintercard 2 nokey str => `+wrongType+`
			sintercard 1 nokey => (integer) 0
			sadd a 1 2 3 4 5 => (integer) 5
			sadd b 2 3 4 5 6 => (integer) 5
			sintercard 1 a => (integer) 5
			sintercard 2 a b => (integer) 4
			sintercard 2 a b limit 0 => (integer) 4
			sintercard 2 a b limit 2 => (integer) 2
			sintercard 2 a b LIMIT 9 limit 3 => (integer) 3
			sintercard 2 a nokey => (integer) 0
			sintercard 2 a a => (integer) 5
		`)
	})
}

// A source changed between a *STORE's destination write and its check of
// the other sources: the destination is put back and the command starts
// over, so it stores the result of the sources as they are now.
func TestSetStoreRestartsWhenASourceChanged(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		base := h.Store
		cmdtest.Script(t, h, `
SADD s1 a b c => (integer) 3
SADD s2 b => (integer) 1
SADD d old => (integer) 1
`)
		checks := 0
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			for _, c := range req.Calls {
				if string(c.Key) == "s2" && len(c.Ops) == 1 && c.Ops[0].Code == codec.OpGetHeader {
					checks++
					if checks == 1 {
						putMember(t, base, "s2", "c") // after the write, before the check
					}
				}
			}
		}}
		cmdtest.Script(t, h, `
SDIFFSTORE d s1 s2 => (integer) 1
SMEMBERS d => ["a"]
`)
		if checks != 2 {
			t.Errorf("%d checks of the other source, want 2 (a restart)", checks)
		}
	})
}

// Two *STOREs crossing each other (each one's destination the other's
// source) whose steps reach the store together in every round, as
// Aerospike batch calls gather them: both write, both find their other
// source changed, both undo. Before one of them yielded a round after
// losing (kit.Yield), they met again in step until kit.RetryFor and both
// answered the contention error. Now each order of the store's rows ends
// as one of the two serial orders.
func TestCrossedStoresInLockstep(t *testing.T) {
	x, y := []string{"sdiffstore", "s1", "s1", "s2"}, []string{"sdiffstore", "s2", "s2", "s1"}
	// x then y: s1 = {a}, s2 = {b c}; y then x: s2 = {c}, s1 = {a b}.
	serial := map[string]bool{
		`(integer) 1 (integer) 2 | ["a"] | ["b" "c"]`: true,
		`(integer) 2 (integer) 1 | ["a" "b"] | ["c"]`: true,
	}
	for _, order := range [][][]string{{x, y}, {y, x}} {
		h := sdktest.New()
		h.Do("sadd", "s1", "a", "b")
		h.Do("sadd", "s2", "b", "c")
		replies := h.Lockstep(order...)
		if order[0][1] == "s2" {
			replies[0], replies[1] = replies[1], replies[0] // x's reply first
		}
		got := replies[0] + " " + replies[1] + " | " + sorted(h.Do("smembers", "s1")) + " | " + sorted(h.Do("smembers", "s2"))
		if !serial[got] {
			t.Errorf("%v first: %s; no serial order gives that", order[0], got)
		}
		h.Store.Close()
	}
}

// sorted returns an array reply in sdktest.Format notation with its
// elements in order: SMEMBERS' order is the store's.
func sorted(reply string) string {
	members := cmdtest.SplitReply(reply)
	sort.Strings(members)
	return "[" + strings.Join(members, " ") + "]"
}
