package kit

import (
	"math/rand/v2"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// Draw appends k indexes below size to dst: distinct and in random order
// when uniq (then k must not exceed size), independent uniform draws
// otherwise. A single draw into a caller's array allocates nothing.
func Draw(dst []int64, k int, size int64, uniq bool) []int64 {
	out := dst[:0]
	if k == 1 {
		return append(out, rand.Int64N(size))
	}
	if !uniq {
		for range k {
			out = append(out, rand.Int64N(size))
		}
		return out
	}
	if int64(k)*4 >= size {
		// A partial Fisher-Yates shuffle of all indexes.
		perm := make([]int64, size)
		for i := range perm {
			perm[i] = int64(i)
		}
		for i := range k {
			j := int64(i) + rand.Int64N(size-int64(i))
			perm[i], perm[j] = perm[j], perm[i]
		}
		return append(out, perm[:k]...)
	}
	// Floyd's algorithm: a uniform k-subset, then a shuffle for the order.
	seen := make(map[int64]struct{}, k)
	for j := size - int64(k); j < size; j++ {
		t := rand.Int64N(j + 1)
		if _, dup := seen[t]; dup {
			t = j
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	rand.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

// GuardFailed writes the reply for a typed map call that did not succeed:
// WRONGTYPE when the type guard filtered the record out or the bin is not a
// map, the store's error otherwise.
func GuardFailed(c *sdk.Ctx, r *codec.Result) {
	switch r.Code {
	case codec.FilteredOut, codec.BinTypeError:
		c.Error(WrongType)
	default:
		StoreError(c, r)
	}
}

// ReadItems is the list the first op of a guarded read answered (a whole
// map's items, or those found): nil when the key is absent. ok is false
// when the read failed, after answering its error (WRONGTYPE for the
// type guard).
func ReadItems(c *sdk.Ctx, r *codec.Result) (items []codec.Value, ok bool) {
	switch r.Code {
	case codec.OK:
		return r.Value(0).List, true
	case codec.NotFound:
		return nil, true
	}
	GuardFailed(c, r)
	return nil, false
}

// Found is the result of a command's read of its key: ok when the record
// exists; otherwise it has answered the null reply (the key is absent) or
// the store's error.
func Found(c *sdk.Ctx) (r *codec.Result, ok bool) {
	r = c.Result(0)
	switch r.Code {
	case codec.OK:
		return r, true
	case codec.NotFound:
		c.Reply().Null()
	default:
		StoreError(c, r)
	}
	return r, false
}

// IntOf reads a count or size a map op returned; a missing map answers
// nothing, which counts as 0.
func IntOf(v codec.Value) int64 {
	if v.Kind == codec.KindInt {
		return v.Int
	}
	return 0
}
