package server

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respike/respike/host/module"
)

// What a command's run time feeds besides INFO commandstats: its latency
// histogram (INFO latencystats, LATENCY HISTOGRAM), the slow log (SLOWLOG)
// and the latency monitor's events (LATENCY LATEST/HISTORY), each with
// Redis's parameters (latency-tracking, slowlog-log-slower-than,
// slowlog-max-len, latency-monitor-threshold).
//
// The cost on the command path is one atomic add into the histogram and
// one atomic load compared with the lower of the two thresholds: the slow
// log and the monitor do their work only for the commands over it.

// histSub is the number of sub-buckets per power of two of nanoseconds: a
// percentile is known within 1/8 of its value, and a histogram is 4 KiB,
// made for a command when it is first called.
const (
	histSubBits = 3
	histSub     = 1 << histSubBits
	histBuckets = 64 * histSub
)

// latencyHist counts a command's run times by bucket.
type latencyHist struct {
	b [histBuckets]atomic.Int64
}

// histIndex is the bucket of a duration in nanoseconds.
func histIndex(ns int64) int {
	if ns < 1 {
		ns = 1
	}
	n := bits.Len64(uint64(ns)) // ns in [2^(n-1), 2^n)
	if n <= histSubBits {
		return (n - 1) * histSub
	}
	sub := int(uint64(ns)>>(n-1-histSubBits)) & (histSub - 1)
	return (n-1)*histSub + sub
}

// histUpper is the largest duration bucket i holds.
func histUpper(i int) int64 {
	n, sub := i/histSub+1, int64(i%histSub)
	if n <= histSubBits {
		return int64(1)<<n - 1
	}
	width := int64(1) << (n - 1 - histSubBits)
	return int64(1)<<(n-1) + (sub+1)*width - 1
}

// record adds one run of ns nanoseconds to st's histogram.
func (st *cmdStat) record(ns int64) {
	h := st.hist.Load()
	if h == nil {
		h = new(latencyHist)
		if !st.hist.CompareAndSwap(nil, h) {
			h = st.hist.Load()
		}
	}
	h.b[histIndex(ns)].Add(1)
}

// snapshot copies the histogram's counts and their total.
func (h *latencyHist) snapshot() (counts [histBuckets]int64, total int64) {
	for i := range h.b {
		counts[i] = h.b[i].Load()
		total += counts[i]
	}
	return counts, total
}

// percentile is the run time, in microseconds, under which p percent of
// the runs fall: the upper end of the bucket that holds that rank.
func percentile(counts *[histBuckets]int64, total int64, p float64) float64 {
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(total)))
	rank = max(rank, 1)
	var seen int64
	for i, n := range counts {
		seen += n
		if seen >= rank {
			return float64(histUpper(i)+1) / 1e3
		}
	}
	return float64(histUpper(histBuckets-1)) / 1e3
}

// powerSteps is LATENCY HISTOGRAM's cumulative distribution: for each
// power of two of nanoseconds from 1024 on where runs were added, the
// number of runs up to it, keyed as Redis keys it (its HdrHistogram's
// highest equivalent value of 2^k, in microseconds: 1, 2, 4, 8, 16, 33,
// 66, ...).
func powerSteps(counts *[histBuckets]int64, total int64) (keys, cum []int64) {
	var seen, last int64
	next := 0 // counts[:next] are in seen
	for k := 10; k < 64 && last < total; k++ {
		// Runs under 2^k nanoseconds: the buckets of powers below k.
		for ; next < k*histSub && next < histBuckets; next++ {
			seen += counts[next]
		}
		if seen > last {
			keys = append(keys, (int64(1)<<k+int64(1)<<(k-7)-1)/1000)
			cum = append(cum, seen)
			last = seen
		}
	}
	return keys, cum
}

// slowEntry is one SLOWLOG entry.
type slowEntry struct {
	id   int64
	unix int64
	usec int64
	args []string
	addr string
	name string
}

// slowLog is the slow log: newest first, at most slowlog-max-len entries.
type slowLog struct {
	mu      sync.Mutex
	entries []slowEntry
	nextID  int64
}

// latencyEvent is one event class of the latency monitor: the last 160
// samples, at most one per second (the worst), and the worst ever.
type latencyEvent struct {
	samples [160]latencySample
	idx     int
	max     int64
}

type latencySample struct {
	unix, ms int64
}

// latencyMonitor keeps the events by name ("command", "fast-command").
type latencyMonitor struct {
	mu     sync.Mutex
	events map[string]*latencyEvent
}

// Limits of a slow log entry's arguments, as Redis's.
const (
	slowMaxArgs = 32
	slowMaxArg  = 128
)

