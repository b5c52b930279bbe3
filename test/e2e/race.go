package e2e

// The race harness: it checks that commands racing on the same keys only
// ever produce outcomes that some serial order of the same commands could
// produce (Redis runs commands one at a time, so every outcome there is a
// serial one). A RaceCase names a starting state, the commands that race
// (one client each) and the keys whose final state counts. SerialOutcomes
// runs every order of the racing commands one by one against the starting
// state on a reference server (redis-server) and records the replies and
// final state of each; RaceTrial runs them all at once on the server under
// test. A trial whose outcome is not in the serial set is a bug (or a
// documented window, counted as such).
//
// Adding a case (LMOVE, ZRANGESTORE, ...): append a RaceCase to raceCases
// in race_test.go, with Setup commands that build the starting state, the
// racing commands in Race, and every key either can touch in Keys. The
// modules it needs go in the case's Modules. The snapshot below already
// reads strings, hashes, sets, lists and sorted sets. A failure prints the
// serial outcomes and the impossible ones. RESPIKE_RACE_TRIALS=10000 runs
// the long version.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// RaceCase is one race: commands started at once on separate connections.
type RaceCase struct {
	Name    string
	Modules []string   // command modules the case needs
	Setup   [][]string // run one by one before each trial, after Keys are deleted
	Race    [][]string // the racing commands, one client each
	Keys    []string   // every key the commands can touch; their final state is compared
	// Tolerated lists outcomes (Outcome.String, keys as in the case) that
	// no serial order produces but that a window documented in
	// docs/compatibility.md allows: counted and reported, not failed. Any
	// other impossible outcome fails.
	Tolerated []string
}

// Outcome is what one run of a race produced: each racing command's reply
// (in Race's order) and the final state of the case's keys.
type Outcome struct {
	Replies []string
	State   string
}

// String is the outcome in one line, the form outcomes are compared in.
func (o Outcome) String() string {
	return "replies " + strings.Join(o.Replies, " | ") + " ; state " + o.State
}

// ReplyText is a command's reply as compared: the value go-redis decoded,
// or the error text.
func ReplyText(v any, err error) string {
	if err == redis.Nil {
		return "(nil)"
	}
	if err != nil {
		return "(error) " + err.Error()
	}
	return fmt.Sprintf("%v", v)
}

// Snapshot describes keys as a client sees them: each key's type, value
// (members and fields sorted) and whether it expires.
func Snapshot(ctx context.Context, c *redis.Client, keys []string) (string, error) {
	var b strings.Builder
	for _, k := range keys {
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			return "", fmt.Errorf("TYPE %s: %w", k, err)
		}
		var val any
		switch typ {
		case "none":
			continue
		case "string":
			val, err = c.Get(ctx, k).Result()
		case "set":
			var m []string
			m, err = c.SMembers(ctx, k).Result()
			sort.Strings(m)
			val = m
		case "hash":
			var h map[string]string
			h, err = c.HGetAll(ctx, k).Result()
			val = sortedPairs(h)
		case "list":
			val, err = c.LRange(ctx, k, 0, -1).Result()
		case "zset":
			val, err = c.ZRangeWithScores(ctx, k, 0, -1).Result()
		default:
			val = "?"
		}
		if err != nil {
			return "", fmt.Errorf("reading %s %s: %w", typ, k, err)
		}
		ttl, err := c.TTL(ctx, k).Result()
		if err != nil {
			return "", fmt.Errorf("TTL %s: %w", k, err)
		}
		exp := ""
		if ttl >= 0 {
			exp = " expiring"
		}
		fmt.Fprintf(&b, "%s=%s%v%s; ", k, typ, val, exp)
	}
	return b.String(), nil
}

func sortedPairs(h map[string]string) []string {
	out := make([]string, 0, 2*len(h))
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	}) {
		out = append(out, k, h[k])
	}
	return out
}

// resetKeys deletes the case's keys and runs its setup.
func resetKeys(ctx context.Context, c *redis.Client, rc RaceCase) error {
	if err := c.Del(ctx, rc.Keys...).Err(); err != nil {
		return fmt.Errorf("DEL: %w", err)
	}
	for _, cmd := range rc.Setup {
		if err := c.Do(ctx, toAny(cmd)...).Err(); err != nil && err != redis.Nil {
			return fmt.Errorf("setup %q: %w", cmd, err)
		}
	}
	return nil
}

func toAny(cmd []string) []any {
	out := make([]any, len(cmd))
	for i, a := range cmd {
		out[i] = a
	}
	return out
}

// SerialOutcomes runs every order of rc.Race one command at a time on c (a
// reference server, where each command is atomic) from rc's starting state
// and returns the set of outcomes, keyed by Outcome.String.
func SerialOutcomes(ctx context.Context, c *redis.Client, rc RaceCase) (map[string]bool, error) {
	out := map[string]bool{}
	var orders func(prefix, rest []int) error
	orders = func(prefix, rest []int) error {
		if len(rest) == 0 {
			if err := resetKeys(ctx, c, rc); err != nil {
				return err
			}
			replies := make([]string, len(rc.Race))
			for _, i := range prefix {
				v, err := c.Do(ctx, toAny(rc.Race[i])...).Result()
				replies[i] = ReplyText(v, err)
			}
			state, err := Snapshot(ctx, c, rc.Keys)
			if err != nil {
				return err
			}
			out[Outcome{replies, state}.String()] = true
			return nil
		}
		for j := range rest {
			next := append(slices.Clone(prefix), rest[j])
			others := append(slices.Clone(rest[:j]), rest[j+1:]...)
			if err := orders(next, others); err != nil {
				return err
			}
		}
		return nil
	}
	all := make([]int, len(rc.Race))
	for i := range all {
		all[i] = i
	}
	return out, orders(nil, all)
}

// RaceTrial resets rc's keys through admin, then runs rc.Race at once, the
// command i on clients[i] (len(clients) >= len(rc.Race)), and returns the
// outcome. The commands start together: each client waits on one channel,
// closed when all are ready.
func RaceTrial(ctx context.Context, admin *redis.Client, clients []*redis.Client, rc RaceCase) (Outcome, error) {
	if err := resetKeys(ctx, admin, rc); err != nil {
		return Outcome{}, err
	}
	replies := make([]string, len(rc.Race))
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i, cmd := range rc.Race {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			args := toAny(cmd)
			ready.Done()
			<-start
			v, err := clients[i].Do(ctx, args...).Result()
			replies[i] = ReplyText(v, err)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	state, err := Snapshot(ctx, admin, rc.Keys)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{replies, state}, nil
}
