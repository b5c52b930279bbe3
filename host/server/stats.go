package server

import (
	"sort"
	"sync"
	"sync/atomic"
)

// maxErrorCodes caps the distinct error codes INFO errorstats tracks, as
// Redis does, so that odd module errors cannot grow the table without end.
const maxErrorCodes = 128

// cmdStat counts one command's calls for INFO commandstats.
type cmdStat struct {
	calls    atomic.Int64
	nanos    atomic.Int64 // time spent, reported in microseconds
	rejected atomic.Int64 // refused before running: arity, NOAUTH
	failed   atomic.Int64 // ran and answered an error
	// hist is the run-time histogram (observe.go), made at the first run.
	hist atomic.Pointer[latencyHist]
}

func (s *cmdStat) reset() {
	s.calls.Store(0)
	s.nanos.Store(0)
	s.rejected.Store(0)
	s.failed.Store(0)
	s.hist.Store(nil)
}

// statBatch is a connection's counts for one command since its last
// flush: a pipeline updates the shared counters once per command name and
// batch, not three times per command, which under load on several cores
// costs more than a short command itself.
type statBatch struct {
	st                   *cmdStat
	calls, nanos, failed int64
}

// count adds one call of st to the connection's batch.
func (c *client) count(st *cmdStat, nanos int64, failed bool) {
	c.cmds++
	var f int64
	if failed {
		f = 1
	}
	for i := range c.stats[:c.nstats] {
		if b := &c.stats[i]; b.st == st {
			b.calls, b.nanos, b.failed = b.calls+1, b.nanos+nanos, b.failed+f
			return
		}
	}
	if c.nstats == len(c.stats) {
		c.flushStats()
	}
	c.stats[c.nstats] = statBatch{st: st, calls: 1, nanos: nanos, failed: f}
	c.nstats++
}

// flushStats adds the connection's batch to the shared counters: at the end
// of every batch of commands read, before a builtin runs (INFO must see the
// commands before it), and when the connection closes.
func (c *client) flushStats() {
	for i := range c.stats[:c.nstats] {
		b := &c.stats[i]
		b.st.calls.Add(b.calls)
		b.st.nanos.Add(b.nanos)
		if b.failed != 0 {
			b.st.failed.Add(b.failed)
		}
		*b = statBatch{}
	}
	c.nstats = 0
	if c.cmds != 0 {
		c.s.stats.totalCmds.Add(c.cmds)
		c.cmds = 0
	}
	if c.rd.nread != 0 {
		c.s.stats.netIn.Add(c.rd.nread)
		c.rd.nread = 0
	}
	if c.nwritten != 0 {
		c.s.stats.netOut.Add(c.nwritten)
		c.nwritten = 0
	}
}

// serverStats are the counters INFO reports.
type serverStats struct {
	totalConns    atomic.Int64
	rejectedConns atomic.Int64
	totalCmds     atomic.Int64
	errorReplies  atomic.Int64
	// internalErrors counts connections ended by a panic in the proxy
	// (serveConn): each is a bug to report.
	internalErrors atomic.Int64
	netIn, netOut  atomic.Int64 // bytes read from and written to clients

	builtin []cmdStat // by builtin.idx

	mu      sync.Mutex
	modules map[string]*cmdStat // module commands by name
	errors  map[string]int64    // error replies by code (ERR, WRONGTYPE, ...)
}

func (st *serverStats) init(nBuiltins int) {
	st.builtin = make([]cmdStat, nBuiltins)
	st.modules = make(map[string]*cmdStat)
	st.errors = make(map[string]int64)
}

// module returns the record of a module command, creating it.
func (st *serverStats) module(name string) *cmdStat {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.modules[name]
	if s == nil {
		s = new(cmdStat)
		st.modules[name] = s
	}
	return s
}

// countError counts an error reply by its code, the first word of msg.
func (st *serverStats) countError(msg []byte) {
	st.errorReplies.Add(1)
	end := 0
	for end < len(msg) && msg[end] != ' ' && msg[end] != '\r' && msg[end] != '\n' {
		end++
	}
	code := msg[:end]
	st.mu.Lock()
	if _, ok := st.errors[string(code)]; ok {
		st.errors[string(code)]++
	} else if len(st.errors) < maxErrorCodes {
		st.errors[string(code)] = 1
	}
	st.mu.Unlock()
}

// reset zeroes every counter but the connection totals (CONFIG RESETSTAT).
func (st *serverStats) reset() {
	st.totalConns.Store(0)
	st.rejectedConns.Store(0)
	st.totalCmds.Store(0)
	st.errorReplies.Store(0)
	st.internalErrors.Store(0)
	st.netIn.Store(0)
	st.netOut.Store(0)
	for i := range st.builtin {
		st.builtin[i].reset()
	}
	st.mu.Lock()
	for _, s := range st.modules {
		s.reset()
	}
	clear(st.errors)
	st.mu.Unlock()
}

// namedStat is a command's statistics under its full name.
type namedStat struct {
	name string
	st   *cmdStat
}

// commandStats lists the commands that were called or refused, sorted by
// name.
func (st *serverStats) commandStats() []namedStat {
	var out []namedStat
	for _, b := range builtins.all {
		s := &st.builtin[b.idx]
		if s.calls.Load() > 0 || s.rejected.Load() > 0 {
			out = append(out, namedStat{b.name, s})
		}
	}
	st.mu.Lock()
	for name, s := range st.modules {
		if s.calls.Load() > 0 || s.rejected.Load() > 0 {
			out = append(out, namedStat{name, s})
		}
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// errorCounts returns the error reply counts by code, sorted by code.
func (st *serverStats) errorCounts() []errorCount {
	st.mu.Lock()
	out := make([]errorCount, 0, len(st.errors))
	for code, n := range st.errors {
		out = append(out, errorCount{code, n})
	}
	st.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].code < out[j].code })
	return out
}

type errorCount struct {
	code string
	n    int64
}
