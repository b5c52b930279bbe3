package e2e

import (
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// randomSpec is one randomized comparison with redis-server: commands
// drawn by a generator seeded from seedEnv (or at random), played on both
// servers, every raw reply compared.
type randomSpec struct {
	seedEnv string // the variable that replays a seed, e.g. RESPIKE_ZSET_SEED
	salt    uint64 // the generator's second seed word
	steps   int    // commands to play (a quarter with -short)
	proto3  bool   // switch both connections to RESP3 halfway
	// command draws the next command from r.
	command func(r *rand.Rand) []string
}

// runRandom runs spec, failing with the seed, the command, both replies
// (cut around their first difference when long) and the commands that led
// there.
func runRandom(t *testing.T, spec randomSpec) {
	t.Helper()
	seed := uint64(rand.Int64())
	if s := os.Getenv(spec.seedEnv); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", spec.seedEnv, err)
		}
		seed = n
	}
	steps := spec.steps
	if testing.Short() {
		steps /= 4
	}
	redisServer(t)
	flushBoth(t)
	d := &diffConn{t: t}
	d.connect()
	defer func() { d.close() }()
	r := rand.New(rand.NewPCG(seed, spec.salt))
	var history []string
	for i := range steps {
		if spec.proto3 && i == steps/2 {
			d.proto3 = true
			d.hello3()
			history = append(history, "HELLO 3")
		}
		args := spec.command(r)
		text := strings.Join(quoteAll(args), " ")
		if len(text) > 200 {
			text = text[:200] + "…"
		}
		history = append(history, text)
		theirs, err1 := d.redis.Do(args...)
		ours, err2 := d.respike.Do(args...)
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d, step %d: %v / %v", seed, i, err1, err2)
		}
		if theirs != ours {
			from := max(0, len(history)-30)
			if len(theirs) > 300 {
				theirs, ours = firstDiff(theirs, ours)
			}
			t.Fatalf("seed %d (%s=%d replays it), step %d: %s\n  redis:   %q\n  respike: %q\nlast commands:\n  %s",
				seed, spec.seedEnv, seed, i, history[len(history)-1], theirs, ours, strings.Join(history[from:], "\n  "))
		}
	}
}

// quoteAll quotes arguments for the failure report.
func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strconv.Quote(a)
	}
	return out
}

// firstDiff cuts two long replies to the neighbourhood of their first
// difference.
func firstDiff(a, b string) (string, string) {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-40)
	cut := func(s string) string {
		return "…" + s[lo:min(len(s), i+80)] + "…"
	}
	return cut(a), cut(b)
}
