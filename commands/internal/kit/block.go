package kit

import sdk "github.com/respike/respike/guest-sdk"

// BlockSlot is the Ctx.N slot where the built-in blocking commands (BLPOP,
// BZPOPMIN, ...) keep their timeout: nanoseconds plus one, so that 0 says
// the command is not a blocking one and its non-blocking form, which shares
// the code, answers instead of blocking.
const BlockSlot = 7

// ParseBlockTimeout reads the timeout at argument i into Ctx.N[BlockSlot],
// or answers Redis's error and reports false.
func ParseBlockTimeout(c *sdk.Ctx, i int) bool {
	timeout, msg, ok := c.ParseTimeout(c.Arg(i))
	if !ok {
		c.Error(msg)
		return false
	}
	c.N[BlockSlot] = int64(timeout) + 1
	return true
}

// Blocking reports whether the running command is a blocking one
// (ParseBlockTimeout succeeded).
func Blocking(c *sdk.Ctx) bool { return c.N[BlockSlot] != 0 }

// BlockTimeout is the timeout ParseBlockTimeout read, for Ctx.Block.
func BlockTimeout(c *sdk.Ctx) sdk.Duration { return sdk.Duration(c.N[BlockSlot] - 1) }
