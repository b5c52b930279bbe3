package kit

import (
	"math"
	"math/rand/v2"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// Sample is a random-sampling command over a map-valued type (HRANDFIELD,
// SRANDMEMBER, ZRANDMEMBER; SPOP through a Pop hook). It picks uniformly:
// it learns the size, draws random indexes (math/rand/v2, seeded by the
// runtime from the host's random source), and reads the items at those
// indexes of the key-ordered map. The first read also fetches the first
// few items, so a small collection is answered from it in one round trip.
// The index read checks that the record's generation is the one the size
// came from, and draws again if another client wrote in between. A large
// sample is drawn from a read of the whole collection instead of one op per
// index.
//
// Ctx.N: [0] the count's magnitude, [1] the Rand* flags, [2] attempts,
// [3] the generation the size came from; [5] and above are the Pop hook's.
type Sample struct {
	guard string
	word  string
	value func(c *sdk.Ctx, v *codec.Value)
	pop   func(c *sdk.Ctx, size int64, gen uint32, items []codec.Value)

	first, whole, indexed sdk.Step
}

// Sample flags in Ctx.N[1].
const (
	RandCount      = 1 << iota // a count was given: answer an array
	RandUniq                   // the count is not negative: distinct items
	RandWithValues             // WITHVALUES / WITHSCORES
	RandPop                    // the Pop hook takes over after the first read
)

const (
	// prefetch is how many items the first read returns along with the
	// size.
	prefetch = 16
	// MaxIndexOps bounds the index reads in one call; a larger sample
	// reads the whole map.
	MaxIndexOps = 512
	// MaxDraws bounds a negative count's reply, which repeats items and so
	// is not bounded by the collection's size. Redis has no bound; a reply
	// of millions of items would exhaust the module's memory.
	MaxDraws = 1 << 20
	// ErrTooManyDraws refuses a negative count beyond MaxDraws.
	ErrTooManyDraws = "ERR respike: a negative count may ask for at most 1048576 items"
)

// NewSample makes the sampling command of maps tagged guard. word is the
// option that asks for values ("withvalues", "withscores"), "" for none
// (then more than one argument after the key is a syntax error, as for
// SRANDMEMBER); value writes an item's value.
func NewSample(guard, word string, value func(c *sdk.Ctx, v *codec.Value)) *Sample {
	s := &Sample{guard: guard, word: word, value: value}
	s.first, s.whole, s.indexed = s.onFirst, s.onWhole, s.onIndexed
	return s
}

// SetPop makes the first read hand over to pop when Ctx.N[1] has RandPop:
// pop gets the size, the generation it came from and all items when the
// first read returned them all (nil otherwise).
func (s *Sample) SetPop(pop func(c *sdk.Ctx, size int64, gen uint32, items []codec.Value)) {
	s.pop = pop
}

// Run is the command's first step: it parses the count and option, then
// reads.
func (s *Sample) Run(c *sdk.Ctx) {
	if s.word == "" && c.NArg() > 3 {
		c.Error(Syntax)
		return
	}
	if c.NArg() < 3 {
		c.N[0], c.N[1] = 1, RandUniq
		s.Read(c)
		return
	}
	n, ok := ParseInt(c.Arg(2))
	if !ok {
		c.Error(NotInt)
		return
	}
	if n == math.MinInt64 {
		c.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	if c.NArg() > 4 || (c.NArg() == 4 && !Fold(c.Arg(3), s.word)) {
		c.Error(Syntax)
		return
	}
	flags := int64(RandCount)
	if c.NArg() == 4 {
		flags |= RandWithValues
		if n < -math.MaxInt64/2 || n > math.MaxInt64/2 {
			c.Error("ERR value is out of range")
			return
		}
	}
	if n >= 0 {
		flags |= RandUniq
		c.N[0] = n
	} else {
		c.N[0] = -n
	}
	c.N[1] = flags
	s.Read(c)
}

// Read reads the size and the first items; Ctx.N[0] and N[1] must be set.
func (s *Sample) Read(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(s.guard).
		MapSize(codec.BinValue).
		MapGetByIndex(codec.BinValue, s.ret(c), 0, prefetch)
	c.Exec(s.first)
}

// ret is what item reads return: pairs with values, keys otherwise.
func (s *Sample) ret(c *sdk.Ctx) codec.MapReturn {
	if c.N[1]&RandWithValues != 0 {
		return codec.ReturnKeyValue
	}
	return codec.ReturnKey
}

// stride is the number of values per item in a read's answer.
func stride(c *sdk.Ctx) int {
	if c.N[1]&RandWithValues != 0 {
		return 2
	}
	return 1
}

// Empty answers for a missing key or an empty sample.
func (s *Sample) Empty(c *sdk.Ctx) {
	w := c.Reply()
	switch {
	case c.N[1]&RandCount == 0:
		w.Null()
	case c.N[1]&RandPop != 0:
		w.Set(0)
	default:
		w.Array(0)
	}
}

// Retry reports whether a step that lost a race for a key may run again
// (Again: within RetryFor of the command's start, with no count limit);
// when not, it has replied Contention.
func Retry(c *sdk.Ctx) bool {
	if !Again(c) {
		c.Error(Contention)
		return false
	}
	return true
}

func (s *Sample) onFirst(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		s.Empty(c)
		return
	default:
		GuardFailed(c, r)
		return
	}
	if c.N[1]&RandCount != 0 && c.N[0] == 0 {
		s.Empty(c)
		return
	}
	size := IntOf(r.Value(0))
	items := r.Value(1).List
	all := int64(len(items)/stride(c)) >= size
	if c.N[1]&RandPop != 0 {
		if !all {
			items = nil
		}
		s.pop(c, size, r.Generation, items)
		return
	}
	if all {
		s.local(c, items)
		return
	}
	s.plan(c, size, r.Generation)
}

// plan reads what a sample of a collection of size items needs: all of
// it, or the items at freshly drawn indexes.
func (s *Sample) plan(c *sdk.Ctx, size int64, gen uint32) {
	k := c.N[0]
	uniq := c.N[1]&RandUniq != 0
	if !uniq && k > MaxDraws {
		c.Error(ErrTooManyDraws)
		return
	}
	if (uniq && k >= size) || k > MaxIndexOps {
		c.Record(c.Arg(1)).Guard(s.guard).MapGetByIndex(codec.BinValue, s.ret(c), 0, -1)
		c.Exec(s.whole)
		return
	}
	c.N[3] = int64(gen)
	call := c.Record(c.Arg(1)).Guard(s.guard).MapSize(codec.BinValue)
	ret := s.ret(c)
	var one [1]int64
	for _, i := range Draw(one[:0], int(k), size, uniq) {
		call.MapGetByIndex(codec.BinValue, ret, i, 1)
	}
	c.Exec(s.indexed)
}

func (s *Sample) onWhole(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		s.local(c, r.Value(0).List)
	case codec.NotFound:
		s.Empty(c)
	default:
		GuardFailed(c, r)
	}
}

