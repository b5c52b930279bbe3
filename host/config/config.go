// Package config reads respike's TOML configuration file. Load returns the
// defaults overlaid with the file's values and refuses, naming the key, any
// unknown key or bad value, so that a typo never silently falls back to a
// default.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the whole configuration.
type Config struct {
	Server    Server    `toml:"server"`
	Store     Store     `toml:"store"`
	Aerospike Aerospike `toml:"aerospike"`
	Commands  Commands  `toml:"commands"`
	Log       Log       `toml:"log"`
	Metrics   Metrics   `toml:"metrics"`
	TLS       TLS       `toml:"tls"`
	ACL       ACL       `toml:"acl"`

	// Path is the file the configuration was loaded from; "" when it is
	// the defaults.
	Path string `toml:"-"`
}

// Server configures the RESP listener and client handling.
type Server struct {
	// Listen is the TCP address to serve, host:port.
	Listen string `toml:"listen"`
	// Password is Redis's requirepass: when set, clients must AUTH as the
	// default user. "" means no password.
	Password string `toml:"password"`
	// Databases is the number of databases SELECT accepts (0..Databases-1).
	Databases int `toml:"databases"`
	// MaxClients caps concurrent connections; more are refused with
	// "ERR max number of clients reached".
	MaxClients int `toml:"max_clients"`
	// ProtoMaxBulkLen caps one bulk string of a request, as Redis's
	// proto-max-bulk-len: a bigger one is a protocol error.
	ProtoMaxBulkLen Size `toml:"proto_max_bulk_len"`
	// Timeout closes a client idle for this many seconds; 0 never does.
	Timeout int `toml:"timeout"`
	// EnableModuleCommand says who may run MODULE LOAD and MODULE UNLOAD, as
	// Redis's enable-module-command: "no", "yes", or "local" (loopback
	// clients only).
	EnableModuleCommand string `toml:"enable_module_command"`
	// ShutdownTimeout bounds a graceful stop: in-flight commands get this
	// long to finish before their connections are closed.
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// Procs is how many threads run Go code at once (GOMAXPROCS): 0 leaves
	// Go's default, the CPUs the process may use. 1 serves every client
	// from one thread, as redis-server does; on a machine shared with the
	// clients' own processes that is the fastest (docs/performance.md).
	Procs int `toml:"procs"`
	// BlockPollInterval is how often the keys that blocked clients (BLPOP
	// ...) wait on are read from the store, in one batch request, to wake
	// them on writes made through other proxies; writes through this one
	// wake them at once. Nothing is read while no client is blocked. 0
	// never reads: right when this proxy is the store's only writer.
	BlockPollInterval Duration `toml:"block_poll_interval"`
	// SlowlogLogSlowerThan is Redis's slowlog-log-slower-than: commands
	// that run at least this many microseconds enter SLOWLOG; -1 none, 0
	// all.
	SlowlogLogSlowerThan int64 `toml:"slowlog_log_slower_than"`
	// SlowlogMaxLen is Redis's slowlog-max-len: the entries SLOWLOG keeps.
	SlowlogMaxLen int64 `toml:"slowlog_max_len"`
	// LatencyMonitorThreshold is Redis's latency-monitor-threshold: runs of
	// at least this many milliseconds are LATENCY events; 0 records none.
	LatencyMonitorThreshold int64 `toml:"latency_monitor_threshold"`
	// ProtectedMode is Redis's protected-mode: with no password, clients
	// from outside the loopback interface are refused with Redis's
	// explanation. On by default; set protected_mode = false to serve
	// them (behind your own network policy).
	ProtectedMode bool `toml:"protected_mode"`
}

// Store selects the record store.
type Store struct {
	// Backend is "memory" (embedded, not persistent) or "aerospike".
	Backend string `toml:"backend"`
}

