package module

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The deadline mechanism.
//
// Each call into an instance stores the watchdog's current epoch in the
// instance (one atomic load and store: no timer, no context, no goroutine
// per call). One watchdog goroutine per runtime advances the epoch every
// tick and claims any call that started more than the deadline ago by
// swapping in timedOut; the guest's next loop-fuel tick (instrument.go) sees
// the claim and unwinds the call. A call is stopped between the deadline and
// the deadline plus two ticks (a tick is an eighth of the deadline, at most
// 100 ms) plus a few microseconds of fuel.
type watchdog struct {
	epoch atomic.Uint64
	limit uint64        // epochs a call may span
	tick  time.Duration // the time an epoch lasts

	mu    sync.Mutex
	insts map[*instance]struct{}
	done  chan struct{}
	wg    sync.WaitGroup
}

// timedOut is the state of an instance whose call the watchdog claimed.
const timedOut = math.MaxUint64

func newWatchdog(deadline time.Duration) *watchdog {
	tick := min(max(deadline/8, time.Millisecond), 100*time.Millisecond)
	d := &watchdog{
		limit: uint64((deadline + tick - 1) / tick),
		tick:  tick,
		insts: map[*instance]struct{}{},
		done:  make(chan struct{}),
	}
	d.wg.Add(1)
	go d.run(tick)
	return d
}

func (d *watchdog) run(tick time.Duration) {
	defer d.wg.Done()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-d.done:
			return
		case <-t.C:
		}
		// A call marked m = e0+1 began during epoch e0, so at least
		// (e - m) ticks have passed by epoch e. Ticker delays only lengthen
		// real time, never shorten it.
		e := d.epoch.Add(1)
		d.mu.Lock()
		for in := range d.insts {
			m := in.state.Load()
			if m != 0 && m != timedOut && e >= m+d.limit {
				in.state.CompareAndSwap(m, timedOut)
			}
		}
		d.mu.Unlock()
	}
}

func (d *watchdog) add(in *instance) {
	d.mu.Lock()
	d.insts[in] = struct{}{}
	d.mu.Unlock()
}

func (d *watchdog) remove(in *instance) {
	d.mu.Lock()
	delete(d.insts, in)
	d.mu.Unlock()
}

func (d *watchdog) stop() {
	close(d.done)
	d.wg.Wait()
}
