// Package fault wraps a store with backend outages injected on demand, for
// outage drills: the embedded store then fails the way an Aerospike cluster
// does when it goes away and comes back (requests that hang until the
// client's timeout, requests refused at once while the cluster is known to
// be down, writes that applied but whose answer was lost), so that the
// proxy's behaviour under an outage is tested without a cluster.
//
// A Store follows a schedule of phases, each lasting a number of requests
// (not a time), so a test drives an outage by its own load and never by
// sleeping.
package fault

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Mode is how the wrapped store behaves.
type Mode int32

// Modes.
const (
	// Up passes requests to the wrapped store.
	Up Mode = iota
	// Hang makes a request wait for the timeout (or its context's end) and
	// then fail with codec.Timeout without reaching the store: a cluster
	// that stopped answering, before anyone noticed.
	Hang
	// Down fails requests at once with codec.BackendUnavail: a cluster the
	// client knows to be unreachable.
	Down
	// Lost runs a request on the wrapped store and then answers
	// codec.Timeout: a write that applied but whose answer never came
	// back. A client must count such a write as possibly applied.
	Lost
)

func (m Mode) String() string {
	switch m {
	case Up:
		return "up"
	case Hang:
		return "hang"
	case Down:
		return "down"
	case Lost:
		return "lost"
	}
	return "unknown"
}

// Phase is one step of a schedule: Mode for Requests requests. A phase of
// 0 requests lasts until the schedule is replaced.
type Phase struct {
	Mode     Mode
	Requests int64
}

// Store is a store with injected faults. It reports Inline false, as
// Aerospike does: its requests wait, so the host runs them outside guest
// calls.
type Store struct {
	inner   store.Store
	timeout time.Duration

	mu       sync.Mutex
	schedule []Phase
	left     int64 // requests left in schedule[0]
	mode     atomic.Int32
	end      chan struct{} // closed when the schedule is done

	inflight, maxInflight atomic.Int64
	counts                [4]atomic.Int64 // requests answered per mode
}

var _ store.Store = (*Store)(nil)

// New wraps inner. timeout is what a request waits in Hang mode, as an
// Aerospike client waits its total timeout. The store starts Up.
func New(inner store.Store, timeout time.Duration) *Store {
	end := make(chan struct{})
	close(end)
	return &Store{inner: inner, timeout: timeout, end: end}
}

// Run replaces the schedule: its phases run in order, each for its number
// of requests; after the last (unless it lasts forever) the store is Up.
func (s *Store) Run(phases ...Phase) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.schedule = append([]Phase(nil), phases...)
	select {
	case <-s.end:
		s.end = make(chan struct{})
	default:
	}
	s.startLocked()
}

// Set switches to m until the next Set or Run.
func (s *Store) Set(m Mode) { s.Run(Phase{Mode: m}) }

// startLocked enters schedule[0], or Up when the schedule is done.
func (s *Store) startLocked() {
	if len(s.schedule) == 0 {
		s.mode.Store(int32(Up))
		select {
		case <-s.end:
		default:
			close(s.end)
		}
		return
	}
	s.mode.Store(int32(s.schedule[0].Mode))
	s.left = s.schedule[0].Requests
}

// next counts one request against the schedule and returns the mode it
// runs in.
func (s *Store) next() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := Mode(s.mode.Load())
	if len(s.schedule) > 0 && s.schedule[0].Requests > 0 {
		s.left--
		if s.left <= 0 {
			s.schedule = s.schedule[1:]
			s.startLocked()
		}
	}
	return m
}

// Mode is the current mode.
func (s *Store) Mode() Mode { return Mode(s.mode.Load()) }

// Done returns a channel closed when the schedule has run to its end (the
// store is Up for good).
func (s *Store) Done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// Counts returns how many requests were answered in each mode.
func (s *Store) Counts() map[Mode]int64 {
	out := map[Mode]int64{}
	for m := range s.counts {
		out[Mode(m)] = s.counts[m].Load()
	}
	return out
}

// MaxInflight is the most requests that were inside Exec at once: the
// proxy's parked commands during a hang.
func (s *Store) MaxInflight() int64 { return s.maxInflight.Load() }

// Inflight is the number of requests inside Exec now.
func (s *Store) Inflight() int64 { return s.inflight.Load() }

// Exec runs req per the current mode.
func (s *Store) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for {
		max := s.maxInflight.Load()
		if n <= max || s.maxInflight.CompareAndSwap(max, n) {
			break
		}
	}
	m := s.next()
	s.counts[m].Add(1)
	switch m {
	case Up:
		s.inner.Exec(ctx, db, req, resp)
		return
	case Lost:
		s.inner.Exec(ctx, db, req, resp)
		fail(resp, codec.Timeout, "fault: the answer was lost (the request may have applied)")
		return
	case Down:
		fail(resp, codec.BackendUnavail, "fault: backend unavailable")
		return
	}
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	fail(resp, codec.Timeout, "fault: backend did not answer within "+s.timeout.String())
}

// fail fails the whole response as a store does when a request failed.
func fail(resp *codec.Response, code codec.Code, msg string) {
	resp.Code, resp.Msg, resp.Count = code, msg, 0
	resp.Results = resp.Results[:0]
	resp.Scan.Cursor = 0
	resp.Scan.Keys = resp.Scan.Keys[:0]
	resp.Scan.Types = resp.Scan.Types[:0]
}

// Inline reports false: a request may wait (Hang).
func (s *Store) Inline() bool { return false }

// Close closes the wrapped store.
func (s *Store) Close() error { return s.inner.Close() }
