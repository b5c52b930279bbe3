package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
)

// TestFinalAnswersMatchSteps checks that GET's, SET's, the INCR
// family's and STRLEN's recipes answer as their steps do, for every outcome
// (cmdtest.FinalMatchesSteps).
func TestFinalAnswersMatchSteps(t *testing.T) {
	seed := [][]string{{"SET", "n", "10"}, {"APPEND", "bytes10", "10"}, {"SET", "max", "9223372036854775807"}, {"INCRBYFLOAT", "f", "2.5"}}
	cmds := [][]string{
		{"GET", "str"}, {"GET", "n"}, {"GET", "bytes10"}, {"GET", "missing"}, {"GET", "zs"}, {"SET", "zs", "x"}, {"INCR", "zs"},
		{"SET", "str", "x"}, {"SET", "str", "x", "EX", "100"}, {"SET", "missing", "x", "XX"}, {"SET", "str", "x", "NX"},
		{"SET", "n", "x", "PX", "5000", "XX"}, {"SET", "n", "x", "KEEPTTL"},
		{"INCR", "n"}, {"INCR", "bytes10"}, {"INCR", "str"}, {"INCR", "missing"}, {"INCR", "max"},
		{"DECR", "n"}, {"INCRBY", "n", "5"}, {"DECRBY", "bytes10", "3"}, {"INCRBY", "max", "1"},
		{"STRLEN", "str"}, {"STRLEN", "n"}, {"STRLEN", "max"}, {"STRLEN", "bytes10"}, {"STRLEN", "missing"}, {"STRLEN", "zs"}, {"STRLEN", "f"},
	}
	cmdtest.FinalMatchesSteps(t, seed, cmds)
}
