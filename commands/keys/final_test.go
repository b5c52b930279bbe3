package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// TestFinalAnswersMatchSteps checks that EXISTS and TOUCH of one key,
// which end with a final answer, answer where the store waits as their
// step does, for every outcome (cmdtest.FinalMatchesSteps).
func TestFinalAnswersMatchSteps(t *testing.T) {
	cmdtest.FinalMatchesSteps(t, nil, [][]string{
		{"EXISTS", "str"}, {"EXISTS", "missing"}, {"EXISTS", "zs"}, {"TOUCH", "str"}, {"TOUCH", "missing"},
		{"EXISTS", "str", "missing", "str"},
	})
}
