// Command cappedlist is a respike module that keeps the newest N entries of
// a log, or the N highest-scored members of a sorted set, in one atomic
// step:
//
//	CAPPED.ADD key cap score member       → (integer) how many entries were evicted
//	CAPPED.RANGE key [WITHSCORES]         → the entries, highest score first
//	CAPPED.ZADD key cap score member      → (integer) how many members were evicted
//	CAPPED.ZRANGE key [WITHSCORES] [REV]  → the members, lowest score first
//
// Scores are integers, typically timestamps: "newest" means highest score.
// CAPPED.ADD adds the entry and drops everything beyond the cap highest
// scores in one record operation, so no client ever sees the log over its
// cap, and each eviction is counted by exactly one CAPPED.ADD.
//
// State: one record per key, type tag "capped", bin "v" = a key-ordered map
// whose map keys are the entries, each the 8-byte big-endian score inverted
// (so that the highest score sorts first) followed by the member; values
// are nil. Sorting by key is then sorting by score, descending, ties broken
// by member, so "keep the newest cap" is "remove from index cap to the
// end", an operation that needs no knowledge of the map's size.
//
// Because an entry is a (score, member) pair, adding a member again with
// another score adds a second entry, as a list would; adding the same pair
// again changes nothing.
//
// The capped sorted set (zset.go) is a sorted set's layout under type tag
// "cappedzset": bin "v" = a key-value-ordered map member → float64 score, so
// that map ranks follow scores, ties by member. CAPPED.ZADD puts the member
// and removes every rank but the cap highest (a rank range removed with
// codec.ReturnInverted), so a member has one score, as in ZADD, and the set
// never exceeds its cap.
package main

import sdk "github.com/respike/respike/guest-sdk"

// main is never called: the host calls the module's exported functions.
func main() {}

func init() { sdk.Module("cappedlist", "1.0.0") }
