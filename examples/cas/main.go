// Command cas is a respike module of compare-and-set commands:
//
//	CAS key expected new                → 1 if key held expected and now holds new, else 0
//	CAS.HSET key field expected new     → the same for one field of a hash
//
// They work on the strings and hashes of the built-in modules (same type
// tags and value encoding) and keep the key's TTL. A missing key or field
// never matches.
//
// Aerospike has no "write if this bin equals that" in the operations respike
// uses, so each command is a read followed by a write guarded by the
// record generation the read returned: if anyone wrote the record in
// between, the write fails with GenerationError and the command reads
// again. It gives up after ten attempts with an error, never a wrong
// answer.
package main

import sdk "github.com/respike/respike/guest-sdk"

// main is never called: the host calls the module's exported functions.
func main() {}

func init() { sdk.Module("cas", "1.0.0") }
