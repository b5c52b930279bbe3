// Command throttle is a respike module with redis-cell's rate limiter:
//
//	CL.THROTTLE key max_burst count_per_period period [quantity]
//
// It implements GCRA, the generic cell rate algorithm, with redis-cell's
// arithmetic, and replies as redis-cell does: an array of five integers,
//
//  1. 1 when the action is limited, 0 when it is allowed
//  2. the total limit of the key, max_burst + 1
//  3. the remaining limit of the key
//  4. seconds until the caller should retry; -1 when allowed
//  5. seconds until the limit resets to its maximum capacity
//
// (4 and 5 rounded up to whole seconds).
//
// State: one record per key, type tag "throttle", bin "v" = the theoretical
// arrival time (TAT) in Unix nanoseconds. The record expires when the TAT
// passes, so idle keys vanish. The update is a read followed by a write
// guarded by the generation just read; a concurrent update makes the write
// fail with GenerationError, and the command starts again with fresh data,
// at most six times, as redis-cell does.
//
// Deviations from redis-cell: a key of another type answers WRONGTYPE
// (redis-cell fails to parse it); the record TTL is whole seconds rounded
// up, so an idle key lingers up to a second longer (the algorithm ignores a
// TAT in the past, so replies are the same); a negative quantity that moves
// the TAT into the past deletes the key (redis-cell fails to set a negative
// expiry); and argument counts are checked by the command, as in
// redis-cell, whose command arity is -1.
package main

import sdk "github.com/respike/respike/guest-sdk"

// main is never called: the host calls the module's exported functions.
// A module is a main package because Go builds wasm reactors from one.
func main() {}

func init() { sdk.Module("throttle", "1.0.0") }
