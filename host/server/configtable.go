package server

import (
	"strconv"
	"strings"
)

// The parameters CONFIG GET and CONFIG SET know: Redis 7.0's, with its
// types, ranges, defaults and aliases, so that clients and tools that tune
// a Redis server (CONFIG SET hash-max-listpack-entries 128, ...) are
// answered as Redis answers them. Most have no effect on respike, where
// encodings, persistence and replication are Aerospike's business: their
// values are validated as Redis validates them and remembered, and
// docs/operations.md lists which ones respike honours.

// paramKind is how a parameter's value is parsed and validated.
type paramKind uint8

const (
	kindBool    paramKind = iota // yes/no
	kindInt                      // a decimal integer in [min, max]
	kindMemory                   // an integer with an optional unit (1kb, 5mb), in [min, max]
	kindPercent                  // a memory value, or a percentage (maxmemory-clients)
	kindEnum                     // one of choices
	kindFlags                    // several of choices, space separated (shutdown-on-sigint)
	kindString                   // anything
	kindSpecial                  // validated by check
)

// param is one CONFIG parameter.
type param struct {
	name, alias string
	kind        paramKind
	min, max    int64
	choices     []string
	def         string
	immutable   bool // set only at startup in Redis: CONFIG SET refuses it
	protected   bool // refused while enable-protected-configs is no (Redis's default)
	sensitive   bool // never shown by CONFIG GET's value (requirepass)
	// check validates a kindSpecial value and returns it normalised, or an
	// error text in Redis's words.
	check func(v string) (string, string)
}

