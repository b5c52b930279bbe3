package server

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
	"github.com/respike/respike/host/module"
)

// awaitGone waits until the server no longer lists client id: the
// connection's goroutine removes it as it ends, on its own time.
func awaitGone(t *testing.T, s *Server, id string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n := 0
		for _, c := range s.clients {
			if strconv.FormatUint(c.id, 10) == id {
				n++
			}
		}
		s.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("client %s still listed", id)
		}
		runtime.Gosched()
	}
}

// CLIENT KILL of a client whose command is still running (as one waiting
// on the store, up to its timeout) returns at once, and the client sees
// its connection end at once, though the connection's goroutine is busy
// and its reads hold the socket (rawio_linux.go); the command sees its
// client gone, even for writes; the commands pipelined after it do not
// run; the client leaves the list once the command ends.
func TestClientKillWhileCommandRuns(t *testing.T) {
	rt := newFakeRuntime()
	started := make(chan struct{})
	release := make(chan struct{})
	sawGone := make(chan bool, 1)
	var after atomic.Int64
	rt.add("test", codec.CommandInfo{Name: "fhold", Arity: 1}, func(ctx context.Context, _ *codec.Start, w *resp.Writer) {
		close(started)
		<-release
		sawGone <- module.Gone(ctx, true)
		w.OK()
	})
	rt.add("test", codec.CommandInfo{Name: "fafter", Arity: 1}, func(ctx context.Context, _ *codec.Start, w *resp.Writer) {
		after.Add(1)
		w.OK()
	})
	s, addr := startServer(t, testConfig(), rt, nil)
	victim := dial(t, addr)
	id := strings.TrimSpace(strings.TrimPrefix(victim.do("client", "id"), ":"))
	// A pipeline: the held command, then many more, in later batches too.
	victim.send(encode("fhold") + strings.Repeat(encode("fafter"), 2000))
	<-started

	killer := dial(t, addr)
	killed := make(chan string, 1)
	go func() { killed <- killer.do("client", "kill", "id", id) }()
	select {
	case got := <-killed:
		if got != ":1\r\n" {
			t.Fatalf("CLIENT KILL = %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CLIENT KILL waits for the victim's command")
	}
	victim.closed() // before the command ends
	close(release)
	if !<-sawGone {
		t.Fatal("the killed client's command does not see it gone")
	}
	awaitGone(t, s, id)
	// fhold ran in a batch of at most maxPipe module commands; none after.
	if n := after.Load(); n >= maxPipe {
		t.Fatalf("%d commands ran after the kill", n)
	}
}

// CLIENT KILL of an idle client returns at once; the client sees its
// connection end and leaves the list. (test/e2e kills blocked clients.)
func TestClientKillIdle(t *testing.T) {
	s, addr := startServer(t, testConfig(), nil, nil)
	idle := dial(t, addr)
	idleID := strings.TrimSpace(strings.TrimPrefix(idle.do("client", "id"), ":"))
	killer := dial(t, addr)
	if got := killer.do("client", "kill", "id", idleID); got != ":1\r\n" {
		t.Fatalf("CLIENT KILL = %q", got)
	}
	idle.closed()
	awaitGone(t, s, idleID)
}

// A connection's goroutines (its own and its reading coroutine's) end with
// it, whether the client closes it, is killed, or quits.
func TestConnectionGoroutinesEnd(t *testing.T) {
	s, addr := startServer(t, testConfig(), nil, nil)
	admin := dial(t, addr)
	admin.do("ping")
	before, pumpsBefore := runtime.NumGoroutine(), pumps()
	var conns []*rawConn
	for range 30 {
		c := dial(t, addr)
		c.do("ping")
		conns = append(conns, c)
	}
	if n := pumps(); n != pumpsBefore+30 {
		t.Fatalf("%d reading coroutines with 30 more connections, %d before", n, pumpsBefore)
	}
	for i, c := range conns {
		switch i % 3 {
		case 0:
			c.nc.Close()
		case 1:
			id := strings.TrimSpace(strings.TrimPrefix(c.do("client", "id"), ":"))
			if got := admin.do("client", "kill", "id", id); got != ":1\r\n" {
				t.Fatalf("CLIENT KILL = %q", got)
			}
			c.closed()
		case 2:
			c.do("quit")
			c.closed()
		}
	}
	// The connections end on their own goroutines, with no event to wait on.
	deadline := time.Now().Add(5 * time.Second)
	for s.connectedClients() > 1 || runtime.NumGoroutine() > before || pumps() > pumpsBefore {
		if time.Now().After(deadline) {
			t.Fatalf("%d clients, %d goroutines (%d reading coroutines) after the connections ended, %d (%d) before",
				s.connectedClients(), runtime.NumGoroutine(), pumps(), before, pumpsBefore)
		}
		runtime.Gosched()
	}
}

// pumps counts the reading coroutines running (rawSocket.pump).
func pumps() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "(*rawSocket).pump(")
		}
		buf = make([]byte, 2*len(buf))
	}
}
