package server

import (
	"sort"
	"strings"
)

// maxBuiltinName bounds builtin and subcommand names, so that lookups can
// lower-case a name into a fixed array.
const maxBuiltinName = 32

// builtin is a command the host serves itself. Its fields other than run
// and subs are what COMMAND reports; they follow Redis 7's own command table
// so that COMMAND INFO answers as Redis does.
type builtin struct {
	name     string // lower case; "client|id" for a subcommand
	arity    int
	flags    []string
	acl      []string // ACL categories, with '@'
	tips     []string
	firstKey int
	lastKey  int
	step     int
	group    string
	since    string
	summary  string

	noAuth       bool // may run before AUTH
	multiControl bool // runs at once inside MULTI instead of being queued
	run          func(c *client, args [][]byte)
	subs         []*builtin // subcommands of a container command; nil otherwise
	subIndex     map[string]*builtin
	idx          int // index of the statistics record
}

// table is the immutable set of builtins.
type table struct {
	top    []*builtin // sorted by name
	all    []*builtin // top-level and subcommands, by idx
	byName map[string]*builtin
}

// builtins is built once by init and never changed: it is the single table
// behind dispatch, COMMAND, INFO commandstats and module.Config.Reserved.
// (An init function rather than a var initialiser, because handlers such as
// COMMAND read the table themselves.)
var builtins *table

func init() { builtins = newTable(builtinCommands()) }

func newTable(cmds []*builtin) *table {
	t := &table{byName: make(map[string]*builtin)}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	for _, b := range cmds {
		if len(b.name) > maxBuiltinName || t.byName[b.name] != nil {
			panic("server: bad builtin table entry " + b.name)
		}
		b.idx = len(t.all)
		t.all = append(t.all, b)
		t.byName[b.name] = b
		t.top = append(t.top, b)
		if b.subs == nil {
			continue
		}
		sort.Slice(b.subs, func(i, j int) bool { return b.subs[i].name < b.subs[j].name })
		b.subIndex = make(map[string]*builtin)
		for _, s := range b.subs {
			short := strings.TrimPrefix(s.name, b.name+"|")
			if len(short) > maxBuiltinName || s.name == short {
				panic("server: bad subcommand " + s.name)
			}
			s.group, s.noAuth, s.multiControl = b.group, b.noAuth, b.multiControl
			s.idx = len(t.all)
			t.all = append(t.all, s)
			b.subIndex[short] = s
		}
	}
	return t
}

// lookup finds a top-level builtin by its lower-case name.
func (t *table) lookup(lower []byte) *builtin { return t.byName[string(lower)] }

// sub finds a subcommand, case-insensitively, using scratch to lower-case.
func (b *builtin) sub(name, scratch []byte) *builtin {
	if len(name) > maxBuiltinName {
		return nil
	}
	return b.subIndex[string(lowerInto(scratch, name))]
}

