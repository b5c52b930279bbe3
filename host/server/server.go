// Package server is respike's RESP front end: it accepts Redis clients,
// parses their requests with its own zero-copy reader (reader.go), keeps each connection's state
// (database, protocol version, authentication, name, transaction), answers
// connection and server commands itself, and hands every other command to
// the module runtime, writing the module's RESP reply back untouched.
//
// Commands of one connection run one after another on the connection's
// goroutine, so pipelined replies come back in request order.
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/block"
	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/fleet"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/store"
)

// Version is respike's version, reported by INFO server.
const Version = "0.1.0"

// RedisVersion is the Redis version respike reports to clients (HELLO,
// INFO): the release whose behaviour it follows.
const RedisVersion = "7.2.0"

// defaultShutdownTimeout bounds Close when the config gives no bound.
const defaultShutdownTimeout = 5 * time.Second

// adminTimeout bounds the store requests of the host's own commands (DBSIZE,
// FLUSHDB, INFO keyspace), so that a store that is down answers an error
// instead of holding the connection.
const adminTimeout = 10 * time.Second

// commandRuntime is what the server needs of the module runtime; an
// interface so that tests can serve fake commands without WebAssembly.
type commandRuntime interface {
	Lookup(name []byte) *module.Command
	LookupCached(lc *module.LookupCache, name []byte) *module.Command
	Commands() []*module.Command
	Modules() []module.ModuleInfo
	Exec(ctx context.Context, cmd *module.Command, start *codec.Start, out []byte) []byte
	ExecBlock(ctx context.Context, cmd *module.Command, start *codec.Start, out []byte, blk *module.Block) []byte
	ExecBatch(ctx context.Context, items []module.Item, out []byte, blk *module.Block) []byte
	Load(ctx context.Context, path string) (module.ModuleInfo, error)
	Unload(name string) error
}

// Server serves the Redis protocol. Create it with New.
type Server struct {
	cfg config.Config
	rt  commandRuntime
	st  store.Store
	// reg keeps the clients blocked in a blocking command (blocking.go);
	// blocked counts them, for INFO.
	reg     *block.Registry
	blocked atomic.Int64
	// fleet deploys modules to every proxy on the store (fleetcmd.go);
	// nil when the daemon runs none.
	fleet atomic.Pointer[fleet.Fleet]
	log   *slog.Logger
	// The live CONFIG parameters (configcmd.go): CONFIG SET changes them
	// while clients read them.
	password   atomic.Pointer[string]
	idle       atomic.Int64 // nanoseconds; 0 = never
	maxBulk    atomic.Int64
	maxClients atomic.Int64
	// logLevel, when set (SetLogLevel), is the level CONFIG SET loglevel
	// changes; conf remembers the other parameters CONFIG SET accepts.
	logLevel *slog.LevelVar
	conf     configStore

	// The slow log and the latency monitor (observe.go), with their
	// thresholds (slowlogThreshold in microseconds, -1 off;
	// latencyThreshold in milliseconds, 0 off) and slowFloor, the lower
	// of the two in nanoseconds, the one compare on the command path.
	slowlog          slowLog
	latency          latencyMonitor
	slowlogThreshold atomic.Int64
	slowlogMax       atomic.Int64
	latencyThreshold atomic.Int64
	slowFloor        atomic.Int64
	latencyTracking  atomic.Bool
	// protectedMode: with no password, refuse clients from outside the
	// loopback interface, as Redis's protected-mode.
	protectedMode atomic.Bool

	// ACL users (acl.go, aclcheck.go): aclGen counts changes of the
	// users, aclRestricted says some user has command or key limits (so
	// commands are checked), initErr is a bad [acl] configuration, which
	// Serve reports.
	acl           aclState
	aclGen        atomic.Uint64
	aclRestricted atomic.Bool
	initErr       error

	// MONITOR clients (monitor.go); monitoring is their number.
	mons       monitors
	monitoring atomic.Int64
	runID      string
	started    time.Time
	// startedUnix is started in unix nanoseconds: with nanos, the wall
	// time of a command from one monotonic clock read.
	startedUnix int64
	// clockOff is started on the module runtime's clock (module.Clock):
	// a reading r of that clock is r - clockOff on nanos's.
	clockOff int64
	// wall is the wall clock's offset from nanos's clock, as last read
	// (wallOffset).
	wall atomic.Pointer[wallReading]

	// ctx is cancelled when a shutdown runs out of time: module commands
	// still running are then cancelled.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	clients   map[uint64]*client
	closing   atomic.Bool // set under mu
	conns     sync.WaitGroup
	nextID    atomic.Uint64
	port      atomic.Int64 // port of the plain listener, for INFO and CONFIG GET
	tlsPort   atomic.Int64 // port of the TLS listener (ServeTLS)

	stats serverStats
}

