// Package metrics serves respike's Prometheus metrics, /healthz and /readyz
// on an HTTP listener of their own ([metrics] listen).
//
// Every figure is read at scrape time from counters the daemon keeps
// anyway (INFO's, the runtime's, the store's), so a scrape costs the
// command path nothing; only the store's per-request figures are measured
// for the exporter (InstrumentStore). docs/operations.md lists the names.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/respike/respike/host/fleet"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/server"
	"github.com/respike/respike/host/store"
)

// Sources are what the metrics describe. Runtime and Store may be nil.
type Sources struct {
	Server  *server.Server
	Runtime *module.Runtime
	// Store is the backend as configured (not a wrapper): its Stats,
	// Connected and ClientStats methods are used when it has them.
	Store store.Store
	// Requests are the store's per-request figures (InstrumentStore); nil
	// when the store is not instrumented.
	Requests *StoreRequests
	// Fleet deploys modules to every proxy on the store; may be nil.
	Fleet *fleet.Fleet
}

// DurationBuckets are the bounds of the command and store latency
// histograms, in seconds.
var DurationBuckets = []float64{.00001, .000025, .00005, .0001, .00025, .0005, .001, .0025, .005,
	.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Handler serves /metrics (Prometheus text format), /healthz (the process
// answers) and /readyz (modules loaded and the store reachable).
func Handler(src Sources) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(&collector{src: src})
	if src.Requests != nil {
		reg.MustRegister(src.Requests.total, src.Requests.duration)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := notReady(src); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return mux
}

// notReady says why the proxy cannot serve data commands, or "".
func notReady(src Sources) string {
	if src.Runtime != nil && len(src.Runtime.Commands()) == 0 {
		return "no module command is loaded"
	}
	if c, ok := src.Store.(interface{ Connected() bool }); ok && !c.Connected() {
		return "the store is not reachable"
	}
	return ""
}

// Serve serves h on addr until ctx ends; it returns once the listener is
// bound (or failed to bind), and stops the server when ctx is done.
func Serve(ctx context.Context, addr string, h http.Handler) (string, error) {
	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 5 * time.Second}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	go func() { _ = srv.Serve(ln) }() // ends with Shutdown below
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return ln.Addr().String(), nil
}

// collector reads the daemon's counters at each scrape.
type collector struct{ src Sources }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("respike_"+name, help, labels, nil)
}

var (
	dConnected    = desc("connected_clients", "Client connections open.")
	dBlocked      = desc("blocked_clients", "Clients waiting in a blocking command (BLPOP, BZPOPMIN, ...).")
	dConnsTotal   = desc("connections_received_total", "Client connections accepted.")
	dRejected     = desc("rejected_connections_total", "Client connections refused (maxclients).")
	dProcessed    = desc("commands_processed_total", "Commands run.")
	dErrReplies   = desc("error_replies_total", "Error replies, by error code (the reply's first word).", "code")
	dNetIn        = desc("net_input_bytes_total", "Bytes read from clients.")
	dNetOut       = desc("net_output_bytes_total", "Bytes written to clients.")
	dCalls        = desc("command_calls_total", "Calls of a command that ran.", "command")
	dFailed       = desc("command_failed_calls_total", "Calls of a command that ran and answered an error.", "command")
	dRefused      = desc("command_rejected_calls_total", "Calls of a command refused before running (arity, NOAUTH).", "command")
	dDuration     = desc("command_duration_seconds", "Run time of a command, from its turn to run to its reply.", "command")
	dModLoads     = desc("module_loads_total", "Modules that started serving where none of their name did.")
	dModSwaps     = desc("module_swaps_total", "New module versions that replaced a serving one.")
	dModRefusals  = desc("module_refusals_total", "Module files refused (the previous state kept serving).")
	dModUnloads   = desc("module_unloads_total", "Modules removed.")
	dModDraining  = desc("module_versions_draining", "Replaced or unloaded module versions still running commands.")
	dModInfo      = desc("module_info", "A loaded module: 1, with its version.", "module", "version")
	dModTraps     = desc("module_traps_total", "Module instances discarded because a call trapped or failed.", "module")
	dModKills     = desc("module_deadline_kills_total", "Module instances discarded because a call exceeded the deadline.", "module")
	dModGuest     = desc("module_guest_seconds_total", "Wall-clock time of calls into a module's instances (guest code, the store requests it runs inline, time descheduled).", "module")
	dModLogLines  = desc("module_log_lines_total", "Guest log lines a module wrote (sdk.Ctx.Log).", "module")
	dModLogDrops  = desc("module_log_dropped_total", "Guest log lines dropped by the per-module rate limit.", "module")
	dModCmdSwaps  = desc("module_version_swaps", "Swaps of a module's file, this version included.", "module")
	dStoreCounter = desc("store_calls_total", "The store's own counters (Aerospike: single_calls, batch_calls, batch_records).", "counter")
	dStoreUp      = desc("store_up", "1 when the store is reachable.")
	dFleetPolls   = desc("fleet_polls_total", "Reads of the deployed modules' index generation (MODULE DEPLOY).")
	dFleetPollErr = desc("fleet_poll_errors_total", "Reads of the deployed modules' index that failed.")
	dFleetDeploys = desc("fleet_deploys_total", "MODULE DEPLOY and UNDEPLOY run on this proxy.", "op")
	dFleetResults = desc("fleet_module_updates_total", "Deployed module versions this proxy dealt with, by outcome (loaded, refused, fetch_failed).", "result")
	dFleetBeats   = desc("fleet_heartbeats_total", "Last-seen times this proxy wrote into the fleet's status record.")
	dFleetForgot  = desc("fleet_proxies_forgotten_total", "Proxies unseen for deploy_forget_after whose states this proxy removed.")
	dFleetSwept   = desc("fleet_chunks_swept_total", "Deployed versions whose chunk records this proxy deleted: replaced, undeployed, or never committed.")
	dFleetState   = desc("fleet_module_state", "1 per deployed module: the state of its deployed version on this proxy (serving, refused, fetch_failed).", "module", "sha256", "state")
	dASClient     = desc("aerospike_client", "The Aerospike client's own figures (connections, tends, node counts), by its names.", "stat")
)

