package main

import (
	"math"
	"testing"
)

// TestStrtod checks SORT's score parsing against what C's strtod gives
// Redis (glibc): the whole value, leading white space, hexadecimal, inf;
// NaN and ERANGE (overflow, underflow) refused.
func TestStrtod(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"", 0, true},
		{"0", 0, true},
		{"-0", 0, true},
		{"0.000", 0, true},
		{"0e10", 0, true},
		{"12", 12, true},
		{" \t\n12", 12, true},
		{"12 ", 0, false},
		{"   ", 0, false},
		{"+3", 3, true},
		{".5", 0.5, true},
		{"5.", 5, true},
		{"1e3", 1000, true},
		{"1E-2", 0.01, true},
		{"1e", 0, false},
		{"0x10", 16, true},
		{"0X1.8", 1.5, true},
		{"-0x1p3", -8, true},
		{"0x", 0, false},
		{"0x0", 0, true},
		{"inf", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true},
		{"infin", 0, false},
		{"nan", 0, false},
		{"1e400", 0, false},
		{"-1e400", 0, false},
		{"1e-400", 0, false},
		{"4e-320", 0, false},
		{"2.3e-308", 2.3e-308, true},
		{"1_000", 0, false},
		{"0x1_0", 0, false},
		{"12\x00abc", 12, true},
		{"abc", 0, false},
	} {
		got, ok := strtod([]byte(c.in))
		if ok != c.ok || ok && got != c.want {
			t.Errorf("strtod(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
