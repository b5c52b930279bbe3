package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/config"
)

// The live CONFIG parameters change the daemon's behaviour at once, for
// every connection, as in Redis.

func TestConfigSetRequirepass(t *testing.T) {
	d := newDaemon(t, func(*config.Config) {})
	ctx := context.Background()
	admin := client(t, d.Addr)
	if err := admin.ConfigSet(ctx, "requirepass", "s3cret").Err(); err != nil {
		t.Fatal(err)
	}
	// The connection that set it stays authenticated, as in Redis.
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING on the connection that set requirepass: %v", err)
	}
	if err := client(t, d.Addr).Ping(ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("a new connection without AUTH: %v", err)
	}
	good := client(t, d.Addr, func(o *redis.Options) { o.Password = "s3cret" })
	if v, err := good.ConfigGet(ctx, "requirepass").Result(); err != nil || v["requirepass"] != "s3cret" {
		t.Fatalf("CONFIG GET requirepass: %v %v", v, err)
	}
	if err := good.ConfigSet(ctx, "requirepass", "").Err(); err != nil {
		t.Fatal(err)
	}
	if err := client(t, d.Addr).Ping(ctx).Err(); err != nil {
		t.Fatalf("a new connection after requirepass \"\": %v", err)
	}
}

func TestConfigSetProtoMaxBulkLen(t *testing.T) {
	d := newDaemon(t, func(*config.Config) {})
	ctx := context.Background()
	c := client(t, d.Addr)
	v := strings.Repeat("x", 1<<20+1)
	if got, err := c.Echo(ctx, v).Result(); err != nil || got != v {
		t.Fatalf("ECHO of 1 MiB + 1 under the default limit: %v", err)
	}
	if err := c.ConfigSet(ctx, "proto-max-bulk-len", "1mb").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ConfigGet(ctx, "proto-max-bulk-len").Result(); err != nil || got["proto-max-bulk-len"] != "1048576" {
		t.Fatalf("CONFIG GET: %v %v", got, err)
	}
	// Another connection, already open before the change, sees it too.
	r := raw(t, d.Addr)
	if err := r.Send([]byte("*2\r\n$4\r\nECHO\r\n$1048577\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Reply(); err != nil || got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("got %q %v", got, err)
	}
}

func TestConfigSetMaxclients(t *testing.T) {
	d := newDaemon(t, func(*config.Config) {})
	ctx := context.Background()
	c := client(t, d.Addr, func(o *redis.Options) { o.PoolSize = 1 })
	if err := c.ConfigSet(ctx, "maxclients", "1").Err(); err != nil {
		t.Fatal(err)
	}
	r := raw(t, d.Addr)
	if got, err := r.Reply(); err != nil || got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("second connection over maxclients 1: %q %v", got, err)
	}
	if err := c.ConfigSet(ctx, "maxclients", "10").Err(); err != nil {
		t.Fatal(err)
	}
	if got := do(t, raw(t, d.Addr), "PING"); got != "+PONG\r\n" {
		t.Fatalf("after maxclients 10: %q", got)
	}
}

func TestConfigSetTimeoutClosesIdleClients(t *testing.T) {
	d := newDaemon(t, func(*config.Config) {})
	r := raw(t, d.Addr)
	if got := do(t, r, "CONFIG", "SET", "timeout", "1"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET timeout 1: %q", got)
	}
	// Its next read waits under the one-second deadline; the daemon closes
	// the idle connection (Closed waits for that, up to its own limit).
	start := time.Now()
	if closed, err := r.Closed(); !closed || err != nil {
		t.Fatalf("idle connection not closed after timeout 1: %v", err)
	}
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("closed after %v, before the timeout", el)
	}
}

func TestConfigRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "proxy.toml")
	orig := "# my settings\n[server]\n# keep me\nmax_clients = 500\n\n[log]\nlevel = \"info\"\n"
	if err := os.WriteFile(path, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t, func(c *config.Config) { c.Path = path; c.Server.MaxClients = 500 })
	ctx := context.Background()
	c := client(t, d.Addr)
	if err := c.ConfigSet(ctx, "maxclients", "77").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "loglevel", "warning").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "hash-max-listpack-entries", "64").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatalf("CONFIG REWRITE: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# my settings\n", "# keep me\n", "max_clients = 77\n", "level = \"warn\"\n",
		"timeout = 0\n", "password = \"\"\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("rewritten file lacks %q:\n%s", want, got)
		}
	}
	cfg, err := config.Load(path)
	if err != nil || cfg.Server.MaxClients != 77 || cfg.Log.Level != "warn" {
		t.Fatalf("rewritten file loads as %+v, %v", cfg.Server, err)
	}

	// Without a file, Redis's error.
	if err := client(t, env.daemon.Addr).ConfigRewrite(ctx).Err(); err == nil ||
		err.Error() != "ERR The server is running without a config file" {
		t.Fatalf("CONFIG REWRITE without a file: %v", err)
	}
}

func TestInfoCPUAndSectionChoice(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	info, err := c.Info(ctx, "cpu", "clients").Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(info, "# CPU\r\n") || !strings.Contains(info, "# Clients\r\n") || strings.Contains(info, "# Server") {
		t.Fatalf("INFO cpu clients: %q", info)
	}
	var user float64
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "used_cpu_user:"); ok {
			if _, err := fmt.Sscanf(v, "%f", &user); err != nil {
				t.Fatalf("used_cpu_user %q: %v", v, err)
			}
		}
	}
	if user <= 0 {
		t.Fatalf("used_cpu_user is %v in %q", user, info)
	}
	def, err := c.Info(ctx).Result()
	if err != nil || !strings.Contains(def, "# CPU\r\n") || strings.Contains(def, "# Commandstats") {
		t.Fatalf("INFO: %q %v", def, err)
	}
	all, err := c.Info(ctx, "all").Result()
	if err != nil || !strings.Contains(all, "# Commandstats\r\n") || !strings.Contains(all, "# Keyspace\r\n") {
		t.Fatalf("INFO all: %q %v", all, err)
	}
}

func TestSlowlogThroughGoRedis(t *testing.T) {
	needModules(t, "strings")
	d := newDaemon(t, func(c *config.Config) { c.Server.SlowlogLogSlowerThan = 0 })
	ctx := context.Background()
	c := client(t, d.Addr, func(o *redis.Options) { o.ClientName = "reporter"; o.PoolSize = 1 })
	if err := c.Set(ctx, "slow:k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	logs, err := c.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range logs {
		if strings.Join(l.Args, " ") == "set slow:k v" {
			found = true
			if l.ClientName != "reporter" || !strings.HasPrefix(l.ClientAddr, "127.0.0.1:") || l.Time.IsZero() {
				t.Fatalf("SLOWLOG entry %+v", l)
			}
		}
	}
	if !found {
		t.Fatalf("SET not in SLOWLOG GET -1: %+v", logs)
	}
	if n, err := c.Do(ctx, "SLOWLOG", "LEN").Int(); err != nil || n < 2 {
		t.Fatalf("SLOWLOG LEN %d %v", n, err)
	}
}

// MONITOR streams what a go-redis client runs. The monitor is a raw RESP
// connection: go-redis's own Monitor races with itself (its reader and
// Start/Stop share state unguarded), which -race reports.
func TestMonitorStreamsGoRedisCommands(t *testing.T) {
	needModules(t, "strings")
	d := newDaemon(t, func(*config.Config) {})
	mon := raw(t, d.Addr)
	if got := do(t, mon, "MONITOR"); got != "+OK\r\n" {
		t.Fatalf("MONITOR: %q", got)
	}
	ctx := context.Background()
	if err := client(t, d.Addr).Set(ctx, "mon:k", "hello world", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// go-redis's connection set-up (HELLO, CLIENT SETINFO) comes first.
	for range 10 {
		line, err := mon.Reply()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(line, "\"set\" \"mon:k\" \"hello world\"\r\n") {
			return
		}
	}
	t.Fatal("no MONITOR line for SET among the first 10")
}
