package main

import (
	"math"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lpos", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "list", Since: "6.0.6",
		Summary: "Returns the index of matching elements in a list.",
		Run:     runLPos,
	})
}

// LPOS reads, in one operate, the indexes of every item equal to the
// element and the length (MAXLEN from the tail counts from it), then picks
// what Redis's scan would have found: from the head for a positive RANK,
// from the tail for a negative one, skipping |RANK|-1 matches, looking at
// the first MAXLEN items only, stopping after COUNT matches (0: all).
//
// Ctx.N: [0] rank, [1] count (-1: not given), [2] maxlen.
func runLPos(c *sdk.Ctx) {
	rank, count, maxlen := int64(1), int64(-1), int64(0)
	for j := 3; j < c.NArg(); j++ {
		opt := c.Arg(j)
		more := j+1 < c.NArg()
		switch {
		case kit.Fold(opt, "rank") && more:
			j++
			n, ok := kit.ParseInt(c.Arg(j))
			if !ok {
				c.Error(kit.NotInt)
				return
			}
			if n == 0 {
				c.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			rank = n
		case kit.Fold(opt, "count") && more:
			j++
			n, ok := kit.ParseInt(c.Arg(j))
			if !ok || n < 0 {
				c.Error("ERR COUNT can't be negative")
				return
			}
			count = n
		case kit.Fold(opt, "maxlen") && more:
			j++
			n, ok := kit.ParseInt(c.Arg(j))
			if !ok || n < 0 {
				c.Error("ERR MAXLEN can't be negative")
				return
			}
			maxlen = n
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	c.N[0], c.N[1], c.N[2] = rank, count, maxlen
	c.Record(c.Arg(1)).Guard(codec.TypeList).
		ListGetByValue(bin, codec.ReturnIndex, codec.Bytes(c.Arg(2))).ListSize(bin)
	c.Exec(lposDone)
}

func lposDone(c *sdk.Ctx) {
	r := c.Result(0)
	rank, count, maxlen := c.N[0], c.N[1], c.N[2]
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		if count != -1 {
			c.Reply().Array(0)
		} else {
			c.Reply().Null()
		}
		return
	default:
		failed(c, r)
		return
	}
	at := r.Value(0).List
	n := kit.IntOf(r.Value(1))
	fromTail := rank < 0
	if rank == math.MinInt64 {
		// Redis negates the rank, which stays negative: every match
		// qualifies and COUNT never stops the scan.
		rank, count = 1, min(count, 0)
	} else if fromTail {
		rank = -rank
	}
	// Matches in scan order, within MAXLEN of where the scan starts.
	pick := func(k int) (int64, bool) {
		i := at[k].Int
		if fromTail {
			i = at[len(at)-1-k].Int
			return i, maxlen == 0 || n-1-i < maxlen
		}
		return i, maxlen == 0 || i < maxlen
	}
	var found []int64
	var one [1]int64
	if count == -1 {
		found = one[:0]
	}
	for k := range at {
		i, ok := pick(k)
		if !ok {
			break
		}
		if int64(k)+1 < rank {
			continue
		}
		found = append(found, i)
		if count == -1 || (count > 0 && int64(len(found)) >= count) {
			break
		}
	}
	if count == -1 {
		if len(found) == 0 {
			c.Reply().Null()
			return
		}
		c.Reply().Int(found[0])
		return
	}
	w := c.Reply()
	w.Array(len(found))
	for _, i := range found {
		w.Int(i)
	}
}
