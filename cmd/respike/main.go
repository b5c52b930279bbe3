// Command respike is a Redis-protocol proxy whose commands are WebAssembly
// modules. It reads proxy.toml (or the file given with -config), opens the
// configured store, loads the command modules and serves RESP clients.
//
// The commands folder is watched: a .wasm file dropped, replaced or removed
// there is loaded, swapped in or unloaded while clients keep being served
// (write a new file under a name starting with a dot, then rename it into
// place). Signals: SIGINT and SIGTERM stop it gracefully; SIGHUP reconciles
// the commands folder again (unchanged modules are not recompiled, refused
// ones are retried).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/respike/respike/host/block"
	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/fleet"
	"github.com/respike/respike/host/metrics"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/server"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/aerospike"
	"github.com/respike/respike/host/store/memory"
	"github.com/respike/respike/host/watch"
)

// defaultConfig is read when -config is not given and the file exists.
const defaultConfig = "proxy.toml"

func main() {
	configPath := flag.String("config", "", "configuration file (default "+defaultConfig+" if it exists, else built-in defaults)")
	listen := flag.String("listen", "", "address to serve, host:port (overrides [server] listen)")
	flag.Parse()

	cfg, err := loadConfig(*configPath, *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "respike:", err)
		os.Exit(2)
	}
	if cfg.Server.Procs > 0 {
		runtime.GOMAXPROCS(cfg.Server.Procs)
	}
	logLevelVar.Set(logLevel(cfg.Log.Level))
	log := newLogger(cfg.Log, os.Stderr)
	// Every line goes through it: code that logs to slog's default, and
	// the Aerospike client's own log.
	slog.SetDefault(log)
	aerospike.RouteClientLog(log, logLevelVar.Level())
	// Catch signals first: loading modules can take seconds, and SIGHUP's
	// default action would end the process.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	if err := run(cfg, log, sigs, nil); err != nil {
		log.Error("respike stopped", "err", err)
		os.Exit(1)
	}
}

// newLogger makes the daemon's structured logger: text or JSON lines on w,
// at logLevelVar.
func newLogger(cfg config.Log, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: &logLevelVar}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// logLevelVar is the daemon's log level, which CONFIG SET loglevel changes.
var logLevelVar slog.LevelVar

// loadConfig reads the configuration and applies the -listen override.
func loadConfig(path, listen string) (config.Config, error) {
	cfg := config.Defaults()
	if path == "" {
		if _, err := os.Stat(defaultConfig); err == nil {
			path = defaultConfig
		}
	}
	if path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return cfg, err
		}
	}
	if listen != "" {
		cfg.Server.Listen = listen
		if err := cfg.Validate(); err != nil {
			return cfg, fmt.Errorf("-listen: %w", err)
		}
	}
	return cfg, nil
}

func logLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// run serves until SIGINT or SIGTERM arrives on sigs; SIGHUP reconciles
// the commands folder. ready, if not nil, is called with the address served
// once the modules are loaded and the listener is open.
func run(cfg config.Config, log *slog.Logger, sigs <-chan os.Signal, ready func(addr string)) error {
	ctx := context.Background()
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	raw := st
	var requests *metrics.StoreRequests
	if cfg.Metrics.Listen != "" && !st.Inline() {
		// Per-request store figures, where a request is a network round
		// trip (Aerospike): two clock reads are nothing beside it.
		st, requests = metrics.InstrumentStore(st)
	}
	// Every write of the runtime's commands goes through the registry of
	// blocked clients, which wakes those waiting on the key written.
	reg := block.New(st, block.Options{PollInterval: cfg.Server.BlockPollInterval.D(), Logger: log})

	rt, err := module.New(ctx, module.Config{
		Dir:            cfg.Commands.Dir,
		CacheDir:       cfg.Commands.ResolvedCacheDir(),
		Instances:      cfg.Commands.Instances,
		Deadline:       cfg.Commands.Deadline.D(),
		MemoryLimitMiB: cfg.Commands.MemoryLimitMiB,
		IdleTimeout:    cfg.Commands.IdleTimeout.D(),
		RecycleMiB:     cfg.Commands.RecycleMemoryMiB,
		Reserved:       server.IsBuiltin,
		Databases:      cfg.Server.Databases,
		Logger:         log,
	}, reg)
	if err != nil {
		return fmt.Errorf("module runtime: %w", err)
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := rt.Close(closeCtx); err != nil {
			log.Warn("closing the module runtime", "err", err)
		}
	}()

	// The watcher loads the folder before the server starts, then keeps
	// the runtime in step with it: it swaps in new and changed files and
	// unloads removed ones. It stops before the runtime closes.
	w := watch.New(cfg.Commands.Dir, rt, log, 0)
	rescan(ctx, w, cfg.Commands.Dir, log)
	watchCtx, stopWatching := context.WithCancel(ctx)
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		if err := w.Run(watchCtx); err != nil {
			log.Warn("not watching the commands folder: changes load on SIGHUP only", "err", err)
		}
	}()
	defer func() {
		stopWatching()
		<-watching
	}()

	// Modules deployed to the fleet (MODULE DEPLOY on any proxy on the
	// store) serve before the listener opens, then are polled for.
	proxyName := cfg.Commands.DeployProxyName
	if proxyName == "" {
		proxyName = fleet.DefaultProxyName(cfg.Server.Listen)
	}
	fcfg := fleet.Config{Proxy: proxyName, Poll: cfg.Commands.DeployPollInterval.D(),
		ChunkBytes: cfg.ChunkBytes(), Dir: cfg.Commands.Dir, Logger: log,
		Heartbeat: cfg.Commands.DeployHeartbeatInterval.D(), StaleAfter: cfg.Commands.DeployStaleAfter.D(),
		ForgetAfter: cfg.Commands.DeployForgetAfter.D()}
	if fcfg.Heartbeat == 0 {
		fcfg.Heartbeat = -1 // off
	}
	if fcfg.ForgetAfter == 0 {
		fcfg.ForgetAfter = -1 // never
	}
	fl, err := fleet.New(st, rt, fcfg)
	if err != nil {
		return err
	}
	defer fl.Close()
	defer func() {
		// A clean stop leaves the fleet: MODULE FLEET no longer lists
		// this proxy.
		lctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := fl.Leave(lctx); err != nil {
			log.Warn("fleet states not removed at shutdown", "err", err)
		}
	}()
	fl.Sync(ctx)
	fleetCtx, stopFleet := context.WithCancel(ctx)
	fleetDone := make(chan struct{})
	go func() { defer close(fleetDone); fl.Run(fleetCtx) }()
	defer func() {
		stopFleet()
		<-fleetDone
	}()

	srv := server.New(cfg, rt, reg, log)
	srv.SetLogLevel(&logLevelVar)
	srv.SetFleet(fl)
	var tlsSetup *server.TLS
	if cfg.TLS.Listen != "" {
		if tlsSetup, err = server.NewTLS(cfg.TLS); err != nil {
			return err
		}
	}
	if cfg.Metrics.Listen != "" {
		mctx, stopMetrics := context.WithCancel(ctx)
		defer stopMetrics()
		addr, err := metrics.Serve(mctx, cfg.Metrics.Listen,
			metrics.Handler(metrics.Sources{Server: srv, Runtime: rt, Store: raw, Requests: requests, Fleet: fl}))
		if err != nil {
			return err
		}
		log.Info("serving metrics", "addr", addr, "paths", "/metrics /healthz /readyz")
	}
	// The listeners: plain ([server] listen) and TLS ([tls] listen), one
	// or both. served receives each one's end.
	served := make(chan error, 2)
	listeners := 0
	addr := ""
	if cfg.TLS.Listen != "" {
		tln, err := net.Listen("tcp", cfg.TLS.Listen)
		if err != nil {
			return err
		}
		addr = tln.Addr().String()
		log.Info("serving TLS", "addr", addr, "auth_clients", cfg.TLS.AuthClients)
		listeners++
		go func() { served <- srv.ServeTLS(tln, tlsSetup) }()
	}
	if cfg.Server.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Server.Listen)
		if err != nil {
			_ = srv.Close()
			return err
		}
		addr = ln.Addr().String()
		listeners++
		go func() { served <- srv.Serve(ln) }()
	}
	log.Info("respike ready", "addr", addr, "store", cfg.Store.Backend,
		"commands", len(rt.Commands()), "config", cfg.Path, "version", server.Version)
	if ready != nil {
		ready(addr)
	}

	for {
		select {
		case err := <-served:
			_ = srv.Close() // one listener failed: stop the other too
			return err
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				log.Info("SIGHUP: reconciling the commands folder", "dir", cfg.Commands.Dir)
				rescan(ctx, w, cfg.Commands.Dir, log)
				if tlsSetup != nil {
					if err := tlsSetup.Reload(); err != nil {
						log.Error("SIGHUP: TLS files not reloaded; the previous ones stay in use", "err", err)
					} else {
						log.Info("SIGHUP: TLS certificate files reloaded", "cert_file", cfg.TLS.CertFile)
					}
				}
				continue
			}
			log.Info("stopping", "signal", sig.String())
			err := srv.Close()
			for ; listeners > 0; listeners-- {
				<-served
			}
			if err != nil {
				return fmt.Errorf("graceful stop: %w", err)
			}
			return nil
		}
	}
}

// rescan reconciles the commands folder: new and changed modules load,
// refused ones are retried, unchanged ones are left serving. A missing
// folder leaves respike serving its built-in commands only.
func rescan(ctx context.Context, w *watch.Watcher, dir string, log *slog.Logger) {
	if err := w.Rescan(ctx); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			log.Warn("commands folder missing: serving built-in commands only; run `make commands`", "dir", dir)
			return
		}
		log.Error("loading the commands folder", "dir", dir, "err", err)
	}
}

// openStore opens the configured backend.
func openStore(ctx context.Context, cfg config.Config, log *slog.Logger) (store.Store, error) {
	switch cfg.Store.Backend {
	case "memory":
		return memory.New(memory.Options{Databases: cfg.Server.Databases}), nil
	case "aerospike":
		st, err := openAerospike(ctx, cfg.Aerospike, log)
		if err != nil {
			return nil, fmt.Errorf("aerospike: %w", err)
		}
		return st, nil
	}
	return nil, fmt.Errorf("unknown store backend %q", cfg.Store.Backend)
}
