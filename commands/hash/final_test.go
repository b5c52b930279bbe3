package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// TestFinalAnswersMatchSteps checks that the commands that end with a
// final answer (kit.IntRecipe, HGET's, HSTRLEN's and HMGET's recipes)
// answer where the store waits as their steps do, for every outcome
// (cmdtest.FinalMatchesSteps).
func TestFinalAnswersMatchSteps(t *testing.T) {
	seed := [][]string{{"HSET", "h", "f", "v", "g", "w", "n", "-12", "e", ""}, {"HINCRBYFLOAT", "h", "fl", "1.5"}, {"HINCRBY", "h", "i", "7"}}
	cmdtest.FinalMatchesSteps(t, seed, [][]string{
		{"HLEN", "h"}, {"HLEN", "missing"}, {"HLEN", "str"}, {"HLEN", "zs"}, {"HEXISTS", "h", "f"}, {"HEXISTS", "h", "nope"}, {"HEXISTS", "missing", "f"}, {"HEXISTS", "str", "f"},
		{"HGET", "h", "f"}, {"HGET", "h", "e"}, {"HGET", "h", "i"}, {"HGET", "h", "fl"}, {"HGET", "h", "nope"}, {"HGET", "missing", "f"}, {"HGET", "str", "f"}, {"HGET", "zs", "m"},
		{"HSTRLEN", "h", "f"}, {"HSTRLEN", "h", "n"}, {"HSTRLEN", "h", "i"}, {"HSTRLEN", "h", "fl"}, {"HSTRLEN", "h", "e"}, {"HSTRLEN", "h", "nope"}, {"HSTRLEN", "missing", "f"}, {"HSTRLEN", "str", "f"},
		{"HMGET", "h", "f"}, {"HMGET", "h", "nope"}, {"HMGET", "h", "g", "nope", "f", "i", "fl", "e", "f"}, {"HMGET", "missing", "a", "b"}, {"HMGET", "str", "f"}, {"HMGET", "zs", "m", "n"},
	})
}
