package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// fillSet makes set key with members m000.. m(n-1).
func fillSet(h *sdktest.Host, key string, n int) {
	args := []string{"sadd", key}
	for i := range n {
		args = append(args, fmt.Sprintf("m%03d", i))
	}
	h.Do(args...)
}

// chiBound is a generous critical value for a chi-square statistic with df
// degrees of freedom: six standard deviations above the mean.
func TestSPopSRandMemberErrors(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		// Replies of SPOP with a count come in random order: compare sorted.
		cmdtest.Script(t, h, `
			spop nokey => (nil)
			spop nokey 0 => []
			spop nokey 3 => []
			spop nokey -1 => (error) ERR value is out of range, must be positive
			spop nokey x => (error) ERR value is out of range, must be positive
			spop nokey 1 2 => (error) ERR syntax error
			spop nokey 9223372036854775807 => []
			spop nokey -9223372036854775808 => (error) ERR value is out of range, must be positive
			srandmember nokey => (nil)
			srandmember nokey 3 => []
			srandmember nokey -3 => []
			srandmember nokey 0 => []
			srandmember nokey x => (error) ERR value is not an integer or out of range
			srandmember nokey x y => (error) ERR syntax error
			srandmember nokey 1 2 => (error) ERR syntax error
			srandmember nokey -9223372036854775808 => (error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807
			srandmember nokey -9223372036854775807 => []
			srandmember nokey 9223372036854775807 => []
			set str v => OK
			spop str => `+wrongType+`
			spop str 0 => `+wrongType+`
			spop str -1 => (error) ERR value is out of range, must be positive
			srandmember str => `+wrongType+`
			srandmember str 0 => `+wrongType+`
			srandmember str x => (error) ERR value is not an integer or out of range
			sadd s a => (integer) 1
			srandmember s => "a"
			srandmember s 0 => []
			srandmember s 3 => ["a"]
			srandmember s -3 => ["a" "a" "a"]
			srandmember s -1048577 => (error) ERR respike: a negative count may ask for at most 1048576 items
			spop s 0 => []
			spop s => "a"
			exists s => (integer) 0
			spop s => (nil)
			sadd s a => (integer) 1
			spop s 5 => ["a"]
			exists s => (integer) 0
		`)
		h.Proto = 3
		for _, c := range []struct{ args, want string }{
			{"spop nokey", "_\r\n"},
			{"spop nokey 3", "~0\r\n"},
			{"srandmember nokey", "_\r\n"},
			{"srandmember nokey 3", "*0\r\n"},
			{"sadd s a", ":1\r\n"},
			{"srandmember s 1", "*1\r\n$1\r\na\r\n"},
			{"srandmember s -2", "*2\r\n$1\r\na\r\n$1\r\na\r\n"},
			{"spop s 0", "~0\r\n"},
			{"spop s 1", "~1\r\n$1\r\na\r\n"},
		} {
			args, _ := cmdtest.SplitArgs(c.args)
			if got := string(h.DoRaw(cmdtest.RawArgs(args...)...)); got != c.want {
				t.Errorf("RESP3 %s = %q, want %q", c.args, got, c.want)
			}
		}
	})
}

// SPOP removes exactly what it returns, deletes the emptied set, and pops
// each member with equal probability.
func TestSPopUniform(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{5, 40} { // from the first read, and by index
			counts := map[string]int{}
			const reps = 1500
			for range reps {
				fillSet(h, "s", n)
				m := cmdtest.DoParsed(t, h, "spop", "s").(string)
				counts[m]++
				if got := cmdtest.DoParsed(t, h, "sismember", "s", m).(int64); got != 0 {
					t.Fatalf("popped %s is still a member", m)
				}
				if got := cmdtest.DoParsed(t, h, "scard", "s").(int64); got != int64(n-1) {
					t.Fatalf("SCARD after SPOP = %d", got)
				}
			}
			if x := cmdtest.ChiSquare(counts, n, reps); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d members: chi-square %.1f: %v", n, x, counts)
			}
		}
	})
}

