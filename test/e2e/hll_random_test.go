package e2e

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestHLLRandomAgainstRedis plays random PFADD, PFCOUNT (one and several
// keys), PFMERGE and GET on a few keys against redis-server and respike and
// compares every raw reply: counts must be equal exactly, and GET shows
// that the stored representation (sparse or dense, the cached cardinality)
// is Redis's byte for byte. Elements come from pools of different sizes so
// that keys stay sparse, cross the promotion to dense (3000 bytes) at
// different points and reach large cardinalities. RESPIKE_HLL_SEED replays
// a seed; the seed is logged on failure with the commands that led there.
func TestHLLRandomAgainstRedis(t *testing.T) {
	needModules(t, "hll")
	runRandom(t, randomSpec{seedEnv: "RESPIKE_HLL_SEED", salt: 0x411, steps: 1500,
		command: func(r *rand.Rand) []string { return (&hgen{r: r}).command() }})
}

// hgen draws random HyperLogLog commands.
type hgen struct{ r *rand.Rand }

var hKeys = []string{"h1", "h2", "h3", "h4"}

func (g *hgen) key() string { return hKeys[g.r.IntN(len(hKeys))] }

// element draws from a small pool (many repeats: sparse VAL runs), a
// medium one or a large one (high cardinalities), sometimes binary.
func (g *hgen) element() string {
	switch g.r.IntN(10) {
	case 0:
		return string([]byte{byte(g.r.IntN(256)), byte(g.r.IntN(256))})
	case 1, 2, 3:
		return "s" + strconv.Itoa(g.r.IntN(200))
	case 4, 5, 6:
		return "m" + strconv.Itoa(g.r.IntN(5000))
	}
	return "l" + strconv.Itoa(g.r.IntN(1_000_000))
}

func (g *hgen) command() []string {
	switch n := g.r.IntN(100); {
	case n < 45:
		args := []string{"PFADD", g.key()}
		size := g.r.IntN(8)
		if g.r.IntN(10) == 0 {
			size = g.r.IntN(800)
		}
		for range size {
			args = append(args, g.element())
		}
		return args
	case n < 60:
		return []string{"PFCOUNT", g.key()}
	case n < 70:
		args := []string{"PFCOUNT"}
		for range 2 + g.r.IntN(3) {
			args = append(args, g.key())
		}
		return args
	case n < 80:
		args := []string{"PFMERGE", g.key()}
		for range g.r.IntN(4) {
			args = append(args, g.key())
		}
		return args
	case n < 95:
		return []string{"GET", g.key()}
	case n < 97:
		return []string{"PFDEBUG", "ENCODING", g.key()}
	}
	return []string{"DEL", g.key()}
}
