package e2e

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// raceCases are the multi-key and multi-step commands raced against
// themselves, DEL and plain writes on the same keys (see race.go for how to
// add one). Keys are namespaced per case by the test.
var raceCases = []RaceCase{
	// RENAME: the two races of issue 12, and writes of either key.
	{Name: "rename/rename-same-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "moving"}, {"SET", "c", "precious"}},
		Race:  [][]string{{"RENAME", "a", "b"}, {"RENAME", "a", "c"}}, Keys: []string{"a", "b", "c"}},
	{Name: "rename/rename-no-dest", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "moving"}},
		Race:  [][]string{{"RENAME", "a", "b"}, {"RENAME", "a", "c"}}, Keys: []string{"a", "b", "c"}},
	{Name: "rename/del-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "moving"}, {"SET", "c", "precious"}},
		Race:  [][]string{{"RENAME", "a", "c"}, {"DEL", "a"}}, Keys: []string{"a", "c"}},
	{Name: "rename/set-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "old"}, {"SET", "b", "was"}},
		Race:  [][]string{{"RENAME", "a", "b"}, {"SET", "a", "new"}}, Keys: []string{"a", "b"}},
	{Name: "rename/set-dest", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "v"}, {"SET", "b", "was"}},
		Race:  [][]string{{"RENAME", "a", "b"}, {"SET", "b", "w"}}, Keys: []string{"a", "b"}},
	{Name: "rename/swap", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "1"}, {"SET", "b", "2"}},
		Race:  [][]string{{"RENAME", "a", "b"}, {"RENAME", "b", "a"}}, Keys: []string{"a", "b"}},
	{Name: "rename/hash-del", Modules: []string{"keys", "hash"},
		Setup: [][]string{{"HSET", "a", "f", "1", "g", "2"}, {"EXPIRE", "a", "100"}, {"HSET", "c", "x", "y"}},
		Race:  [][]string{{"RENAME", "a", "c"}, {"DEL", "a"}}, Keys: []string{"a", "c"}},
	{Name: "rename/three-way", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "moving"}, {"SET", "c", "precious"}},
		Race:  [][]string{{"RENAME", "a", "b"}, {"RENAME", "a", "c"}, {"DEL", "a"}}, Keys: []string{"a", "b", "c"}},

	// RENAMENX.
	{Name: "renamenx/renamenx-same-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "moving"}},
		Race:  [][]string{{"RENAMENX", "a", "b"}, {"RENAMENX", "a", "c"}}, Keys: []string{"a", "b", "c"}},
	{Name: "renamenx/renamenx-same-dest", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "1"}, {"SET", "x", "2"}},
		Race:  [][]string{{"RENAMENX", "a", "c"}, {"RENAMENX", "x", "c"}}, Keys: []string{"a", "x", "c"}},
	{Name: "renamenx/del-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "moving"}},
		Race:  [][]string{{"RENAMENX", "a", "c"}, {"DEL", "a"}}, Keys: []string{"a", "c"}},
	{Name: "renamenx/set-dest", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "v"}},
		Race:  [][]string{{"RENAMENX", "a", "c"}, {"SET", "c", "w"}}, Keys: []string{"a", "c"}},

	// COPY.
	{Name: "copy/copy-same-dest", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "1"}, {"SET", "x", "2"}},
		Race:  [][]string{{"COPY", "a", "c"}, {"COPY", "x", "c"}}, Keys: []string{"a", "x", "c"}},
	{Name: "copy/del-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "1"}},
		Race:  [][]string{{"COPY", "a", "c"}, {"DEL", "a"}}, Keys: []string{"a", "c"}},
	{Name: "copy/replace-set-dest", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "1"}, {"SET", "c", "0"}},
		Race:  [][]string{{"COPY", "a", "c", "REPLACE"}, {"SET", "c", "w"}}, Keys: []string{"a", "c"}},
	{Name: "copy/set-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "a", "1"}},
		Race:  [][]string{{"COPY", "a", "c"}, {"SET", "a", "2"}}, Keys: []string{"a", "c"}},

	// COPY of a key a RENAME is writing, while its source goes.
	{Name: "copy/renamed-source", Modules: []string{"keys", "strings"},
		Setup: [][]string{{"SET", "x", "X"}, {"SET", "a", "A"}},
		Race:  [][]string{{"RENAME", "x", "a"}, {"COPY", "a", "c"}, {"DEL", "x"}}, Keys: []string{"x", "a", "c"}},

	// MSETNX.
	{Name: "msetnx/crossed", Modules: []string{"strings", "keys"},
		Race: [][]string{{"MSETNX", "x", "1", "y", "1"}, {"MSETNX", "y", "2", "x", "2"}}, Keys: []string{"x", "y"}},
	{Name: "msetnx/overlap", Modules: []string{"strings", "keys"},
		Race: [][]string{{"MSETNX", "x", "1", "y", "1", "z", "1"}, {"MSETNX", "z", "2", "y", "2"}}, Keys: []string{"x", "y", "z"}},
	{Name: "msetnx/set", Modules: []string{"strings", "keys"},
		Race: [][]string{{"MSETNX", "x", "1", "y", "1"}, {"SET", "y", "2"}}, Keys: []string{"x", "y"}},
	{Name: "msetnx/del", Modules: []string{"strings", "keys"},
		Race: [][]string{{"MSETNX", "x", "1", "y", "1"}, {"DEL", "x"}}, Keys: []string{"x", "y"}},

	// SMOVE.
	{Name: "smove/smove-same-member", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s", "m", "n"}},
		Race:  [][]string{{"SMOVE", "s", "d", "m"}, {"SMOVE", "s", "e", "m"}}, Keys: []string{"s", "d", "e"}},
	{Name: "smove/del-source", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s", "m", "n"}},
		Race:  [][]string{{"SMOVE", "s", "d", "m"}, {"DEL", "s"}}, Keys: []string{"s", "d"}},
	{Name: "smove/srem", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s", "m"}, {"SADD", "d", "x"}},
		Race:  [][]string{{"SMOVE", "s", "d", "m"}, {"SREM", "s", "m"}}, Keys: []string{"s", "d"}},
	{Name: "smove/set-dest", Modules: []string{"set", "keys", "strings"},
		Setup: [][]string{{"SADD", "s", "m"}},
		Race:  [][]string{{"SMOVE", "s", "d", "m"}, {"SET", "d", "str"}}, Keys: []string{"s", "d"}},

	// SINTERSTORE, SUNIONSTORE, SDIFFSTORE.
	{Name: "sinterstore/sadd", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s1", "a", "b"}, {"SADD", "s2", "b", "c"}},
		Race:  [][]string{{"SINTERSTORE", "d", "s1", "s2"}, {"SADD", "s1", "c"}}, Keys: []string{"s1", "s2", "d"}},
	{Name: "sinterstore/set-dest", Modules: []string{"set", "keys", "strings"},
		Setup: [][]string{{"SADD", "s1", "a", "b"}, {"SADD", "s2", "b", "c"}},
		Race:  [][]string{{"SINTERSTORE", "d", "s1", "s2"}, {"SET", "d", "x"}}, Keys: []string{"s1", "s2", "d"}},
	{Name: "sunionstore/del", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s1", "a"}, {"SADD", "s2", "b"}},
		Race:  [][]string{{"SUNIONSTORE", "d", "s1", "s2"}, {"DEL", "s2"}}, Keys: []string{"s1", "s2", "d"}},
	{Name: "sunionstore/self", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s1", "a"}, {"SADD", "s2", "b"}},
		Race:  [][]string{{"SUNIONSTORE", "d", "s1", "s2"}, {"SUNIONSTORE", "d", "s2"}}, Keys: []string{"s1", "s2", "d"}},
	{Name: "sunionstore/smove-between-sources", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s1", "a", "b"}, {"SADD", "s2", "c"}},
		Race:  [][]string{{"SINTERSTORE", "d", "s1", "s2"}, {"SMOVE", "s1", "s2", "a"}, {"SUNIONSTORE", "e", "s1", "s2"}},
		Keys:  []string{"s1", "s2", "d", "e"},
		// SUNIONSTORE reads both sources while SMOVE's member is in
		// neither, between its two steps (docs/compatibility.md).
		Tolerated: []string{"replies 0 | 1 | 2 ; state s1=set[b]; s2=set[a c]; e=set[b c]; "}},
	// LMOVE, RPOPLPUSH (and the rotation).
	{Name: "lmove/crossed", Modules: []string{"list", "keys"},
		Setup: [][]string{{"RPUSH", "a", "1", "2"}, {"RPUSH", "b", "3"}},
		Race:  [][]string{{"LMOVE", "a", "b", "RIGHT", "LEFT"}, {"LMOVE", "b", "a", "RIGHT", "LEFT"}}, Keys: []string{"a", "b"}},
	{Name: "lmove/same-source", Modules: []string{"list", "keys"},
		Setup: [][]string{{"RPUSH", "a", "1", "2"}},
		Race:  [][]string{{"LMOVE", "a", "b", "RIGHT", "LEFT"}, {"LMOVE", "a", "c", "RIGHT", "LEFT"}}, Keys: []string{"a", "b", "c"}},
	{Name: "lmove/pop-source", Modules: []string{"list", "keys"},
		Setup: [][]string{{"RPUSH", "a", "1", "2"}},
		Race:  [][]string{{"LMOVE", "a", "b", "RIGHT", "LEFT"}, {"RPOP", "a"}}, Keys: []string{"a", "b"}},
	// The source drained and re-created at generation 1 (the element
	// CI saw lost).
	{Name: "lmove/drain-refill", Modules: []string{"list", "keys"},
		Setup: [][]string{{"RPUSH", "a", "x"}},
		Race:  [][]string{{"RPOPLPUSH", "a", "b"}, {"LPOP", "a"}, {"RPUSH", "a", "y"}}, Keys: []string{"a", "b"}},
	{Name: "lmove/rotate-push", Modules: []string{"list", "keys"},
		Setup: [][]string{{"RPUSH", "a", "1", "2", "3"}},
		Race:  [][]string{{"RPOPLPUSH", "a", "a"}, {"RPUSH", "a", "4"}, {"LPOP", "a"}}, Keys: []string{"a"}},
	{Name: "lrem/drain-refill", Modules: []string{"list", "keys"},
		Setup: [][]string{{"RPUSH", "a", "x", "y", "x"}},
		Race:  [][]string{{"LREM", "a", "1", "x"}, {"DEL", "a"}, {"RPUSH", "a", "z", "x"}}, Keys: []string{"a"}},

	// Sorted-set stores.
	{Name: "zunionstore/zadd", Modules: []string{"zset", "keys"},
		Setup: [][]string{{"ZADD", "z1", "1", "a"}, {"ZADD", "z2", "2", "b"}},
		Race:  [][]string{{"ZUNIONSTORE", "d", "2", "z1", "z2"}, {"ZADD", "z1", "3", "c"}}, Keys: []string{"z1", "z2", "d"}},
	{Name: "zdiffstore/crossed", Modules: []string{"zset", "keys"},
		Setup: [][]string{{"ZADD", "z1", "1", "a", "2", "b"}, {"ZADD", "z2", "2", "b", "3", "c"}},
		Race:  [][]string{{"ZDIFFSTORE", "z1", "2", "z1", "z2"}, {"ZDIFFSTORE", "z2", "2", "z2", "z1"}}, Keys: []string{"z1", "z2"}},
	{Name: "zrangestore/del", Modules: []string{"zset", "keys"},
		Setup: [][]string{{"ZADD", "z", "1", "a", "2", "b"}, {"ZADD", "d", "5", "q"}},
		Race:  [][]string{{"ZRANGESTORE", "d", "z", "0", "-1"}, {"DEL", "z"}}, Keys: []string{"z", "d"}},
	{Name: "zinterstore/set-dest", Modules: []string{"zset", "keys", "strings"},
		Setup: [][]string{{"ZADD", "z1", "1", "a", "2", "b"}, {"ZADD", "z2", "2", "b"}},
		Race:  [][]string{{"ZINTERSTORE", "d", "2", "z1", "z2"}, {"SET", "d", "x"}}, Keys: []string{"z1", "z2", "d"}},
	{Name: "sdiffstore/crossed", Modules: []string{"set", "keys"},
		Setup: [][]string{{"SADD", "s1", "a", "b"}, {"SADD", "s2", "b", "c"}},
		Race:  [][]string{{"SDIFFSTORE", "s1", "s1", "s2"}, {"SDIFFSTORE", "s2", "s2", "s1"}}, Keys: []string{"s1", "s2"}},
}