// The instances of a module and their memory (host/module/reap.go).
var (
	dModInsts    = desc("module_instances", "Instances of the serving version of a module.", "module")
	dModMemory   = desc("module_memory_bytes", "Linear memory of a module's instances, as of their last calls' ends.", "module")
	dModReleases = desc("module_instance_releases_total",
		"Instances closed to give memory back: reason idle (commands.idle_timeout) or memory (commands.recycle_memory_mib).", "module", "reason")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	bounds := make([]time.Duration, len(DurationBuckets))
	for i, b := range DurationBuckets {
		bounds[i] = time.Duration(b * float64(time.Second))
	}
	if s := c.src.Server; s != nil {
		m := s.Metrics(bounds)
		gauge(ch, dConnected, float64(m.ConnectedClients))
		gauge(ch, dBlocked, float64(m.BlockedClients))
		counter(ch, dConnsTotal, float64(m.ConnectionsReceived))
		counter(ch, dRejected, float64(m.RejectedConnections))
		counter(ch, dProcessed, float64(m.CommandsProcessed))
		counter(ch, dNetIn, float64(m.NetInputBytes))
		counter(ch, dNetOut, float64(m.NetOutputBytes))
		for code, n := range m.Errors {
			counter(ch, dErrReplies, float64(n), code)
		}
		for _, cm := range m.Commands {
			counter(ch, dCalls, float64(cm.Calls), cm.Name)
			counter(ch, dFailed, float64(cm.Failed), cm.Name)
			counter(ch, dRefused, float64(cm.Rejected), cm.Name)
			buckets := make(map[float64]uint64, len(bounds))
			for i, b := range DurationBuckets {
				buckets[b] = cm.Counts[i]
			}
			ch <- prometheus.MustNewConstHistogram(dDuration, uint64(cm.Calls), cm.Time.Seconds(), buckets, cm.Name)
		}
	}
	if rt := c.src.Runtime; rt != nil {
		st := rt.Stats()
		counter(ch, dModLoads, float64(st.Loads))
		counter(ch, dModSwaps, float64(st.Swaps))
		counter(ch, dModRefusals, float64(st.Refusals))
		counter(ch, dModUnloads, float64(st.Unloads))
		gauge(ch, dModDraining, float64(st.Draining))
		for _, m := range rt.Modules() {
			if m.Version != "" || len(m.Commands) > 0 {
				gauge(ch, dModInfo, 1, m.Name, m.Version)
			}
			counter(ch, dModTraps, float64(m.Traps), m.Name)
			counter(ch, dModKills, float64(m.DeadlineKills), m.Name)
			counter(ch, dModGuest, m.GuestTime.Seconds(), m.Name)
			counter(ch, dModLogLines, float64(m.LogLines), m.Name)
			counter(ch, dModLogDrops, float64(m.LogDropped), m.Name)
			gauge(ch, dModCmdSwaps, float64(m.Swaps), m.Name)
			gauge(ch, dModInsts, float64(m.Instances), m.Name)
			gauge(ch, dModMemory, float64(m.MemoryBytes), m.Name)
			counter(ch, dModReleases, float64(m.IdleReleases), m.Name, "idle")
			counter(ch, dModReleases, float64(m.MemoryRecycles), m.Name, "memory")
		}
	}
	if f := c.src.Fleet; f != nil {
		fc := f.Counters()
		counter(ch, dFleetPolls, float64(fc.Polls))
		counter(ch, dFleetPollErr, float64(fc.PollErrors))
		counter(ch, dFleetDeploys, float64(fc.Deploys), "deploy")
		counter(ch, dFleetDeploys, float64(fc.Undeploys), "undeploy")
		counter(ch, dFleetResults, float64(fc.Swaps), "loaded")
		counter(ch, dFleetResults, float64(fc.Refusals), "refused")
		counter(ch, dFleetResults, float64(fc.FetchFails), "fetch_failed")
		counter(ch, dFleetBeats, float64(fc.Heartbeats))
		counter(ch, dFleetForgot, float64(fc.Forgotten))
		counter(ch, dFleetSwept, float64(fc.Swept))
		for _, st := range f.Local() {
			gauge(ch, dFleetState, 1, st.Module, st.SHA256, st.State)
		}
	}
	if st, ok := c.src.Store.(store.Statser); ok {
		for _, v := range st.Stats() {
			counter(ch, dStoreCounter, float64(v.Value), v.Name)
		}
	}
	up := 1.0
	if cs, ok := c.src.Store.(interface{ Connected() bool }); ok && !cs.Connected() {
		up = 0
	}
	if c.src.Store != nil {
		gauge(ch, dStoreUp, up)
	}
	if as, ok := c.src.Store.(interface{ ClientStats() map[string]float64 }); ok {
		for k, v := range as.ClientStats() {
			gauge(ch, dASClient, v, k)
		}
	}
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
}
