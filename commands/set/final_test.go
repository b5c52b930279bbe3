package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// TestFinalAnswersMatchSteps checks that the commands answered by
// kit.IntRecipe where the store waits answer as kit.IntDone does, for
// every outcome (cmdtest.FinalMatchesSteps).
func TestFinalAnswersMatchSteps(t *testing.T) {
	cmdtest.FinalMatchesSteps(t, [][]string{{"SADD", "s", "a", "b"}}, [][]string{
		{"SCARD", "s"}, {"SCARD", "missing"}, {"SCARD", "str"}, {"SCARD", "zs"}, {"SISMEMBER", "s", "a"}, {"SISMEMBER", "s", "z"}, {"SISMEMBER", "missing", "a"}, {"SISMEMBER", "zs", "a"},
	})
}