// SPOP with a count pops distinct members, uniformly, and leaves the rest.
func TestSPopCountUniform(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{12, 60} {
			counts := map[string]int{}
			const reps, k = 400, 5
			for range reps {
				fillSet(h, "s", n)
				got := cmdtest.DoParsed(t, h, "spop", "s", fmt.Sprint(k)).([]any)
				if len(got) != k {
					t.Fatalf("SPOP s %d: %d members", k, len(got))
				}
				seen := map[string]bool{}
				for _, m := range got {
					if seen[m.(string)] {
						t.Fatalf("member %s popped twice", m)
					}
					seen[m.(string)] = true
					counts[m.(string)]++
				}
				rest := cmdtest.DoParsed(t, h, "smembers", "s").([]any)
				if len(rest) != n-k {
					t.Fatalf("%d members left, want %d", len(rest), n-k)
				}
				for _, m := range rest {
					if seen[m.(string)] {
						t.Fatalf("popped member %s still in the set", m)
					}
				}
				h.Do("spop", "s", "1000") // empty it
			}
			if x := cmdtest.ChiSquare(counts, n, reps*k); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d members: chi-square %.1f: %v", n, x, counts)
			}
		}
	})
}

// A large SPOP reads the whole set and removes by member.
func TestSPopLarge(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		fillSet(h, "s", 1500)
		got := cmdtest.DoParsed(t, h, "spop", "s", "700").([]any)
		seen := map[string]bool{}
		for _, m := range got {
			if seen[m.(string)] {
				t.Fatalf("member %s popped twice", m)
			}
			seen[m.(string)] = true
		}
		if len(got) != 700 {
			t.Fatalf("%d popped", len(got))
		}
		if n := cmdtest.DoParsed(t, h, "scard", "s").(int64); n != 800 {
			t.Fatalf("SCARD = %d, want 800", n)
		}
		got = cmdtest.DoParsed(t, h, "spop", "s", "800").([]any)
		if len(got) != 800 {
			t.Fatalf("%d popped", len(got))
		}
		cmdtest.Script(t, h, `exists s => (integer) 0`)
	})
}

// SPOP starts again when another client wrote between reading the size and
// removing.
func TestSPopRetries(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		fillSet(h, "s", 3)
		base := h.Store
		interfere := 2
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if req.Calls[0].Policy.Generation != 0 && interfere > 0 {
				interfere--
				putMember(t, base, "s", fmt.Sprint("new", interfere))
			}
		}}
		got := cmdtest.DoParsed(t, h, "spop", "s", "5").([]any)
		if interfere != 0 || len(got) != 5 {
			t.Fatalf("interfere=%d, popped %v", interfere, got)
		}
		cmdtest.Script(t, h, `exists s => (integer) 0`)
		// A count's removal is conditional on the generation: a writer
		// that never stops makes it give up after kit.RetryFor.
		fillSet(h, "s", 3)
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if req.Calls[0].Policy.Generation != 0 {
				putMember(t, base, "s", "again")
			}
		}}
		cmdtest.Script(t, h, `
			spop s 2 => (error) ERR respike: the key kept changing during a read-modify-write; try again
		`)
	})
}

