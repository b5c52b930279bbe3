package main

import (
	"fmt"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// fillHash makes hash key with n fields f000.. whose values are v000...
func fillHash(h *sdktest.Host, key string, n int) {
	args := []string{"hset", key}
	for i := range n {
		args = append(args, fmt.Sprintf("f%03d", i), fmt.Sprintf("v%03d", i))
	}
	h.Do(args...)
}

// chiBound is a generous critical value for a chi-square statistic with df
// degrees of freedom: six standard deviations above the mean.
func TestHRandFieldErrors(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hrandfield nokey => (nil)
			hrandfield nokey 5 => []
			hrandfield nokey 0 => []
			hrandfield nokey 5 withvalues => []
			hrandfield nokey -5 WITHVALUES => []
			hrandfield nokey x => (error) ERR value is not an integer or out of range
			hrandfield nokey x withvalues => (error) ERR value is not an integer or out of range
			hrandfield nokey x y z => (error) ERR value is not an integer or out of range
			hrandfield nokey 1 x => (error) ERR syntax error
			hrandfield nokey 1 withvalues x => (error) ERR syntax error
			hrandfield nokey 1 withvalues withvalues => (error) ERR syntax error
			hrandfield nokey 9223372036854775808 => (error) ERR value is not an integer or out of range
			hrandfield nokey -9223372036854775808 => (error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807
			hrandfield nokey -9223372036854775808 withvalues => (error) ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807
			hrandfield nokey -4611686018427387904 withvalues => (error) ERR value is out of range
			hrandfield nokey 4611686018427387904 withvalues => (error) ERR value is out of range
			hrandfield nokey -4611686018427387903 withvalues => []
			hrandfield nokey 4611686018427387903 withvalues => []
			hrandfield nokey -9223372036854775807 => []
			set s v => OK
			hrandfield s => `+wrongType+`
			hrandfield s 0 => `+wrongType+`
			hrandfield s 3 withvalues => `+wrongType+`
			hrandfield s x => (error) ERR value is not an integer or out of range
			hrandfield s 1 x => (error) ERR syntax error
			hset h a 1 => (integer) 1
			hrandfield h => "a"
			hrandfield h 0 => []
			hrandfield h 0 withvalues => []
			hrandfield h 1 withvalues => ["a" "1"]
			hrandfield h 3 => ["a"]
			hrandfield h -3 => ["a" "a" "a"]
			hrandfield h -3 withvalues => ["a" "1" "a" "1" "a" "1"]
			hrandfield h -1048577 => (error) ERR respike: a negative count may ask for at most 1048576 items
		`)
		h.Proto = 3
		cmdtest.Script(t, h, `
			hrandfield nokey => (nil)
			hrandfield nokey 3 withvalues => []
			hrandfield h 1 withvalues => [["a" "1"]]
			hrandfield h -2 withvalues => [["a" "1"] ["a" "1"]]
			hrandfield h -2 => ["a" "a"]
		`)
	})
}

// Whole-hash answers come in key order, with each value next to its field.
func TestHRandFieldWhole(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{3, 40} { // answered from the first read, and not
			key := fmt.Sprint("h", n)
			fillHash(h, key, n)
			for _, count := range []string{fmt.Sprint(n), fmt.Sprint(n + 5), "9223372036854775807"} {
				got := cmdtest.DoParsed(t, h, "hrandfield", key, count).([]any)
				if len(got) != n {
					t.Fatalf("HRANDFIELD %s %s: %d fields", key, count, len(got))
				}
				for i, f := range got {
					if f != fmt.Sprintf("f%03d", i) {
						t.Fatalf("HRANDFIELD %s %s: field %d is %v", key, count, i, f)
					}
				}
			}
			got := cmdtest.DoParsed(t, h, "hrandfield", key, fmt.Sprint(n), "withvalues").([]any)
			for i := 0; i < len(got); i += 2 {
				if got[i] != fmt.Sprintf("f%03d", i/2) || got[i+1] != fmt.Sprintf("v%03d", i/2) {
					t.Fatalf("HRANDFIELD %s WITHVALUES: pair %v %v", key, got[i], got[i+1])
				}
			}
		}
	})
}

// A single draw is uniform, for a hash answered from the first read (5
// fields) and for one read by index (50 fields).
func TestHRandFieldSingleUniform(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{5, 50} {
			key := fmt.Sprint("h", n)
			fillHash(h, key, n)
			counts := map[string]int{}
			const draws = 4000
			for range draws {
				f := cmdtest.DoParsed(t, h, "hrandfield", key).(string)
				counts[f]++
			}
			if len(counts) != n {
				t.Errorf("%d fields: drew %d distinct fields in %d draws", n, len(counts), draws)
			}
			if x := cmdtest.ChiSquare(counts, n, draws); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d fields: chi-square %.1f over %.1f: %v", n, x, cmdtest.ChiBound(n-1), counts)
			}
		}
	})
}

// A positive count gives distinct fields, each field equally likely to be
// chosen and to come first; WITHVALUES pairs each with its value.
func TestHRandFieldDistinctUniform(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{10, 50} {
			key := fmt.Sprint("h", n)
			fillHash(h, key, n)
			const reps, k = 600, 4
			counts, first := map[string]int{}, map[string]int{}
			for range reps {
				got := cmdtest.DoParsed(t, h, "hrandfield", key, fmt.Sprint(k), "withvalues").([]any)
				if len(got) != 2*k {
					t.Fatalf("got %d elements, want %d", len(got), 2*k)
				}
				seen := map[string]bool{}
				for i := 0; i < len(got); i += 2 {
					f, v := got[i].(string), got[i+1].(string)
					if v != "v"+f[1:] {
						t.Fatalf("field %s came with value %s", f, v)
					}
					if seen[f] {
						t.Fatalf("field %s twice in %v", f, got)
					}
					seen[f] = true
					counts[f]++
				}
				first[got[0].(string)]++
			}
			if x := cmdtest.ChiSquare(counts, n, reps*k); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d fields: inclusion chi-square %.1f: %v", n, x, counts)
			}
			if x := cmdtest.ChiSquare(first, n, reps); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d fields: first-position chi-square %.1f: %v", n, x, first)
			}
		}
	})
}

// A negative count draws independently: repeats happen and every field is
// equally likely.
func TestHRandFieldRepeatsUniform(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		for _, n := range []int{3, 30} {
			key := fmt.Sprint("h", n)
			fillHash(h, key, n)
			counts := map[string]int{}
			repeats := 0
			const reps, k = 200, 20
			for range reps {
				got := cmdtest.DoParsed(t, h, "hrandfield", key, fmt.Sprint(-k)).([]any)
				if len(got) != k {
					t.Fatalf("got %d fields, want %d", len(got), k)
				}
				seen := map[string]bool{}
				for _, f := range got {
					if seen[f.(string)] {
						repeats++
					}
					seen[f.(string)] = true
					counts[f.(string)]++
				}
			}
			if repeats == 0 {
				t.Errorf("%d fields: no repeats in %d draws of %d", n, reps, k)
			}
			if x := cmdtest.ChiSquare(counts, n, reps*k); x > cmdtest.ChiBound(n-1) {
				t.Errorf("%d fields: chi-square %.1f: %v", n, x, counts)
			}
		}
	})
}

// Samples larger than the per-index limit come from a read of the whole
// hash and keep their semantics.
func TestHRandFieldLargeSample(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		const n, k = 1000, 600
		fillHash(h, "h", n)
		counts := map[string]int{}
		const reps = 20
		for range reps {
			got := cmdtest.DoParsed(t, h, "hrandfield", "h", fmt.Sprint(k)).([]any)
			seen := map[string]bool{}
			for _, f := range got {
				if seen[f.(string)] {
					t.Fatalf("field %s twice", f)
				}
				seen[f.(string)] = true
				counts[f.(string)]++
			}
			if len(got) != k {
				t.Fatalf("got %d fields, want %d", len(got), k)
			}
		}
		// Each field is in a sample with probability 0.6: over 20 samples
		// the count is Binomial(20, 0.6); 0 or 20 for many fields would
		// mean a biased sample.
		extreme := 0
		for i := range n {
			if c := counts[fmt.Sprintf("f%03d", i)]; c == 0 || c == reps {
				extreme++
			}
		}
		if extreme > 5 {
			t.Errorf("%d fields were always or never drawn", extreme)
		}
		got := cmdtest.DoParsed(t, h, "hrandfield", "h", fmt.Sprint(-k), "withvalues").([]any)
		if len(got) != 2*k {
			t.Fatalf("negative count: got %d elements, want %d", len(got), 2*k)
		}
	})
}
