package module

import (
	"context"
	"testing"
	"time"
)

// TestSuspect checks when a module becomes suspect and that a suspect
// module's commands take turns. The watchdog's clock is set by hand.
func TestSuspect(t *testing.T) {
	d := &watchdog{tick: 100 * time.Millisecond}
	r := &Runtime{dog: d}
	m := &modCounters{gate: make(chan struct{}, 1)} // one turn, as on 1 or 2 CPUs

	d.epoch.Store(100)
	r.misbehaved(m, false)
	if r.suspect(m) {
		t.Fatal("one trap made the module suspect")
	}
	d.epoch.Store(120) // 2 s later
	r.misbehaved(m, false)
	if r.suspect(m) {
		t.Fatal("a trap 2 s after the last made the module suspect")
	}
	d.epoch.Store(125) // 0.5 s later
	r.misbehaved(m, false)
	if !r.suspect(m) {
		t.Fatal("a trap 0.5 s after the last did not make the module suspect")
	}
	d.epoch.Store(125 + 100) // 10 s later
	if r.suspect(m) {
		t.Fatal("the module is still suspect 10 s later")
	}
	r.misbehaved(m, true)
	if !r.suspect(m) {
		t.Fatal("a deadline kill did not make the module suspect")
	}

	// Turns: one at a time; a command whose client gave up stops waiting.
	done, ok := r.turn(context.Background(), m)
	if !ok || done == nil {
		t.Fatal("no turn for the first command")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := r.turn(ctx, m); ok {
		t.Fatal("a second command got a turn while the first runs")
	}
	done()
	if done, ok = r.turn(ctx, m); !ok {
		// select picks at random between a free turn and a done
		// context: try with a live one.
		done, ok = r.turn(context.Background(), m)
	}
	if !ok {
		t.Fatal("no turn after the first command ended")
	}
	done()
	d.epoch.Store(1000)
	if done, ok := r.turn(ctx, m); !ok || done != nil {
		t.Fatal("a module no longer suspect takes turns")
	}
}
