package server

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/store"
)

// INFO and TIME.

// infoSections are the INFO sections in Redis's order; the flag says
// whether INFO without arguments (or "default") includes the section.
var infoSections = []struct {
	name      string
	byDefault bool
}{
	{"server", true}, {"clients", true}, {"memory", true}, {"persistence", true},
	{"stats", true}, {"replication", true}, {"cpu", true}, {"modules", true}, {"commandstats", false},
	{"errorstats", true}, {"latencystats", false}, {"cluster", true}, {"keyspace", true},
}

func cmdTime(c *client, _ [][]byte) {
	now := time.Now()
	c.w.Array(2)
	c.w.BulkInt(now.Unix())
	c.w.BulkInt(int64(now.Nanosecond() / 1000))
}

// cmdInfo implements INFO [section ...]: sections by name, "default",
// "all" or "everything"; unknown names are ignored, as in Redis.
func cmdInfo(c *client, args [][]byte) {
	want := map[string]bool{}
	if len(args) == 1 {
		want["default"] = true
	}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	var b strings.Builder
	for _, sec := range infoSections {
		if !want[sec.name] && !want["all"] && !want["everything"] && !(want["default"] && sec.byDefault) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		c.s.infoSection(&b, sec.name, c)
	}
	c.w.Verbatim("txt", b.String())
}

