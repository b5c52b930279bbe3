package main

import (
	"testing"

	"github.com/respike/respike/guest-sdk/sdktest"
)

// The manifest describes every hash command as Redis 7.0's COMMAND INFO
// does (name, arity, key positions).
func TestManifest(t *testing.T) {
	want := map[string]int{
		"hset": -4, "hsetnx": 4, "hget": 3, "hmset": -4, "hmget": -3, "hgetall": 2,
		"hdel": -3, "hexists": 3, "hlen": 2, "hkeys": 2, "hvals": 2, "hincrby": 4,
		"hincrbyfloat": 4, "hstrlen": 3, "hrandfield": -2, "hscan": -3,
	}
	m := sdktest.Manifest()
	if m.Module != "hash" {
		t.Errorf("module name %q", m.Module)
	}
	found := 0
	for _, c := range m.Commands {
		arity, ok := want[c.Name]
		if !ok {
			continue // a test-only stand-in
		}
		found++
		if c.Arity != arity || c.FirstKey != 1 || c.LastKey != 1 || c.Step != 1 || c.Group != "hash" || c.Summary == "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if found != len(want) {
		t.Errorf("%d of %d commands in the manifest", found, len(want))
	}
}
