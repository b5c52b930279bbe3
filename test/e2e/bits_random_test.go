package e2e

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestBitsRandomAgainstRedis plays random bit commands (SETBIT, GETBIT,
// BITCOUNT and BITPOS with random ranges in both units, BITOP, BITFIELD
// with random types, offsets, values and overflow modes, LCS with random
// options) on a few short keys against redis-server and respike and
// compares every raw reply. RESPIKE_BITS_SEED replays a seed; the seed is
// logged on failure together with the commands that led there.
func TestBitsRandomAgainstRedis(t *testing.T) {
	runRandom(t, randomSpec{seedEnv: "RESPIKE_BITS_SEED", salt: 0xb175, steps: 3000, proto3: true,
		command: func(r *rand.Rand) []string { return (&bgen{r: r}).command() }})
}

// bgen draws random bit commands.
type bgen struct{ r *rand.Rand }

var bKeys = []string{"b1", "b2", "b3", "b4"}

func (g *bgen) key() string { return bKeys[g.r.IntN(len(bKeys))] }

// index draws a range index: mostly small, sometimes negative or past
// the end.
func (g *bgen) index() string {
	switch g.r.IntN(10) {
	case 0:
		return strconv.Itoa(-g.r.IntN(100))
	case 1:
		return strconv.Itoa(g.r.IntN(200))
	default:
		return strconv.Itoa(g.r.IntN(20) - 5)
	}
}

func (g *bgen) unit(args []string) []string {
	switch g.r.IntN(3) {
	case 0:
		return append(args, "BIT")
	case 1:
		return append(args, "byte")
	}
	return args
}

func (g *bgen) value() string {
	vals := []string{"", "foobar", "12", "-7", "\xff\xf0\x00", "\x00\x00\x01", "9223372036854775807", "abc\x00def"}
	if g.r.IntN(3) == 0 {
		b := make([]byte, g.r.IntN(12))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return string(b)
	}
	return vals[g.r.IntN(len(vals))]
}

func (g *bgen) bfType() string {
	if g.r.IntN(2) == 0 {
		return "i" + strconv.Itoa(1+g.r.IntN(64))
	}
	return "u" + strconv.Itoa(1+g.r.IntN(63))
}

func (g *bgen) bfInt() string {
	switch g.r.IntN(6) {
	case 0:
		return strconv.FormatInt(g.r.Int64(), 10)
	case 1:
		return strconv.FormatInt(-g.r.Int64(), 10)
	case 2:
		return strconv.Itoa(g.r.IntN(1000) - 500)
	case 3:
		return []string{"9223372036854775807", "-9223372036854775808", "0", "1", "-1"}[g.r.IntN(5)]
	}
	return strconv.Itoa(g.r.IntN(20) - 10)
}

func (g *bgen) command() []string {
	switch n := g.r.IntN(20); {
	case n < 2:
		return []string{"SET", g.key(), g.value()}
	case n < 5:
		return []string{"SETBIT", g.key(), strconv.Itoa(g.r.IntN(120)), strconv.Itoa(g.r.IntN(2))}
	case n < 6:
		return []string{"GETBIT", g.key(), strconv.Itoa(g.r.IntN(120))}
	case n < 8:
		args := []string{"BITCOUNT", g.key()}
		if g.r.IntN(4) > 0 {
			args = g.unit(append(args, g.index(), g.index()))
		}
		return args
	case n < 11:
		args := []string{"BITPOS", g.key(), strconv.Itoa(g.r.IntN(2))}
		switch g.r.IntN(4) {
		case 1:
			args = append(args, g.index())
		case 2:
			args = append(args, g.index(), g.index())
		case 3:
			args = g.unit(append(args, g.index(), g.index()))
		}
		return args
	case n < 12:
		op := []string{"AND", "OR", "XOR", "NOT"}[g.r.IntN(4)]
		args := []string{"BITOP", op, g.key(), g.key()}
		if op != "NOT" {
			for range g.r.IntN(3) {
				args = append(args, g.key())
			}
		}
		return args
	case n < 17:
		args := []string{"BITFIELD", g.key()}
		if g.r.IntN(5) == 0 {
			args[0] = "BITFIELD_RO"
		}
		for range 1 + g.r.IntN(4) {
			if g.r.IntN(4) == 0 {
				args = append(args, "OVERFLOW", []string{"WRAP", "SAT", "FAIL"}[g.r.IntN(3)])
			}
			off := strconv.Itoa(g.r.IntN(100))
			if g.r.IntN(3) == 0 {
				off = "#" + strconv.Itoa(g.r.IntN(4))
			}
			switch g.r.IntN(3) {
			case 0:
				args = append(args, "GET", g.bfType(), off)
			case 1:
				args = append(args, "SET", g.bfType(), off, g.bfInt())
			default:
				args = append(args, "INCRBY", g.bfType(), off, g.bfInt())
			}
		}
		return args
	case n < 19:
		args := []string{"LCS", g.key(), g.key()}
		for _, o := range []string{"LEN", "IDX", "WITHMATCHLEN"} {
			if g.r.IntN(3) == 0 {
				args = append(args, o)
			}
		}
		if g.r.IntN(3) == 0 {
			args = append(args, "MINMATCHLEN", strconv.Itoa(g.r.IntN(4)))
		}
		return args
	default:
		return []string{"GET", g.key()}
	}
}