// Aerospike configures the Aerospike backend. Zero durations and counts
// mean the client library's default.
type Aerospike struct {
	Hosts               []string `toml:"hosts"` // seed nodes, host:port
	Namespace           string   `toml:"namespace"`
	Set                 string   `toml:"set"` // set of database 0; others derive from it
	User                string   `toml:"user"`
	Password            string   `toml:"password"`
	TLSName             string   `toml:"tls_name"`
	TLSCAFile           string   `toml:"tls_ca_file"`
	TLSCertFile         string   `toml:"tls_cert_file"`
	TLSKeyFile          string   `toml:"tls_key_file"`
	ConnectTimeout      Duration `toml:"connect_timeout"`
	SocketTimeout       Duration `toml:"socket_timeout"`
	TotalTimeout        Duration `toml:"total_timeout"`
	MaxRetries          int      `toml:"max_retries"`
	ConnectionQueueSize int      `toml:"connection_queue_size"`
	// MaxRecordBytes is the namespace's record size limit; writes that would
	// exceed it are refused with a clear error.
	MaxRecordBytes Size `toml:"max_record_bytes"`
	// BatchSize is the most records one gathered batch call carries;
	// requests that arrive while BatchCalls calls are in flight go together
	// in the next call, or at once when they fill one. 1 turns gathering off.
	BatchSize int `toml:"batch_size"`
	// BatchCalls is how many calls may be in flight before requests wait
	// to be gathered.
	BatchCalls int `toml:"batch_calls"`
	// BatchInline lets the server run a batch call's records inline, one
	// after another in the thread that received the call, also on a
	// namespace stored on a device (the client's AllowInlineSSD); false
	// has it hand each record to its service threads.
	BatchInline bool `toml:"batch_inline"`
}

// Commands configures the command modules.
type Commands struct {
	// Dir is the folder of *.wasm command modules, watched for changes.
	// A relative path is relative to the working directory.
	Dir string `toml:"dir"`
	// CacheDir holds compiled modules between runs; "" means a folder under
	// the user's cache directory and "none" disables the cache.
	CacheDir string `toml:"cache_dir"`
	// Instances per module; 0 means two per CPU.
	Instances int `toml:"instances"`
	// Deadline bounds the CPU time of one call into a module.
	Deadline Duration `toml:"deadline"`
	// MemoryLimitMiB caps each module instance's memory.
	MemoryLimitMiB int `toml:"memory_limit_mib"`
	// IdleTimeout releases a module's instances unused this long, down to
	// one per module; 0 keeps them.
	IdleTimeout Duration `toml:"idle_timeout"`
	// RecycleMemoryMiB replaces an instance whose memory grew past it once
	// its call ends (wasm memory never shrinks); 0 never does.
	RecycleMemoryMiB int `toml:"recycle_memory_mib"`
	// DeployPollInterval is how often the proxy reads the generation of
	// the store's record of deployed modules (MODULE DEPLOY, host/fleet)
	// and swaps in what changed; 0 turns watching off.
	DeployPollInterval Duration `toml:"deploy_poll_interval"`
	// DeployChunkBytes is the size of the records a deployed module is cut
	// into; on Aerospike it is capped at [aerospike] max_record_bytes less
	// 1 KiB for the record's own overhead (ChunkBytes).
	DeployChunkBytes Size `toml:"deploy_chunk_bytes"`
	// DeployProxyName names this proxy in MODULE FLEET; "" = host name and
	// listen address.
	DeployProxyName string `toml:"deploy_proxy_name"`
	// DeployHeartbeatInterval is how often the proxy writes its last-seen
	// time beside its MODULE FLEET states and collects the fleet's
	// leftovers (host/fleet gc.go); 0 turns it off.
	DeployHeartbeatInterval Duration `toml:"deploy_heartbeat_interval"`
	// DeployStaleAfter is how long a proxy may go unseen before MODULE
	// FLEET marks its states stale; 0 = three heartbeat intervals.
	DeployStaleAfter Duration `toml:"deploy_stale_after"`
	// DeployForgetAfter is how long a proxy may go unseen before the
	// others remove its MODULE FLEET states; 0 never.
	DeployForgetAfter Duration `toml:"deploy_forget_after"`
}