// SPOP of one member removes at a random index with no generation
// condition: a write between its read and its removal does not make it
// fail, and a set that shrank below the drawn index makes it read again.
func TestSPopOneUnconditional(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		base := h.Store
		fillSet(h, "s", 3)
		writes := 0
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if p := req.Calls[0].Policy; p.DeleteIfEmpty != "" {
				if p.Generation != 0 {
					t.Errorf("SPOP's removal is conditional on generation %d", p.Generation)
				}
				putMember(t, base, "s", fmt.Sprint("new", writes)) // always interferes
				writes++
			}
		}}
		got, _ := cmdtest.DoParsed(t, h, "spop", "s").(string)
		if writes != 1 || !strings.HasPrefix(got, "m") {
			t.Fatalf("popped %v after %d removals, want a member after 1", got, writes)
		}
		// Before the removal, the set is replaced by one member: the drawn
		// index (of 0..3) either finds it or is past the end, and then
		// SPOP reads the size again.
		h.Store = base
		fillSet(h, "t", 3)
		swapped := false
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if req.Calls[0].Policy.DeleteIfEmpty != "" && !swapped {
				swapped = true
				var del codec.Call
				del.Key = []byte("t")
				del.Delete()
				cmdtest.Exec(t, base, del)
				putMember(t, base, "t", "solo")
			}
		}}
		cmdtest.Script(t, h, `
			spop t => "solo"
			exists t => (integer) 0
		`)
	})
}

// SRANDMEMBER's single draw and counts are uniform, distinct for a positive
// count and independent for a negative one.
func TestSRandMemberUniform(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{6, 45} {
			key := fmt.Sprint("s", n)
			fillSet(h, key, n)
			single := map[string]int{}
			const draws = 3000
			for range draws {
				single[cmdtest.DoParsed(t, h, "srandmember", key).(string)]++
			}
			if x := cmdtest.ChiSquare(single, n, draws); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d members, single: chi-square %.1f: %v", n, x, single)
			}
			distinct, first, repeats := map[string]int{}, map[string]int{}, map[string]int{}
			const reps, k = 500, 4
			sawRepeat := false
			for range reps {
				got := cmdtest.DoParsed(t, h, "srandmember", key, fmt.Sprint(k)).([]any)
				seen := map[string]bool{}
				for _, m := range got {
					if seen[m.(string)] {
						t.Fatalf("positive count returned %s twice", m)
					}
					seen[m.(string)] = true
					distinct[m.(string)]++
				}
				first[got[0].(string)]++
				got = cmdtest.DoParsed(t, h, "srandmember", key, fmt.Sprint(-k)).([]any)
				if len(got) != k {
					t.Fatalf("negative count: %d members", len(got))
				}
				seen = map[string]bool{}
				for _, m := range got {
					sawRepeat = sawRepeat || seen[m.(string)]
					seen[m.(string)] = true
					repeats[m.(string)]++
				}
			}
			if !sawRepeat {
				t.Errorf("%d members: a negative count never repeated", n)
			}
			for name, c := range map[string]map[string]int{"distinct": distinct, "repeats": repeats} {
				if x := cmdtest.ChiSquare(c, n, reps*k); x > cmdtest.ChiBound(n-1) {
					t.Errorf("%d members, %s: chi-square %.1f: %v", n, name, x, c)
				}
			}
			if x := cmdtest.ChiSquare(first, n, reps); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d members, first position: chi-square %.1f: %v", n, x, first)
			}
		}
	})
}

// SRANDMEMBER of at least the size answers the whole set in order; large
// samples come from a whole-set read.
func TestSRandMemberWholeAndLarge(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		fillSet(h, "s", 40)
		got := cmdtest.DoParsed(t, h, "srandmember", "s", "40").([]any)
		for i, m := range got {
			if m != fmt.Sprintf("m%03d", i) {
				t.Fatalf("member %d is %v", i, m)
			}
		}
		fillSet(h, "big", 1200)
		got = cmdtest.DoParsed(t, h, "srandmember", "big", "900").([]any)
		seen := map[string]bool{}
		for _, m := range got {
			if seen[m.(string)] {
				t.Fatalf("%s twice", m)
			}
			seen[m.(string)] = true
		}
		if len(got) != 900 {
			t.Fatalf("%d members", len(got))
		}
		if got := cmdtest.DoParsed(t, h, "srandmember", "big", "-900").([]any); len(got) != 900 {
			t.Fatalf("negative: %d members", len(got))
		}
	})
}
