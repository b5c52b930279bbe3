// Command hotswap is the module the hot-swap tests replace under load. Its
// builds differ only by linker flags:
//
//	-X main.reply=B -X main.version=2.0.0  tags every reply "B", reports version 2.0.0
//	-X main.mode=badmanifest               declares a command of arity 0, which the host refuses
//	-X main.mode=inittrap                  panics while the module initialises
package main

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

var (
	reply   = "A"     // the tag every reply starts with
	version = "1.0.0" // the manifest's version
	mode    = ""      // "", "badmanifest" or "inittrap"
)

func main() {}

func init() {
	if mode == "inittrap" {
		panic("hotswap: a trap in initialisation, as built with -X main.mode=inittrap")
	}
	sdk.Module("hotswap", version)
	sdk.Register(
		// hsver replies the build's tag.
		sdk.Command{Name: "hsver", Arity: 1, Flags: []string{"fast"}, Summary: "Returns the build's tag.",
			Run: func(c *sdk.Ctx) { c.Reply().BulkString(reply) }},
		// hsset stores a value and replies "<tag>:OK".
		sdk.Command{Name: "hsset", Arity: 3, Flags: []string{"write"}, FirstKey: 1, LastKey: 1, Step: 1,
			Summary: "Sets a key; replies with the build's tag.",
			Run: func(c *sdk.Ctx) {
				c.Record(c.Arg(1)).Put(codec.BinValue, codec.Bytes(c.Arg(2)))
				c.Exec(func(c *sdk.Ctx) {
					c.B = append(append(c.B[:0], reply...), ":OK"...)
					c.Reply().Bulk(c.B)
				})
			}},
		// hsget replies "<tag>:<value>", "<tag>:" for a missing key: a
		// store round trip, so that commands are in flight across swaps.
		sdk.Command{Name: "hsget", Arity: 2, Flags: []string{"readonly"}, FirstKey: 1, LastKey: 1, Step: 1,
			Summary: "Gets a key; the reply starts with the build's tag.",
			Run: func(c *sdk.Ctx) {
				c.Record(c.Arg(1)).Get(codec.BinValue)
				c.Exec(func(c *sdk.Ctx) {
					c.B = append(append(c.B[:0], reply...), ':')
					if r := c.Result(0); r.OK() {
						if v := r.Value(0); !v.IsNil() {
							c.B = append(c.B, v.Bytes...)
						}
					}
					c.Reply().Bulk(c.B)
				})
			}},
	)
	if mode == "badmanifest" {
		sdk.Register(sdk.Command{Name: "hsbad", Arity: 0, Run: func(c *sdk.Ctx) { c.Reply().OK() }})
	}
}
