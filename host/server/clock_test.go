package server

import (
	"context"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
	"github.com/respike/respike/host/module"
)

// TestWallOffset checks the wall clock's offset from the server's
// monotonic clock that commands' start times are taken from: it gives the
// wall clock, a reading serves for wallRefresh and no longer (a stepped
// wall clock is seen that late at most), and a reading from the future of
// the caller's clock is read again.
func TestWallOffset(t *testing.T) {
	s := newServer(testConfig(), newFakeRuntime(), &fakeStore{counts: map[int]int64{}}, nil)
	near := func(what string, off, now int64) {
		t.Helper()
		if d := time.Duration(off + now - time.Now().UnixNano()); d < -time.Second || d > time.Second {
			t.Errorf("%s: offset + clock is %v from the wall clock", what, d)
		}
	}
	now := s.nanos()
	off := s.wallOffset(now)
	near("first reading", off, now)
	stepped := off + int64(time.Hour)
	s.wall.Store(&wallReading{at: now, off: stepped}) // as if the wall clock stepped an hour
	if got := s.wallOffset(now + wallRefresh - 1); got != stepped {
		t.Errorf("within wallRefresh: offset %d, want the reading's %d", got, stepped)
	}
	s.wall.Store(&wallReading{at: now, off: stepped})
	near("after wallRefresh", s.wallOffset(now+wallRefresh), now+wallRefresh)
	s.wall.Store(&wallReading{at: now, off: stepped})
	near("before the reading", s.wallOffset(now-1), now-1)
}

// TestModuleCommandStartsNow checks that a module command's start time
// (codec.Start.Now), which the server takes from its monotonic clock and
// the wall clock's offset, is the wall clock when the command ran.
func TestModuleCommandStartsNow(t *testing.T) {
	rt := newFakeRuntime()
	seen := make(chan int64, 1)
	rt.add("m", codec.CommandInfo{Name: "stamp", Arity: 1}, func(_ context.Context, st *codec.Start, w *resp.Writer) {
		seen <- st.Now
		w.Simple("OK")
	})
	_, addr := startServer(t, testConfig(), rt, nil)
	c := dial(t, addr)
	for range 3 {
		before := time.Now().UnixNano()
		if got := c.do("STAMP"); got != "+OK\r\n" {
			t.Fatalf("STAMP: %q", got)
		}
		after := time.Now().UnixNano()
		now := <-seen
		if now < before-int64(time.Millisecond) || now > after+int64(time.Millisecond) {
			t.Fatalf("Start.Now %d, not within %d..%d", now, before, after)
		}
	}
}

// TestRanUntil checks the end of a run of module commands the server
// records: the runtime's reading at the end of the last command's guest
// call when it has one (module.Item.Ended), put on the server's clock;
// otherwise, or when a command blocked before the end, the clock now.
func TestRanUntil(t *testing.T) {
	s := newServer(testConfig(), newFakeRuntime(), &fakeStore{counts: map[int]int64{}}, nil)
	before := s.nanos()
	items := []module.Item{{}, {Ended: module.Clock()}}
	after := s.nanos()
	if end := s.ranUntil(items, 2); end < before || end > after {
		t.Errorf("ranUntil with Ended: %d, not within %d..%d", end, before, after)
	}
	items[1].Ended = 1 // long ago: a value ranUntil must not take
	for _, ran := range []int{1, 0} {
		if end := s.ranUntil(items, ran); end < after {
			t.Errorf("ranUntil(items, %d): %d, before the clock %d", ran, end, after)
		}
	}
	items[1].Ended = 0
	if end := s.ranUntil(items, 2); end < after {
		t.Errorf("ranUntil without Ended: %d, before the clock %d", end, after)
	}
}
