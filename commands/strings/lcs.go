package main

import (
	"strconv"

	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "lcs", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "string", Since: "7.0.0",
		Summary: "Finds the longest common substring.",
		Run:     runLCS,
	})
}

// maxLCSTable caps the dynamic-programming table LCS builds in the
// module's memory (4 bytes a cell, (len(a)+1)*(len(b)+1) cells). Redis
// allows up to proto-max-bulk-len (512 MiB); a module instance has 64 MiB
// by default, so respike refuses tables over 16 MiB (about two strings of
// 2,000 bytes) with an error of its own.
const maxLCSTable = 16 << 20

// runLCS: LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN].
// Both keys are read in one batch; as in Redis, a key of another type is
// refused before the options are parsed, with LCS's own error, and a
// missing key is the empty string.
func runLCS(c *sdk.Ctx) {
	c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Record(c.Arg(2)).Guard(codec.TypeString).Get(codec.BinValue)
	c.Exec(lcsDone)
}

// lcsDone computes the LCS table and walks it back exactly as Redis's
// lcsCommand does, so that the string and the match ranges (IDX, from the
// end of the strings backwards) are Redis's.
func lcsDone(c *sdk.Ctx) {
	var strs [2][]byte
	var tmps [2][24]byte
	for i := range 2 {
		r := c.Result(i)
		switch r.Code {
		case codec.OK:
			strs[i] = strBytes(r.Value(0), tmps[i][:])
		case codec.NotFound:
		case codec.FilteredOut:
			c.Error("ERR The specified keys must contain string values")
			return
		default:
			kit.StoreError(c, r)
			return
		}
	}
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < c.NArg(); j++ {
		opt := c.Arg(j)
		switch {
		case kit.Fold(opt, "idx"):
			getIdx = true
		case kit.Fold(opt, "len"):
			getLen = true
		case kit.Fold(opt, "withmatchlen"):
			withLen = true
		case kit.Fold(opt, "minmatchlen") && j+1 < c.NArg():
			n, ok := kit.ParseInt(c.Arg(j + 1))
			if !ok {
				c.Error(kit.NotInt)
				return
			}
			minLen = max(n, 0)
			j++
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	if getIdx && getLen {
		c.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	a, b := strs[0], strs[1]
	alen, blen := len(a), len(b)
	cells := uint64(alen+1) * uint64(blen+1)
	if cells*4 > maxBitBytes {
		c.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	if cells*4 > maxLCSTable {
		c.Error("ERR respike: LCS needs a table of " + strconv.FormatUint(cells*4, 10) +
			" bytes; respike builds LCS tables up to 16 MiB")
		return
	}
	w := blen + 1
	lcs := make([]uint32, cells)
	for i := 1; i <= alen; i++ {
		row, prev := lcs[i*w:(i+1)*w], lcs[(i-1)*w:i*w]
		for j := 1; j <= blen; j++ {
			switch {
			case a[i-1] == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	total := lcs[alen*w+blen]
	if getLen {
		c.Reply().Int(int64(total))
		return
	}
	// Walk back from the end, collecting the LCS and, for IDX, the ranges
	// of contiguous matches (a range ends at a mismatch step or at the
	// first byte of either string).
	result := make([]byte, total)
	idx := total
	type match struct{ a0, a1, b0, b1 int }
	var ranges []match
	inRange := false
	var cur match
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if !inRange {
				cur = match{i - 1, i - 1, j - 1, j - 1}
				inRange = true
			} else if cur.a0 == i && cur.b0 == j {
				cur.a0--
				cur.b0--
			} else {
				emit = true
			}
			if cur.a0 == 0 || cur.b0 == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if lcs[(i-1)*w+j] > lcs[i*w+j-1] {
				i--
			} else {
				j--
			}
			emit = inRange
		}
		if emit {
			if n := int64(cur.a1 - cur.a0 + 1); minLen == 0 || n >= minLen {
				ranges = append(ranges, cur)
			}
			inRange = false
		}
	}
	if !getIdx {
		c.Reply().Bulk(result)
		return
	}
	wr := c.Reply()
	wr.Map(2)
	wr.BulkString("matches")
	wr.Array(len(ranges))
	for _, m := range ranges {
		if withLen {
			wr.Array(3)
		} else {
			wr.Array(2)
		}
		wr.Array(2)
		wr.Int(int64(m.a0))
		wr.Int(int64(m.a1))
		wr.Array(2)
		wr.Int(int64(m.b0))
		wr.Int(int64(m.b1))
		if withLen {
			wr.Int(int64(m.a1 - m.a0 + 1))
		}
	}
	wr.BulkString("len")
	wr.Int(int64(total))
}
