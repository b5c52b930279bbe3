package main

import (
	"testing"

	"github.com/respike/respike/guest-sdk/sdktest"
)

// The manifest describes every set command as Redis 7.0's COMMAND INFO
// does (name, arity, key positions).
func TestManifest(t *testing.T) {
	type spec struct{ arity, first, last int }
	want := map[string]spec{
		"sadd": {-3, 1, 1}, "srem": {-3, 1, 1}, "scard": {2, 1, 1}, "sismember": {3, 1, 1},
		"smismember": {-3, 1, 1}, "smembers": {2, 1, 1}, "spop": {-2, 1, 1}, "srandmember": {-2, 1, 1},
		"smove": {4, 1, 2}, "sinter": {-2, 1, -1}, "sintercard": {-3, 0, 0}, "sunion": {-2, 1, -1},
		"sdiff": {-2, 1, -1}, "sinterstore": {-3, 1, -1}, "sunionstore": {-3, 1, -1},
		"sdiffstore": {-3, 1, -1}, "sscan": {-3, 1, 1},
	}
	m := sdktest.Manifest()
	if m.Module != "set" {
		t.Errorf("module name %q", m.Module)
	}
	found := 0
	for _, c := range m.Commands {
		s, ok := want[c.Name]
		if !ok {
			continue // a test-only stand-in
		}
		found++
		if c.Arity != s.arity || c.FirstKey != s.first || c.LastKey != s.last || c.Group != "set" || c.Summary == "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if found != len(want) {
		t.Errorf("%d of %d commands in the manifest", found, len(want))
	}
}
