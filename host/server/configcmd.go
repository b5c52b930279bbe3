package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/respike/respike/host/config"
)

// CONFIG subcommands. CONFIG GET and CONFIG SET know Redis 7.0's
// parameters (configtable.go). A few are live: maxclients, timeout,
// proto-max-bulk-len, requirepass and loglevel change respike's behaviour
// at once, and CONFIG REWRITE writes them back to the TOML file. The
// others are validated as Redis validates them and remembered, so that a
// tool that tunes a Redis server (CONFIG SET hash-max-listpack-entries 64)
// is answered as Redis answers it; docs/operations.md says what each
// means, or does not, on respike.

// liveParam is a parameter that is respike's own setting.
type liveParam struct {
	get func(s *Server) string
	// set applies a validated value; an error text refuses it.
	set func(s *Server, v string) string
	// toml names the key CONFIG REWRITE writes: section and key.
	section, key string
	// tomlValue renders the value for the file (a TOML literal).
	tomlValue func(v string) string
}

// liveParams are the parameters respike honours, by canonical name.
var liveParams = map[string]liveParam{
	"maxclients": {
		get: func(s *Server) string { return strconv.FormatInt(s.maxClients.Load(), 10) },
		set: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.maxClients.Store(n)
			return ""
		},
		section: "server", key: "max_clients", tomlValue: func(v string) string { return v },
	},
	"timeout": {
		get: func(s *Server) string { return strconv.FormatInt(s.idle.Load()/int64(time.Second), 10) },
		set: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.idle.Store(n * int64(time.Second))
			// Connections waiting for input take the new limit now, as
			// Redis's cron applies it to every client.
			var deadline time.Time
			if n > 0 {
				deadline = time.Now().Add(time.Duration(n) * time.Second)
			}
			s.mu.Lock()
			for _, c := range s.clients {
				_ = c.conn.SetReadDeadline(deadline)
			}
			s.mu.Unlock()
			return ""
		},
		section: "server", key: "timeout", tomlValue: func(v string) string { return v },
	},
	"proto-max-bulk-len": {
		get:     func(s *Server) string { return strconv.FormatInt(s.maxBulk.Load(), 10) },
		set:     func(s *Server, v string) string { n, _ := strconv.ParseInt(v, 10, 64); s.maxBulk.Store(n); return "" },
		section: "server", key: "proto_max_bulk_len", tomlValue: tomlString,
	},
	// Redis shows requirepass in clear to a client allowed to run CONFIG;
	// so does respike (a client that may run CONFIG SET could change it).
	"requirepass": {
		get:     func(s *Server) string { return s.requirePass() },
		set:     func(s *Server, v string) string { s.setRequirePass(v); return "" },
		section: "server", key: "password", tomlValue: tomlString,
	},
	"loglevel": {
		get: func(s *Server) string { return s.conf.get("loglevel") },
		set: func(s *Server, v string) string {
			if s.logLevel != nil {
				s.logLevel.Set(map[string]slog.Level{"debug": slog.LevelDebug, "verbose": slog.LevelDebug,
					"notice": slog.LevelInfo, "warning": slog.LevelWarn}[v])
			}
			return ""
		},
		section: "log", key: "level", tomlValue: func(v string) string {
			return tomlString(map[string]string{"debug": "debug", "verbose": "debug", "notice": "info", "warning": "warn"}[v])
		},
	},
	"slowlog-log-slower-than": {
		get: func(s *Server) string { return strconv.FormatInt(s.slowlogThreshold.Load(), 10) },
		set: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.slowlogThreshold.Store(n)
			s.refreshSlowFloor()
			return ""
		},
		section: "server", key: "slowlog_log_slower_than", tomlValue: func(v string) string { return v },
	},
	"slowlog-max-len": {
		get: func(s *Server) string { return strconv.FormatInt(s.slowlogMax.Load(), 10) },
		set: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.slowlogMax.Store(n)
			s.slowlog.mu.Lock()
			if int64(len(s.slowlog.entries)) > n {
				s.slowlog.entries = s.slowlog.entries[:n]
			}
			s.slowlog.mu.Unlock()
			return ""
		},
		section: "server", key: "slowlog_max_len", tomlValue: func(v string) string { return v },
	},
	"latency-monitor-threshold": {
		get: func(s *Server) string { return strconv.FormatInt(s.latencyThreshold.Load(), 10) },
		set: func(s *Server, v string) string {
			n, _ := strconv.ParseInt(v, 10, 64)
			s.latencyThreshold.Store(n)
			s.refreshSlowFloor()
			return ""
		},
		section: "server", key: "latency_monitor_threshold", tomlValue: func(v string) string { return v },
	},
	"protected-mode": {
		get: func(s *Server) string {
			if s.protectedMode.Load() {
				return "yes"
			}
			return "no"
		},
		set:     func(s *Server, v string) string { s.protectedMode.Store(v == "yes"); return "" },
		section: "server", key: "protected_mode", tomlValue: func(v string) string { return strconv.FormatBool(v == "yes") },
	},
	"latency-tracking": {
		get: func(s *Server) string {
			if s.latencyTracking.Load() {
				return "yes"
			}
			return "no"
		},
		set: func(s *Server, v string) string { s.latencyTracking.Store(v == "yes"); return "" },
	},
	// The listener is fixed at startup: CONFIG SET port accepts only the
	// current port.
	"port": {
		get: (*Server).portString,
		set: func(s *Server, v string) string {
			if v != s.portString() {
				return "respike does not change its listener at run time; edit [server] listen in the configuration file"
			}
			return ""
		},
	},
	"bind": {get: func(s *Server) string {
		host, _, _ := net.SplitHostPort(s.cfg.Server.Listen)
		return host
	}},
	"tls-port":              {get: func(s *Server) string { return strconv.FormatInt(s.tlsPort.Load(), 10) }, set: tlsFixed},
	"tls-cert-file":         {get: func(s *Server) string { return s.cfg.TLS.CertFile }, set: tlsFixed},
	"tls-key-file":          {get: func(s *Server) string { return s.cfg.TLS.KeyFile }, set: tlsFixed},
	"tls-ca-cert-file":      {get: func(s *Server) string { return s.cfg.TLS.CACertFile }, set: tlsFixed},
	"tls-auth-clients":      {get: func(s *Server) string { return s.cfg.TLS.AuthClients }, set: tlsFixed},
	"tls-protocols":         {get: func(s *Server) string { return s.cfg.TLS.Protocols }, set: tlsFixed},
	"tls-ciphers":           {get: func(s *Server) string { return s.cfg.TLS.Ciphers }, set: tlsFixed},
	"databases":             {get: func(s *Server) string { return strconv.Itoa(s.cfg.Server.Databases) }},
	"enable-module-command": {get: func(s *Server) string { return s.cfg.Server.EnableModuleCommand }},
	"dir": {get: func(*Server) string {
		wd, _ := os.Getwd()
		return wd
	}},
	"hz": {get: func(s *Server) string { return s.conf.get("hz") }, set: func(s *Server, v string) string {
		// Redis keeps hz within [1, 500].
		n, _ := strconv.ParseInt(v, 10, 64)
		s.conf.put("hz", strconv.FormatInt(min(max(n, 1), 500), 10))
		return ""
	}},
}