// builtinCommands returns the builtin table. Each family's handlers live in
// their own file: connection.go, clientcmd.go, commandcmd.go, info.go,
// configcmd.go, keyspace.go, modulecmd.go, multi.go.
func builtinCommands() []*builtin {
	conn := func(b *builtin) *builtin { b.group = "connection"; return b }
	srv := func(b *builtin) *builtin { b.group = "server"; return b }
	tx := func(b *builtin) *builtin { b.group = "transactions"; return b }
	fastConn := []string{"@fast", "@connection"}
	noAuthFlags := []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}
	subFlags := []string{"noscript", "loading", "stale"}
	adminSubFlags := []string{"admin", "noscript", "loading", "stale"}
	slowConn := []string{"@slow", "@connection"}
	adminConn := []string{"@admin", "@slow", "@dangerous", "@connection"}
	admin := []string{"@admin", "@slow", "@dangerous"}
	latencyTips := []string{"nondeterministic_output", "request_policy:all_nodes", "response_policy:special"}
	txFlags := []string{"noscript", "loading", "stale", "fast", "allow_busy"}
	fastTx := []string{"@fast", "@transaction"}

	return []*builtin{
		// Connection: connection.go.
		conn(&builtin{name: "ping", arity: -1, flags: []string{"fast"}, acl: fastConn,
			tips:  []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			since: "1.0.0", summary: "Ping the server", run: cmdPing}),
		conn(&builtin{name: "echo", arity: 2, flags: []string{"loading", "stale", "fast"}, acl: fastConn,
			since: "1.0.0", summary: "Echo the given string", run: cmdEcho}),
		conn(&builtin{name: "quit", arity: -1, flags: noAuthFlags, acl: fastConn, noAuth: true, multiControl: true,
			since: "1.0.0", summary: "Close the connection", run: cmdQuit}),
		conn(&builtin{name: "reset", arity: 1, flags: noAuthFlags, acl: fastConn, noAuth: true, multiControl: true,
			since: "6.2.0", summary: "Reset the connection", run: cmdReset}),
		conn(&builtin{name: "select", arity: 2, flags: []string{"loading", "stale", "fast"}, acl: fastConn,
			since: "1.0.0", summary: "Change the selected database for the current connection", run: cmdSelect}),
		conn(&builtin{name: "auth", arity: -2, flags: noAuthFlags, acl: fastConn, noAuth: true,
			since: "1.0.0", summary: "Authenticate to the server", run: cmdAuth}),
		conn(&builtin{name: "hello", arity: -1, flags: noAuthFlags, acl: fastConn, noAuth: true,
			since: "6.0.0", summary: "Handshake with Redis", run: cmdHello}),

		// CLIENT: clientcmd.go.
		conn(&builtin{name: "client", arity: -2, flags: []string{}, acl: []string{"@slow"},
			since: "2.4.0", summary: "A container for client connection commands", subs: []*builtin{
				{name: "client|getname", arity: 2, flags: subFlags, acl: slowConn,
					since: "2.6.9", summary: "Get the current connection name", run: cmdClientGetname},
				{name: "client|help", arity: 2, flags: []string{"loading", "stale"}, acl: slowConn,
					since: "5.0.0", summary: "Show helpful text about the different subcommands", run: cmdClientHelp},
				{name: "client|id", arity: 2, flags: subFlags, acl: slowConn,
					since: "5.0.0", summary: "Returns the client ID for the current connection", run: cmdClientID},
				{name: "client|info", arity: 2, flags: subFlags, acl: slowConn, tips: []string{"nondeterministic_output"},
					since: "6.2.0", summary: "Returns information about the current client connection.", run: cmdClientInfo},
				{name: "client|kill", arity: -3, flags: adminSubFlags, acl: adminConn,
					since: "2.4.0", summary: "Kill the connection of a client", run: cmdClientKill},
				{name: "client|list", arity: -2, flags: adminSubFlags, acl: adminConn, tips: []string{"nondeterministic_output"},
					since: "2.4.0", summary: "Get the list of client connections", run: cmdClientList},
				{name: "client|no-evict", arity: 3, flags: adminSubFlags, acl: adminConn,
					since: "7.0.0", summary: "Set client eviction mode for the current connection", run: cmdClientNoEvict},
				{name: "client|no-touch", arity: 3, flags: []string{"noscript", "loading", "stale"}, acl: slowConn,
					since: "7.2.0", summary: "Controls whether commands sent by the client will alter the LRU/LFU of the keys they access.", run: cmdClientNoTouch},
				{name: "client|reply", arity: 3, flags: subFlags, acl: slowConn,
					since: "3.2.0", summary: "Instruct the server whether to reply to commands", run: cmdClientReply},
				{name: "client|setinfo", arity: 4, flags: []string{"noscript", "loading", "stale"}, acl: slowConn,
					since: "7.2.0", summary: "Set client or connection specific info", run: cmdClientSetinfo},
				{name: "client|setname", arity: 3, flags: subFlags, acl: slowConn,
					since: "2.6.9", summary: "Set the current connection name", run: cmdClientSetname},
				{name: "client|unblock", arity: -3, flags: adminSubFlags, acl: adminConn,
					since: "5.0.0", summary: "Unblock a client blocked in a blocking command from a different connection", run: cmdClientUnblock},
			}}),

		// COMMAND: commandcmd.go.
		srv(&builtin{name: "command", arity: -1, flags: []string{"loading", "stale"}, acl: slowConn,
			tips: []string{"nondeterministic_output_order"}, since: "2.8.13",
			summary: "Get array of Redis command details", run: cmdCommand, subs: []*builtin{
				{name: "command|count", arity: 2, flags: []string{"loading", "stale"}, acl: slowConn,
					since: "2.8.13", summary: "Get total number of Redis commands", run: cmdCommandCount},
				{name: "command|docs", arity: -2, flags: []string{"loading", "stale"}, acl: slowConn,
					tips: []string{"nondeterministic_output_order"}, since: "7.0.0",
					summary: "Get array of specific Redis command documentation", run: cmdCommandDocs},
				{name: "command|getkeys", arity: -4, flags: []string{"loading", "stale"}, acl: slowConn,
					since: "2.8.13", summary: "Extract keys given a full Redis command", run: cmdCommandGetkeys},
				{name: "command|help", arity: 2, flags: []string{"loading", "stale"}, acl: slowConn,
					since: "5.0.0", summary: "Show helpful text about the different subcommands", run: cmdCommandHelp},
				{name: "command|info", arity: -2, flags: []string{"loading", "stale"}, acl: slowConn,
					tips: []string{"nondeterministic_output_order"}, since: "2.8.13",
					summary: "Get array of specific Redis command details, or all when no argument is given.", run: cmdCommandInfo},
				{name: "command|list", arity: -2, flags: []string{"loading", "stale"}, acl: slowConn,
					tips: []string{"nondeterministic_output_order"}, since: "7.0.0",
					summary: "Get an array of Redis command names", run: cmdCommandList},
			}}),

		// Server: info.go, configcmd.go, keyspace.go.
		srv(&builtin{name: "info", arity: -1, flags: []string{"loading", "stale"}, acl: []string{"@slow", "@dangerous"},
			tips:  []string{"nondeterministic_output", "request_policy:all_shards", "response_policy:special"},
			since: "1.0.0", summary: "Get information and statistics about the server", run: cmdInfo}),
		srv(&builtin{name: "time", arity: 1, flags: []string{"loading", "stale", "fast"}, acl: []string{"@fast"},
			tips: []string{"nondeterministic_output"}, since: "2.6.0", summary: "Return the current server time", run: cmdTime}),
		srv(&builtin{name: "config", arity: -2, flags: []string{}, acl: []string{"@slow"},
			since: "2.0.0", summary: "A container for server configuration commands", subs: []*builtin{
				{name: "config|get", arity: -3, flags: adminSubFlags, acl: admin,
					since: "2.0.0", summary: "Get the values of configuration parameters", run: cmdConfigGet},
				{name: "config|help", arity: 2, flags: []string{"loading", "stale"}, acl: []string{"@slow"},
					since: "5.0.0", summary: "Show helpful text about the different subcommands", run: cmdConfigHelp},
				{name: "config|resetstat", arity: 2, flags: adminSubFlags, acl: admin,
					since: "2.0.0", summary: "Reset the stats returned by INFO", run: cmdConfigResetstat},
				{name: "config|rewrite", arity: 2, flags: adminSubFlags, acl: admin,
					since: "2.8.0", summary: "Rewrite the configuration file with the in memory configuration", run: cmdConfigRewrite},
				{name: "config|set", arity: -4, flags: adminSubFlags, acl: admin,
					tips:  []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					since: "2.0.0", summary: "Set configuration parameters to the given values", run: cmdConfigSet},
			}}),
		// MONITOR: monitor.go.
		srv(&builtin{name: "monitor", arity: 1, flags: []string{"admin", "noscript", "loading", "stale"}, acl: admin,
			since: "1.0.0", summary: "Listen for all requests received by the server in real time", run: cmdMonitor}),
		// SLOWLOG and LATENCY: monitorcmd.go.
		srv(&builtin{name: "slowlog", arity: -2, flags: []string{}, acl: []string{"@slow"},
			since: "2.2.12", summary: "A container for slow log commands", subs: []*builtin{
				{name: "slowlog|get", arity: -2, flags: []string{"admin", "loading", "stale"}, acl: admin,
					tips:  []string{"request_policy:all_nodes", "nondeterministic_output"},
					since: "2.2.12", summary: "Get the slow log's entries", run: cmdSlowlogGet},
				{name: "slowlog|help", arity: 2, flags: []string{"loading", "stale"}, acl: []string{"@slow"},
					since: "6.2.0", summary: "Show helpful text about the different subcommands", run: cmdSlowlogHelp},
				{name: "slowlog|len", arity: 2, flags: []string{"admin", "loading", "stale"}, acl: admin,
					tips:  []string{"request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"},
					since: "2.2.12", summary: "Get the slow log's length", run: cmdSlowlogLen},
				{name: "slowlog|reset", arity: 2, flags: []string{"admin", "loading", "stale"}, acl: admin,
					tips:  []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					since: "2.2.12", summary: "Clear all entries from the slow log", run: cmdSlowlogReset},
			}}),
		srv(&builtin{name: "latency", arity: -2, flags: []string{}, acl: []string{"@slow"},
			since: "2.8.13", summary: "A container for latency diagnostics commands", subs: []*builtin{
				{name: "latency|doctor", arity: 2, flags: adminSubFlags, acl: admin, tips: latencyTips,
					since: "2.8.13", summary: "Return a human readable latency analysis report", run: cmdLatencyDoctor},
				{name: "latency|graph", arity: 3, flags: adminSubFlags, acl: admin, tips: latencyTips,
					since: "2.8.13", summary: "Return a latency graph for the event", run: cmdLatencyGraph},
				{name: "latency|help", arity: 2, flags: []string{"loading", "stale"}, acl: []string{"@slow"},
					since: "2.8.13", summary: "Show helpful text about the different subcommands", run: cmdLatencyHelp},
				{name: "latency|histogram", arity: -2, flags: adminSubFlags, acl: admin, tips: latencyTips,
					since: "7.0.0", summary: "Return the cumulative distribution of latencies of a subset of commands or all commands", run: cmdLatencyHistogram},
				{name: "latency|history", arity: 3, flags: adminSubFlags, acl: admin, tips: latencyTips,
					since: "2.8.13", summary: "Return timestamp-latency samples for the event", run: cmdLatencyHistory},
				{name: "latency|latest", arity: 2, flags: adminSubFlags, acl: admin, tips: latencyTips,
					since: "2.8.13", summary: "Return the latest latency samples for all events", run: cmdLatencyLatest},
				{name: "latency|reset", arity: -2, flags: adminSubFlags, acl: admin,
					tips:  []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					since: "2.8.13", summary: "Reset latency data for one or more events", run: cmdLatencyReset},
			}}),
		srv(&builtin{name: "dbsize", arity: 1, flags: []string{"readonly", "fast"}, acl: []string{"@keyspace", "@read", "@fast"},
			tips:  []string{"request_policy:all_shards", "response_policy:agg_sum"},
			since: "1.0.0", summary: "Return the number of keys in the selected database", run: cmdDBSize}),
		srv(&builtin{name: "flushdb", arity: -1, flags: []string{"write"}, acl: []string{"@keyspace", "@write", "@slow", "@dangerous"},
			tips:  []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			since: "1.0.0", summary: "Remove all keys from the current database", run: cmdFlushDB}),
		srv(&builtin{name: "flushall", arity: -1, flags: []string{"write"}, acl: []string{"@keyspace", "@write", "@slow", "@dangerous"},
			tips:  []string{"request_policy:all_shards", "response_policy:all_succeeded"},
			since: "1.0.0", summary: "Remove all keys from all databases", run: cmdFlushAll}),
		srv(&builtin{name: "swapdb", arity: 3, flags: []string{"write", "fast"}, acl: []string{"@keyspace", "@write", "@fast", "@dangerous"},
			since: "4.0.0", summary: "Swaps two Redis databases", run: cmdSwapDB}),

		// MODULE: modulecmd.go.
		srv(&builtin{name: "module", arity: -2, flags: []string{}, acl: []string{"@slow"},
			since: "4.0.0", summary: "A container for module commands", subs: []*builtin{
				{name: "module|help", arity: 2, flags: []string{"loading", "stale"}, acl: []string{"@slow"},
					since: "5.0.0", summary: "Show helpful text about the different subcommands", run: cmdModuleHelp},
				{name: "module|list", arity: 2, flags: []string{"admin", "noscript"}, acl: admin,
					tips: []string{"nondeterministic_output_order"}, since: "4.0.0",
					summary: "List all modules loaded by the server", run: cmdModuleList},
				{name: "module|load", arity: -3, flags: []string{"admin", "noscript", "no_async_loading"}, acl: admin,
					since: "4.0.0", summary: "Load a module", run: cmdModuleLoad},
				{name: "module|unload", arity: 3, flags: []string{"admin", "noscript", "no_async_loading"}, acl: admin,
					since: "4.0.0", summary: "Unload a module", run: cmdModuleUnload},
				{name: "module|deploy", arity: 3, flags: []string{"admin", "noscript", "no_async_loading"}, acl: admin,
					summary: "Load a module here and deploy it to every proxy on the store", run: cmdModuleDeploy},
				{name: "module|undeploy", arity: 3, flags: []string{"admin", "noscript", "no_async_loading"}, acl: admin,
					summary: "Remove a deployed module from every proxy on the store", run: cmdModuleUndeploy},
				{name: "module|fleet", arity: 2, flags: []string{"admin", "noscript"}, acl: admin,
					summary: "Show what every proxy on the store serves of the deployed modules", run: cmdModuleFleet},
			}}),

		// ACL: aclcmd.go.
		srv(&builtin{name: "acl", arity: -2, flags: []string{}, acl: []string{"@slow"},
			since: "6.0.0", summary: "A container for Access List Control commands", subs: []*builtin{
				{name: "acl|cat", arity: -2, flags: subFlags, acl: []string{"@slow"},
					since: "6.0.0", summary: "List the ACL categories or the commands inside a category", run: cmdACLCat},
				{name: "acl|deluser", arity: -3, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "Remove the specified ACL users and the associated rules", run: cmdACLDeluser},
				{name: "acl|dryrun", arity: -4, flags: adminSubFlags, acl: admin,
					since: "7.0.0", summary: "Returns whether the user can execute the given command without executing the command.", run: cmdACLDryrun},
				{name: "acl|genpass", arity: -2, flags: subFlags, acl: []string{"@slow"},
					since: "6.0.0", summary: "Generate a pseudorandom secure password to use for ACL users", run: cmdACLGenpass},
				{name: "acl|getuser", arity: 3, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "Get the rules for a specific ACL user", run: cmdACLGetuser},
				{name: "acl|help", arity: 2, flags: []string{"loading", "stale"}, acl: []string{"@slow"},
					since: "6.0.0", summary: "Show helpful text about the different subcommands", run: cmdACLHelp},
				{name: "acl|list", arity: 2, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "List the current ACL rules in ACL config file format", run: cmdACLList},
				{name: "acl|load", arity: 2, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "Reload the ACLs from the configured ACL file", run: cmdACLNoFile},
				{name: "acl|log", arity: -2, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "List latest events denied because of ACLs in place", run: cmdACLLog},
				{name: "acl|save", arity: 2, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "Save the current ACL rules in the configured ACL file", run: cmdACLNoFile},
				{name: "acl|setuser", arity: -3, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "Modify or create the rules for a specific ACL user", run: cmdACLSetuser},
				{name: "acl|users", arity: 2, flags: adminSubFlags, acl: admin,
					since: "6.0.0", summary: "List the username of all the configured ACL users", run: cmdACLUsers},
				{name: "acl|whoami", arity: 2, flags: subFlags, acl: []string{"@slow"},
					since: "6.0.0", summary: "Return the name of the user associated to the current connection", run: cmdACLWhoami},
			}}),

		// Transactions: multi.go.
		tx(&builtin{name: "multi", multiControl: true, arity: 1, flags: txFlags, acl: fastTx,
			since: "1.2.0", summary: "Mark the start of a transaction block", run: cmdMulti}),
		tx(&builtin{name: "exec", multiControl: true, arity: 1, flags: []string{"noscript", "loading", "stale", "skip_slowlog"},
			acl: []string{"@slow", "@transaction"}, since: "1.2.0", summary: "Execute all commands issued after MULTI", run: cmdExec}),
		tx(&builtin{name: "discard", multiControl: true, arity: 1, flags: txFlags, acl: fastTx,
			since: "2.0.0", summary: "Discard all commands issued after MULTI", run: cmdDiscard}),
		tx(&builtin{name: "watch", multiControl: true, arity: -2, flags: txFlags, acl: fastTx, firstKey: 1, lastKey: -1, step: 1,
			since: "2.2.0", summary: "Watch the given keys to determine execution of the MULTI/EXEC block", run: cmdWatch}),
		tx(&builtin{name: "unwatch", arity: 1, flags: txFlags, acl: fastTx,
			since: "2.2.0", summary: "Forget about all watched keys", run: cmdUnwatch}),
	}
}