// New creates a server for cfg that runs module commands on rt and keyspace
// commands (DBSIZE, FLUSHDB, FLUSHALL, INFO keyspace) on st. A nil rt serves
// the built-in commands only.
//
// Blocked clients are kept in st when it is a *block.Registry, the store rt
// runs its commands on, so that every write through rt wakes them. On any
// other store the server makes a registry of its own, which sees only what
// its poll reads ([server] block_poll_interval).
func New(cfg config.Config, rt *module.Runtime, st store.Store, logger *slog.Logger) *Server {
	var r commandRuntime = noModules{}
	if rt != nil {
		r = rt
	}
	return newServer(cfg, r, st, logger)
}

func newServer(cfg config.Config, rt commandRuntime, st store.Store, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var id [20]byte
	_, _ = rand.Read(id[:])
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now()
	s := &Server{
		cfg:         cfg,
		rt:          rt,
		st:          st,
		log:         logger,
		runID:       hex.EncodeToString(id[:]),
		started:     now,
		startedUnix: now.UnixNano(),
		clockOff:    int64(now.Sub(module.Epoch())),
		ctx:         ctx,
		cancel:      cancel,
		listeners:   make(map[net.Listener]struct{}),
		clients:     make(map[uint64]*client),
	}
	s.password.Store(&cfg.Server.Password)
	users := make([]ConfigUser, len(cfg.ACL.Users))
	for i, u := range cfg.ACL.Users {
		users[i] = ConfigUser{Name: u.Name, Rules: u.Rules}
	}
	if err := s.initACL(cfg.Server.Password, users); err != nil {
		s.initErr = fmt.Errorf("[acl] users: %w", err)
		s.setUsers(aclTable{"default": defaultUser(cfg.Server.Password)})
	}
	s.idle.Store(int64(time.Duration(cfg.Server.Timeout) * time.Second))
	s.maxBulk.Store(int64(cfg.Server.ProtoMaxBulkLen))
	if s.maxBulk.Load() <= 0 {
		s.maxBulk.Store(512 << 20)
	}
	if s.cfg.Server.Databases <= 0 {
		s.cfg.Server.Databases = 16
	}
	if s.cfg.Server.MaxClients <= 0 {
		s.cfg.Server.MaxClients = 10000
	}
	s.maxClients.Store(int64(s.cfg.Server.MaxClients))
	s.slowlogThreshold.Store(cfg.Server.SlowlogLogSlowerThan)
	s.slowlogMax.Store(cfg.Server.SlowlogMaxLen)
	s.latencyThreshold.Store(cfg.Server.LatencyMonitorThreshold)
	s.latencyTracking.Store(true)
	s.protectedMode.Store(cfg.Server.ProtectedMode)
	s.refreshSlowFloor()
	s.conf.put("loglevel", map[string]string{"debug": "debug", "warn": "warning", "error": "warning"}[strings.ToLower(cfg.Log.Level)])
	if s.conf.get("loglevel") == "" {
		s.conf.put("loglevel", "notice")
	}
	s.stats.init(len(builtins.all))
	if reg, ok := st.(*block.Registry); ok {
		s.reg = reg
	} else {
		poll := cfg.Server.BlockPollInterval.D()
		if st == nil {
			poll = 0
		}
		s.reg = block.New(st, block.Options{PollInterval: poll, Logger: logger})
	}
	return s
}

// IsBuiltin reports whether the host serves the command name itself (case
// insensitive); module.Config.Reserved uses it so that no module can claim
// one of these names.
func IsBuiltin(name string) bool {
	var buf [maxBuiltinName]byte
	if len(name) > len(buf) {
		return false
	}
	return builtins.lookup(lowerInto(buf[:0], []byte(name))) != nil
}

// ListenAndServe listens on the configured address and serves until Close.
func (s *Server) ListenAndServe() error {
	ln, err := net.Listen("tcp", s.cfg.Server.Listen)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// Serve accepts connections on ln until Close, then returns nil. It closes
// ln when it returns.
func (s *Server) Serve(ln net.Listener) error {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		s.port.Store(int64(a.Port))
	}
	return s.serve(ln)
}

