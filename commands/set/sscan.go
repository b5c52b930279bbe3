package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// SSCAN pages through the key-ordered map by key position (kit.MapScan says what
// that means under concurrent writes), answering members.
var sscan = kit.NewMapScan(codec.TypeSet, nil, false)

func init() {
	sdk.Register(sdk.Command{
		Name: "sscan", Arity: -3, Flags: []string{"readonly"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "set", Since: "2.8.0",
		Summary: "Iterates over members of a set.",
		Run:     sscan.Run,
	})
}