// ACL configures users beside the default one, as Redis's ACL SETUSER
// rules (docs/security.md).
type ACL struct {
	Users []ACLUser `toml:"users"`
}

// ACLUser is one [[acl.users]] entry: Rules is a space-separated list of
// ACL SETUSER rules, e.g. "on >secret ~app1:* +@read -@dangerous". A
// user named "default" changes the default user, after [server]
// password.
type ACLUser struct {
	Name  string `toml:"name"`
	Rules string `toml:"rules"`
}

// TLS configures the TLS listener for clients, in Redis's vocabulary
// (tls-port, tls-cert-file, tls-auth-clients ...).
type TLS struct {
	// Listen is the TLS listener's address, host:port; "" serves no TLS.
	// With [server] listen = "" it is the only listener.
	Listen string `toml:"listen"`
	// CertFile and KeyFile are the server's certificate chain and key, PEM;
	// SIGHUP reloads them (and CACertFile) without dropping connections.
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
	// CACertFile holds the CA certificates client certificates are
	// verified against, PEM.
	CACertFile string `toml:"ca_cert_file"`
	// AuthClients is Redis's tls-auth-clients: "yes" (a client certificate
	// signed by CACertFile is required), "optional" (verified when given)
	// or "no".
	AuthClients string `toml:"auth_clients"`
	// Protocols are the TLS versions accepted, space separated, among
	// "TLSv1.2" and "TLSv1.3".
	Protocols string `toml:"protocols"`
	// Ciphers are the TLS 1.2 cipher suites, by Go's (IANA) names, colon or
	// space separated; "" = Go's secure defaults. TLS 1.3's suites are
	// always Go's, which are all secure.
	Ciphers string `toml:"ciphers"`
}

// ChunkBytes is the chunk size deployed modules are written in: the
// configured one, capped so that a chunk record fits the Aerospike
// namespace's record size limit.
func (c *Config) ChunkBytes() int {
	n := int(c.Commands.DeployChunkBytes)
	if c.Store.Backend == "aerospike" && c.Aerospike.MaxRecordBytes > 2<<10 {
		n = min(n, int(c.Aerospike.MaxRecordBytes)-1<<10)
	}
	return n
}

// Metrics configures the HTTP listener of /metrics (Prometheus), /healthz
// and /readyz.
type Metrics struct {
	// Listen is its address, host:port; "" serves no metrics.
	Listen string `toml:"listen"`
}

// Log configures logging.
type Log struct {
	// Level is "debug", "info", "warn" or "error".
	Level string `toml:"level"`
	// Format is "text" (key=value lines) or "json" (one object per line).
	Format string `toml:"format"`
}

// Defaults returns the configuration used without a file: memory store,
// loopback port 6379, no password.
func Defaults() Config {
	return Config{
		Server: Server{
			Listen:               "127.0.0.1:6379",
			Databases:            16,
			MaxClients:           10000,
			ProtoMaxBulkLen:      512 << 20,
			EnableModuleCommand:  "local",
			ShutdownTimeout:      Duration(5 * time.Second),
			BlockPollInterval:    Duration(20 * time.Millisecond),
			SlowlogLogSlowerThan: 10000,
			SlowlogMaxLen:        128,
			ProtectedMode:        true,
		},
		Store: Store{Backend: "memory"},
		Aerospike: Aerospike{
			Hosts:               []string{"127.0.0.1:3000"},
			Namespace:           "test",
			Set:                 "respike",
			ConnectTimeout:      Duration(time.Second),
			TotalTimeout:        Duration(time.Second),
			MaxRetries:          2,
			ConnectionQueueSize: 256,
			MaxRecordBytes:      1 << 20,
			BatchSize:           64,
			BatchCalls:          2,
			BatchInline:         true,
		},
		Commands: Commands{
			Dir:                     "commands",
			Deadline:                Duration(time.Second),
			MemoryLimitMiB:          64,
			IdleTimeout:             Duration(30 * time.Second),
			RecycleMemoryMiB:        32,
			DeployPollInterval:      Duration(time.Second),
			DeployChunkBytes:        512 << 10,
			DeployHeartbeatInterval: Duration(10 * time.Second),
			DeployForgetAfter:       Duration(time.Hour),
		},
		Log: Log{Level: "info", Format: "text"},
		TLS: TLS{AuthClients: "yes", Protocols: "TLSv1.2 TLSv1.3"},
	}
}