// serve accepts the connections of ln until the server closes.
func (s *Server) serve(ln net.Listener) error {
	if s.initErr != nil {
		ln.Close()
		return s.initErr
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.closing.Load() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of file descriptors and the like: wait and retry,
				// as net/http does.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		s.accept(nc)
	}
}

func isTemporary(err error) bool {
	t, ok := err.(interface{ Temporary() bool })
	return ok && t.Temporary()
}

// errProtected is Redis 7.0's answer to a client refused by protected mode.
const errProtected = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. " +
	"2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n"

// refuse answers a refused connection, as Redis does, and closes it,
// without holding up the accept loop. It closes the writing side first and
// reads what the client sent meanwhile (its HELLO, its first command) for a
// moment: closing a socket with unread input resets it, and the client
// would lose the answer.
func refuse(nc net.Conn, msg string) {
	go func() {
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := nc.Write([]byte(msg)); err != nil {
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, nc)
	}()
}

// isLoopback reports whether a client address is on the loopback
// interface (or not an IP address at all, as a Unix socket's).
func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return true
	}
	return ta.IP.IsLoopback()
}

// accept registers a new connection and starts serving it, or refuses it.
func (s *Server) accept(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	s.mu.Lock()
	if s.closing.Load() {
		s.mu.Unlock()
		nc.Close()
		return
	}
	if int64(len(s.clients)) >= s.maxClients.Load() {
		s.mu.Unlock()
		s.stats.rejectedConns.Add(1)
		refuse(nc, "-ERR max number of clients reached\r\n")
		return
	}
	if s.protectedMode.Load() && s.defaultNoPass() && !isLoopback(nc.RemoteAddr()) {
		s.mu.Unlock()
		refuse(nc, errProtected)
		s.log.Warn("protected mode: refused a client from outside the loopback interface", "addr", nc.RemoteAddr().String())
		return
	}
	c := newClient(s, s.nextID.Add(1), nc)
	s.clients[c.id] = c
	s.conns.Add(1)
	s.mu.Unlock()
	s.stats.totalConns.Add(1)
	go s.serveConn(c)
}

func (s *Server) removeClient(c *client) {
	s.mu.Lock()
	delete(s.clients, c.id)
	s.mu.Unlock()
	s.conns.Done()
}

// clientList returns the connected clients.
func (s *Server) clientList() []*client {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		out = append(out, c)
	}
	return out
}

func (s *Server) connectedClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Close stops the server gracefully within the configured shutdown timeout:
// see Shutdown.
func (s *Server) Close() error {
	d := s.cfg.Server.ShutdownTimeout.D()
	if d <= 0 {
		d = defaultShutdownTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Shutdown(ctx)
}

// Shutdown stops accepting connections, lets each connection finish the
// commands it has already read and send their replies, then closes it.
// When ctx ends first, commands still running are cancelled and the
// remaining connections closed; Shutdown then returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	for ln := range s.listeners {
		ln.Close()
	}
	clients := make([]*client, 0, len(s.clients))
	for _, c := range s.clients {
		clients = append(clients, c)
	}
	s.mu.Unlock()

	// Wake connections blocked reading: each sees closing and ends after
	// replying to what it has read. A connection checks closing after
	// setting its own deadline, so this wake-up cannot be lost.
	for _, c := range clients {
		_ = c.conn.SetReadDeadline(time.Now())
	}
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
	}
	// Hang up first, then cancel: a command that answers its cancellation
	// must find its connection shut, not slip its reply out in between.
	for _, c := range s.clientList() {
		c.hangUp()
	}
	s.cancel()
	select {
	case <-done:
	case <-time.After(time.Second):
		s.log.Warn("connections still busy after shutdown")
	}
	return ctx.Err()
}

// Addr returns the address of a listener being served, or nil.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ln := range s.listeners {
		return ln.Addr()
	}
	return nil
}

func (s *Server) portString() string {
	if p := s.port.Load(); p > 0 {
		return strconv.FormatInt(p, 10)
	}
	if _, port, err := net.SplitHostPort(s.cfg.Server.Listen); err == nil {
		return port
	}
	return "0"
}

// noModules is the runtime of a server without modules.
type noModules struct{}

func (noModules) Lookup([]byte) *module.Command { return nil }

