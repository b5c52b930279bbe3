package main

import (
	"testing"

	"github.com/respike/respike/guest-sdk/sdktest"
)

// The manifest describes every list command as Redis 7.0's COMMAND INFO
// does (name, arity, key positions).
func TestManifest(t *testing.T) {
	type spec struct{ arity, first, last int }
	want := map[string]spec{
		"lpush": {-3, 1, 1}, "rpush": {-3, 1, 1}, "lpushx": {-3, 1, 1}, "rpushx": {-3, 1, 1},
		"lpop": {-2, 1, 1}, "rpop": {-2, 1, 1}, "llen": {2, 1, 1}, "lrange": {4, 1, 1},
		"lindex": {3, 1, 1}, "lset": {4, 1, 1}, "linsert": {5, 1, 1}, "lrem": {4, 1, 1},
		"ltrim": {4, 1, 1}, "lpos": {-3, 1, 1}, "lmove": {5, 1, 2}, "rpoplpush": {3, 1, 2},
		"lmpop": {-4, 0, 0}, "blpop": {-3, 1, -2}, "brpop": {-3, 1, -2}, "blmove": {6, 1, 2},
		"brpoplpush": {4, 1, 2}, "blmpop": {-5, 0, 0},
	}
	m := sdktest.Manifest()
	if m.Module != "list" {
		t.Errorf("module name %q", m.Module)
	}
	found := 0
	for _, c := range m.Commands {
		s, ok := want[c.Name]
		if !ok {
			continue // a test-only stand-in
		}
		found++
		if c.Arity != s.arity || c.FirstKey != s.first || c.LastKey != s.last || c.Group != "list" || c.Summary == "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if found != len(want) {
		t.Errorf("%d of %d commands in the manifest", found, len(want))
	}
}
