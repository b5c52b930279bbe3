// Command hello is the module of the "Write a command" tutorial
// (examples/README.md): GREET, a command that only replies, and VISIT, one
// that asks the store for an atomic update.
package main

import sdk "github.com/respike/respike/guest-sdk"

// main is never called: the host calls the module's exported functions.
// A module is a main package because Go builds wasm reactors from one.
func main() {}

func init() { sdk.Module("hello", "1.0.0") }
