package main

import (
	"math"
	"math/rand/v2"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "hrandfield", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "6.2.0",
		Summary: "Returns one or more random fields from a hash.",
		Run:     runHRandField,
	})
}

// HRANDFIELD picks uniformly: it learns the size, draws random indexes
// (math/rand/v2, seeded by the runtime from the host's random source), and
// reads the items at those indexes of the key-ordered map. The first read
// also fetches the first few items, so a small hash is answered from it in
// one round trip. The index read checks that the record's generation is the
// one the size came from, and draws again if another client wrote in
// between. A large sample is drawn from a read of the whole hash instead of
// one op per index.
//
// Ctx.N: [0] the count's magnitude, [1] the rand* flags, [2] attempts,
// [3] the generation the size came from.

const (
	randCount      = 1 << iota // a count was given: answer an array
	randUniq                   // the count is positive: distinct items
	randWithValues             // WITHVALUES
)

const (
	// prefetch is how many items the first read returns along with the
	// size.
	prefetch = 16
	// maxIndexOps bounds the index reads in one call; a larger sample reads
	// the whole map.
	maxIndexOps = 512
	// maxDraws bounds a negative count's reply, which repeats items and so
	// is not bounded by the hash's size. Redis has no bound; a reply of
	// millions of items would exhaust the module's memory.
	maxDraws = 1 << 20
)

// errTooManyDraws refuses a negative count beyond maxDraws.
const errTooManyDraws = "ERR respike: a negative count may ask for at most 1048576 items"

func runHRandField(c *sdk.Ctx) {
	if c.NArg() >= 3 {
		n, ok := kit.ParseInt(c.Arg(2))
		if !ok {
			c.Error(kit.NotInt)
			return
		}
		if n == math.MinInt64 {
			c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
			return
		}
		if c.NArg() > 4 || (c.NArg() == 4 && !kit.Fold(c.Arg(3), "withvalues")) {
			c.Error(kit.Syntax)
			return
		}
		flags := int64(randCount)
		if c.NArg() == 4 {
			flags |= randWithValues
			if n < -math.MaxInt64/2 || n > math.MaxInt64/2 {
				c.Error("ERR value is out of range")
				return
			}
		}
		if n >= 0 {
			flags |= randUniq
			c.N[0] = n
		} else {
			c.N[0] = -n
		}
		c.N[1] = flags
	} else {
		c.N[0], c.N[1] = 1, randUniq
	}
	c.Record(c.Arg(1)).Guard(codec.TypeHash).
		MapSize(codec.BinValue).
		MapGetByIndex(codec.BinValue, randReturn(c), 0, prefetch)
	c.Exec(hrandFirst)
}

// randReturn is what item reads return: pairs WITHVALUES, keys otherwise.
func randReturn(c *sdk.Ctx) codec.MapReturn {
	if c.N[1]&randWithValues != 0 {
		return codec.ReturnKeyValue
	}
	return codec.ReturnKey
}

// stride is the number of values per item in a read's answer.
func stride(c *sdk.Ctx) int {
	if c.N[1]&randWithValues != 0 {
		return 2
	}
	return 1
}

// randEmpty answers for a missing key.
func randEmpty(c *sdk.Ctx) {
	if c.N[1]&randCount == 0 {
		c.Reply().Null()
		return
	}
	c.Reply().Array(0)
}

func hrandFirst(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		randEmpty(c)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	if c.N[1]&randCount != 0 && c.N[0] == 0 {
		c.Reply().Array(0)
		return
	}
	size := kit.IntOf(r.Value(0))
	items := r.Value(1).List
	if int64(len(items)/stride(c)) >= size {
		randLocal(c, items)
		return
	}
	randPlan(c, size, r.Generation)
}

