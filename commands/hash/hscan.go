package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// HSCAN pages through the key-ordered map by key position (kit.MapScan says what
// that means under concurrent writes), answering fields and their values;
// NOVALUES (Redis 7.4) is supported.
var hscan = kit.NewMapScan(codec.TypeHash, kit.ReplyStr, true)

func init() {
	sdk.Register(sdk.Command{
		Name: "hscan", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "hash", Since: "2.8.0",
		Summary: "Iterates over fields and values of a hash.",
		Run:     hscan.Run,
	})
}
