// Command keys is respike's module of generic keyspace commands: DEL,
// EXISTS, TYPE, TTLs and expiry, SCAN, KEYS, RANDOMKEY, RENAME, COPY and
// SORT. They work on records of every type: they read only the type tag
// bin "t" or the record's header (generation, TTL), except RENAME and
// COPY, which copy every bin, and SORT, which reads lists, sets and sorted
// sets whole.
//
// TTLs: records keep whole seconds. An expiry in milliseconds is rounded up
// to whole seconds so that a key never expires earlier than asked; PTTL is
// the remaining seconds × 1000, EXPIRETIME is now + TTL, PEXPIRETIME that
// × 1000. Whole-second expiries behave as in Redis; TTL replies may differ
// from Redis's by one second around a second boundary.
package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func main() {}

func init() { sdk.Module("keys", "1.0.0") }

// countOK answers with the number of calls that found their record
// (NotFound counts 0); a store failure on any call fails the command.
func countOK(c *sdk.Ctx) {
	rs := c.Results()
	n := int64(0)
	for i := range rs {
		switch rs[i].Code {
		case codec.OK:
			n++
		case codec.NotFound:
		default:
			kit.StoreError(c, &rs[i])
			return
		}
	}
	c.Reply().Int(n)
}