// infoSection appends one section: a "# Title" line and key:value lines.
func (s *Server) infoSection(b *strings.Builder, name string, c *client) {
	line := func(key string, val any) { fmt.Fprintf(b, "%s:%v\r\n", key, val) }
	title := strings.ToUpper(name[:1]) + name[1:]
	if name == "cpu" {
		title = "CPU" // as Redis titles it
	}
	b.WriteString("# " + title + "\r\n")
	switch name {
	case "server":
		up := time.Since(s.started)
		exe, _ := os.Executable()
		line("redis_version", RedisVersion)
		line("respike_version", Version)
		line("redis_mode", "standalone")
		line("os", runtime.GOOS+" "+runtime.GOARCH)
		line("arch_bits", strconv.IntSize)
		line("go_version", runtime.Version())
		line("process_id", os.Getpid())
		line("run_id", s.runID)
		line("tcp_port", s.portString())
		line("server_time_usec", time.Now().UnixMicro())
		line("uptime_in_seconds", int64(up/time.Second))
		line("uptime_in_days", int64(up/(24*time.Hour)))
		line("hz", s.conf.get("hz"))
		line("configured_hz", s.conf.get("hz"))
		line("process_supervised", "no")
		line("executable", exe)
		line("config_file", s.cfg.Path)
		line("store_backend", s.cfg.Store.Backend)
	case "clients":
		line("connected_clients", s.connectedClients())
		line("maxclients", s.maxClients.Load())
		line("blocked_clients", s.blocked.Load())
		line("tracking_clients", 0)
	case "memory":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		line("used_memory", ms.HeapAlloc)
		line("used_memory_human", humanBytes(ms.HeapAlloc))
		line("used_memory_rss", ms.Sys)
		line("used_memory_rss_human", humanBytes(ms.Sys))
		// What CONFIG SET last gave: respike does not evict, Aerospike
		// bounds memory (docs/operations.md).
		maxmem, _ := strconv.ParseUint(s.conf.get("maxmemory"), 10, 64)
		line("maxmemory", maxmem)
		line("maxmemory_human", humanBytes(maxmem))
		line("maxmemory_policy", s.conf.get("maxmemory-policy"))
	case "persistence":
		line("loading", 0)
		line("async_loading", 0)
		line("rdb_changes_since_last_save", 0)
		line("rdb_bgsave_in_progress", 0)
		line("rdb_last_save_time", s.startedUnix/1e9)
		line("rdb_last_bgsave_status", "ok")
		line("aof_enabled", 0)
		line("aof_rewrite_in_progress", 0)
		line("aof_last_write_status", "ok")
	case "stats":
		line("total_connections_received", s.stats.totalConns.Load())
		line("total_commands_processed", s.stats.totalCmds.Load())
		line("rejected_connections", s.stats.rejectedConns.Load())
		line("total_net_input_bytes", s.stats.netIn.Load())
		line("total_net_output_bytes", s.stats.netOut.Load())
		line("total_error_replies", s.stats.errorReplies.Load())
		line("respike_internal_errors", s.stats.internalErrors.Load())
		if st, ok := s.st.(store.Statser); ok {
			for _, v := range st.Stats() {
				line("store_"+v.Name, v.Value)
			}
		}
	case "cpu":
		for _, kv := range cpuTimes() {
			line(kv[0], kv[1])
		}
	case "replication":
		line("role", "master")
		line("connected_slaves", 0)
		line("master_replid", s.runID)
		line("master_repl_offset", 0)
	case "modules":
		// Totals first (respike's), then Redis's one line per module, with
		// ver as Redis's integer and respike's fields after it.
		if rt, ok := s.rt.(interface{ Stats() module.Stats }); ok {
			st := rt.Stats()
			line("module_loads", st.Loads)
			line("module_swaps", st.Swaps)
			line("module_refusals", st.Refusals)
			line("module_unloads", st.Unloads)
			line("module_versions_draining", st.Draining)
			line("module_store_waits", st.Waits)
			line("module_batches", st.Batches)
			line("module_batched_commands", st.Batched)
			line("module_gate_waits", st.GateWaits)
			line("module_final_answers", st.Finals)
			line("module_final_restarts", st.Restarts)
		}
		for _, m := range s.rt.Modules() {
			v := fmt.Sprintf("name=%s,ver=%d,version=%s,path=%s,commands=%d,swaps=%d,load_usec=%d,traps=%d,deadline_kills=%d,guest_usec=%d",
				infoValue(m.Name), versionNumber(m.Version), infoValue(m.Version), infoValue(m.Path),
				len(m.Commands), m.Swaps, m.LoadDuration.Microseconds(), m.Traps, m.DeadlineKills, m.GuestTime.Microseconds())
			if m.LastError != "" {
				v += ",last_error=" + infoValue(m.LastError)
			}
			line("module", v)
		}
	case "commandstats":
		for _, ns := range s.stats.commandStats() {
			calls, usec := ns.st.calls.Load(), ns.st.nanos.Load()/1e3
			perCall := 0.0
			if calls > 0 {
				perCall = float64(usec) / float64(calls)
			}
			line("cmdstat_"+ns.name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
				calls, usec, perCall, ns.st.rejected.Load(), ns.st.failed.Load()))
		}
	case "latencystats":
		// Redis's line per command: the percentiles of
		// latency-tracking-info-percentiles, in microseconds.
		pcts := strings.Fields(s.conf.get("latency-tracking-info-percentiles"))
		for _, ns := range s.stats.commandStats() {
			h := ns.st.hist.Load()
			if h == nil || len(pcts) == 0 {
				continue
			}
			counts, total := h.snapshot()
			if total == 0 {
				continue
			}
			var parts []string
			for _, p := range pcts {
				f, _ := strconv.ParseFloat(p, 64)
				parts = append(parts, fmt.Sprintf("p%s=%.3f", p, percentile(&counts, total, f)))
			}
			line("latency_percentiles_usec_"+ns.name, strings.Join(parts, ","))
		}
	case "errorstats":
		for _, e := range s.stats.errorCounts() {
			line("errorstat_"+e.code, fmt.Sprintf("count=%d", e.n))
		}
	case "cluster":
		line("cluster_enabled", 0)
	case "keyspace":
		for db := 0; db < s.cfg.Server.Databases; db++ {
			req := codec.Request{Kind: codec.ReqCount}
			resp, errMsg := c.storeExec(db, &req)
			if errMsg != "" {
				s.log.Warn("INFO keyspace: count failed", "db", db, "err", errMsg)
				break
			}
			if resp.Count > 0 {
				line("db"+strconv.Itoa(db), fmt.Sprintf("keys=%d,expires=0,avg_ttl=0", resp.Count))
			}
		}
	}
}

// infoValue keeps a value from breaking INFO's key:value,key=value format.
func infoValue(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ',', '\r', '\n':
			return ' '
		}
		return r
	}, s)
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