// paramTable lists the parameters; one line each:
//
//	kind name[|alias] default [min max | choice,choice] [imm] [prot]
//
// kinds: b bool, i int, m memory, p memory-or-percent, e enum, f flags,
// s string, x special. The defaults are redis-server 7.0's.
const paramTable = `
b rdbchecksum yes imm
b daemonize no imm
b io-threads-do-reads no imm
b always-show-logo no imm
b protected-mode yes
b rdbcompression yes
b rdb-del-sync-files no
b activerehashing yes
b stop-writes-on-bgsave-error yes
b set-proc-title yes imm
b dynamic-hz yes
b lazyfree-lazy-eviction no
b lazyfree-lazy-expire no
b lazyfree-lazy-server-del no
b lazyfree-lazy-user-del no
b lazyfree-lazy-user-flush no
b repl-disable-tcp-nodelay no
b repl-diskless-sync yes
b aof-rewrite-incremental-fsync yes
b no-appendfsync-on-rewrite no
b cluster-require-full-coverage yes
b rdb-save-incremental-fsync yes
b aof-load-truncated yes
b aof-use-rdb-preamble yes
b aof-timestamp-enabled no
b cluster-replica-no-failover|cluster-slave-no-failover no
b replica-lazy-flush|slave-lazy-flush no
b replica-serve-stale-data|slave-serve-stale-data yes
b replica-read-only|slave-read-only yes
b replica-ignore-maxmemory|slave-ignore-maxmemory yes
b jemalloc-bg-thread yes
b activedefrag no
b syslog-enabled no imm
b cluster-enabled no imm
b appendonly no
b cluster-allow-reads-when-down no
b cluster-allow-pubsubshard-when-down yes
b crash-log-enabled yes
b crash-memcheck-enabled yes
b disable-thp yes
b cluster-allow-replica-migration yes
b replica-announced yes
b latency-tracking yes
b aof-disable-auto-gc no
b replica-ignore-disk-write-errors no
s aclfile - imm
s unixsocket - imm
s pidfile - imm
s replica-announce-ip|slave-announce-ip -
s masteruser -
s cluster-announce-ip -
s cluster-config-file nodes.conf imm
s cluster-announce-hostname -
s syslog-ident redis imm
s dbfilename dump.rdb prot
s appendfilename appendonly.aof imm
s appenddirname appendonlydir imm
s server_cpulist - imm
s bio_cpulist - imm
s aof_rewrite_cpulist - imm
s bgsave_cpulist - imm
s ignore-warnings -
s proc-title-template {title}_{listen-addr}_{server-mode}
s bind-source-addr -
s logfile - imm
s masterauth -
s requirepass -
x dir - prot
e supervised no upstart,systemd,auto,no imm
e syslog-facility local0 user,local0,local1,local2,local3,local4,local5,local6,local7 imm
e repl-diskless-load disabled disabled,on-empty-db,swapdb
e loglevel notice debug,verbose,notice,warning
e maxmemory-policy noeviction volatile-lru,volatile-lfu,volatile-random,volatile-ttl,allkeys-lru,allkeys-lfu,allkeys-random,noeviction
e appendfsync everysec always,everysec,no
e oom-score-adj no no,yes,relative,absolute
e acl-pubsub-default resetchannels allchannels,resetchannels
e sanitize-dump-payload no no,yes,clients
e enable-protected-configs no no,yes,local imm
e enable-debug-command no no,yes,local imm
e enable-module-command no no,yes,local imm
e cluster-preferred-endpoint-type ip ip,hostname,unknown-endpoint
e propagation-error-behavior ignore ignore,panic,panic-on-replicas
f shutdown-on-sigint default default,save,nosave,now,force
f shutdown-on-sigterm default default,save,nosave,now,force
i databases 16 1 2147483647 imm
i port 6379 0 65535
i io-threads 1 1 128 imm
i auto-aof-rewrite-percentage 100 0 2147483647
i cluster-replica-validity-factor|cluster-slave-validity-factor 10 0 2147483647
i list-max-listpack-size|list-max-ziplist-size -2 -2147483648 2147483647
i tcp-keepalive 300 0 2147483647
i cluster-migration-barrier 1 0 2147483647
i active-defrag-cycle-min 1 1 99
i active-defrag-cycle-max 25 1 99
i active-defrag-threshold-lower 10 0 1000
i active-defrag-threshold-upper 100 0 1000
i lfu-log-factor 10 0 2147483647
i lfu-decay-time 1 0 2147483647
i replica-priority|slave-priority 100 0 2147483647
i repl-diskless-sync-delay 5 0 2147483647
i maxmemory-samples 5 1 2147483647
i maxmemory-eviction-tenacity 10 0 100
i timeout 0 0 2147483647
i replica-announce-port|slave-announce-port 0 0 65535
i tcp-backlog 511 0 2147483647 imm
i cluster-port 0 0 65535 imm
i cluster-announce-bus-port 0 0 65535
i cluster-announce-port 0 0 65535
i cluster-announce-tls-port 0 0 65535
i repl-timeout 60 1 2147483647
i repl-ping-replica-period|repl-ping-slave-period 10 1 2147483647
i list-compress-depth 0 0 2147483647
i active-expire-effort 1 1 10
i hz 10 0 2147483647
i min-replicas-to-write|min-slaves-to-write 0 0 2147483647
i min-replicas-max-lag|min-slaves-max-lag 10 0 2147483647
i shutdown-timeout 10 0 2147483647
i repl-diskless-sync-max-replicas 0 0 2147483647
i maxclients 10000 1 4294967295
x unixsocketperm 0 imm
i active-defrag-max-scan-fields 1000 1 9223372036854775807
i slowlog-max-len 128 0 9223372036854775807
i acllog-max-len 128 0 9223372036854775807
i busy-reply-threshold|lua-time-limit 5000 0 9223372036854775807
i cluster-node-timeout 15000 0 9223372036854775807
i slowlog-log-slower-than 10000 -1 9223372036854775807
i latency-monitor-threshold 0 0 9223372036854775807
m proto-max-bulk-len 536870912 1048576 9223372036854775807
i stream-node-max-entries 100 0 9223372036854775807
m repl-backlog-size 1048576 1 9223372036854775807
m maxmemory 0 0 9223372036854775807
m cluster-link-sendbuf-limit 0 0 9223372036854775807
i hash-max-listpack-entries|hash-max-ziplist-entries 512 0 9223372036854775807
i set-max-intset-entries 512 0 9223372036854775807
i set-max-listpack-entries 128 0 9223372036854775807
m set-max-listpack-value 64 0 9223372036854775807
i zset-max-listpack-entries|zset-max-ziplist-entries 128 0 9223372036854775807
m active-defrag-ignore-bytes 104857600 1 9223372036854775807
m hash-max-listpack-value|hash-max-ziplist-value 64 0 9223372036854775807
m stream-node-max-bytes 4096 0 9223372036854775807
m zset-max-listpack-value|zset-max-ziplist-value 64 0 9223372036854775807
m hll-sparse-max-bytes 3000 0 9223372036854775807
i tracking-table-max-keys 1000000 0 9223372036854775807
m client-query-buffer-limit 1073741824 1048576 9223372036854775807
p maxmemory-clients 0 -100 9223372036854775807
i repl-backlog-ttl 3600 0 9223372036854775807
m auto-aof-rewrite-min-size 67108864 0 9223372036854775807
i tls-port 0 0 65535
i tls-session-cache-size 20480 0 2147483647
i tls-session-cache-timeout 300 0 2147483647
b tls-cluster no
b tls-replication no
e tls-auth-clients yes no,yes,optional
b tls-prefer-server-ciphers no
b tls-session-caching yes
s tls-cert-file -
s tls-key-file -
s tls-key-file-pass -
s tls-client-cert-file -
s tls-client-key-file -
s tls-client-key-file-pass -
s tls-dh-params-file -
s tls-ca-cert-file -
s tls-ca-cert-dir -
s tls-protocols -
s tls-ciphers -
s tls-ciphersuites -
x save -
x client-output-buffer-limit normal_0_0_0_slave_268435456_67108864_60_pubsub_33554432_8388608_60
x oom-score-adj-values 0_200_800
x notify-keyspace-events -
x bind *_-::*
s replicaof - imm
x latency-tracking-info-percentiles 50_99_99.9
`

