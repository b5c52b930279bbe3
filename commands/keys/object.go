package main

import (
	"github.com/respike/respike/commands/internal/kit"
	"github.com/respike/respike/commands/internal/rdb"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "object", Arity: -2, Flags: []string{"readonly"},
		FirstKey: 2, LastKey: 2, Step: 1, Group: "generic", Since: "2.2.3",
		Summary: "A container for object introspection commands.",
		Run:     runObject,
	})
}

// Redis 7.0's default thresholds of the compact encodings.
const (
	hashMaxEntries = rdb.HashMaxListpackEntries
	hashMaxValue   = rdb.HashMaxListpackValue
	setMaxIntset   = rdb.SetMaxIntsetEntries
	zsetMaxEntries = rdb.ZSetMaxListpackEntries
	zsetMaxValue   = rdb.ZSetMaxListpackValue
	embstrMax      = 44 // OBJ_ENCODING_EMBSTR_SIZE_LIMIT
	sharedInts     = 10000
	sharedRefcount = 2147483647 // OBJ_SHARED_REFCOUNT
)

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Prints this help.",
}

// Subcommands, kept in c.N[0].
const (
	objEncoding = iota + 1
	objRefcount
	objIdletime
	objFreq
)

// runObject: OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key, OBJECT HELP.
// respike keeps values in Aerospike bins, not in Redis's encodings:
// ENCODING and REFCOUNT answer what Redis 7.0 would report for the value
// held, derived from the value by Redis's default thresholds (see
// docs/compatibility.md). Access times are not tracked: IDLETIME answers
// 0, and FREQ Redis's error for a server without an LFU policy.
func runObject(c *sdk.Ctx) {
	sub := c.Arg(1)
	if kit.Fold(sub, "help") {
		if c.NArg() != 2 {
			c.Error("ERR wrong number of arguments for 'object|help' command")
			return
		}
		w := c.Reply()
		w.Array(len(objectHelp))
		for _, l := range objectHelp {
			w.Simple(l)
		}
		return
	}
	var name string
	switch {
	case kit.Fold(sub, "encoding"):
		c.N[0], name = objEncoding, "encoding"
	case kit.Fold(sub, "refcount"):
		c.N[0], name = objRefcount, "refcount"
	case kit.Fold(sub, "idletime"):
		c.N[0], name = objIdletime, "idletime"
	case kit.Fold(sub, "freq"):
		c.N[0], name = objFreq, "freq"
	default:
		c.Error("ERR unknown subcommand '" + string(cstr(sub, 128)) + "'. Try OBJECT HELP.")
		return
	}
	if c.NArg() != 3 {
		c.Error("ERR wrong number of arguments for 'object|" + name + "' command")
		return
	}
	objectStart(c)
}

func objectStart(c *sdk.Ctx) {
	c.Record(c.Arg(2)).Get(codec.BinType)
	c.Exec(objectTyped)
}

// objectTyped answers from the type tag, or reads what the answer needs:
// a string's value, a collection's size.
func objectTyped(c *sdk.Ctx) {
	r, ok := kit.Found(c)
	if !ok {
		return
	}
	t := string(r.Value(0).Bytes)
	switch c.N[0] {
	case objIdletime:
		c.Reply().Int(0)
		return
	case objFreq:
		c.Error("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		return
	}
	switch t {
	case "", codec.TypeString:
		c.Record(c.Arg(2)).Guard(codec.TypeString).Get(codec.BinValue)
	case codec.TypeHash, codec.TypeSet, codec.TypeZSet:
		if c.N[0] == objRefcount {
			c.Reply().Int(1)
			return
		}
		c.Record(c.Arg(2)).Guard(t).MapSize(codec.BinValue)
	default: // lists, and tags of other modules
		if c.N[0] == objRefcount {
			c.Reply().Int(1)
			return
		}
		if t == codec.TypeList {
			c.Reply().Bulk([]byte("quicklist"))
		} else {
			c.Reply().Bulk([]byte("raw"))
		}
		return
	}
	c.Exec(func(c *sdk.Ctx) { objectRead(c, t) })
}

// objectRead answers from the value (strings) or the size (collections),
// reading a small collection whole to check its elements' lengths.
func objectRead(c *sdk.Ctx, t string) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Null() // deleted since the tag was read
		return
	case codec.FilteredOut:
		objectAgain(c) // its type changed since the tag was read
		return
	default:
		kit.StoreError(c, r)
		return
	}
	v := r.Value(0)
	if t == "" || t == codec.TypeString {
		n, isInt := stringInt(v)
		if c.N[0] == objRefcount {
			if isInt && n >= 0 && n < sharedInts {
				c.Reply().Int(sharedRefcount)
			} else {
				c.Reply().Int(1)
			}
			return
		}
		switch {
		case isInt:
			c.Reply().Bulk([]byte("int"))
		case kit.StrLen(v) <= embstrMax:
			c.Reply().Bulk([]byte("embstr"))
		default:
			c.Reply().Bulk([]byte("raw"))
		}
		return
	}
	size := v.Int
	small := (t == codec.TypeHash && size <= hashMaxEntries) ||
		(t == codec.TypeSet && size <= setMaxIntset) ||
		(t == codec.TypeZSet && size <= zsetMaxEntries)
	if !small {
		c.Reply().Bulk([]byte(bigEncoding(t)))
		return
	}
	c.Record(c.Arg(2)).Guard(t).Get(codec.BinValue)
	c.Exec(func(c *sdk.Ctx) { objectMembers(c, t) })
}

// objectMembers answers a small collection's encoding from its elements.
func objectMembers(c *sdk.Ctx, t string) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Null()
		return
	case codec.FilteredOut:
		objectAgain(c)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	m := r.Value(0).List
	compact := true
	for i := 0; i+1 < len(m) && compact; i += 2 {
		switch t {
		case codec.TypeHash:
			compact = kit.StrLen(m[i]) <= hashMaxValue && kit.StrLen(m[i+1]) <= hashMaxValue
		case codec.TypeSet:
			_, compact = stringInt(m[i])
		case codec.TypeZSet:
			compact = kit.StrLen(m[i]) <= zsetMaxValue
		}
	}
	switch {
	case !compact:
		c.Reply().Bulk([]byte(bigEncoding(t)))
	case t == codec.TypeSet:
		c.Reply().Bulk([]byte("intset"))
	default:
		c.Reply().Bulk([]byte("listpack"))
	}
}

// bigEncoding is a collection's encoding beyond the compact thresholds.
func bigEncoding(t string) string {
	if t == codec.TypeZSet {
		return "skiplist"
	}
	return "hashtable"
}

// stringInt reports whether a string value is one Redis keeps as an
// integer (OBJ_ENCODING_INT): its bytes are the canonical form of an int64
// (string2l), as tryObjectEncoding finds when the value is set.
func stringInt(v codec.Value) (int64, bool) {
	switch v.Kind {
	case codec.KindInt:
		return v.Int, true
	case codec.KindBytes, codec.KindStr:
		return kit.ParseInt(v.Bytes)
	}
	return 0, false
}

// objectAgain reads the key again after its type changed between steps.
func objectAgain(c *sdk.Ctx) {
	if !kit.Again(c) {
		c.Error(kit.Contention)
		return
	}
	objectStart(c)
}

// cstr is b as Redis's %.128s prints it: up to a NUL byte, at most n bytes.
func cstr(b []byte, n int) []byte {
	for i, ch := range b {
		if ch == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > n {
		b = b[:n]
	}
	return b
}