// refreshSlowFloor recomputes the lowest run time, in nanoseconds, that
// the slow log or the latency monitor want to see.
func (s *Server) refreshSlowFloor() {
	floor := int64(math.MaxInt64)
	if us := s.slowlogThreshold.Load(); us >= 0 {
		floor = us * 1e3
	}
	if ms := s.latencyThreshold.Load(); ms > 0 {
		floor = min(floor, ms*1e6)
	}
	s.slowFloor.Store(floor)
}

// observe records one command's run of ns nanoseconds: the histogram of
// st, then, for a run over the floor, the slow log and the latency
// monitor.
func (c *client) observe(st *cmdStat, b *builtin, m *module.Command, args [][]byte, ns int64) {
	s := c.s
	if s.latencyTracking.Load() {
		st.record(ns)
	}
	if ns < s.slowFloor.Load() {
		return
	}
	if us := s.slowlogThreshold.Load(); us >= 0 && ns >= us*1e3 {
		c.slowlogAdd(args, ns)
	}
	if ms := s.latencyThreshold.Load(); ms > 0 && ns >= ms*1e6 {
		event := "command"
		if (b != nil && slices.Contains(b.flags, "fast")) || (m != nil && slices.Contains(m.Info.Flags, "fast")) {
			event = "fast-command"
		}
		s.latency.add(event, time.Now().Unix(), ns/1e6)
	}
}

// slowlogAdd adds an entry for args, with Redis's limits (32 arguments,
// 128 bytes each) and its redaction of passwords.
func (c *client) slowlogAdd(args [][]byte, ns int64) {
	n := min(len(args), slowMaxArgs)
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		if i == slowMaxArgs-1 && len(args) > slowMaxArgs {
			out = append(out, "... ("+strconv.Itoa(len(args)-slowMaxArgs+1)+" more arguments)")
			break
		}
		a := args[i]
		switch {
		case redacted(args, i):
			out = append(out, "(redacted)")
		case len(a) > slowMaxArg:
			out = append(out, string(a[:slowMaxArg])+"... ("+strconv.Itoa(len(a)-slowMaxArg)+" more bytes)")
		default:
			out = append(out, string(a))
		}
	}
	c.mu.Lock()
	name := c.info.name
	c.mu.Unlock()
	s := c.s
	max := s.slowlogMax.Load()
	sl := &s.slowlog
	sl.mu.Lock()
	defer sl.mu.Unlock()
	e := slowEntry{id: sl.nextID, unix: time.Now().Unix(), usec: ns / 1e3, args: out, addr: c.addr, name: name}
	sl.nextID++
	sl.entries = append([]slowEntry{e}, sl.entries...)
	if int64(len(sl.entries)) > max {
		sl.entries = sl.entries[:max]
	}
}

// redacted reports whether argument i of a command is a secret Redis keeps
// out of the slow log: AUTH's arguments, HELLO's AUTH pair, ACL SETUSER's
// rules, and the value of CONFIG SET requirepass or masterauth.
func redacted(args [][]byte, i int) bool {
	if i == 0 {
		return false
	}
	switch strings.ToLower(string(args[0])) {
	case "auth":
		return true
	case "hello":
		for j := 2; j+2 < len(args); j++ {
			if strings.EqualFold(string(args[j]), "auth") && (i == j+1 || i == j+2) {
				return true
			}
		}
	case "acl":
		// ACL SETUSER: Redis 7.0 redacts the user and its rules (passwords).
		return i >= 2 && strings.EqualFold(string(args[1]), "setuser")
	case "config":
		if i >= 3 && i%2 == 1 && len(args) > 1 && strings.EqualFold(string(args[1]), "set") {
			p := byName[strings.ToLower(string(args[i-1]))]
			return p != nil && p.sensitive
		}
	}
	return false
}

// add records a sample of ms milliseconds at unix for event: within the
// same second as the last sample, the worst of the two stays.
func (lm *latencyMonitor) add(event string, unix, ms int64) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if lm.events == nil {
		lm.events = map[string]*latencyEvent{}
	}
	e := lm.events[event]
	if e == nil {
		e = new(latencyEvent)
		lm.events[event] = e
	}
	e.max = max(e.max, ms)
	prev := &e.samples[(e.idx+len(e.samples)-1)%len(e.samples)]
	if prev.unix == unix {
		prev.ms = max(prev.ms, ms)
		return
	}
	e.samples[e.idx] = latencySample{unix: unix, ms: ms}
	e.idx = (e.idx + 1) % len(e.samples)
}

// history lists an event's samples, oldest first.
func (e *latencyEvent) history() []latencySample {
	var out []latencySample
	for k := 0; k < len(e.samples); k++ {
		smp := e.samples[(e.idx+k)%len(e.samples)]
		if smp.unix != 0 {
			out = append(out, smp)
		}
	}
	return out
}