// params is paramTable parsed, in its order; byName finds a parameter by
// its name or alias.
var params, byName = parseParams(paramTable)

func parseParams(table string) ([]*param, map[string]*param) {
	var list []*param
	idx := map[string]*param{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(line)
		p := &param{def: strings.ReplaceAll(f[2], "_", " ")}
		p.name, p.alias, _ = strings.Cut(f[1], "|")
		if p.def == "-" {
			p.def = ""
		}
		rest := f[3:]
		switch f[0] {
		case "b":
			p.kind = kindBool
		case "i", "m", "p":
			p.kind = map[string]paramKind{"i": kindInt, "m": kindMemory, "p": kindPercent}[f[0]]
			p.min, _ = strconv.ParseInt(rest[0], 10, 64)
			p.max, _ = strconv.ParseInt(rest[1], 10, 64)
			rest = rest[2:]
		case "e", "f":
			p.kind = kindEnum
			if f[0] == "f" {
				p.kind = kindFlags
			}
			p.choices = strings.Split(rest[0], ",")
			rest = rest[1:]
		case "s":
			p.kind = kindString
		case "x":
			p.kind = kindSpecial
			p.check = specialChecks[p.name]
		}
		for _, flag := range rest {
			switch flag {
			case "imm":
				p.immutable = true
			case "prot":
				p.protected = true
			}
		}
		p.sensitive = p.name == "requirepass" || p.name == "masterauth"
		list = append(list, p)
		idx[p.name] = p
		if p.alias != "" {
			idx[p.alias] = p
		}
	}
	return list, idx
}

// validate parses v for p as Redis's CONFIG SET does and returns the value
// CONFIG GET will show, or the reason it is refused, in Redis's words.
func (p *param) validate(v string) (string, string) {
	switch p.kind {
	case kindBool:
		switch strings.ToLower(v) {
		case "yes":
			return "yes", ""
		case "no":
			return "no", ""
		}
		return "", "argument must be 'yes' or 'no'"
	case kindInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", "argument couldn't be parsed into an integer"
		}
		return p.inRange(n)
	case kindMemory:
		n, ok := parseMemory(v)
		if !ok {
			return "", "argument must be a memory value"
		}
		return p.inRange(n)
	case kindPercent:
		if pct, ok := strings.CutSuffix(v, "%"); ok {
			n, err := strconv.ParseInt(pct, 10, 64)
			if err != nil || n < 0 {
				return "", "argument must be a memory or percent value"
			}
			if n > 100 {
				return "", "percentage argument must be less or equal to 100"
			}
			return strconv.FormatInt(n, 10) + "%", ""
		}
		n, ok := parseMemory(v)
		if !ok {
			return "", "argument must be a memory or percent value"
		}
		return p.inRange(n)
	case kindEnum:
		for _, c := range p.choices {
			if strings.EqualFold(c, v) {
				return c, ""
			}
		}
		return "", "argument(s) must be one of the following: " + strings.Join(p.choices, ", ")
	case kindFlags:
		var out []string
	words:
		for _, w := range strings.Fields(v) {
			for _, c := range p.choices {
				if strings.EqualFold(c, w) {
					out = append(out, c)
					continue words
				}
			}
			return "", "argument(s) must be one of the following: " + strings.Join(p.choices, ", ")
		}
		if len(out) == 0 {
			return "", "argument(s) must be one of the following: " + strings.Join(p.choices, ", ")
		}
		return strings.Join(out, " "), ""
	case kindSpecial:
		if p.check != nil {
			return p.check(v)
		}
	}
	return v, ""
}

func (p *param) inRange(n int64) (string, string) {
	if n < p.min || n > p.max {
		return "", "argument must be between " + strconv.FormatInt(p.min, 10) + " and " +
			strconv.FormatInt(p.max, 10) + " inclusive"
	}
	return strconv.FormatInt(n, 10), ""
}