// onIndexed answers from the index reads, or draws again when the record
// changed since its size was read.
func (s *Sample) onIndexed(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		s.Empty(c)
		return
	default:
		GuardFailed(c, r)
		return
	}
	n := len(r.Values) - 1
	st := stride(c)
	changed := r.Generation != uint32(c.N[3])
	for i := 1; i <= n && !changed; i++ {
		changed = len(r.Value(i).List) < st
	}
	if changed {
		if Retry(c) {
			s.plan(c, IntOf(r.Value(0)), r.Generation)
		}
		return
	}
	if c.N[1]&RandCount == 0 {
		c.Reply().Bulk(r.Value(1).List[0].Bytes)
		return
	}
	s.open(c, n)
	for i := 1; i <= n; i++ {
		s.item(c, r.Value(i).List[:st])
	}
}

// local answers from all items of the collection.
func (s *Sample) local(c *sdk.Ctx, items []codec.Value) {
	st := stride(c)
	size := len(items) / st
	if size == 0 {
		s.Empty(c)
		return
	}
	if c.N[1]&RandCount == 0 {
		c.Reply().Bulk(items[rand.IntN(size)*st].Bytes)
		return
	}
	k := c.N[0]
	uniq := c.N[1]&RandUniq != 0
	switch {
	case uniq && k >= int64(size):
		s.open(c, size)
		for i := range size {
			s.item(c, items[i*st:i*st+st])
		}
	case !uniq && k > MaxDraws:
		c.Error(ErrTooManyDraws)
	default:
		idx := Draw(nil, int(k), int64(size), uniq)
		s.open(c, len(idx))
		for _, p := range idx {
			s.item(c, items[int(p)*st:int(p)*st+st])
		}
	}
}

// open opens the reply of n items: members, or member-value pairs (RESP3:
// an array of two-element arrays, RESP2: one flat array).
func (s *Sample) open(c *sdk.Ctx, n int) {
	w := c.Reply()
	if c.N[1]&RandWithValues != 0 && !w.RESP3() {
		w.Array(2 * n)
		return
	}
	w.Array(n)
}

// item writes one item: a member, or a member and its value.
func (s *Sample) item(c *sdk.Ctx, item []codec.Value) {
	w := c.Reply()
	if len(item) == 1 {
		w.Bulk(item[0].Bytes)
		return
	}
	if w.RESP3() {
		w.Array(2)
	}
	w.Bulk(item[0].Bytes)
	s.value(c, &item[1])
}
