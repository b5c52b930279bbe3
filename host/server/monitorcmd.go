package server

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SLOWLOG and LATENCY: the views of what observe.go records.

// cmdSlowlogGet implements SLOWLOG GET [count]: the newest count entries
// (10 by default, all with -1).
func cmdSlowlogGet(c *client, args [][]byte) {
	if len(args) > 3 {
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(args[1]) + "'. Try SLOWLOG HELP.")
		return
	}
	count := int64(10)
	if len(args) == 3 {
		n, err := strconv.ParseInt(string(args[2]), 10, 64)
		if err != nil || n < -1 {
			c.w.Error("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	sl := &c.s.slowlog
	sl.mu.Lock()
	entries := sl.entries
	if count >= 0 && int64(len(entries)) > count {
		entries = entries[:count]
	}
	entries = append([]slowEntry(nil), entries...)
	sl.mu.Unlock()
	c.w.Array(len(entries))
	for _, e := range entries {
		c.w.Array(6)
		c.w.Int(e.id)
		c.w.Int(e.unix)
		c.w.Int(e.usec)
		c.w.Array(len(e.args))
		for _, a := range e.args {
			c.w.BulkString(a)
		}
		c.w.BulkString(e.addr)
		c.w.BulkString(e.name)
	}
}

func cmdSlowlogLen(c *client, _ [][]byte) {
	c.s.slowlog.mu.Lock()
	n := len(c.s.slowlog.entries)
	c.s.slowlog.mu.Unlock()
	c.w.Int(int64(n))
}

func cmdSlowlogReset(c *client, _ [][]byte) {
	c.s.slowlog.mu.Lock()
	c.s.slowlog.entries = nil
	c.s.slowlog.mu.Unlock()
	c.w.OK()
}

func cmdSlowlogHelp(c *client, _ [][]byte) {
	writeHelp(c, "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
		"HELP",
		"    Prints this help.")
}

// cmdLatencyLatest implements LATENCY LATEST: per event, its latest
// sample's time and milliseconds and its worst.
func cmdLatencyLatest(c *client, _ [][]byte) {
	lm := &c.s.latency
	lm.mu.Lock()
	type row struct {
		name           string
		unix, ms, high int64
	}
	var rows []row
	for name, e := range lm.events {
		h := e.history()
		if len(h) == 0 {
			continue
		}
		last := h[len(h)-1]
		rows = append(rows, row{name, last.unix, last.ms, e.max})
	}
	lm.mu.Unlock()
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	c.w.Array(len(rows))
	for _, r := range rows {
		c.w.Array(4)
		c.w.BulkString(r.name)
		c.w.Int(r.unix)
		c.w.Int(r.ms)
		c.w.Int(r.high)
	}
}

// cmdLatencyHistory implements LATENCY HISTORY event: its samples, oldest
// first, as [time, milliseconds] pairs.
func cmdLatencyHistory(c *client, args [][]byte) {
	lm := &c.s.latency
	lm.mu.Lock()
	var h []latencySample
	if e := lm.events[string(args[2])]; e != nil {
		h = e.history()
	}
	lm.mu.Unlock()
	c.w.Array(len(h))
	for _, smp := range h {
		c.w.Array(2)
		c.w.Int(smp.unix)
		c.w.Int(smp.ms)
	}
}

// cmdLatencyReset implements LATENCY RESET [event ...]: it answers the
// number of events it reset.
func cmdLatencyReset(c *client, args [][]byte) {
	lm := &c.s.latency
	lm.mu.Lock()
	n := 0
	if len(args) == 2 {
		n = len(lm.events)
		lm.events = nil
	} else {
		for _, a := range args[2:] {
			if _, ok := lm.events[string(a)]; ok {
				delete(lm.events, string(a))
				n++
			}
		}
	}
	lm.mu.Unlock()
	c.w.Int(int64(n))
}

// cmdLatencyGraph implements LATENCY GRAPH event: the event's samples as
// a column chart, oldest left, with its worst and latest, in Redis's
// spirit (its exact drawing is not reproduced).
func cmdLatencyGraph(c *client, args [][]byte) {
	event := string(args[2])
	lm := &c.s.latency
	lm.mu.Lock()
	var h []latencySample
	var high int64
	if e := lm.events[event]; e != nil {
		h, high = e.history(), e.max
	}
	lm.mu.Unlock()
	if len(h) == 0 {
		c.w.Error("ERR No samples available for event '" + event + "'")
		return
	}
	var b strings.Builder
	last := h[len(h)-1]
	fmt.Fprintf(&b, "%s - high %d ms, low %d ms (all time high %d ms)\n", event, maxSample(h), minSample(h), high)
	b.WriteString(strings.Repeat("-", 80) + "\n")
	const rows = 4
	top := max(maxSample(h), 1)
	for r := rows; r >= 1; r-- {
		for _, smp := range h {
			if smp.ms*rows >= top*int64(r) {
				b.WriteByte('#')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "latest: %d ms, %s\n", last.ms, time.Unix(last.unix, 0).UTC().Format(time.RFC3339))
	c.w.Verbatim("txt", b.String())
}

func maxSample(h []latencySample) int64 {
	m := int64(0)
	for _, s := range h {
		m = max(m, s.ms)
	}
	return m
}

func minSample(h []latencySample) int64 {
	m := h[0].ms
	for _, s := range h {
		m = min(m, s.ms)
	}
	return m
}

// cmdLatencyDoctor implements LATENCY DOCTOR: Redis's sentences when the
// monitor is off or saw nothing, else a short report per event.
func cmdLatencyDoctor(c *client, _ [][]byte) {
	if c.s.latencyThreshold.Load() == 0 {
		c.w.Verbatim("txt", "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. "+
			"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. "+
			"If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
		return
	}
	lm := &c.s.latency
	lm.mu.Lock()
	var b strings.Builder
	names := make([]string, 0, len(lm.events))
	for name := range lm.events {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		e := lm.events[name]
		h := e.history()
		var sum int64
		for _, s := range h {
			sum += s.ms
		}
		avg := int64(0)
		if len(h) > 0 {
			avg = sum / int64(len(h))
		}
		fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, worst %dms).\n", i+1, name, len(h), avg, e.max)
	}
	lm.mu.Unlock()
	if b.Len() == 0 {
		c.w.Verbatim("txt", "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. "+
			"I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
		return
	}
	c.w.Verbatim("txt", "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n"+
		b.String()+"\nCommands slower than latency-monitor-threshold are the events above: SLOWLOG GET names them.\n")
}

// cmdLatencyHistogram implements LATENCY HISTOGRAM [command ...]: for each
// command called (all, or those named), its calls and the cumulative
// distribution of its run times by powers of two of microseconds.
func cmdLatencyHistogram(c *client, args [][]byte) {
	type row struct {
		name string
		st   *cmdStat
	}
	var rows []row
	all := c.s.stats.commandStats()
	if len(args) == 2 {
		for _, ns := range all {
			rows = append(rows, row{ns.name, ns.st})
		}
	} else {
		seen := map[string]bool{}
		for _, a := range args[2:] {
			name := strings.ToLower(string(a))
			for _, ns := range all {
				if ns.name == name && !seen[name] {
					rows = append(rows, row{ns.name, ns.st})
					seen[name] = true
				}
			}
		}
	}
	type out struct {
		name       string
		calls      int64
		keys, cums []int64
	}
	var outs []out
	for _, r := range rows {
		h := r.st.hist.Load()
		if h == nil {
			continue
		}
		counts, total := h.snapshot()
		if total == 0 {
			continue
		}
		keys, cums := powerSteps(&counts, total)
		outs = append(outs, out{r.name, total, keys, cums})
	}
	c.w.Map(len(outs))
	for _, o := range outs {
		c.w.BulkString(o.name)
		c.w.Map(2)
		c.w.BulkString("calls")
		c.w.Int(o.calls)
		c.w.BulkString("histogram_usec")
		c.w.Map(len(o.keys))
		for i := range o.keys {
			c.w.Int(o.keys[i])
			c.w.Int(o.cums[i])
		}
	}
}

func cmdLatencyHelp(c *client, _ [][]byte) {
	writeHelp(c, "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
		"HELP",
		"    Prints this help.")
}