// Load reads the file at path over the defaults and validates the result.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// Parse reads TOML text over the defaults and validates the result.
func Parse(data []byte) (Config, error) {
	cfg := Defaults()
	md, err := toml.Decode(string(data), &cfg)
	if err != nil {
		return Config{}, err
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		msgs := make([]string, 0, len(undecoded))
		for _, k := range undecoded {
			msg := "unknown key " + strconv.Quote(k.String())
			if line := keyLine(data, k); line > 0 {
				msg = fmt.Sprintf("line %d: %s", line, msg)
			}
			msgs = append(msgs, msg)
		}
		return Config{}, errors.New(strings.Join(msgs, "; "))
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate checks every value and returns an error naming each bad key.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
	}

	// The rules themselves are checked by the server, which knows the
	// commands they name.
	seenUsers := map[string]bool{}
	for i, u := range c.ACL.Users {
		switch {
		case u.Name == "" || strings.ContainsAny(u.Name, " \t\r\n"):
			bad(fmt.Sprintf("acl.users[%d].name", i), "%q is not a user name (empty or with spaces)", u.Name)
		case seenUsers[u.Name]:
			bad(fmt.Sprintf("acl.users[%d].name", i), "user %q is defined twice", u.Name)
		}
		seenUsers[u.Name] = true
	}
	if c.Server.Listen == "" && c.TLS.Listen == "" {
		bad("server.listen", "is empty and so is tls.listen: respike would serve nothing")
	} else if c.Server.Listen != "" {
		if err := checkHostPort(c.Server.Listen); err != nil {
			bad("server.listen", "%v", err)
		}
	}
	if c.TLS.Listen != "" {
		if err := checkHostPort(c.TLS.Listen); err != nil {
			bad("tls.listen", "%v", err)
		}
		if c.TLS.CertFile == "" || c.TLS.KeyFile == "" {
			bad("tls.cert_file", "tls.cert_file and tls.key_file are required with tls.listen")
		}
		switch c.TLS.AuthClients {
		case "yes", "optional":
			if c.TLS.CACertFile == "" {
				bad("tls.ca_cert_file", "is required to verify clients (tls.auth_clients = %q); set auth_clients = \"no\" to accept any client", c.TLS.AuthClients)
			}
		case "no":
		default:
			bad("tls.auth_clients", `must be "yes", "optional" or "no", got %q`, c.TLS.AuthClients)
		}
		for _, p := range strings.Fields(c.TLS.Protocols) {
			if p != "TLSv1.2" && p != "TLSv1.3" {
				bad("tls.protocols", `knows "TLSv1.2" and "TLSv1.3", got %q`, p)
			}
		}
		if strings.TrimSpace(c.TLS.Protocols) == "" {
			bad("tls.protocols", "names no protocol")
		}
	}
	if c.Metrics.Listen != "" {
		if err := checkHostPort(c.Metrics.Listen); err != nil {
			bad("metrics.listen", "%v", err)
		}
	}
	if c.Server.Databases < 1 || c.Server.Databases > 1<<16 {
		bad("server.databases", "must be between 1 and 65536, got %d", c.Server.Databases)
	}
	if c.Server.MaxClients < 1 {
		bad("server.max_clients", "must be at least 1, got %d", c.Server.MaxClients)
	}
	if c.Server.ProtoMaxBulkLen < 1 {
		bad("server.proto_max_bulk_len", "must be positive, got %d", c.Server.ProtoMaxBulkLen)
	}
	if c.Server.SlowlogLogSlowerThan < -1 {
		bad("server.slowlog_log_slower_than", "must be -1 (off), 0 (every command) or microseconds, got %d", c.Server.SlowlogLogSlowerThan)
	}
	if c.Server.SlowlogMaxLen < 0 {
		bad("server.slowlog_max_len", "must be 0 or more, got %d", c.Server.SlowlogMaxLen)
	}
	if c.Server.LatencyMonitorThreshold < 0 {
		bad("server.latency_monitor_threshold", "must be 0 (off) or milliseconds, got %d", c.Server.LatencyMonitorThreshold)
	}
	if c.Server.Timeout < 0 {
		bad("server.timeout", "must be 0 (no timeout) or a number of seconds, got %d", c.Server.Timeout)
	}
	switch c.Server.EnableModuleCommand {
	case "yes", "no", "local":
	default:
		bad("server.enable_module_command", `must be "yes", "no" or "local", got %q`, c.Server.EnableModuleCommand)
	}
	if c.Server.ShutdownTimeout < 0 {
		bad("server.shutdown_timeout", "must not be negative")
	}
	if c.Server.Procs < 0 || c.Server.Procs > 1024 {
		bad("server.procs", "must be 0 (all CPUs) or between 1 and 1024, got %d", c.Server.Procs)
	}
	if d := c.Server.BlockPollInterval.D(); d < 0 || d > 0 && d < time.Millisecond {
		bad("server.block_poll_interval", "must be 0 (never poll) or at least 1ms, got %s", d)
	}

	switch c.Store.Backend {
	case "memory", "aerospike":
	default:
		bad("store.backend", `must be "memory" or "aerospike", got %q`, c.Store.Backend)
	}

	a := &c.Aerospike
	if len(a.Hosts) == 0 {
		bad("aerospike.hosts", "needs at least one host:port")
	}
	for _, h := range a.Hosts {
		if err := checkHostPort(h); err != nil {
			bad("aerospike.hosts", "%v", err)
		}
	}
	if a.Namespace == "" {
		bad("aerospike.namespace", "must not be empty")
	}
	if a.Set == "" {
		bad("aerospike.set", "must not be empty")
	}
	if (a.TLSCertFile == "") != (a.TLSKeyFile == "") {
		bad("aerospike.tls_cert_file", "tls_cert_file and tls_key_file go together")
	}
	for _, d := range []struct {
		key string
		d   Duration
	}{
		{"aerospike.connect_timeout", a.ConnectTimeout},
		{"aerospike.socket_timeout", a.SocketTimeout},
		{"aerospike.total_timeout", a.TotalTimeout},
	} {
		if d.d < 0 {
			bad(d.key, "must not be negative")
		}
	}
	if a.MaxRetries < 0 {
		bad("aerospike.max_retries", "must not be negative, got %d", a.MaxRetries)
	}
	if a.ConnectionQueueSize < 0 {
		bad("aerospike.connection_queue_size", "must not be negative, got %d", a.ConnectionQueueSize)
	}
	if a.MaxRecordBytes < 0 {
		bad("aerospike.max_record_bytes", "must not be negative, got %d", a.MaxRecordBytes)
	}
	if a.BatchSize < 1 || a.BatchSize > 5000 {
		bad("aerospike.batch_size", "must be 1 (no gathering) to 5000, got %d", a.BatchSize)
	}
	if a.BatchCalls < 1 {
		bad("aerospike.batch_calls", "must be at least 1, got %d", a.BatchCalls)
	}

	if c.Commands.Dir == "" {
		bad("commands.dir", "must not be empty")
	}
	if c.Commands.Instances < 0 {
		bad("commands.instances", "must be 0 (two per CPU) or more, got %d", c.Commands.Instances)
	}
	if c.Commands.Deadline <= 0 {
		bad("commands.deadline", "must be positive")
	}
	// A wasm32 memory holds at most 4 GiB.
	if c.Commands.MemoryLimitMiB < 1 || c.Commands.MemoryLimitMiB > 4096 {
		bad("commands.memory_limit_mib", "must be between 1 and 4096, got %d", c.Commands.MemoryLimitMiB)
	}
	if c.Commands.IdleTimeout < 0 {
		bad("commands.idle_timeout", "must be 0 (never release) or positive")
	}
	if c.Commands.RecycleMemoryMiB < 0 || c.Commands.RecycleMemoryMiB > 4096 {
		bad("commands.recycle_memory_mib", "must be 0 (never) or up to 4096, got %d", c.Commands.RecycleMemoryMiB)
	}
	if c.Commands.DeployPollInterval < 0 {
		bad("commands.deploy_poll_interval", "must be 0 (off) or positive")
	}
	if c.Commands.DeployHeartbeatInterval < 0 {
		bad("commands.deploy_heartbeat_interval", "must be 0 (off) or positive")
	}
	if c.Commands.DeployStaleAfter < 0 {
		bad("commands.deploy_stale_after", "must be 0 (three heartbeat intervals) or positive")
	} else if hb := c.Commands.DeployHeartbeatInterval; c.Commands.DeployStaleAfter > 0 && hb > 0 && c.Commands.DeployStaleAfter <= hb {
		bad("commands.deploy_stale_after", "must be longer than deploy_heartbeat_interval (%s), got %s", hb.D(), c.Commands.DeployStaleAfter.D())
	}
	if c.Commands.DeployForgetAfter < 0 {
		bad("commands.deploy_forget_after", "must be 0 (never) or positive")
	}
	if c.Commands.DeployChunkBytes < 1<<10 || c.Commands.DeployChunkBytes > 8<<20 {
		bad("commands.deploy_chunk_bytes", "must be between 1KiB and 8MiB, got %d", c.Commands.DeployChunkBytes)
	}

	switch strings.ToLower(c.Log.Level) {
	case "debug", "info", "warn", "error":
	default:
		bad("log.level", `must be "debug", "info", "warn" or "error", got %q`, c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		bad("log.format", `must be "text" or "json", got %q`, c.Log.Format)
	}
	return errors.Join(errs...)
}

// ResolvedCacheDir returns the folder for compiled modules, or "" when caching is
// off (disabled, or no user cache directory exists).
func (c *Commands) ResolvedCacheDir() string {
	switch c.CacheDir {
	case "none":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "respike", "wazero")
	}
	return c.CacheDir
}