// randPlan reads what a sample of a hash of size items needs: the whole
// hash, or the items at freshly drawn indexes.
func randPlan(c *sdk.Ctx, size int64, gen uint32) {
	k := c.N[0]
	uniq := c.N[1]&randUniq != 0
	if !uniq && k > maxDraws {
		c.Error(errTooManyDraws)
		return
	}
	if (uniq && k >= size) || k > maxIndexOps {
		c.Record(c.Arg(1)).Guard(codec.TypeHash).MapGetByIndex(codec.BinValue, randReturn(c), 0, -1)
		c.Exec(hrandWhole)
		return
	}
	c.N[3] = int64(gen)
	call := c.Record(c.Arg(1)).Guard(codec.TypeHash).MapSize(codec.BinValue)
	ret := randReturn(c)
	var one [1]int64
	for _, i := range kit.Draw(one[:0], int(k), size, uniq) {
		call.MapGetByIndex(codec.BinValue, ret, i, 1)
	}
	c.Exec(hrandIndexed)
}

func hrandWhole(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		randLocal(c, r.Value(0).List)
	case codec.NotFound:
		randEmpty(c)
	default:
		kit.GuardFailed(c, r)
	}
}

// hrandIndexed answers from the index reads, or draws again when the record
// changed since its size was read.
func hrandIndexed(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		randEmpty(c)
		return
	default:
		kit.GuardFailed(c, r)
		return
	}
	n := len(r.Values) - 1
	st := stride(c)
	changed := r.Generation != uint32(c.N[3])
	for i := 1; i <= n && !changed; i++ {
		changed = len(r.Value(i).List) < st
	}
	if changed {
		c.N[2]++
		if c.N[2] >= maxAttempts {
			c.Error(kit.Contention)
			return
		}
		randPlan(c, kit.IntOf(r.Value(0)), r.Generation)
		return
	}
	w := c.Reply()
	if c.N[1]&randCount == 0 {
		w.Bulk(r.Value(1).List[0].Bytes)
		return
	}
	openItems(c, n)
	for i := 1; i <= n; i++ {
		l := r.Value(i).List
		writeItem(c, l[:st])
	}
}

// randLocal answers from all items of the hash (st values per item).
func randLocal(c *sdk.Ctx, items []codec.Value) {
	st := stride(c)
	size := len(items) / st
	w := c.Reply()
	if c.N[1]&randCount == 0 {
		w.Bulk(items[rand.IntN(size)*st].Bytes)
		return
	}
	k := c.N[0]
	uniq := c.N[1]&randUniq != 0
	switch {
	case uniq && k >= int64(size):
		openItems(c, size)
		for i := 0; i < size; i++ {
			writeItem(c, items[i*st:i*st+st])
		}
	case uniq:
		// A partial Fisher-Yates shuffle: the first k are a uniform sample
		// in random order.
		perm := make([]int32, size)
		for i := range perm {
			perm[i] = int32(i)
		}
		openItems(c, int(k))
		for i := 0; i < int(k); i++ {
			j := i + rand.IntN(size-i)
			perm[i], perm[j] = perm[j], perm[i]
			p := int(perm[i])
			writeItem(c, items[p*st:p*st+st])
		}
	default:
		if k > maxDraws {
			c.Error(errTooManyDraws)
			return
		}
		openItems(c, int(k))
		for i := 0; i < int(k); i++ {
			p := rand.IntN(size)
			writeItem(c, items[p*st:p*st+st])
		}
	}
}

// openItems opens the reply of n items: fields, or field-value pairs
// (RESP3: an array of two-element arrays, RESP2: one flat array).
func openItems(c *sdk.Ctx, n int) {
	w := c.Reply()
	if c.N[1]&randWithValues != 0 && !w.RESP3() {
		w.Array(2 * n)
		return
	}
	w.Array(n)
}

// writeItem writes one item: a field, or a field and its value.
func writeItem(c *sdk.Ctx, item []codec.Value) {
	w := c.Reply()
	if len(item) == 1 {
		w.Bulk(item[0].Bytes)
		return
	}
	if w.RESP3() {
		w.Array(2)
	}
	w.Bulk(item[0].Bytes)
	kit.ReplyStr(c, &item[1])
}
