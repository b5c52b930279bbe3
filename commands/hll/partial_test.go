package main

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// storedHLL reads key's value straight from the store.
func storedHLL(t *testing.T, h *sdktest.Host, key string) []byte {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Get(codec.BinValue)
	r := cmdtest.Exec(t, h.Store, call)
	if r.Code != codec.OK {
		t.Fatalf("stored %q: code %d", key, r.Code)
	}
	return append([]byte(nil), r.Values[0].Bytes...)
}

// The partial path of a dense HLL (a PFADD of a few elements: only the
// changed registers' bits and the cache bit written) leaves exactly the
// bytes the whole-value edit (add, invalidate) gives, registers at every
// bit alignment, the same register twice in one PFADD, and the cache
// invalidated after a PFCOUNT stored it; PFCOUNT answers a valid cache
// from the header.
func TestDensePartialMatchesWhole(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		// Build a dense HLL through the whole-value path (more than
		// maxPartial elements per PFADD).
		want := newSparse()
		for i := 0; i < 4000; i += 100 {
			args := []string{"PFADD", "k"}
			for j := i; j < i+100; j++ {
				e := "w" + strconv.Itoa(j)
				args = append(args, e)
				want, _ = add(want, []byte(e))
			}
			h.Do(args...)
		}
		invalidate(want)
		if want[4] != encDense {
			t.Fatal("not dense after 4000 elements")
		}
		if got := storedHLL(t, h, "k"); !bytes.Equal(got, want) {
			t.Fatal("whole-value path differs from the reference")
		}
		for step := range 300 {
			args := []string{"PFADD", "k"}
			changed := false
			for j := range step%5 + 1 {
				e := "p" + strconv.Itoa(step*7+j)
				if j == 2 {
					e = args[2] // the same element (register) again
				}
				args = append(args, e)
				var ret int
				if want, ret = add(want, []byte(e)); ret == 1 {
					changed = true
				}
			}
			wantReply := "(integer) 0"
			if changed {
				invalidate(want)
				wantReply = "(integer) 1"
			}
			if got := h.Do(args...); got != wantReply {
				t.Fatalf("step %d: %v = %s, want %s", step, args, got, wantReply)
			}
			if step%10 == 0 {
				// PFCOUNT caches the estimate; the next change must
				// invalidate it.
				var hist [64]int
				histogram(want, &hist)
				card := estimate(&hist)
				setCard(want, card)
				wantCount := "(integer) " + strconv.FormatUint(card, 10)
				for range 2 { // computed, then from the cache
					if got := h.Do("PFCOUNT", "k"); got != wantCount {
						t.Fatalf("step %d: PFCOUNT = %s, want %s", step, got, wantCount)
					}
				}
			}
			if got := storedHLL(t, h, "k"); !bytes.Equal(got, want) {
				t.Fatalf("step %d: %v: stored bytes differ from the whole-value edit", step, args)
			}
		}
	})
}
