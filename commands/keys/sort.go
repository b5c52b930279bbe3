package main

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "sort", Arity: -2, Flags: []string{"write", "denyoom", "movablekeys"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.",
		Run:     func(c *sdk.Ctx) { runSort(c, false) },
	}, sdk.Command{
		Name: "sort_ro", Arity: -2, Flags: []string{"readonly", "movablekeys"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "7.0.0",
		Summary: "Returns the sorted elements of a list, a set, or a sorted set.",
		Run:     func(c *sdk.Ctx) { runSort(c, true) },
	})
}

// sortOp is a SORT in flight: its options, the elements and, once looked
// up, what they sort by.
type sortOp struct {
	desc, alpha, dontsort  bool
	limitStart, limitCount int64
	by                     int   // argument index of the BY pattern, 0 when none
	gets                   []int // argument indexes of the GET patterns
	store                  int   // argument index of the STORE key, 0 when none

	elems  [][]byte
	scores []float64
	cmps   [][]byte // ALPHA BY: the looked-up values (nil: none)
	srcGen uint32
	badNum bool // a score that is not a number
	start  int  // the output range of elems, inclusive
	end    int
}

// runSort: SORT key [BY pattern] [LIMIT offset count] [GET pattern ...]
// [ASC|DESC] [ALPHA] [STORE destination]; SORT_RO without STORE. As Redis's
// sortCommandGeneric: the options are parsed first, then the key is read
// (a list, set or sorted set; missing: empty), the elements are sorted by
// their own value or by the keys BY names (a string key, or a hash field
// with "->field"), numerically unless ALPHA, and GET patterns replace each
// element in the reply by the values they name (nil when missing). A BY
// pattern without '*' does not sort: a list keeps its order, a sorted set
// its rank order (a set is sorted ALPHA when stored, as in Redis).
//
// The key and each pattern's keys are read in batches, each read atomic on
// its key, not all at one instant. STORE writes the result as a list,
// replacing the destination of any type and clearing its TTL (deleting it
// when empty), as kit.DestStore does: guarded by its generation, then the
// sorted key checked unchanged (the pattern keys are not). SORT declares
// movablekeys, so the host runs it alone among a connection's pipelined
// commands.
func runSort(c *sdk.Ctx, readonly bool) {
	op := &sortOp{limitCount: -1}
	for j := 2; j < c.NArg(); j++ {
		left := c.NArg() - j - 1
		switch a := c.Arg(j); {
		case kit.Fold(a, "asc"):
			op.desc = false
		case kit.Fold(a, "desc"):
			op.desc = true
		case kit.Fold(a, "alpha"):
			op.alpha = true
		case kit.Fold(a, "limit") && left >= 2:
			var ok bool
			if op.limitStart, ok = kit.ParseInt(c.Arg(j + 1)); !ok {
				c.Error(kit.NotInt)
				return
			}
			if op.limitCount, ok = kit.ParseInt(c.Arg(j + 2)); !ok {
				c.Error(kit.NotInt)
				return
			}
			j += 2
		case !readonly && kit.Fold(a, "store") && left >= 1:
			op.store = j + 1
			j++
		case kit.Fold(a, "by") && left >= 1:
			op.by = j + 1
			op.dontsort = bytes.IndexByte(cString(c.Arg(j+1)), '*') < 0
			j++
		case kit.Fold(a, "get") && left >= 1:
			op.gets = append(op.gets, j+1)
			j++
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	op.read(c)
}

// cString is b up to its first NUL byte: Redis looks patterns up with C
// string functions.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func (op *sortOp) read(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Get("")
	c.Exec(op.loaded)
}

// loaded takes the elements of the key read and applies LIMIT as Redis
// does, then looks up the BY values.
func (op *sortOp) loaded(c *sdk.Ctx) {
	r := c.Result(0)
	var typ []byte
	var v codec.Value
	switch r.Code {
	case codec.OK:
		all := r.Value(0)
		for i := 0; i+1 < len(all.List); i += 2 {
			switch string(all.List[i].Bytes) {
			case codec.BinType:
				typ = all.List[i+1].Bytes
			case codec.BinValue:
				v = all.List[i+1]
			}
		}
		op.srcGen = r.Generation
	case codec.NotFound:
		typ = []byte(codec.TypeList)
	default:
		kit.StoreError(c, r)
		return
	}
	dontsort, alpha, by := op.dontsort, op.alpha, op.by
	op.elems = op.elems[:0]
	switch string(typ) {
	case codec.TypeList:
		for i := range v.List {
			op.elems = append(op.elems, kit.AppendStr(nil, v.List[i]))
		}
	case codec.TypeSet:
		for i := 0; i+1 < len(v.List); i += 2 {
			op.elems = append(op.elems, kit.AppendStr(nil, v.List[i]))
		}
		if dontsort && op.store != 0 {
			// Redis sorts a set it stores, so that the stored list does
			// not depend on the set's internal order.
			dontsort, alpha, by = false, true, 0
		}
	case codec.TypeZSet:
		type item struct {
			m []byte
			s float64
		}
		items := make([]item, 0, len(v.List)/2)
		for i := 0; i+1 < len(v.List); i += 2 {
			s := v.List[i+1].Float
			if v.List[i+1].Kind == codec.KindInt {
				s = float64(v.List[i+1].Int)
			}
			items = append(items, item{kit.AppendStr(nil, v.List[i]), s})
		}
		// Rank order: by score, equal scores by member.
		slices.SortFunc(items, func(a, b item) int {
			if a.s != b.s {
				if a.s < b.s {
					return -1
				}
				return 1
			}
			return bytes.Compare(a.m, b.m)
		})
		for _, it := range items {
			op.elems = append(op.elems, it.m)
		}
	default:
		c.Error(kit.WrongType)
		return
	}
	op.dontsort, op.alpha, op.by = dontsort, alpha, by

	n := int64(len(op.elems))
	start := max(op.limitStart, 0)
	end := n - 1
	if op.limitCount >= 0 {
		end = start + op.limitCount - 1
		if end < start-1 { // overflowed
			end = n - 1
		}
	}
	if start >= n {
		start, end = n-1, n-2
	}
	if end >= n {
		end = n - 1
	}
	if dontsort && (string(typ) == codec.TypeList || string(typ) == codec.TypeZSet) && op.desc {
		slices.Reverse(op.elems)
	}
	op.start, op.end = int(start), int(end)
	if dontsort || op.by == 0 || len(op.elems) == 0 {
		op.sort(c, nil)
		return
	}
	pat := cString(c.Arg(op.by))
	for _, e := range op.elems {
		lookup(c, pat, e)
	}
	c.Exec(func(c *sdk.Ctx) { op.sort(c, c.Results()) })
}

// lookup adds the read of the key (or hash field) that pattern names for
// element e, as Redis's lookupKeyByPattern: the first '*' is replaced by
// e, and "->field" after it (with a field) names a hash field. A pattern
// without '*' names nothing (callers read nothing for it: see names).
func lookup(c *sdk.Ctx, pat, e []byte) {
	star := bytes.IndexByte(pat, '*')
	keyEnd := len(pat)
	var field []byte
	if f := bytes.Index(pat[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(pat) {
		keyEnd = star + 1 + f
		field = pat[keyEnd+2:]
	}
	key := make([]byte, 0, keyEnd-1+len(e))
	key = append(append(append(key, pat[:star]...), e...), pat[star+1:keyEnd]...)
	if field != nil {
		c.Record(key).Guard(codec.TypeHash).MapGetByKeys(codec.BinValue, codec.ReturnValue, []codec.Value{codec.Bytes(field)})
		return
	}
	c.Record(key).Guard(codec.TypeString).Get(codec.BinValue)
}

// names reports whether a GET pattern names a key to read: not "#" (the
// element itself), and with a '*' (without, it names nothing: nil).
func names(pat []byte) bool {
	return string(pat) != "#" && bytes.IndexByte(pat, '*') >= 0
}

// looked is the value a lookup found, or nil (missing key, another type,
// no such field).
func looked(r *codec.Result) ([]byte, bool) {
	if r.Code != codec.OK {
		return nil, false
	}
	v := r.Value(0)
	if v.Kind == codec.KindList { // a hash field read
		if len(v.List) == 0 || v.List[0].Kind == codec.KindNil {
			return nil, false
		}
		v = v.List[0]
	}
	if v.Kind == codec.KindNil {
		return nil, false
	}
	return kit.AppendStr(nil, v), true
}

// lookupFailed answers a lookup batch's store failure, if any.
func lookupFailed(c *sdk.Ctx, rs []codec.Result) bool {
	for i := range rs {
		switch rs[i].Code {
		case codec.OK, codec.NotFound, codec.FilteredOut:
		default:
			kit.StoreError(c, &rs[i])
			return true
		}
	}
	return false
}

// sort orders the elements (unless dontsort) by their BY values (rs, one
// per element) or themselves, then reads the GET patterns' values.
func (op *sortOp) sort(c *sdk.Ctx, rs []codec.Result) {
	if rs != nil && lookupFailed(c, rs) {
		return
	}
	if !op.dontsort {
		n := len(op.elems)
		op.scores, op.cmps = make([]float64, n), make([][]byte, n)
		for j, e := range op.elems {
			byval, ok := e, true
			if rs != nil {
				byval, ok = looked(&rs[j])
			}
			if !ok {
				continue
			}
			if op.alpha {
				if rs != nil {
					op.cmps[j] = byval
				}
				continue
			}
			s, good := strtod(byval)
			if !good {
				op.badNum = true
			}
			op.scores[j] = s
		}
		idx := make([]int, n)
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			cmp := op.compare(a, b, rs != nil)
			if op.desc {
				return -cmp
			}
			return cmp
		})
		sorted := make([][]byte, n)
		for k, j := range idx {
			sorted[k] = op.elems[j]
		}
		op.elems = sorted
	}
	if op.badNum {
		c.Error("ERR One or more scores can't be converted into double")
		return
	}
	if len(op.gets) == 0 || op.end < op.start {
		op.output(c, nil)
		return
	}
	reads := 0
	for j := op.start; j <= op.end; j++ {
		for _, g := range op.gets {
			if pat := cString(c.Arg(g)); names(pat) {
				lookup(c, pat, op.elems[j])
				reads++
			}
		}
	}
	if reads == 0 {
		op.output(c, nil)
		return
	}
	c.Exec(func(c *sdk.Ctx) {
		if lookupFailed(c, c.Results()) {
			return
		}
		op.output(c, c.Results())
	})
}

// compare is Redis's sortCompare before DESC: numeric by score, equal
// scores by the elements' bytes; ALPHA by the BY values (a missing one
// first) or by the elements' bytes.
func (op *sortOp) compare(a, b int, byPattern bool) int {
	if !op.alpha {
		sa, sb := op.scores[a], op.scores[b]
		switch {
		case sa > sb:
			return 1
		case sa < sb:
			return -1
		}
		return bytes.Compare(op.elems[a], op.elems[b])
	}
	if byPattern {
		ca, cb := op.cmps[a], op.cmps[b]
		switch {
		case ca == nil && cb == nil:
			return 0
		case ca == nil:
			return -1
		case cb == nil:
			return 1
		}
		return bytes.Compare(ca, cb)
	}
	return bytes.Compare(op.elems[a], op.elems[b])
}

// output answers the elements from start to end, each replaced by its GET
// values when there are GET patterns (rs holds the reads of the patterns
// other than "#", in order), or stores them.
func (op *sortOp) output(c *sdk.Ctx, rs []codec.Result) {
	var out [][]byte
	var nils []bool
	k := 0
	for j := op.start; j <= op.end; j++ {
		if len(op.gets) == 0 {
			out = append(out, op.elems[j])
			nils = append(nils, false)
			continue
		}
		for _, g := range op.gets {
			pat := cString(c.Arg(g))
			if string(pat) == "#" {
				out = append(out, op.elems[j])
				nils = append(nils, false)
				continue
			}
			if !names(pat) {
				out = append(out, nil)
				nils = append(nils, true)
				continue
			}
			v, ok := looked(&rs[k])
			k++
			out = append(out, v)
			nils = append(nils, !ok)
		}
	}
	if op.store == 0 {
		w := c.Reply()
		w.Array(len(out))
		for i, v := range out {
			if nils[i] {
				w.Null()
			} else {
				w.Bulk(v)
			}
		}
		return
	}
	st := &kit.DestStore{Dst: c.Arg(op.store), Srcs: [][]byte{c.Arg(1)}, Gens: []uint32{op.srcGen},
		Size: int64(len(out)), Restart: op.read}
	if len(out) > 0 {
		st.Fill = func(call *codec.Call) {
			items := make([]codec.Value, len(out))
			for i, v := range out {
				items[i] = codec.Bytes(v) // a missing GET value is stored as ""
			}
			call.Put(codec.BinType, codec.Str(codec.TypeList)).Put(codec.BinValue, codec.List(items...))
		}
	}
	st.Start(c)
}

// strtod parses a sort score as Redis does with C's strtod: leading
// white space, decimal or hexadecimal (exponent optional), inf, infinity;
// it must use the whole value (up to a NUL byte); NaN, overflow and
// underflow are refused. The empty string is 0.
func strtod(b []byte) (float64, bool) {
	b = cString(b)
	if len(b) == 0 {
		return 0, true
	}
	s := bytes.TrimLeft(b, " \t\n\v\f\r")
	if len(s) == 0 || bytes.IndexByte(s, '_') >= 0 {
		return 0, false
	}
	body := s
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	str := string(s)
	hex := len(body) > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	if hex && bytes.IndexAny(body, "pP") < 0 {
		str += "p0"
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false // not a number, NaN, or too large (ERANGE)
	}
	if f == 0 || math.Abs(f) < 0x1p-1022 && !math.IsInf(f, 0) {
		// Zero or subnormal: C's strtod reports ERANGE unless the number
		// written is zero.
		mant := body
		if hex {
			mant = mant[2:]
			if i := bytes.IndexAny(mant, "pP"); i >= 0 {
				mant = mant[:i]
			}
		} else if i := bytes.IndexAny(mant, "eE"); i >= 0 {
			mant = mant[:i]
		}
		return f, len(bytes.Trim(mant, "0.")) == 0
	}
	return f, true
}
