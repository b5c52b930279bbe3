package e2e

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestZSetRandomAgainstRedis plays random sorted-set commands (ZADD with
// random options, ZINCRBY, ZREM, every range form, pops, removals by range
// and the algebra) on a few keys against redis-server and respike and
// compares every raw reply. RESPIKE_ZSET_SEED replays a seed; the seed is
// logged on failure together with the commands that led there.
//
// The keys stay small (Redis's listpack encoding) and lex ranges run only
// on a key whose scores are all 0, where Redis's order is defined; the
// algebra combines at most two sources, so that SUM adds in one order.
func TestZSetRandomAgainstRedis(t *testing.T) {
	runRandom(t, randomSpec{seedEnv: "RESPIKE_ZSET_SEED", salt: 0x5eed, steps: 4000, proto3: true,
		command: func(r *rand.Rand) []string { return (&zgen{r: r}).command() }})
}

// zgen draws random sorted-set commands.
type zgen struct{ r *rand.Rand }

var (
	zKeys    = []string{"z1", "z2", "z3"}
	zMembers = []string{"a", "b", "c", "d", "e", "f", "g", "aa", "ab", "", "zz", "m1", "m2"}
	zScores  = []string{"0", "1", "2", "3", "-1", "-2.5", "0.5", "1.5", "10", "100", "-0", "inf", "-inf", "+inf",
		"0.1", "0.2", "0.30000000000000004", "1e20", "123456789012345678", "2.5", "7", "1e-7"}
	zIncrs = []string{"1", "-1", "0.5", "0.1", "2", "-0", "0", "3", "-3.5", "inf", "-inf"}
	zFlags = []string{"NX", "XX", "GT", "LT", "CH", "INCR"}
)

func (g *zgen) pick(s []string) string { return s[g.r.IntN(len(s))] }
func (g *zgen) key() string            { return g.pick(zKeys) }
func (g *zgen) member() string         { return g.pick(zMembers) }

// bound is a score range end: a score, sometimes exclusive.
func (g *zgen) bound() string {
	b := g.pick(zScores)
	if g.r.IntN(3) == 0 {
		return "(" + b
	}
	return b
}

// lexBound is a lex range end.
func (g *zgen) lexBound() string {
	switch g.r.IntN(6) {
	case 0:
		return "-"
	case 1:
		return "+"
	case 2, 3:
		return "[" + g.member()
	}
	return "(" + g.member()
}

func (g *zgen) index() string { return strconv.Itoa(g.r.IntN(17) - 8) }

// limit appends a LIMIT clause sometimes.
func (g *zgen) limit(args []string) []string {
	if g.r.IntN(2) == 0 {
		return args
	}
	return append(args, "LIMIT", strconv.Itoa(g.r.IntN(6)-1), strconv.Itoa(g.r.IntN(7)-2))
}

func (g *zgen) withScores(args []string) []string {
	if g.r.IntN(2) == 0 {
		return append(args, "WITHSCORES")
	}
	return args
}

func (g *zgen) command() []string {
	k := g.key()
	switch n := g.r.IntN(100); {
	case n < 22:
		args := []string{"ZADD", k}
		for range g.r.IntN(3) {
			args = append(args, g.pick(zFlags))
		}
		for range 1 + g.r.IntN(4) {
			args = append(args, g.pick(zScores), g.member())
		}
		return args
	case n < 27:
		return []string{"ZINCRBY", k, g.pick(zIncrs), g.member()}
	case n < 32:
		args := []string{"ZREM", k}
		for range 1 + g.r.IntN(3) {
			args = append(args, g.member())
		}
		return args
	case n < 37:
		// The lex key: every score 0.
		switch g.r.IntN(5) {
		case 0, 1:
			return []string{"ZADD", "lex", "0", g.member(), "0", g.member()}
		case 2:
			return []string{"ZREM", "lex", g.member()}
		case 3:
			return []string{"ZLEXCOUNT", "lex", g.lexBound(), g.lexBound()}
		}
		return []string{"ZREMRANGEBYLEX", "lex", g.lexBound(), g.lexBound()}
	case n < 42:
		cmd := []string{"ZRANGEBYLEX", "ZREVRANGEBYLEX"}[g.r.IntN(2)]
		if g.r.IntN(2) == 0 {
			args := []string{"ZRANGE", "lex", g.lexBound(), g.lexBound(), "BYLEX"}
			if g.r.IntN(2) == 0 {
				args = append(args, "REV")
			}
			return g.limit(args)
		}
		return g.limit([]string{cmd, "lex", g.lexBound(), g.lexBound()})
	case n < 50:
		args := []string{"ZRANGE", k, g.index(), g.index()}
		if g.r.IntN(2) == 0 {
			args = append(args, "REV")
		}
		return g.withScores(args)
	case n < 53:
		return g.withScores([]string{"ZREVRANGE", k, g.index(), g.index()})
	case n < 62:
		args := []string{"ZRANGE", k, g.bound(), g.bound(), "BYSCORE"}
		if g.r.IntN(2) == 0 {
			args = append(args, "REV")
		}
		return g.limit(g.withScores(args))
	case n < 66:
		cmd := []string{"ZRANGEBYSCORE", "ZREVRANGEBYSCORE"}[g.r.IntN(2)]
		return g.limit(g.withScores([]string{cmd, k, g.bound(), g.bound()}))
	case n < 69:
		return []string{"ZCOUNT", k, g.bound(), g.bound()}
	case n < 72:
		return []string{[]string{"ZRANK", "ZREVRANK"}[g.r.IntN(2)], k, g.member()}
	case n < 74:
		return []string{"ZSCORE", k, g.member()}
	case n < 76:
		return []string{"ZMSCORE", k, g.member(), g.member()}
	case n < 78:
		return []string{"ZCARD", k}
	case n < 81:
		args := []string{[]string{"ZPOPMIN", "ZPOPMAX"}[g.r.IntN(2)], k}
		if g.r.IntN(2) == 0 {
			args = append(args, strconv.Itoa(g.r.IntN(4)))
		}
		return args
	case n < 83:
		return []string{"ZMPOP", "2", k, g.key(), []string{"MIN", "MAX"}[g.r.IntN(2)], "COUNT", strconv.Itoa(1 + g.r.IntN(3))}
	case n < 86:
		return []string{"ZREMRANGEBYRANK", k, g.index(), g.index()}
	case n < 88:
		return []string{"ZREMRANGEBYSCORE", k, g.bound(), g.bound()}
	case n < 93:
		op := []string{"ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"}[g.r.IntN(3)]
		args := []string{op, g.key(), "2", k, g.key()}
		if op != "ZDIFFSTORE" {
			if g.r.IntN(2) == 0 {
				args = append(args, "WEIGHTS", g.pick([]string{"1", "2", "0", "-1", "0.5"}), g.pick([]string{"1", "3", "0", "-2"}))
			}
			if g.r.IntN(2) == 0 {
				args = append(args, "AGGREGATE", g.pick([]string{"SUM", "MIN", "MAX"}))
			}
		}
		return args
	case n < 96:
		op := []string{"ZUNION", "ZINTER", "ZDIFF"}[g.r.IntN(3)]
		return g.withScores([]string{op, "2", k, g.key()})
	case n < 98:
		return []string{"ZINTERCARD", "2", k, g.key(), "LIMIT", strconv.Itoa(g.r.IntN(3))}
	default:
		args := []string{"ZRANGESTORE", g.key(), k, g.index(), g.index()}
		if g.r.IntN(2) == 0 {
			args = []string{"ZRANGESTORE", g.key(), k, g.bound(), g.bound(), "BYSCORE"}
			args = g.limit(args)
		}
		return args
	}
}
