// Package aerospike is the store backend that keeps respike's records in an
// Aerospike cluster. It translates the codec's operation vocabulary to
// aerospike-client-go operates, batches, scans and info commands, with the
// same semantics as the embedded memory store. docs/data-model.md describes
// the records it writes.
package aerospike

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	asl "github.com/aerospike/aerospike-client-go/v8/logger"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Config is the Aerospike connection and data placement.
type Config struct {
	// Hosts are seed nodes as "host:port" (port 3000 when omitted).
	Hosts []string
	// Namespace holds every record respike writes.
	Namespace string
	// Set is the set of database 0; database N uses Set + "_" + N.
	// Empty means "respike".
	Set string

	User     string
	Password string

	// TLSName is the name on the nodes' certificates; setting it or
	// TLSCAFile turns TLS on.
	TLSName     string
	TLSCAFile   string
	TLSCertFile string // client certificate for mutual TLS
	TLSKeyFile  string

	// ConnectTimeout bounds one attempt to reach the cluster (default 2s).
	ConnectTimeout time.Duration
	// SocketTimeout bounds one network exchange of a command (default 1s).
	SocketTimeout time.Duration
	// TotalTimeout bounds a command including retries (default 2s).
	TotalTimeout time.Duration
	// MaxRetries is how often a read, scan or info command is retried;
	// writes are never retried, so an increment is never applied twice.
	MaxRetries int
	// ConnectionQueueSize is the connection pool size per node (default 256).
	ConnectionQueueSize int
	// MaxRecordBytes, when positive, refuses a write whose values add up to
	// more bytes than this with RecordTooBig before sending it. Set it to the
	// namespace's max-record-size to get a clear error early.
	MaxRecordBytes int
	// BatchSize is the most records one gathered batch call carries:
	// record requests that arrive while BatchCalls calls are in flight wait
	// and go together in the next call, or at once when they fill one
	// (default 64; 1 turns gathering off, every request then goes at once
	// on its own).
	BatchSize int
	// BatchCalls is how many calls may be in flight before requests wait
	// to be gathered (default 2). A request that finds fewer in flight
	// goes at once.
	BatchCalls int
	// BatchDispatch makes the server hand each record of a batch call to
	// its service threads instead of running the call inline in the
	// thread that received it (AllowInlineSSD false). Inline is the
	// default: on a namespace on a device, dispatching costs the server
	// a thread wake-up per record or so, about as much as the record.
	BatchDispatch bool
}

// Defaults of the gathering of requests into batch calls.
const (
	defaultBatchSize  = 64
	defaultBatchCalls = 2
)

// defaultSet is the set of database 0 when Config.Set is empty.
const defaultSet = "respike"

// Store is the Aerospike backend. It is safe for concurrent use.
type Store struct {
	cfg   Config
	log   *slog.Logger
	hosts []*as.Host
	cpol  *as.ClientPolicy
	tr    *translator
	sets  []string // set names of databases 0..15

	client  atomic.Pointer[as.Client]
	lastErr atomic.Pointer[string] // why the cluster is not reachable

	// down is set while no node of a connected cluster answers a TCP
	// connect; Exec then fails at once instead of waiting for timeouts.
	down    atomic.Bool
	probing atomic.Bool

	bg       context.Context // ends at Close
	stop     context.CancelFunc
	wg       sync.WaitGroup // background goroutines
	closeOne sync.Once

	plans sync.Pool // *[]plan

	co *coalescer // gathers concurrent record requests; nil when off

	// now is the clock of exact expiries; time.Now when nil (tests set it).
	now func() time.Time

	// Calls made to the cluster for record requests (INFO stats): single
	// operates, batch operates, and the records those carried.
	nSingle, nBatch, nBatchRecords atomic.Uint64
}

// Stats counts the calls record requests made (store.Statser): how many
// Redis commands share a round trip shows in batch_records / batch_calls.
func (s *Store) Stats() []store.Stat {
	return []store.Stat{
		{Name: "single_calls", Value: s.nSingle.Load()},
		{Name: "batch_calls", Value: s.nBatch.Load()},
		{Name: "batch_records", Value: s.nBatchRecords.Load()},
	}
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Batcher = (*Store)(nil)
)

