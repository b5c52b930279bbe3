package module

import (
	"context"
	"runtime"
	"time"
)

// Suspect modules run on half the CPUs.
//
// A module whose command was stopped by the deadline, or whose commands
// trap again and again, can take every CPU: each such command burns guest
// CPU up to the deadline, or the start of a new instance after each trap,
// on as many instances as clients send it. Measured on 2 CPUs with four
// clients looping a command that spins, a GET through another module
// waited for the Go scheduler up to 0.4 s, 22 GETs in a second instead of
// thousands: goroutines spinning in guest code leave the others few turns.
// So for suspectFor after a deadline kill, or after a trap that follows
// another within a second, at most suspectTurns of the module's commands
// run at once (the others wait for their turn, as long as their client
// does): half the CPUs, one on one or two, and the others serve the other
// modules. Half, not one: a module killed once because an overloaded
// machine stretched a legitimate command past the deadline keeps half its
// throughput meanwhile, not one CPU's worth of a 64-CPU proxy.
const (
	suspectFor     = 10 * time.Second
	suspectTrapGap = time.Second
)

// suspectTurns is how many commands of a suspect module run at once.
func suspectTurns() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// epochs converts a duration to watchdog epochs, rounding up.
func (d *watchdog) epochs(t time.Duration) uint64 {
	return uint64((t + d.tick - 1) / d.tick)
}

// misbehaved records a discarded instance of the module: a deadline kill,
// or a trap; it makes the module suspect as described above.
func (r *Runtime) misbehaved(m *modCounters, killed bool) {
	now := r.dog.epoch.Load()
	last := m.lastTrap.Swap(now + 1) // 0 means never
	if killed || last != 0 && now+1-last <= r.dog.epochs(suspectTrapGap) {
		m.suspectUntil.Store(now + r.dog.epochs(suspectFor))
	}
}

// suspect reports whether the module's commands run one at a time now.
func (r *Runtime) suspect(m *modCounters) bool {
	return r.dog.epoch.Load() < m.suspectUntil.Load()
}

// turn waits for a suspect module's turn and returns the function that
// ends it; ok is false when ctx ended first. For a module that is not
// suspect it returns at once.
func (r *Runtime) turn(ctx context.Context, m *modCounters) (done func(), ok bool) {
	if !r.suspect(m) {
		return nil, true
	}
	select {
	case m.gate <- struct{}{}:
		return func() { <-m.gate }, true
	case <-ctx.Done():
		return nil, false
	}
}
