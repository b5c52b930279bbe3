package server

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
)

func TestHistBuckets(t *testing.T) {
	prev := -1
	for _, ns := range []int64{1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 100, 1023, 1024, 1025, 5000, 1e6, 123456789, 1 << 40} {
		i := histIndex(ns)
		if i < prev {
			t.Fatalf("bucket of %d (%d) before the previous one (%d)", ns, i, prev)
		}
		prev = i
		if up := histUpper(i); up < ns {
			t.Fatalf("%d ns in bucket %d whose upper end is %d", ns, i, up)
		}
		if i > 0 && histUpper(i-1) >= ns {
			t.Fatalf("%d ns in bucket %d, but bucket %d already reaches %d", ns, i, i-1, histUpper(i-1))
		}
		if ns >= 8 && float64(histUpper(i)-ns) > float64(ns)/histSub {
			t.Fatalf("%d ns: bucket %d reaches %d, more than 1/%d above", ns, i, histUpper(i), histSub)
		}
	}
}

func TestPowerStepsAndPercentiles(t *testing.T) {
	var st cmdStat
	for _, ns := range []int64{500, 1500, 40000, 40000} {
		st.record(ns)
	}
	counts, total := st.hist.Load().snapshot()
	keys, cum := powerSteps(&counts, total)
	// Redis's keys for 2^10, 2^11 and 2^16 ns; only the steps where runs
	// were added, cumulative.
	if fmt.Sprint(keys, cum) != "[1 2 66] [1 2 4]" {
		t.Fatalf("steps %v %v", keys, cum)
	}
	if p := percentile(&counts, total, 50); p < 1.5 || p > 1.5*1.13 {
		t.Fatalf("p50 = %v µs, want about 1.5", p)
	}
	if p := percentile(&counts, total, 99.9); p < 40 || p > 40*1.13 {
		t.Fatalf("p99.9 = %v µs, want about 40", p)
	}
}

// fsleep ms is a fake module command that runs ms milliseconds.
func sleepRuntime() *fakeRuntime {
	f := newFakeRuntime()
	f.add("test", codec.CommandInfo{Name: "fsleep", Arity: -2, Flags: []string{"readonly"}, Group: "generic"},
		func(_ context.Context, st *codec.Start, w *resp.Writer) {
			ms, _ := strconv.Atoi(string(st.Args[1]))
			time.Sleep(time.Duration(ms) * time.Millisecond) // the command's own work
			w.OK()
		})
	return f
}

func TestSlowlog(t *testing.T) {
	_, addr := startServer(t, testConfig(), sleepRuntime(), nil)
	c := dial(t, addr)
	for _, step := range [][]string{
		{"config", "set", "slowlog-log-slower-than", "20000"},
		{"client", "setname", "slowpoke"},
		{"fsleep", "0"},
		{"fsleep", "25", strings.Repeat("x", 130)},
		{"config", "set", "slowlog-log-slower-than", "0"},
		{"auth", "nopass"},
	} {
		c.do(step...)
	}
	many := append([]string{"fecho"}, strings.Split(strings.Repeat("a ", 40), " ")[:40]...)
	c.do(many...)
	c.do("config", "set", "slowlog-log-slower-than", "-1")
	if got := c.do("slowlog", "len"); got != ":4\r\n" {
		t.Fatalf("SLOWLOG LEN: %q", got) // fsleep 25, CONFIG SET, AUTH, FECHO
	}
	got := c.do("slowlog", "get", "3")
	// Newest first: FECHO with its 40 arguments cut to 32, AUTH redacted,
	// CONFIG SET.
	for _, want := range []string{
		`^\*3\r\n\*6\r\n:3\r\n:\d+\r\n:\d+\r\n\*32\r\n\$5\r\nfecho\r\n(\$1\r\na\r\n){30}\$23\r\n\.\.\. \(10 more arguments\)\r\n\$\d+\r\n127\.0\.0\.1:\d+\r\n\$8\r\nslowpoke\r\n`,
		`\*2\r\n\$4\r\nauth\r\n\$10\r\n\(redacted\)\r\n`,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Fatalf("SLOWLOG GET 3 does not match %q:\n%q", want, got)
		}
	}
	all := c.do("slowlog", "get", "-1")
	if !strings.Contains(all, "$146\r\n"+strings.Repeat("x", 128)+"... (2 more bytes)\r\n") {
		t.Fatalf("the 130-byte argument is not cut to 128: %q", all)
	}
	if m := regexp.MustCompile(`:0\r\n:\d+\r\n:(\d+)\r\n\*3\r\n\$6\r\nfsleep\r\n`).FindStringSubmatch(all); m == nil {
		t.Fatalf("no entry 0 for FSLEEP 25: %q", all)
	} else if us, _ := strconv.Atoi(m[1]); us < 25000 {
		t.Fatalf("FSLEEP 25 logged as %d µs", us)
	}
	if strings.Contains(all, "*2\r\n$6\r\nfsleep\r\n") {
		t.Fatalf("FSLEEP 0, under the threshold, was logged: %q", all)
	}
	c.do("config", "set", "slowlog-max-len", "2")
	if got := c.do("slowlog", "len"); got != ":2\r\n" {
		t.Fatalf("SLOWLOG LEN after slowlog-max-len 2: %q", got)
	}
	if got := c.do("slowlog", "reset"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := c.do("slowlog", "get"); got != "*0\r\n" {
		t.Fatalf("SLOWLOG GET after RESET: %q", got)
	}
}