// New validates cfg and connects to the cluster. When the cluster cannot be
// reached it logs why and keeps trying in the background with backoff until
// ctx ends or the store is closed; meanwhile Exec answers BackendUnavail at
// once. Only an invalid configuration is an error.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	hosts, err := parseHosts(cfg.Hosts, cfg.TLSName)
	if err != nil {
		return nil, err
	}
	cpol, err := clientPolicy(&cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{
		cfg:   cfg,
		log:   logger.With("store", "aerospike"),
		hosts: hosts,
		cpol:  cpol,
		tr:    newTranslator(),
	}
	if cfg.BatchSize > 1 {
		s.co = newCoalescer(cfg.BatchCalls, cfg.BatchSize, runJobs)
	}
	for db := 0; db < 16; db++ {
		s.sets = append(s.sets, setName(cfg.Set, db))
	}
	unavail := "not connected yet"
	s.lastErr.Store(&unavail)

	s.bg, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	if s.connect() {
		return s, nil
	}
	s.wg.Add(1)
	go s.reconnect(ctx)
	return s, nil
}

func (c *Config) fill() error {
	if len(c.Hosts) == 0 {
		return errors.New("aerospike: no hosts configured: set [aerospike] hosts, e.g. [\"127.0.0.1:3000\"]")
	}
	if c.Namespace == "" {
		return errors.New("aerospike: no namespace configured: set [aerospike] namespace")
	}
	if c.Set == "" {
		c.Set = defaultSet
	}
	// Set names are at most 63 bytes; leave room for "_<db>".
	if len(c.Set) > 56 {
		return fmt.Errorf("aerospike: set name %q is longer than 56 bytes", c.Set)
	}
	if strings.ContainsAny(c.Set, ":;\x00") {
		return fmt.Errorf("aerospike: set name %q contains ':', ';' or NUL", c.Set)
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 2 * time.Second
	}
	if c.SocketTimeout <= 0 {
		c.SocketTimeout = time.Second
	}
	if c.TotalTimeout <= 0 {
		c.TotalTimeout = 2 * time.Second
	}
	if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.ConnectionQueueSize <= 0 {
		c.ConnectionQueueSize = 256
	}
	if c.BatchSize <= 0 {
		c.BatchSize = defaultBatchSize
	}
	if c.BatchCalls <= 0 {
		c.BatchCalls = defaultBatchCalls
	}
	return nil
}

// systemSetSuffix names the set of store.SystemDB after the base set:
// "_sys" cannot be a database's "_<N>".
const systemSetSuffix = "_sys"

// setName is the set of database db.
func setName(base string, db int) string {
	if db == 0 {
		return base
	}
	return base + "_" + strconv.Itoa(db)
}

func (s *Store) set(db int) string {
	if db == store.SystemDB {
		return s.cfg.Set + systemSetSuffix
	}
	if db < len(s.sets) {
		return s.sets[db]
	}
	return setName(s.cfg.Set, db)
}

func parseHosts(addrs []string, tlsName string) ([]*as.Host, error) {
	hosts := make([]*as.Host, 0, len(addrs))
	for _, a := range addrs {
		host, port := a, 3000
		if h, p, err := net.SplitHostPort(a); err == nil {
			n, err := strconv.Atoi(p)
			if err != nil || n <= 0 || n > 65535 {
				return nil, fmt.Errorf("aerospike: host %q: bad port", a)
			}
			host, port = h, n
		}
		if host == "" {
			return nil, fmt.Errorf("aerospike: host %q: empty name", a)
		}
		hosts = append(hosts, &as.Host{Name: host, Port: port, TLSName: tlsName})
	}
	return hosts, nil
}

func clientPolicy(cfg *Config) (*as.ClientPolicy, error) {
	p := as.NewClientPolicy()
	p.User, p.Password = cfg.User, cfg.Password
	p.Timeout = cfg.ConnectTimeout
	p.LoginTimeout = cfg.ConnectTimeout
	p.ConnectionQueueSize = cfg.ConnectionQueueSize
	p.FailIfNotConnected = true
	if cfg.TLSName != "" || cfg.TLSCAFile != "" || cfg.TLSCertFile != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.TLSName}
		if cfg.TLSCAFile != "" {
			pem, err := os.ReadFile(cfg.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("aerospike: tls_ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("aerospike: tls_ca_file %s: no PEM certificate", cfg.TLSCAFile)
			}
			tc.RootCAs = pool
		}
		if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
			cert, err := tls.LoadX509KeyPair(cfg.TLSCertFile, cfg.TLSKeyFile)
			if err != nil {
				return nil, fmt.Errorf("aerospike: tls_cert_file/tls_key_file: %w", err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		p.TlsConfig = tc
	}
	return p, nil
}

// connect makes one attempt to reach the cluster.
func (s *Store) connect() bool {
	c, err := as.NewClientWithPolicyAndHost(s.cpol, s.hosts...)
	if err != nil {
		msg := fmt.Sprintf("cannot reach the Aerospike cluster at %s: %s", strings.Join(s.cfg.Hosts, ","), errText(err))
		s.lastErr.Store(&msg)
		return false
	}
	s.checkMapIndex(c) // before any command can create a map
	s.client.Store(c)
	s.log.Info("connected to Aerospike", "hosts", s.cfg.Hosts, "namespace", s.cfg.Namespace, "set", s.cfg.Set,
		"nodes", len(c.GetNodes()))
	s.checkNamespace(c)
	return true
}

// checkMapIndex turns the persisted map index off when a node is older
// than Aerospike 7.0, which introduced it (the flag is new to older
// servers; not tried on one). Nodes that join later are not looked at.
func (s *Store) checkMapIndex(c *as.Client) {
	for _, n := range c.GetNodes() {
		if v := n.GetServerVersion(); v.Major > 0 && v.Major < 7 {
			s.tr.noIndex.Store(true)
			s.log.Warn("an Aerospike node is older than 7.0: maps are created without a persisted index, so big sorted sets, sets and hashes cost the server more per command",
				"node", n.GetName(), "version", fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch))
			return
		}
	}
}

