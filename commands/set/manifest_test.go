package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// The manifest describes every set command as Redis 7.0's COMMAND INFO
// does (name, arity, key positions).
func TestManifest(t *testing.T) {
	cmdtest.CheckManifest(t, "set", "set", map[string]cmdtest.Spec{
		"sadd": {-3, 1, 1}, "srem": {-3, 1, 1}, "scard": {2, 1, 1}, "sismember": {3, 1, 1},
		"smismember": {-3, 1, 1}, "smembers": {2, 1, 1}, "spop": {-2, 1, 1}, "srandmember": {-2, 1, 1},
		"smove": {4, 1, 2}, "sinter": {-2, 1, -1}, "sintercard": {-3, 0, 0}, "sunion": {-2, 1, -1},
		"sdiff": {-2, 1, -1}, "sinterstore": {-3, 1, -1}, "sunionstore": {-3, 1, -1},
		"sdiffstore": {-3, 1, -1}, "sscan": {-3, 1, 1},
	})
}
