package server

import (
	"regexp"
	"strings"
	"testing"
)

func TestMonitor(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	mon := dial(t, addr)
	if got := mon.do("monitor"); got != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", got)
	}
	c := dial(t, addr)
	c.do("fmset", "k", "v")
	c.do("config", "get", "port") // admin: not shown
	c.do("auth", "secret")        // shown, redacted
	c.do("select", "3")
	// A pipeline: each command shows, in order.
	c.send(encode("fecho", "a\"b\x01\n") + encode("fget", "k"))
	c.reply()
	c.reply()
	for _, want := range []string{
		`"fmset" "k" "v"`,
		`"auth" "(redacted)"`,
		`"select" "3"`,
		`"fecho" "a\"b\x01\n"`,
		`"fget" "k"`,
	} {
		line := mon.reply()
		re := `^\+\d{10}\.\d{6} \[\d 127\.0\.0\.1:\d+\] ` + regexp.QuoteMeta(want) + "\r\n$"
		if !regexp.MustCompile(re).MatchString(line) {
			t.Fatalf("monitor line %q, want %s", line, want)
		}
		if strings.Contains(want, "fecho") && !strings.Contains(line, "[3 ") {
			t.Fatalf("db of the command after SELECT 3: %q", line)
		}
	}
	// RESET ends it: a command after RESET does not show.
	if got := mon.do("reset"); got != "+RESET\r\n" {
		t.Fatalf("RESET: %q", got)
	}
	c.do("fget", "after")
	if got := mon.do("ping"); got != "+PONG\r\n" {
		t.Fatalf("after RESET the monitor got %q", got)
	}
}
