package sdk_test

import (
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/sdktest"
)

// TestParseTimeout checks Ctx.ParseTimeout against what redis-server 7.0.15
// (x86-64) answers BLPOP q <timeout> on an empty list, through TAKE
// (example_block_test.go): the timeout it blocks with, or its error.
func TestParseTimeout(t *testing.T) {
	const (
		notFloat = "(error) ERR timeout is not a float or out of range"
		negative = "(error) ERR timeout is negative"
	)
	cases := []struct {
		arg   string
		want  time.Duration // when it blocks
		error string
	}{
		{"0", 0, ""}, {"-0", 0, ""}, {"2.5", 2500 * time.Millisecond, ""}, {"0.05", 50 * time.Millisecond, ""},
		{"0.0001", time.Millisecond, ""}, {"1e-500", time.Millisecond, ""}, {"+1", time.Second, ""},
		{".5", 500 * time.Millisecond, ""}, {"1.", time.Second, ""}, {"0x10", 16 * time.Second, ""},
		{"-1", 0, negative}, {"-0.001", 0, negative}, {"inf", 0, negative}, {"-inf", 0, negative},
		{"Infinity", 0, negative}, {"1e500", 0, negative}, {"1e16", 0, negative}, {"9.3e15", 0, negative},
		{"1e4931", 0, negative}, {"0x1p16383", 0, negative}, {"-0x10", 0, negative},
		{"1e-4950", time.Millisecond, ""}, {"0x1p-2000", time.Millisecond, ""}, {"-1e-500", 0, ""},
		{"0X10", 16 * time.Second, ""},
		{"1e4933", 0, notFloat}, {"0x1p16384", 0, notFloat}, {"1e-4952", 0, notFloat},
		{"abc", 0, notFloat}, {"", 0, notFloat}, {" 1", 0, notFloat}, {"1 ", 0, notFloat},
		{"nan", 0, notFloat}, {"-nan", 0, notFloat}, {"1_0", 0, notFloat}, {"1e5000", 0, notFloat},
	}
	h := sdktest.New()
	for _, tc := range cases {
		got := h.Do("TAKE", "missing", tc.arg)
		if tc.error != "" {
			if got != tc.error || h.Blocked != nil {
				t.Errorf("TAKE missing %q = %s (blocked %v), want %s", tc.arg, got, h.Blocked, tc.error)
			}
			continue
		}
		if got != "(nil)" || h.Blocked == nil || h.Blocked.Timeout != tc.want {
			t.Errorf("TAKE missing %q = %s, blocked %+v, want a block of %v", tc.arg, got, h.Blocked, tc.want)
		}
	}
	// 9e15 seconds is in range (Redis adds it to the time in
	// milliseconds); beyond 292 years it means no limit in practice.
	if got := h.Do("TAKE", "missing", "9e15"); got != "(nil)" || h.Blocked == nil || h.Blocked.Timeout < 290*365*24*time.Hour {
		t.Errorf("TAKE missing 9e15 = %s, blocked %+v", got, h.Blocked)
	}
}

// TestBlockInPipeline checks that a command that blocks ends a batch with
// its block answer, and that a pipeline's commands before it replied.
func TestBlockInPipeline(t *testing.T) {
	h := sdktest.New()
	h.Inline = true
	got := h.Pipeline([]string{"REMEMBER", "a", "1"}, []string{"TAKE", "a", "0"}, []string{"TAKE", "b", "1"},
		[]string{"RECALL", "a"})
	want := []string{"OK", `"1"`, "(nil)", "(nil)"}
	if len(got) != len(want) {
		t.Fatalf("pipeline = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pipeline = %q, want %q", got, want)
		}
	}
	if h.Blocked == nil || len(h.Blocked.Keys) != 1 || h.Blocked.Keys[0] != "b" || h.Blocked.Timeout != time.Second {
		t.Fatalf("blocked = %+v", h.Blocked)
	}
}
