package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// TestFinalAnswersMatchSteps checks that the commands answered by
// kit.IntRecipe where the store waits answer as kit.IntDone does, for
// every outcome (cmdtest.FinalMatchesSteps).
func TestFinalAnswersMatchSteps(t *testing.T) {
	cmdtest.FinalMatchesSteps(t, [][]string{{"HSET", "h", "f", "v", "g", "w"}}, [][]string{
		{"HLEN", "h"}, {"HLEN", "missing"}, {"HLEN", "str"}, {"HLEN", "zs"}, {"HEXISTS", "h", "f"}, {"HEXISTS", "h", "nope"}, {"HEXISTS", "missing", "f"}, {"HEXISTS", "str", "f"},
	})
}