// reconnect retries connect with exponential backoff until it succeeds, ctx
// ends or the store closes.
func (s *Store) reconnect(ctx context.Context) {
	defer s.wg.Done()
	delay := 250 * time.Millisecond
	for {
		s.log.Error("Aerospike unavailable; retrying", "error", *s.lastErr.Load(), "retry_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.bg.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if s.connect() {
			return // a Close meanwhile closes the new client after wg
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// noteUnreachable is told that a command could not reach the cluster. It
// starts one background probe: while no known node accepts a TCP connection
// the store is marked down and Exec fails at once (a dead cluster otherwise
// costs every command its whole timeout, as the client keeps waiting for a
// connection); as soon as a node accepts, the store is up again and the
// client's own tending restores its connections. A cluster that still has a
// reachable node is never marked down: the client routes around dead nodes.
func (s *Store) noteUnreachable(c *as.Client, cause error) {
	if !s.probing.CompareAndSwap(false, true) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.probing.Store(false)
		delay := 100 * time.Millisecond
		for {
			if s.reachable(c) {
				if s.down.Swap(false) {
					s.log.Info("Aerospike reachable again")
				}
				return
			}
			if !s.down.Swap(true) {
				msg := fmt.Sprintf("no node of the Aerospike cluster at %s accepts connections (last error: %s)", strings.Join(s.cfg.Hosts, ","), errText(cause))
				s.lastErr.Store(&msg)
				s.log.Error("Aerospike cluster unreachable; failing commands until it answers", "error", errText(cause))
			}
			t := time.NewTimer(delay)
			select {
			case <-s.bg.Done():
				t.Stop()
				return
			case <-t.C:
			}
			delay = min(2*delay, 5*time.Second)
		}
	}()
}

// reachable reports whether any node the client knows, or any seed, accepts
// a TCP connection.
func (s *Store) reachable(c *as.Client) bool {
	var addrs []string
	for _, n := range c.GetNodes() {
		if h := n.GetHost(); h != nil {
			addrs = append(addrs, net.JoinHostPort(h.Name, strconv.Itoa(h.Port)))
		}
	}
	for _, h := range s.hosts {
		addrs = append(addrs, net.JoinHostPort(h.Name, strconv.Itoa(h.Port)))
	}
	timeout := min(s.cfg.ConnectTimeout, time.Second)
	for _, a := range addrs {
		if conn, err := net.DialTimeout("tcp", a, timeout); err == nil {
			conn.Close()
			return true
		}
	}
	return false
}

// checkNamespace logs namespace settings that change behaviour: a missing
// namespace, TTLs refused (nsup-period 0) and default-ttl applied to new
// records written with TTLKeep.
func (s *Store) checkNamespace(c *as.Client) {
	nodes := c.GetNodes()
	if len(nodes) == 0 {
		return
	}
	info, err := nodes[0].RequestInfo(as.NewInfoPolicy(), "namespace/"+s.cfg.Namespace)
	if err != nil {
		s.log.Warn("cannot read the namespace configuration", "namespace", s.cfg.Namespace, "error", err)
		return
	}
	v := info["namespace/"+s.cfg.Namespace]
	if v == "" || strings.HasPrefix(v, "ERROR") || strings.HasPrefix(v, "type=unknown") {
		s.log.Error("namespace not found on the Aerospike cluster; every command will fail", "namespace", s.cfg.Namespace, "reply", v)
		return
	}
	kv := parseInfoPairs(v, ';')
	if kv["nsup-period"] == "0" && kv["allow-ttl-without-nsup"] != "true" {
		s.log.Warn("namespace has nsup-period 0: writes with a TTL (EXPIRE, SET EX) will fail; set nsup-period in the namespace", "namespace", s.cfg.Namespace)
	}
	if d := kv["default-ttl"]; d != "" && d != "0" {
		s.log.Warn("namespace default-ttl is not 0: new records written without a TTL will expire after it", "namespace", s.cfg.Namespace, "default-ttl", d)
	}
}

// parseInfoPairs splits "a=1;b=2" (or with sep ':').
func parseInfoPairs(s string, sep byte) map[string]string {
	m := make(map[string]string)
	for _, f := range strings.Split(s, string(sep)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// Inline reports false: every Exec waits on the network.
func (s *Store) Inline() bool { return false }

// Close stops reconnecting and closes the client.
func (s *Store) Close() error {
	s.closeOne.Do(func() {
		s.stop()
		s.wg.Wait()
		if c := s.client.Swap(nil); c != nil {
			c.Close()
		}
	})
	return nil
}

// Connected reports whether the store has reached the cluster.
func (s *Store) Connected() bool {
	c := s.client.Load()
	return c != nil && c.IsConnected()
}

func (s *Store) unavailable() string {
	return "aerospike: " + *s.lastErr.Load() + "; respike keeps retrying in the background"
}

// Exec runs req against database db.
func (s *Store) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	x := s.begin(ctx, db, resp)
	if x == nil {
		return
	}
	x.dispatch(req, resp)
	putCtx(x)
}

// begin resets resp and returns the context of a request on database db,
// or nil when the request cannot go (resp then says why).
func (s *Store) begin(ctx context.Context, db int, resp *codec.Response) *execCtx {
	resp.Code, resp.Msg, resp.Count = codec.OK, "", 0
	resp.Results = resp.Results[:0]
	resp.Scan.Cursor = 0
	resp.Scan.Keys = resp.Scan.Keys[:0]
	resp.Scan.Types = resp.Scan.Types[:0]

	c := s.client.Load()
	if c == nil || s.down.Load() {
		resp.Code, resp.Msg = codec.BackendUnavail, s.unavailable()
		return nil
	}
	if db < 0 && db != store.SystemDB {
		resp.Code, resp.Msg = codec.InvalidOperation, fmt.Sprintf("database %d out of range", db)
		return nil
	}
	timeout, ok := s.budget(ctx)
	if !ok {
		resp.Code, resp.Msg = codec.Timeout, "request deadline passed before it reached Aerospike"
		return nil
	}
	now := time.Now()
	x := ctxPool.Get().(*execCtx)
	*x = execCtx{s: s, c: c, set: s.set(db), timeout: timeout, start: now, deadline: now.Add(timeout)}
	return x
}

// ctxPool holds execCtx values between requests: one allocation per
// request less (a request keeps its context only until it returns).
var ctxPool = sync.Pool{New: func() any { return new(execCtx) }}

// putCtx returns x to ctxPool once its request has returned.
func putCtx(x *execCtx) {
	*x = execCtx{}
	ctxPool.Put(x)
}

// ExecMany runs ops as Exec would, with their record requests handed to the
// coalescer together (coalescer.doMany): the commands of a client's
// pipeline window then share calls with each other and with other
// clients' requests, from one goroutine.
func (s *Store) ExecMany(ops []store.Op) {
	if s.co == nil {
		store.ExecEach(s, ops)
		return
	}
	type rec struct {
		x     *execCtx
		resp  *codec.Response
		plans *[]plan
		j     *job
	}
	var recs []rec
	var jobs []*job
	for i := range ops {
		o := &ops[i]
		x := s.begin(o.Ctx, o.DB, o.Resp)
		switch {
		case x == nil:
		case o.Req.Kind != codec.ReqRecords:
			x.dispatch(o.Req, o.Resp) // scans and counts: rare in a pipeline, run as they come
			putCtx(x)
		default:
			plans, live := x.plan(o.Req, o.Resp)
			if live == 0 {
				s.putPlans(plans)
				putCtx(x)
				continue
			}
			j := x.job(o.Req, o.Resp, *plans, live)
			recs = append(recs, rec{x: x, resp: o.Resp, plans: plans, j: j})
			jobs = append(jobs, j)
		}
	}
	s.co.doMany(jobs)
	for _, r := range recs {
		r.x.settle(r.resp, r.j.err)
		s.putPlans(r.plans)
		putJob(r.j)
		putCtx(r.x)
		if r.resp.Code != codec.OK {
			r.resp.Results = r.resp.Results[:0]
		}
	}
}

// dispatch runs req in x.
func (x *execCtx) dispatch(req *codec.Request, resp *codec.Response) {
	switch req.Kind {
	case codec.ReqRecords:
		x.records(req, resp)
	case codec.ReqScan:
		x.scan(&req.Scan, resp)
	case codec.ReqCount:
		x.count(resp)
	case codec.ReqTruncate:
		x.truncate(req.AllDBs, resp)
	default:
		resp.Code, resp.Msg = codec.InvalidOperation, fmt.Sprintf("unknown request kind %d", req.Kind)
	}
	if resp.Code != codec.OK {
		resp.Results = resp.Results[:0]
	}
}

// budget is the total timeout of the request's commands: the configured one,
// shortened to the context's deadline.
func (s *Store) budget(ctx context.Context) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	t := s.cfg.TotalTimeout
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return 0, false
		}
		t = min(t, left)
	}
	return t, true
}

