package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "set", Arity: -3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Since: "1.0.0",
		Summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
		Run:     runSet,
	})
}

// runSet: SET key value [NX|XX] [GET] [EX s|PX ms|EXAT ts|PXAT ms-ts|KEEPTTL].
// As in Redis, options are checked first, then the expiry, then the type
// (with GET), then NX/XX. Without GET it is one write that replaces any
// type; with GET one guarded write that returns the old value.
func runSet(c *sdk.Ctx) {
	flags, expArg, ok := parseOpts(c, 3, true)
	if !ok {
		c.Error(kit.Syntax)
		return
	}
	var at int64
	if expArg > 0 {
		var why int
		if at, why = expireAt(c, flags, c.Arg(expArg)); why != expOK {
			c.Error(expireError(why, "set"))
			return
		}
		if at == 0 {
			setPast(c, flags)
			return
		}
	}
	key, val := c.Arg(1), c.Arg(2)
	get := flags&optGet != 0
	switch {
	case get && flags&optNX != 0:
		// A create-only write cannot read the old value; when the key
		// exists a second read answers with it (it may have changed in
		// between: the reply is then a value it held a moment later).
		call := c.Record(key).Exists(codec.ExistsCreateOnly)
		setTTL(call, flags, at)
		call.Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(val))
		c.Exec(setNXGetDone)
	case get:
		// The guard makes the record a string (or absent), so updating t
		// and v is a full replacement.
		exists := codec.ExistsUpdate
		if flags&optXX != 0 {
			exists = codec.ExistsUpdateOnly
		}
		call := c.Record(key).Guard(codec.TypeString).Exists(exists)
		setTTL(call, flags, at)
		call.Get(codec.BinType).Get(codec.BinValue).
			Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(val))
		c.Exec(setGetDone)
	default:
		exists := codec.ExistsReplace
		switch {
		case flags&optNX != 0:
			exists = codec.ExistsCreateOnly
		case flags&optXX != 0:
			exists = codec.ExistsReplaceOnly
		}
		call := c.Record(key).Exists(exists)
		setTTL(call, flags, at)
		call.Put(codec.BinType, tagString).Put(codec.BinValue, kit.StrValue(val))
		c.ExecFinal(setRecipe, setDone)
	}
}

// setRecipe is setDone as a recipe (sdk.Ctx.ExecFinal): where the store
// waits, the host answers a SET without GET by it.
var setRecipe = codec.NewRecipe(0).
	OK(codec.OK).
	Null(codec.Exists).
	Null(codec.NotFound)

// setTTL applies SET's expiry rule: an expiry sets it, KEEPTTL keeps it,
// anything else clears it.
func setTTL(call *codec.Call, flags, at int64) {
	switch {
	case at > 0:
		call.ExpireAt(at)
	case flags&optKeepTTL != 0:
		call.TTLKeep()
	default:
		call.TTLNever()
	}
}

// setDone answers a SET without GET: OK, or nil when NX/XX refused it.
func setDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().OK()
	case codec.Exists, codec.NotFound:
		c.Reply().Null()
	default:
		kit.StoreError(c, r)
	}
}

// setGetDone answers a guarded write whose first two ops read t and v: the
// old value, or nil when there was none.
func setGetDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if r.Value(0).IsNil() {
			c.Reply().Null() // the write created the record
			return
		}
		kit.ReplyStr(c, &r.Values[1])
	case codec.NotFound:
		c.Reply().Null()
	case codec.FilteredOut:
		c.Error(kit.WrongType)
	default:
		kit.StoreError(c, r)
	}
}

// setNXGetDone answers SET NX GET: nil when it created the key, else the
// existing value (read now) or WRONGTYPE.
func setNXGetDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Null()
	case codec.Exists:
		c.Record(c.Arg(1)).Guard(codec.TypeString).Get(codec.BinValue)
		c.Exec(replyGet)
	default:
		kit.StoreError(c, r)
	}
}

// setPast handles an EXAT/PXAT time that has already passed. Redis sets the
// key and it is expired at once, so the key ends up absent: delete it, and
// answer as the SET would have.
func setPast(c *sdk.Ctx, flags int64) {
	key := c.Arg(1)
	switch {
	case flags&optGet != 0 && flags&optNX != 0:
		// Exists: old value, nothing changes. Absent: nil, nothing to create.
		c.Record(key).Guard(codec.TypeString).Get(codec.BinValue)
		c.Exec(replyGet)
	case flags&optGet != 0:
		c.Record(key).Guard(codec.TypeString).Get(codec.BinType).Get(codec.BinValue).Delete()
		c.Exec(setGetDone)
	case flags&optNX != 0:
		c.Record(key).Header()
		c.Exec(setPastNXDone)
	case flags&optXX != 0:
		c.Record(key).Delete()
		c.Exec(setDone) // NotFound: nil, as XX on a missing key
	default:
		c.Record(key).Delete()
		c.Exec(setPastDone)
	}
}

// setPastNXDone: an existing key refuses NX (nil); an absent one is "set"
// and expired at once (OK).
func setPastNXDone(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		c.Reply().Null()
	case codec.NotFound:
		c.Reply().OK()
	default:
		kit.StoreError(c, r)
	}
}

func setPastDone(c *sdk.Ctx) {
	r := c.Result(0)
	if r.Code == codec.OK || r.Code == codec.NotFound {
		c.Reply().OK()
		return
	}
	kit.StoreError(c, r)
}
