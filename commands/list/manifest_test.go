package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// The manifest describes every list command as Redis 7.0's COMMAND INFO
// does (name, arity, key positions).
func TestManifest(t *testing.T) {
	cmdtest.CheckManifest(t, "list", "list", map[string]cmdtest.Spec{
		"lpush": {-3, 1, 1}, "rpush": {-3, 1, 1}, "lpushx": {-3, 1, 1}, "rpushx": {-3, 1, 1},
		"lpop": {-2, 1, 1}, "rpop": {-2, 1, 1}, "llen": {2, 1, 1}, "lrange": {4, 1, 1},
		"lindex": {3, 1, 1}, "lset": {4, 1, 1}, "linsert": {5, 1, 1}, "lrem": {4, 1, 1},
		"ltrim": {4, 1, 1}, "lpos": {-3, 1, 1}, "lmove": {5, 1, 2}, "rpoplpush": {3, 1, 2},
		"lmpop": {-4, 0, 0}, "blpop": {-3, 1, -2}, "brpop": {-3, 1, -2}, "blmove": {6, 1, 2},
		"brpoplpush": {4, 1, 2}, "blmpop": {-5, 0, 0},
	})
}