// parseMemory parses a memory value as Redis's memtoull: a non-negative
// integer with an optional unit, b, k (1000), kb (1024), m, mb, g, gb, in
// any case.
func parseMemory(v string) (int64, bool) {
	units := []struct {
		suffix string
		mul    int64
	}{{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"k", 1000}, {"m", 1000 * 1000}, {"g", 1000 * 1000 * 1000}, {"b", 1}}
	lower := strings.ToLower(v)
	mul := int64(1)
	for _, u := range units {
		if num, ok := strings.CutSuffix(lower, u.suffix); ok {
			lower, mul = num, u.mul
			break
		}
	}
	if lower == "" || lower[0] == '-' || lower[0] == '+' {
		return 0, false
	}
	n, err := strconv.ParseInt(lower, 10, 64)
	if err != nil || n > (1<<63-1)/mul {
		return 0, false
	}
	return n * mul, true
}

// specialChecks validate the parameters whose values are not one scalar.
var specialChecks = map[string]func(string) (string, string){
	"save": func(v string) (string, string) {
		f := strings.Fields(v)
		if len(f)%2 != 0 {
			return "", "Invalid save parameters"
		}
		for _, n := range f {
			if x, err := strconv.ParseInt(n, 10, 64); err != nil || x < 0 {
				return "", "Invalid save parameters"
			}
		}
		return strings.Join(f, " "), ""
	},
	"client-output-buffer-limit": func(v string) (string, string) {
		f := strings.Fields(v)
		if len(f)%4 != 0 || len(f) == 0 {
			return "", "Wrong number of arguments in buffer limit configuration."
		}
		cur := map[string][3]string{"normal": {"0", "0", "0"}, "slave": {"268435456", "67108864", "60"},
			"pubsub": {"33554432", "8388608", "60"}}
		for i := 0; i < len(f); i += 4 {
			class := strings.ToLower(f[i])
			if class == "replica" {
				class = "slave"
			}
			if _, ok := cur[class]; !ok {
				return "", "Invalid client class specified in buffer limit configuration."
			}
			hard, ok1 := parseMemory(f[i+1])
			soft, ok2 := parseMemory(f[i+2])
			secs, err := strconv.ParseInt(f[i+3], 10, 64)
			if !ok1 || !ok2 || err != nil || secs < 0 {
				return "", "Error in hard, soft or soft_seconds setting in buffer limit configuration."
			}
			cur[class] = [3]string{strconv.FormatInt(hard, 10), strconv.FormatInt(soft, 10), strconv.FormatInt(secs, 10)}
		}
		var b []string
		for _, class := range []string{"normal", "slave", "pubsub"} {
			b = append(b, class, cur[class][0], cur[class][1], cur[class][2])
		}
		return strings.Join(b, " "), ""
	},
	"oom-score-adj-values": func(v string) (string, string) {
		f := strings.Fields(v)
		if len(f) != 3 {
			return "", "wrong number of arguments"
		}
		for _, n := range f {
			if x, err := strconv.ParseInt(n, 10, 64); err != nil || x < -2000 || x > 2000 {
				return "", "Invalid oom-score-adj-values: value must be between -2000 and 2000"
			}
		}
		return strings.Join(f, " "), ""
	},
	"notify-keyspace-events": notifyFlags,
	"bind": func(v string) (string, string) {
		return "", "respike listens on [server] listen; edit the configuration file"
	},
	"unixsocketperm": func(v string) (string, string) { return v, "" },
	"latency-tracking-info-percentiles": func(v string) (string, string) {
		var out []string
		for _, w := range strings.Fields(v) {
			x, err := strconv.ParseFloat(w, 64)
			if err != nil {
				return "", "Invalid latency-tracking-info-percentiles parameters"
			}
			if x < 0 || x > 100 {
				return "", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
			}
			out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
		}
		return strings.Join(out, " "), ""
	},
}

// notifyFlags validates notify-keyspace-events and answers it in Redis's
// canonical order. respike remembers it; it publishes no keyspace events.
func notifyFlags(v string) (string, string) {
	const classes = "g$lshzxeKEtmdn"
	set := map[byte]bool{}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == 'A':
			for _, a := range []byte("g$lshzxetd") {
				set[a] = true
			}
		case strings.IndexByte(classes, c) >= 0:
			set[c] = true
		default:
			return "", "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."
		}
	}
	// Redis's order: A for all the classes it stands for (then n is not
	// shown), else each class; then K, E and m.
	var b strings.Builder
	all := true
	for _, a := range []byte("g$lshzxetd") {
		all = all && set[a]
	}
	if all {
		b.WriteByte('A')
	} else {
		for _, a := range []byte("g$lshzxetdn") {
			if set[a] {
				b.WriteByte(a)
			}
		}
	}
	for _, a := range []byte("KEm") {
		if set[a] {
			b.WriteByte(a)
		}
	}
	return b.String(), ""
}
