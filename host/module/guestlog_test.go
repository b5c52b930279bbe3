package module

import (
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/host/store/memory"
)

// lockedBuf collects log output from the runtime's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) lines(t *testing.T, msgPrefix string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if msg, _ := m["msg"].(string); strings.HasPrefix(msg, msgPrefix) {
			out = append(out, m)
		}
	}
	return out
}

func TestGuestLogCarriesModuleAndCommand(t *testing.T) {
	var buf lockedBuf
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := newRuntime(t, Config{Logger: log}, memory.New(memory.Options{Databases: 1}), "loop.wasm")
	if got := do(t, r, "logflood", "2"); got != "+OK\r\n" {
		t.Fatalf("logflood 2: %q", got)
	}
	lines := buf.lines(t, "line ")
	if len(lines) != 2 {
		t.Fatalf("%d lines logged, want 2", len(lines))
	}
	for i, l := range lines {
		if l["msg"] != "line "+string(rune('0'+i)) || l["level"] != "WARN" || l["module"] != "loop" ||
			l["version"] != "1" || l["command"] != "logflood" {
			t.Fatalf("line %d: %v", i, l)
		}
	}
}

func TestGuestLogIsRateLimited(t *testing.T) {
	var buf lockedBuf
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	r := newRuntime(t, Config{Logger: log}, memory.New(memory.Options{Databases: 1}), "loop.wasm")
	start := time.Now()
	if got := do(t, r, "logflood", "5000"); got != "+OK\r\n" {
		t.Fatalf("logflood 5000: %q", got)
	}
	elapsed := time.Since(start)
	passed := len(buf.lines(t, "line "))
	// The burst, plus what the rate refilled while the command ran.
	if max := guestLogBurst + int(elapsed.Seconds()*guestLogRate) + 1; passed > max || passed < guestLogBurst {
		t.Fatalf("%d of 5000 lines passed in %v, want %d..%d", passed, elapsed, guestLogBurst, max)
	}
	var info ModuleInfo
	for _, m := range r.Modules() {
		if m.Name == "loop" {
			info = m
		}
	}
	if info.LogLines != int64(passed) || info.LogLines+info.LogDropped != 5000 {
		t.Fatalf("LogLines %d LogDropped %d, %d passed", info.LogLines, info.LogDropped, passed)
	}
}

func TestModuleInfoCountsTrapsKillsAndGuestTime(t *testing.T) {
	r := newRuntime(t, Config{Deadline: 200 * time.Millisecond}, memory.New(memory.Options{Databases: 1}), "trap.wasm")
	do(t, r, "exit")
	do(t, r, "spin")
	if got := do(t, r, "lecho", "x"); got != "$1\r\nx\r\n" {
		t.Fatalf("lecho after a trap and a kill: %q", got)
	}
	for _, m := range r.Modules() {
		if m.Name == "trap" {
			if m.Traps != 1 || m.DeadlineKills != 1 || m.GuestTime < 150*time.Millisecond {
				t.Fatalf("traps %d, deadline kills %d, guest time %v", m.Traps, m.DeadlineKills, m.GuestTime)
			}
			return
		}
	}
	t.Fatal("module trap not listed")
}