func (noModules) LookupCached(*module.LookupCache, []byte) *module.Command { return nil }
func (noModules) Commands() []*module.Command                              { return nil }
func (noModules) Modules() []module.ModuleInfo                             { return nil }
func (noModules) Unload(string) error                                      { return errors.New("no such module with that name") }
func (noModules) Exec(_ context.Context, _ *module.Command, _ *codec.Start, out []byte) []byte {
	return append(out, "-ERR no module runtime\r\n"...)
}
func (noModules) ExecBlock(_ context.Context, _ *module.Command, _ *codec.Start, out []byte, _ *module.Block) []byte {
	return append(out, "-ERR no module runtime\r\n"...)
}
func (noModules) ExecBatch(_ context.Context, items []module.Item, out []byte, _ *module.Block) []byte {
	for i := range items {
		out = append(out, "-ERR no module runtime\r\n"...)
		items[i].End = len(out)
	}
	return out
}
func (noModules) Load(context.Context, string) (module.ModuleInfo, error) {
	return module.ModuleInfo{}, errors.New("no module runtime")
}

// SetLogLevel gives the server the level of its logger's handler, for
// CONFIG SET loglevel to change. Call it before Serve.
func (s *Server) SetLogLevel(v *slog.LevelVar) { s.logLevel = v }

// requirePass is the password clients must AUTH with; "" = none.
func (s *Server) requirePass() string {
	if p := s.password.Load(); p != nil {
		return *p
	}
	return ""
}

// setRequirePass changes it (CONFIG SET requirepass): connections already
// authenticated stay so, as in Redis.
func (s *Server) setRequirePass(p string) {
	s.password.Store(&p)
	_ = s.changeUsers(func(t aclTable) error {
		u := t["default"].clone()
		u.passwords = nil
		if p == "" {
			u.nopass = true
		} else {
			u.nopass = false
			u.addPassword(hashPassword(p))
		}
		t["default"] = u
		return nil
	})
}

// defaultNoPass reports whether the default user needs no password (and
// is on): then new connections start authenticated as it, and protected
// mode applies.
func (s *Server) defaultNoPass() bool {
	u := s.user("default")
	return u != nil && u.on && u.nopass
}

// Metrics is a snapshot of the server's counters, for an exporter
// (host/metrics).
type Metrics struct {
	ConnectedClients, BlockedClients         int64
	ConnectionsReceived, RejectedConnections int64
	CommandsProcessed, ErrorReplies          int64
	NetInputBytes, NetOutputBytes            int64
	Commands                                 []CommandMetrics
	Errors                                   map[string]int64 // error replies by code
}

// CommandMetrics are one command's counters; subcommands are named
// "config|get".
type CommandMetrics struct {
	Name                    string
	Calls, Failed, Rejected int64
	Time                    time.Duration // total run time
	// Counts[i] is the number of runs known to be at most Bounds[i] long
	// (the histogram's buckets that end at or under it): cumulative, as
	// Prometheus buckets are.
	Counts []uint64
}

// Metrics returns the counters, with each command's run times counted at
// bounds (ascending).
func (s *Server) Metrics(bounds []time.Duration) Metrics {
	m := Metrics{
		ConnectedClients:    int64(s.connectedClients()),
		BlockedClients:      s.blocked.Load(),
		ConnectionsReceived: s.stats.totalConns.Load(),
		RejectedConnections: s.stats.rejectedConns.Load(),
		CommandsProcessed:   s.stats.totalCmds.Load(),
		ErrorReplies:        s.stats.errorReplies.Load(),
		NetInputBytes:       s.stats.netIn.Load(),
		NetOutputBytes:      s.stats.netOut.Load(),
		Errors:              map[string]int64{},
	}
	for _, e := range s.stats.errorCounts() {
		m.Errors[e.code] = e.n
	}
	for _, ns := range s.stats.commandStats() {
		cm := CommandMetrics{Name: ns.name, Calls: ns.st.calls.Load(), Failed: ns.st.failed.Load(),
			Rejected: ns.st.rejected.Load(), Time: time.Duration(ns.st.nanos.Load()), Counts: make([]uint64, len(bounds))}
		if h := ns.st.hist.Load(); h != nil {
			counts, _ := h.snapshot()
			i := 0
			var seen uint64
			for j, b := range bounds {
				for ; i < histBuckets && histUpper(i) <= int64(b); i++ {
					seen += uint64(counts[i])
				}
				cm.Counts[j] = seen
			}
		}
		m.Commands = append(m.Commands, cm)
	}
	return m
}