// execCtx is one Exec: the client, set and time budget its commands share.
// The budget is a deadline, not a duration: a request that waited for a
// gathered batch call (coalesce.go), or made a call before, has only what
// is left of it, so a command answers within total_timeout whatever it
// waited for.
type execCtx struct {
	s        *Store
	c        *as.Client
	set      string
	timeout  time.Duration // the whole budget
	start    time.Time     // when it began: the clock of its plans
	deadline time.Time     // when it ends
}

// planMs is the store's clock in ms for planning the request's calls (the
// expiry filters, exact expiries): when it began, a few microseconds ago,
// rather than a second clock read per request.
func (x *execCtx) planMs() int64 {
	if x.s.now != nil || x.start.IsZero() {
		return x.s.nowMs()
	}
	return x.start.UnixMilli()
}

// left is what is left of the budget; at least a millisecond, so that a
// call made at the deadline fails with a timeout rather than waiting with
// none (a zero timeout means no limit to the client).
func (x *execCtx) left() time.Duration {
	return max(time.Until(x.deadline), time.Millisecond)
}

func (x *execCtx) base(write bool) as.BasePolicy {
	p := *as.NewPolicy()
	left := x.left()
	p.TotalTimeout = left
	p.SocketTimeout = min(x.s.cfg.SocketTimeout, left)
	p.SendKey = true
	if write {
		p.MaxRetries = 0
	} else {
		p.MaxRetries = x.s.cfg.MaxRetries
	}
	return p
}

