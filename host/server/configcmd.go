package server

import (
	"net"
	"strconv"
	"strings"
)

// CONFIG subcommands. respike's configuration lives in its TOML file;
// CONFIG GET answers the parameters clients and tools commonly probe, with
// respike's real values, and CONFIG SET accepts only changes that change
// nothing.

// configParam is one parameter CONFIG GET knows.
type configParam struct {
	name string
	get  func(s *Server) string
	// settable reports whether CONFIG SET may accept any value because the
	// parameter has no meaning for respike (e.g. "save").
	settable bool
}

func configParams() []configParam {
	constant := func(v string) func(*Server) string { return func(*Server) string { return v } }
	return []configParam{
		{name: "bind", get: func(s *Server) string {
			host, _, _ := net.SplitHostPort(s.cfg.Server.Listen)
			return host
		}},
		{name: "port", get: (*Server).portString},
		{name: "databases", get: func(s *Server) string { return strconv.Itoa(s.cfg.Server.Databases) }},
		{name: "maxclients", get: func(s *Server) string { return strconv.Itoa(s.cfg.Server.MaxClients) }},
		{name: "timeout", get: func(s *Server) string { return strconv.Itoa(s.cfg.Server.Timeout) }},
		{name: "proto-max-bulk-len", get: func(s *Server) string { return strconv.FormatInt(s.maxBulk, 10) }},
		// The password itself is never shown.
		{name: "requirepass", get: func(s *Server) string {
			if s.password == "" {
				return ""
			}
			return "<hidden>"
		}},
		{name: "save", get: constant(""), settable: true},
		{name: "appendonly", get: constant("no")},
		{name: "appendfsync", get: constant("everysec"), settable: true},
		{name: "maxmemory", get: constant("0")},
		{name: "maxmemory-policy", get: constant("noeviction")},
		{name: "cluster-enabled", get: constant("no")},
		{name: "notify-keyspace-events", get: constant("")},
		{name: "enable-module-command", get: func(s *Server) string { return s.cfg.Server.EnableModuleCommand }},
		{name: "loglevel", get: func(s *Server) string {
			switch strings.ToLower(s.cfg.Log.Level) {
			case "debug":
				return "debug"
			case "warn":
				return "warning"
			case "error":
				return "warning"
			}
			return "notice"
		}},
	}
}

// cmdConfigGet implements CONFIG GET pattern [pattern ...].
func cmdConfigGet(c *client, args [][]byte) {
	var names, values []string
	for _, p := range configParams() {
		for _, pat := range args[2:] {
			if globMatch(string(pat), p.name, true) {
				names = append(names, p.name)
				values = append(values, p.get(c.s))
				break
			}
		}
	}
	c.w.Map(len(names))
	for i := range names {
		c.w.BulkString(names[i])
		c.w.BulkString(values[i])
	}
}

// cmdConfigSet implements CONFIG SET param value [param value ...]: a
// parameter respike ignores, or a value equal to the current one, is
// accepted; anything else is refused naming the parameter.
func cmdConfigSet(c *client, args [][]byte) {
	if len(args)%2 != 0 {
		c.w.Error("ERR wrong number of arguments for 'config|set' command")
		return
	}
	params := configParams()
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		var p *configParam
		for j := range params {
			if params[j].name == name {
				p = &params[j]
			}
		}
		if p == nil {
			c.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + string(args[i]) + "'")
			return
		}
		if !p.settable && !strings.EqualFold(string(args[i+1]), p.get(c.s)) {
			c.w.Error("ERR CONFIG SET failed (possibly related to argument '" + name +
				"') - respike does not change it at run time; edit the configuration file")
			return
		}
	}
	c.w.OK()
}

func cmdConfigResetstat(c *client, _ [][]byte) {
	c.s.stats.reset()
	c.w.OK()
}

func cmdConfigRewrite(c *client, _ [][]byte) {
	c.w.Error("ERR CONFIG REWRITE is not supported by respike: edit the configuration file")
}

func cmdConfigHelp(c *client, _ [][]byte) {
	writeHelp(c, "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Accepted only for parameters respike ignores or for the current value.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Not supported: edit the configuration file.",
		"HELP",
		"    Prints this help.")
}
