package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAreValid(t *testing.T) {
	cfg := Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if cfg.Server.Listen != "127.0.0.1:6379" || cfg.Server.Databases != 16 ||
		cfg.Server.MaxClients != 10000 || cfg.Server.ProtoMaxBulkLen != 512<<20 ||
		cfg.Store.Backend != "memory" || cfg.Commands.Dir != "commands" ||
		cfg.Commands.Deadline.D() != time.Second || cfg.Commands.MemoryLimitMiB != 64 ||
		cfg.Commands.IdleTimeout.D() != 30*time.Second || cfg.Commands.RecycleMemoryMiB != 32 {
		t.Fatalf("unexpected defaults: %+v", cfg)
	}
}

func TestParseValues(t *testing.T) {
	cfg, err := Parse([]byte(`
[server]
listen = "0.0.0.0:7000"
password = "s3cret"
databases = 4
max_clients = 50
proto_max_bulk_len = "1mb"
timeout = 30
block_poll_interval = "50ms"
slowlog_log_slower_than = -1
slowlog_max_len = 7
latency_monitor_threshold = 25

[store]
backend = "aerospike"

[aerospike]
hosts = ["10.0.0.1:3000", "10.0.0.2:3000"]
namespace = "cache"
set = "kv"
total_timeout = "250ms"
max_record_bytes = 131072
batch_size = 32
batch_calls = 4
batch_inline = false

[commands]
dir = "/opt/respike/commands"
cache_dir = "none"
instances = 3
deadline = "50ms"
memory_limit_mib = 32
idle_timeout = "2m"
recycle_memory_mib = 0

[log]
level = "debug"

[metrics]
listen = "127.0.0.1:9121"

[[acl.users]]
name = "app1"
rules = "on >pw ~app1:* +@read"

[[acl.users]]
name = "default"
rules = "off"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Server = Server{Listen: "0.0.0.0:7000", Password: "s3cret", Databases: 4, MaxClients: 50,
		ProtoMaxBulkLen: 1 << 20, Timeout: 30, EnableModuleCommand: "local", ShutdownTimeout: Duration(5 * time.Second),
		BlockPollInterval: Duration(50 * time.Millisecond), SlowlogLogSlowerThan: -1, SlowlogMaxLen: 7,
		LatencyMonitorThreshold: 25, ProtectedMode: true}
	want.ACL.Users = []ACLUser{{Name: "app1", Rules: "on >pw ~app1:* +@read"}, {Name: "default", Rules: "off"}}
	want.Store.Backend = "aerospike"
	want.Aerospike.Hosts = []string{"10.0.0.1:3000", "10.0.0.2:3000"}
	want.Aerospike.Namespace, want.Aerospike.Set = "cache", "kv"
	want.Aerospike.TotalTimeout = Duration(250 * time.Millisecond)
	want.Aerospike.MaxRecordBytes = 131072
	want.Aerospike.BatchSize, want.Aerospike.BatchCalls, want.Aerospike.BatchInline = 32, 4, false
	want.Commands = Commands{Dir: "/opt/respike/commands", CacheDir: "none", Instances: 3,
		Deadline: Duration(50 * time.Millisecond), MemoryLimitMiB: 32, IdleTimeout: Duration(2 * time.Minute),
		DeployPollInterval: Duration(time.Second), DeployChunkBytes: 512 << 10,
		DeployHeartbeatInterval: Duration(10 * time.Second), DeployForgetAfter: Duration(time.Hour)}
	want.Log.Level = "debug"
	want.Metrics.Listen = "127.0.0.1:9121"
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got  %+v\nwant %+v", cfg, want)
	}
	if cfg.Commands.ResolvedCacheDir() != "" {
		t.Fatalf("cache_dir none should disable the cache")
	}
}

func TestParseErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       []string // substrings of the error
	}{
		{"unknown key with line", "[server]\nlisten = \"127.0.0.1:1\"\nlistn = \"x\"\n",
			[]string{"line 3", `unknown key "server.listn"`}},
		{"unknown section", "[servr]\nlisten = 1\n", []string{`unknown key "servr"`, `"servr.listen"`}},
		{"several unknown keys", "[commands]\ndirr = \"x\"\n[log]\nlevl = \"info\"\n",
			[]string{`"commands.dirr"`, `"log.levl"`, "line 2", "line 4"}},
		{"bad duration", "[commands]\ndeadline = \"fast\"\n", []string{"commands.deadline", "invalid duration"}},
		{"bad duration type", "[aerospike]\ntotal_timeout = 5\n", []string{"aerospike.total_timeout"}},
		{"bad backend", "[store]\nbackend = \"redis\"\n", []string{"store.backend", `"redis"`}},
		{"empty namespace", "[aerospike]\nnamespace = \"\"\n", []string{"aerospike.namespace"}},
		{"port out of range", "[server]\nlisten = \"127.0.0.1:70000\"\n", []string{"server.listen", "out of range"}},
		{"listen without port", "[server]\nlisten = \"localhost\"\n", []string{"server.listen"}},
		{"bad aerospike host", "[aerospike]\nhosts = [\"a:1\", \"b:-1\"]\n", []string{"aerospike.hosts", `"-1"`}},
		{"no databases", "[server]\ndatabases = 0\n", []string{"server.databases"}},
		{"bad size", "[server]\nproto_max_bulk_len = \"lots\"\n", []string{"server.proto_max_bulk_len", "invalid size"}},
		{"bad log level", "[log]\nlevel = \"loud\"\n", []string{"log.level"}},
		{"bad memory limit", "[commands]\nmemory_limit_mib = 0\n", []string{"commands.memory_limit_mib"}},
		{"negative idle timeout", "[commands]\nidle_timeout = \"-1s\"\n", []string{"commands.idle_timeout"}},
		{"bad recycle threshold", "[commands]\nrecycle_memory_mib = -1\n", []string{"commands.recycle_memory_mib"}},
		{"negative heartbeat", "[commands]\ndeploy_heartbeat_interval = \"-1s\"\n", []string{"commands.deploy_heartbeat_interval"}},
		{"stale within a heartbeat", "[commands]\ndeploy_heartbeat_interval = \"10s\"\ndeploy_stale_after = \"5s\"\n", []string{"commands.deploy_stale_after"}},
		{"negative forget", "[commands]\ndeploy_forget_after = \"-1s\"\n", []string{"commands.deploy_forget_after"}},
		{"negative timeout", "[server]\ntimeout = -1\n", []string{"server.timeout"}},
		{"zero deadline", "[commands]\ndeadline = \"0s\"\n", []string{"commands.deadline"}},
		{"negative poll", "[server]\nblock_poll_interval = \"-1s\"\n", []string{"server.block_poll_interval"}},
		{"sub-millisecond poll", "[server]\nblock_poll_interval = \"10us\"\n", []string{"server.block_poll_interval"}},
		{"negative procs", "[server]\nprocs = -1\n", []string{"server.procs"}},
		{"bad module command setting", "[server]\nenable_module_command = \"maybe\"\n", []string{"server.enable_module_command"}},
		{"no batch size", "[aerospike]\nbatch_size = 0\n", []string{"aerospike.batch_size"}},
		{"no batch calls", "[aerospike]\nbatch_calls = 0\n", []string{"aerospike.batch_calls"}},
		{"half of a TLS pair", "[aerospike]\ntls_cert_file = \"c.pem\"\n", []string{"aerospike.tls_cert_file"}},
		{"several bad values at once", "[server]\ndatabases = 0\nmax_clients = 0\n",
			[]string{"server.databases", "server.max_clients"}},
		{"toml syntax", "[server]\nlisten = \"x\" \"y\"\n", []string{"line 2"}},
		{"ACL user without a name", "[[acl.users]]\nrules = \"on\"\n", []string{"acl.users[0].name"}},
		{"ACL user twice", "[[acl.users]]\nname = \"a\"\n[[acl.users]]\nname = \"a\"\n", []string{"acl.users[1].name", "twice"}},
		{"ACL user with a space", "[[acl.users]]\nname = \"a b\"\n", []string{"acl.users[0].name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.toml))
			if err == nil {
				t.Fatalf("no error for %q", tc.toml)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "123": 123, "1k": 1000, "1kb": 1024, "2mb": 2 << 20, "2M": 2000000,
		"1gb": 1 << 30, "1g": 1000000000, "512MB": 512 << 20, "10b": 10, " 3 kb ": 3072,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "-1", "1tb", "1.5mb", "99999999999gb"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded", in)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "proxy.toml")
	if err := os.WriteFile(path, []byte("[server]\nlisten = \"127.0.0.1:6400\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Listen != "127.0.0.1:6400" || cfg.Path != path {
		t.Fatalf("got %+v", cfg)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml")); err == nil {
		t.Fatal("loading a missing file succeeded")
	}
	if err := os.WriteFile(path, []byte("[server]\nbogus = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error should name the file: %v", err)
	}
}

func TestResolvedCacheDir(t *testing.T) {
	c := Commands{CacheDir: "/tmp/x"}
	if c.ResolvedCacheDir() != "/tmp/x" {
		t.Fatal("explicit cache dir not kept")
	}
	t.Setenv("XDG_CACHE_HOME", "/tmp/cachehome")
	c.CacheDir = ""
	if got := c.ResolvedCacheDir(); got != filepath.Join("/tmp/cachehome", "respike", "wazero") {
		t.Fatalf("default cache dir = %q", got)
	}
}