// fail fails the whole request from an error that is not a record's.
func (x *execCtx) fail(resp *codec.Response, err error, class errClass) {
	switch class {
	case classTimeout:
		resp.Code, resp.Msg = codec.Timeout, "aerospike: "+errText(err)
	default:
		resp.Code, resp.Msg = codec.BackendUnavail, "aerospike: cluster unreachable: "+errText(err)
		x.s.noteUnreachable(x.c, err)
	}
}

// ClientStats returns the Aerospike client's own figures, for metrics: its
// cluster-wide counters (connections opened, failed, pooled, tends, ...)
// by the client's names, plus total-nodes and open-connections. Empty
// while the store has no client.
func (s *Store) ClientStats() map[string]float64 {
	c := s.client.Load()
	if c == nil {
		return nil
	}
	st, err := c.Stats()
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	if agg, ok := st["cluster-aggregated-stats"].(map[string]any); ok {
		for k, v := range agg {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
	}
	for _, k := range []string{"open-connections", "total-nodes"} {
		switch v := st[k].(type) {
		case int:
			out[k] = float64(v)
		case float64:
			out[k] = v
		}
	}
	return out
}

// RouteClientLog sends the Aerospike client's own log lines to l: at
// level debug the client's debug lines too, else its warnings and errors
// (it logs nothing at info that an operator needs). The client's lines
// carry no level of their own, so they are logged at the lowest level the
// client is set to pass, with source=aerospike-client.
func RouteClientLog(l *slog.Logger, level slog.Level) {
	clientLevel, at := asl.WARNING, slog.LevelWarn
	if level <= slog.LevelDebug {
		clientLevel, at = asl.DEBUG, slog.LevelDebug
	}
	asl.Logger.SetLogger(clientLog{l: l.With("source", "aerospike-client"), at: at})
	asl.Logger.SetLevel(clientLevel)
}

// clientLog adapts slog to the client's Printf logger.
type clientLog struct {
	l  *slog.Logger
	at slog.Level
}

func (c clientLog) Printf(format string, v ...any) {
	c.l.Log(context.Background(), c.at, strings.TrimSpace(fmt.Sprintf(format, v...)))
}