func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q out of range 0..65535", port)
	}
	return nil
}

// keyLine finds the line of key k in the TOML text, for error messages: the
// library does not expose key positions. It returns 0 when unsure.
func keyLine(data []byte, k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	want := k[len(k)-1]
	table := strings.Join(k[:len(k)-1], ".")
	cur := ""
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(t, "[] \t")
			if j := strings.IndexByte(name, '#'); j >= 0 {
				name = strings.TrimRight(strings.TrimSpace(name[:j]), "]")
			}
			cur = strings.TrimSpace(name)
			if len(k) == 1 && cur == want {
				return i + 1
			}
			continue
		}
		if cur != table {
			continue
		}
		if eq := strings.IndexByte(t, '='); eq > 0 {
			name := strings.Trim(strings.TrimSpace(t[:eq]), `"'`)
			if name == want {
				return i + 1
			}
		}
	}
	return 0
}

// Duration is a time.Duration written as a string such as "250ms" or "2s".
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf(`invalid duration %q (want e.g. "250ms", "2s", "1m")`, b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Size is a byte count written as an integer or as a string with a Redis
// memory unit: "1k" is 1000 bytes, "1kb" 1024; likewise m/mb and g/gb.
type Size int64

// UnmarshalTOML accepts an integer or a string with a unit.
func (s *Size) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		*s = Size(v)
		return nil
	case string:
		n, err := ParseSize(v)
		if err != nil {
			return err
		}
		*s = Size(n)
		return nil
	}
	return fmt.Errorf("invalid size %v (want bytes or a string such as \"512mb\")", v)
}

// ParseSize parses a byte count with an optional Redis memory unit.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q (want bytes or a string such as \"512mb\")", s)
	}
	return n * mult, nil
}
