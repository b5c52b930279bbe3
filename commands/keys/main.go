// Command keys is respike's module of generic keyspace commands: DEL,
// EXISTS, TYPE, TTLs and expiry, SCAN, KEYS, RANDOMKEY, RENAME, COPY,
// MOVE, OBJECT, SORT, DUMP and RESTORE. They work on records of every
// type: they read only the type tag bin "t" or the record's header
// (generation, TTL), except RENAME, COPY and MOVE, which copy every bin,
// OBJECT, which reads a value to derive its Redis encoding, SORT, which
// reads lists, sets and sorted sets whole, and DUMP and RESTORE, which
// read and write whole values in Redis's serialization
// (commands/internal/rdb). MOVE and COPY ... DB address a second database
// (sdk.Ctx.ExecDB).
//
// Expiries are exact to the millisecond at any horizon: the store keeps
// the Unix time in ms in codec.BinExpire (codec.TTLAt) and treats a record
// past it as absent. The TTL commands read that bin (kit.ExpireAtOf) and
// answer as Redis does.
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
