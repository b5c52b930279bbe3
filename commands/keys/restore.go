package main

import (
	"errors"
	"math"

	"github.com/respike/respike/commands/internal/kit"
	"github.com/respike/respike/commands/internal/rdb"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "restore", Arity: -4, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "2.6.0",
		Summary: "Creates a key from the serialized representation of a value.",
		Run:     runRestore,
	})
}

// Redis's errors of RESTORE.
const (
	busyKey         = "BUSYKEY Target key name already exists."
	invalidTTL      = "ERR Invalid TTL value, must be >= 0"
	invalidIdletime = "ERR Invalid IDLETIME value, must be >= 0"
	invalidFreq     = "ERR Invalid FREQ value, must be >= 0 and <= 255"
)

// runRestore: RESTORE key ttl serialized-value [REPLACE] [ABSTTL]
// [IDLETIME seconds] [FREQ frequency]. The payload is a DUMP payload of
// Redis 7.0 or older (commands/internal/rdb decodes every encoding and
// checks it whole), written as one create-only (or, with REPLACE,
// replacing) write of the record with its exact expiry: a payload that
// does not decode writes nothing. The answers follow restoreCommand:
// option errors first, then BUSYKEY for an existing key without REPLACE,
// then the TTL's and the payload's errors. Where Redis looks the key up
// first, respike writes create-only and reads the key only when it has an
// error to choose between (or an already expired ABSTTL without REPLACE),
// so a successful RESTORE is one write. IDLETIME and FREQ are checked and
// ignored: respike keeps no access times (OBJECT IDLETIME answers 0).
func runRestore(c *sdk.Ctx) {
	replace, absTTL := false, false
	idle, freq := int64(-1), int64(-1)
	for j := 4; j < c.NArg(); j++ {
		more := c.NArg() - j - 1
		switch opt := c.Arg(j); {
		case kit.Fold(opt, "replace"):
			replace = true
		case kit.Fold(opt, "absttl"):
			absTTL = true
		case kit.Fold(opt, "idletime") && more >= 1 && freq == -1:
			j++
			if idle = restoreOption(c, c.Arg(j), math.MaxInt64, invalidIdletime); idle < 0 {
				return
			}
		case kit.Fold(opt, "freq") && more >= 1 && idle == -1:
			j++
			if freq = restoreOption(c, c.Arg(j), 255, invalidFreq); freq < 0 {
				return
			}
		default:
			c.Error(kit.Syntax)
			return
		}
	}
	key := c.Arg(1)
	ttl, ok := kit.ParseInt(c.Arg(2))
	var fail string
	var o *rdb.Object
	switch {
	case !ok:
		fail = kit.NotInt
	case ttl < 0:
		fail = invalidTTL
	default:
		var err error
		if o, err = rdb.Decode(c.Arg(3)); err != nil {
			fail = restoreError(err)
		}
	}
	if fail != "" {
		if replace {
			c.Error(fail)
			return
		}
		restoreBusy(c, fail) // BUSYKEY comes first when the key exists
		return
	}
	now := kit.NowMs(c)
	when := ttl // absolute, Unix ms; 0: no expiry
	if ttl != 0 && !absTTL {
		when = ttl + now // wraps on overflow, as in Redis
	}
	if ttl != 0 && when <= now {
		// Already expired: Redis deletes the key it replaces and creates
		// nothing.
		if !replace {
			restoreBusy(c, "")
			return
		}
		c.Record(key).Delete()
		c.Exec(func(c *sdk.Ctx) {
			switch r := c.Result(0); r.Code {
			case codec.OK, codec.NotFound:
				c.Reply().Simple("OK")
			default:
				kit.StoreError(c, r)
			}
		})
		return
	}
	call := c.Record(key).Exists(codec.ExistsCreateOnly)
	if replace {
		call.Exists(codec.ExistsReplace)
	}
	if ttl != 0 {
		call.ExpireAt(when)
	} else {
		call.TTLNever()
	}
	restoreWrite(call, o)
	c.Exec(func(c *sdk.Ctx) {
		switch r := c.Result(0); r.Code {
		case codec.OK:
			c.Reply().Simple("OK")
		case codec.Exists:
			c.Error(busyKey)
		default:
			kit.StoreError(c, r)
		}
	})
}

// restoreOption parses the value of IDLETIME or FREQ, 0..max, answering
// Redis's error (and -1) for anything else.
func restoreOption(c *sdk.Ctx, arg []byte, max int64, invalid string) int64 {
	n, ok := kit.ParseInt(arg)
	switch {
	case !ok:
		c.Error(kit.NotInt)
	case n < 0 || n > max:
		c.Error(invalid)
	default:
		return n
	}
	return -1
}

// restoreError is the reply for a payload rdb.Decode refused.
func restoreError(err error) string {
	var u *rdb.UnsupportedError
	switch {
	case errors.Is(err, rdb.ErrChecksum):
		return "ERR DUMP payload version or checksum are wrong"
	case errors.As(err, &u):
		return "ERR respike: " + u.Error()
	case errors.Is(err, rdb.ErrTooBig):
		return kit.StoreErrorText(codec.RecordTooBig, "the DUMP payload expands beyond 64 MiB")
	}
	return "ERR Bad data format"
}

// restoreBusy answers BUSYKEY when the key exists, else fail (an empty
// fail: +OK, an already expired RESTORE of a missing key).
func restoreBusy(c *sdk.Ctx, fail string) {
	c.Record(c.Arg(1)).Header()
	c.Exec(func(c *sdk.Ctx) {
		switch r := c.Result(0); {
		case r.Code == codec.OK:
			c.Error(busyKey)
		case r.Code != codec.NotFound:
			kit.StoreError(c, r)
		case fail != "":
			c.Error(fail)
		default:
			c.Reply().Simple("OK")
		}
	})
}

// restoreWrite adds the record's bins for o to call, in the layout of
// docs/data-model.md: the type tag, and the value as the type's own
// commands write it (a canonical integer string as an integer, maps in
// the order their type needs).
func restoreWrite(call *codec.Call, o *rdb.Object) {
	var tag string
	switch o.Kind {
	case rdb.String:
		tag = codec.TypeString
		call.Put(codec.BinValue, kit.StrValue(o.Value))
	case rdb.List:
		tag = codec.TypeList
		items := make([]codec.Value, len(o.Elems))
		for i, e := range o.Elems {
			items[i] = codec.Bytes(e)
		}
		call.Put(codec.BinValue, codec.List(items...))
	case rdb.Set:
		tag = codec.TypeSet
		kv := make([]codec.Value, 0, 2*len(o.Elems))
		for _, e := range o.Elems {
			kv = append(kv, codec.Bytes(e), codec.Int(1))
		}
		call.MapPut(codec.BinValue, codec.MapOrderKey, kv)
	case rdb.Hash:
		tag = codec.TypeHash
		kv := make([]codec.Value, 0, len(o.Elems))
		for i := 0; i+1 < len(o.Elems); i += 2 {
			kv = append(kv, codec.Bytes(o.Elems[i]), kit.StrValue(o.Elems[i+1]))
		}
		call.MapPut(codec.BinValue, codec.MapOrderKey, kv)
	case rdb.ZSet:
		tag = codec.TypeZSet
		kv := make([]codec.Value, 0, 2*len(o.Elems))
		for i, e := range o.Elems {
			kv = append(kv, codec.Bytes(e), kit.StoreScore(o.Scores[i]))
		}
		call.MapPut(codec.BinValue, codec.MapOrderKeyValue, kv)
	}
	call.Put(codec.BinType, codec.Str(tag))
}