// tlsFixed refuses a change of the TLS setup at run time: it is the
// [tls] section's, and SIGHUP reloads its files.
func tlsFixed(*Server, string) string {
	return "respike takes its TLS setup from the [tls] section of the configuration file; SIGHUP reloads the certificate files"
}

// configStore holds the remembered values of the parameters that are not
// live.
type configStore struct {
	mu   sync.Mutex
	vals map[string]string // by canonical name
}

func (cs *configStore) get(name string) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if v, ok := cs.vals[name]; ok {
		return v
	}
	return byName[name].def
}

func (cs *configStore) put(name, v string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.vals == nil {
		cs.vals = map[string]string{}
	}
	cs.vals[name] = v
}

// configValue is the value CONFIG GET shows for p.
func (s *Server) configValue(p *param) string {
	if lp, ok := liveParams[p.name]; ok && lp.get != nil {
		return lp.get(s)
	}
	return s.conf.get(p.name)
}

// cmdConfigGet implements CONFIG GET pattern [pattern ...]: each parameter
// whose name or alias matches a pattern, once, under the name matched.
func cmdConfigGet(c *client, args [][]byte) {
	var names, values []string
	for _, p := range params {
		for _, name := range []string{p.name, p.alias} {
			if name == "" {
				continue
			}
			for _, pat := range args[2:] {
				if globMatch(string(pat), name, true) {
					names = append(names, name)
					values = append(values, c.s.configValue(p))
					break
				}
			}
		}
	}
	c.w.Map(len(names))
	for i := range names {
		c.w.BulkString(names[i])
		c.w.BulkString(values[i])
	}
}

