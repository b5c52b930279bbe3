package server

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/respike/respike/host/module"
)

// MONITOR: every command run by any client of this proxy, streamed to the
// clients that asked, in Redis's format:
//
//	+1339518083.107412 [0 127.0.0.1:60866] "keys" "*"
//
// As in Redis, admin commands are not shown and AUTH's arguments are
// redacted. A monitor that cannot keep up (monitorQueue lines behind) is
// disconnected rather than let its backlog grow without bound. Each proxy
// streams its own clients' commands only.

// monitorQueue is the most lines a monitor may fall behind.
const monitorQueue = 1 << 16

// monitor is a client in MONITOR mode: its lines, written to its
// connection by its own goroutine.
type monitor struct {
	c     *client
	lines chan []byte
	done  chan struct{}
	once  sync.Once
	// stopped, under c.wmu, ends the writes: set by stopMonitor.
	stopped bool
}

// monitors are the clients in MONITOR mode; count is their number, the one
// load on the command path when there are none.
type monitors struct {
	mu   sync.Mutex
	list []*monitor
}

func cmdMonitor(c *client, _ [][]byte) {
	if c.monitor != nil {
		c.w.OK()
		return
	}
	// Registered before the +OK leaves, so that every command run after
	// the client sees it is streamed; its lines wait in the channel until
	// the +OK is written and the writer starts.
	m := &monitor{c: c, lines: make(chan []byte, monitorQueue), done: make(chan struct{})}
	s := c.s
	s.mons.mu.Lock()
	s.mons.list = append(s.mons.list, m)
	s.monitoring.Store(int64(len(s.mons.list)))
	s.mons.mu.Unlock()
	c.w.OK()
	if !c.flush() {
		s.stopMonitor(m)
		return
	}
	c.monitor = m
	go m.run()
}

// run writes the monitor's lines until it stops.
func (m *monitor) run() {
	for {
		select {
		case line := <-m.lines:
			m.c.wmu.Lock()
			if m.stopped {
				m.c.wmu.Unlock()
				return
			}
			_, err := m.c.conn.Write(line)
			m.c.wmu.Unlock()
			if err != nil {
				m.c.s.stopMonitor(m)
				return
			}
		case <-m.done:
			return
		}
	}
}

// endMonitor leaves MONITOR mode (RESET, or the connection closing): once
// it returns, no monitor line is written to c.
func (c *client) endMonitor() {
	if c.monitor != nil {
		c.s.stopMonitor(c.monitor)
		c.monitor = nil
	}
}

// stopMonitor takes m out of the list (RESET, disconnect, or too slow).
func (s *Server) stopMonitor(m *monitor) {
	m.once.Do(func() {
		s.mons.mu.Lock()
		if i := slices.Index(s.mons.list, m); i >= 0 {
			s.mons.list = slices.Delete(s.mons.list, i, i+1)
		}
		s.monitoring.Store(int64(len(s.mons.list)))
		s.mons.mu.Unlock()
		m.c.wmu.Lock()
		m.stopped = true
		m.c.wmu.Unlock()
		close(m.done)
	})
}

// feedMonitors sends the command args, run by c at the wall time now (unix
// ns), to every monitor, unless it is an admin command.
func (c *client) feedMonitors(b *builtin, m *module.Command, args [][]byte, now int64) {
	if b != nil && slices.Contains(b.flags, "admin") {
		return
	}
	if m != nil && slices.Contains(m.Info.Flags, "admin") {
		return
	}
	line := monitorLine(now, c.db, c.addr, args)
	s := c.s
	s.mons.mu.Lock()
	list := slices.Clone(s.mons.list)
	s.mons.mu.Unlock()
	for _, mon := range list {
		select {
		case mon.lines <- line:
		default:
			s.log.Warn("MONITOR client too slow: disconnected", "client", mon.c.id, "addr", mon.c.addr)
			s.stopMonitor(mon)
			mon.c.hangUp()
		}
	}
}

// monitorLine formats one MONITOR line as Redis does.
func monitorLine(now int64, db int, addr string, args [][]byte) []byte {
	t := time.Unix(0, now)
	b := make([]byte, 0, 64)
	b = append(b, '+')
	b = strconv.AppendInt(b, t.Unix(), 10)
	b = append(b, '.')
	us := strconv.Itoa(t.Nanosecond() / 1000)
	b = append(b, strings.Repeat("0", 6-len(us))...)
	b = append(b, us...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, ' ')
	b = append(b, addr...)
	b = append(b, ']')
	for i, a := range args {
		b = append(b, ' ')
		if i > 0 && redactedForMonitor(args, i) {
			b = append(b, `"(redacted)"`...)
			continue
		}
		b = appendRepr(b, a)
	}
	return append(b, '\r', '\n')
}

// redactedForMonitor: AUTH's arguments and HELLO's AUTH pair, as Redis
// hides them from MONITOR.
func redactedForMonitor(args [][]byte, i int) bool {
	switch strings.ToLower(string(args[0])) {
	case "auth", "hello":
		return redacted(args, i)
	}
	return false
}

// appendRepr quotes a as Redis's sdscatrepr does.
func appendRepr(b, a []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range a {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch >= 0x20 && ch < 0x7f {
				b = append(b, ch)
			} else {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(b, '"')
}