func TestLatencyMonitor(t *testing.T) {
	_, addr := startServer(t, testConfig(), sleepRuntime(), nil)
	c := dial(t, addr)
	if got := c.do("latency", "latest"); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST before any event: %q", got)
	}
	c.do("config", "set", "latency-monitor-threshold", "10")
	c.do("fsleep", "1")
	c.do("fsleep", "15")
	got := c.do("latency", "latest")
	m := regexp.MustCompile(`^\*1\r\n\*4\r\n\$7\r\ncommand\r\n:(\d+)\r\n:(\d+)\r\n:(\d+)\r\n$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("LATENCY LATEST: %q", got)
	}
	if ms, _ := strconv.Atoi(m[2]); ms < 15 {
		t.Fatalf("latest sample %s ms for FSLEEP 15", m[2])
	}
	if unix, _ := strconv.ParseInt(m[1], 10, 64); time.Since(time.Unix(unix, 0)) > time.Minute {
		t.Fatalf("sample time %s", m[1])
	}
	if got := c.do("latency", "history", "command"); !regexp.MustCompile(`^\*1\r\n\*2\r\n:\d+\r\n:\d+\r\n$`).MatchString(got) {
		t.Fatalf("LATENCY HISTORY command: %q", got)
	}
	if got := c.do("latency", "doctor"); !strings.Contains(got, "command: 1 latency spikes") {
		t.Fatalf("LATENCY DOCTOR: %q", got)
	}
	if got := c.do("latency", "graph", "command"); !strings.Contains(got, "#") {
		t.Fatalf("LATENCY GRAPH: %q", got)
	}
	got = c.do("latency", "histogram", "fsleep", "nosuch")
	if !regexp.MustCompile(`^\*2\r\n\$6\r\nfsleep\r\n\*4\r\n\$5\r\ncalls\r\n:2\r\n\$14\r\nhistogram_usec\r\n\*4\r\n:\d+\r\n:1\r\n:\d+\r\n:2\r\n$`).MatchString(got) {
		t.Fatalf("LATENCY HISTOGRAM fsleep nosuch: %q", got)
	}
	if got := c.do("latency", "reset", "command", "nosuch"); got != ":1\r\n" {
		t.Fatalf("LATENCY RESET: %q", got)
	}
	if got := c.do("latency", "latest"); got != "*0\r\n" {
		t.Fatalf("LATENCY LATEST after RESET: %q", got)
	}
	info := c.do("info", "latencystats")
	if !regexp.MustCompile(`latency_percentiles_usec_fsleep:p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}\r\n`).MatchString(info) {
		t.Fatalf("INFO latencystats: %q", info)
	}
}