// cmdConfigSet implements CONFIG SET param value [param value ...] as Redis
// 7.0 does: all or nothing (arity, -4, is checked by the caller). Every name is checked first (unknown,
// immutable, protected, duplicate), then every value; nothing is applied
// unless all are valid.
func cmdConfigSet(c *client, args [][]byte) {
	if len(args)%2 != 0 {
		c.w.Error("ERR syntax error")
		return
	}
	fail := func(name, why string) {
		c.w.Error("ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + why)
	}
	// As in Redis 7.0, a name given twice is refused but a name and its
	// alias are not: the last one wins.
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		p := byName[name]
		switch {
		case p == nil:
			c.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + string(args[i]) + "'")
			return
		case p.immutable:
			fail(name, "can't set immutable config")
			return
		case p.protected:
			fail(name, "can't set protected config")
			return
		case seen[name]:
			fail(name, "duplicate parameter")
			return
		}
		seen[name] = true
	}
	type change struct {
		p    *param
		name string
		v    string
	}
	var changes []change
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		p := byName[name]
		v, why := p.validate(string(args[i+1]))
		if why != "" {
			fail(name, why)
			return
		}
		changes = append(changes, change{p, name, v})
	}
	// A live parameter may still refuse (port): check those before any
	// change applies.
	for _, ch := range changes {
		if ch.p.name == "port" || strings.HasPrefix(ch.p.name, "tls-") && liveParams[ch.p.name].set != nil {
			if why := liveParams[ch.p.name].set(c.s, ch.v); why != "" {
				fail(ch.name, why)
				return
			}
		}
	}
	for _, ch := range changes {
		if lp, ok := liveParams[ch.p.name]; ok && lp.set != nil {
			lp.set(c.s, ch.v)
		}
		if ch.p.name != "hz" {
			c.s.conf.put(ch.p.name, ch.v)
		}
	}
	c.w.OK()
}

func cmdConfigResetstat(c *client, _ [][]byte) {
	c.s.stats.reset()
	c.w.OK()
}

// cmdConfigRewrite writes the live parameters' current values back to the
// TOML file respike started from, keeping its comments and every other
// line. The other parameters have no place in the file: respike does not
// act on them.
func cmdConfigRewrite(c *client, _ [][]byte) {
	path := c.s.cfg.Path
	if path == "" {
		c.w.Error("ERR The server is running without a config file")
		return
	}
	if err := c.s.rewriteConfig(path); err != nil {
		c.s.log.Warn("CONFIG REWRITE failed", "err", err)
		c.w.Error("ERR Rewriting config file: " + err.Error())
		return
	}
	c.s.log.Warn("CONFIG REWRITE executed with success", "file", path)
	c.w.OK()
}

// rewriteConfig sets the live parameters' keys in the file at path, then
// replaces it atomically, after checking that the result still loads.
func (s *Server) rewriteConfig(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	text := old
	for _, name := range []string{"maxclients", "timeout", "proto-max-bulk-len", "requirepass", "loglevel",
		"slowlog-log-slower-than", "slowlog-max-len", "latency-monitor-threshold", "protected-mode"} {
		lp := liveParams[name]
		text = setTOMLKey(text, lp.section, lp.key, lp.tomlValue(s.configValue(byName[name])))
	}
	if bytes.Equal(text, old) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".respike-rewrite-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if st, err := os.Stat(path); err == nil {
		_ = tmp.Chmod(st.Mode().Perm())
	}
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if _, err := config.Load(tmp.Name()); err != nil {
		return fmt.Errorf("the rewritten file would not load, left unchanged: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// tomlSection matches a table header line.
var tomlSection = regexp.MustCompile(`^\s*\[([A-Za-z0-9_.-]+)\]\s*(#.*)?$`)

// setTOMLKey sets key = value in [section] of a TOML text: the key's line
// if it has one (commented-out lines are left alone), else a new line
// right after the section header, else a new section at the end.
func setTOMLKey(text []byte, section, key, value string) []byte {
	lines := strings.SplitAfter(string(text), "\n")
	keyLine := regexp.MustCompile(`^\s*` + regexp.QuoteMeta(key) + `\s*=`)
	cur, header := "", -1
	for i, l := range lines {
		if m := tomlSection.FindStringSubmatch(strings.TrimRight(l, "\r\n")); m != nil {
			cur = m[1]
			if cur == section {
				header = i
			}
			continue
		}
		if cur == section && keyLine.MatchString(l) {
			lines[i] = key + " = " + value + "\n"
			return []byte(strings.Join(lines, ""))
		}
	}
	line := key + " = " + value + "\n"
	if header >= 0 {
		lines = append(lines[:header+1], append([]string{line}, lines[header+1:]...)...)
		return []byte(strings.Join(lines, ""))
	}
	out := strings.Join(lines, "")
	if out != "" && !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return []byte(out + "\n[" + section + "]\n" + line)
}

// tomlString renders s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func cmdConfigHelp(c *client, _ [][]byte) {
	writeHelp(c, "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
		"HELP",
		"    Prints this help.")
}