// raceTrials is the number of trials per case: RESPIKE_RACE_TRIALS, or a
// few hundred so CI stays quick. The figures in docs/compatibility.md come
// from RESPIKE_RACE_TRIALS=10000.
func raceTrials(t *testing.T) int {
	if s := os.Getenv("RESPIKE_RACE_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("RESPIKE_RACE_TRIALS=%q: want a positive count", s)
		}
		return n
	}
	return 200
}

// namespaced returns rc with every key given a per-case prefix (with a hash
// tag, so it stays one slot), in the setup, the racing commands and Keys.
func namespaced(rc RaceCase) RaceCase {
	prefix := "race{" + rc.Name + "}:"
	keys := map[string]bool{}
	for _, k := range rc.Keys {
		keys[k] = true
	}
	rename := func(cmds [][]string) [][]string {
		out := make([][]string, len(cmds))
		for i, cmd := range cmds {
			out[i] = make([]string, len(cmd))
			for j, a := range cmd {
				if j > 0 && keys[a] && !isValueArg(cmd, j) {
					a = prefix + a
				}
				out[i][j] = a
			}
		}
		return out
	}
	out := rc
	out.Setup, out.Race = rename(rc.Setup), rename(rc.Race)
	out.Keys = make([]string, len(rc.Keys))
	for i, k := range rc.Keys {
		out.Keys[i] = prefix + k
	}
	return out
}

