package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// TestFinalAnswersMatchSteps checks that the commands answered by
// kit.IntRecipe where the store waits answer as kit.IntDone does, for
// every outcome (cmdtest.FinalMatchesSteps).
func TestFinalAnswersMatchSteps(t *testing.T) {
	cmdtest.FinalMatchesSteps(t, [][]string{{"RPUSH", "l", "a", "b", "c"}}, [][]string{
		{"LLEN", "l"}, {"LLEN", "missing"}, {"LLEN", "str"}, {"LLEN", "zs"},
	})
}