// isValueArg reports whether argument j of cmd is a value or member rather
// than a key, for the commands the cases use.
func isValueArg(cmd []string, j int) bool {
	switch strings.ToUpper(cmd[0]) {
	case "SET", "EXPIRE", "HSET", "SADD", "SREM":
		return j >= 2
	case "MSETNX", "MSET":
		return j%2 == 0
	case "SMOVE", "COPY":
		return j >= 3
	}
	return false
}

// TestRacesAreSerializable races each case many times and checks every
// outcome against the outcomes of the serial orders on redis-server. It
// runs on the store the e2e run uses (the embedded one, or Aerospike when
// RESPIKE_TEST_AEROSPIKE is set), then on an embedded store reached the
// way Aerospike is (NewResumeBackend).
func TestRacesAreSerializable(t *testing.T) {
	rs := redisServer(t)
	ctx := context.Background()
	oracle := client(t, rs.Addr)
	serial := map[string]map[string]bool{}
	t.Run("store", func(t *testing.T) { runRaces(t, oracle, serial, env.daemon.Addr) })
	// The embedded store runs a command's requests inside one guest call,
	// so its steps rarely interleave with another client's; the resume
	// path lets them interleave as on Aerospike.
	t.Run("resume", func(t *testing.T) {
		b, err := NewResumeBackend(ctx, env.modDir, env.cacheDir, env.logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(b.Close)
		runRaces(t, oracle, serial, serve(t, testConfig(), b).Addr)
	})
}

// runRaces runs every race case against the daemon at addr. serial caches
// each case's serial outcomes by name.
func runRaces(t *testing.T, oracle *redis.Client, serial map[string]map[string]bool, addr string) {
	ctx := context.Background()
	trials := raceTrials(t)
	admin := client(t, addr)
	var racers []*redis.Client
	for range 3 {
		racers = append(racers, client(t, addr, func(o *redis.Options) { o.PoolSize = 1 }))
	}
	for _, rc := range raceCases {
		t.Run(rc.Name, func(t *testing.T) {
			needModules(t, rc.Modules...)
			rc = namespaced(rc)
			if serial[rc.Name] == nil {
				outs, err := SerialOutcomes(ctx, oracle, rc)
				if err != nil {
					t.Fatal(err)
				}
				serial[rc.Name] = outs
			}
			serial := serial[rc.Name]
			prefix := "race{" + rc.Name + "}:"
			tolerated := map[string]bool{}
			for _, o := range rc.Tolerated {
				tolerated[o] = true
			}
			bad, known := map[string]int{}, 0
			seen := map[string]int{}
			for range trials {
				o, err := RaceTrial(ctx, admin, racers, rc)
				if err != nil {
					t.Fatal(err)
				}
				s := o.String()
				seen[s]++
				switch {
				case serial[s]:
				case tolerated[strings.ReplaceAll(s, prefix, "")]:
					known++
				default:
					bad[s]++
				}
			}
			n := 0
			for _, c := range bad {
				n += c
			}
			t.Logf("%d trials, %d distinct outcomes, %d impossible, %d in a documented window", trials, len(seen), n, known)
			if n > 0 {
				for _, s := range sortedKeys(serial) {
					t.Logf("serial:     %s", strings.ReplaceAll(s, prefix, ""))
				}
				for _, s := range sortedKeys(bad) {
					t.Errorf("impossible: %s (%d times)", strings.ReplaceAll(s, prefix, ""), bad[s])
				}
			}
		})
	}
}
