package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/config"
)

func TestBuiltinsWithGoRedis(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1 })
	if v, err := c.Ping(ctx).Result(); err != nil || v != "PONG" {
		t.Fatalf("PING: %q %v", v, err)
	}
	if v, err := c.Echo(ctx, "hé\r\nllo").Result(); err != nil || v != "hé\r\nllo" {
		t.Fatalf("ECHO: %q %v", v, err)
	}
	id, err := c.ClientID(ctx).Result()
	if err != nil || id <= 0 {
		t.Fatalf("CLIENT ID: %d %v", id, err)
	}
	if err := c.Do(ctx, "CLIENT", "SETNAME", "e2e").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.ClientGetName(ctx).Result(); err != nil || v != "e2e" {
		t.Fatalf("CLIENT GETNAME: %q %v", v, err)
	}
	if _, err := c.Time(ctx).Result(); err != nil {
		t.Fatalf("TIME: %v", err)
	}
	if v, err := c.ConfigGet(ctx, "databases").Result(); err != nil || v["databases"] != "16" {
		t.Fatalf("CONFIG GET: %v %v", v, err)
	}
	if err := c.Do(ctx, "SELECT", "16").Err(); err == nil || err.Error() != "ERR DB index is out of range" {
		t.Fatalf("SELECT 16: %v", err)
	}
	if err := c.Do(ctx, "NOSUCH", "a").Err(); err == nil || err.Error() != "ERR unknown command 'NOSUCH', with args beginning with: 'a' " {
		t.Fatalf("unknown command: %v", err)
	}
	if err := c.Do(ctx, "ECHO").Err(); err == nil || err.Error() != "ERR wrong number of arguments for 'echo' command" {
		t.Fatalf("arity: %v", err)
	}
	// go-redis sends CLIENT SETINFO on connect; it shows in CLIENT LIST.
	list, err := c.ClientList(ctx).Result()
	if err != nil || !strings.Contains(list, " lib-name=go-redis(") || !strings.Contains(list, " name=e2e ") ||
		!strings.Contains(list, fmt.Sprintf("id=%d ", id)) {
		t.Fatalf("CLIENT LIST: %q %v", list, err)
	}
}

// TestPipelineRunsInBatches checks that a pipeline of module commands runs
// several commands per guest call (INFO module_batched_commands), with
// every reply in order, including a WRONGTYPE and an error in the middle.
func TestPipelineRunsInBatches(t *testing.T) {
	needModules(t, "strings", "hash")
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	batched := func() int64 {
		info, err := c.Info(ctx, "modules").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(info) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "module_batched_commands:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatalf("no module_batched_commands in %q", info)
		return 0
	}
	before := batched()
	const n = 300
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, "batch:h", "f", "v")
		for range n {
			p.Incr(ctx, "batch:n")
			p.Get(ctx, "batch:h") // WRONGTYPE
			p.IncrBy(ctx, "batch:h", 1)
			p.Append(ctx, "batch:s", "x")
		}
		return nil
	})
	if err == nil {
		t.Fatal("a pipeline with errors reported none")
	}
	for i, cmd := range cmds[1:] {
		step := i / 4
		switch i % 4 {
		case 0:
			if v, err := cmd.(*redis.IntCmd).Result(); err != nil || v != int64(step+1) {
				t.Fatalf("INCR %d: %d %v", step, v, err)
			}
		case 1, 2:
			if err := cmd.Err(); err == nil || !strings.HasPrefix(err.Error(), "WRONGTYPE ") {
				t.Fatalf("command %d on a hash: %v", i+1, err)
			}
		case 3:
			if v, err := cmd.(*redis.IntCmd).Result(); err != nil || v != int64(step+1) {
				t.Fatalf("APPEND %d: %d %v", step, v, err)
			}
		}
	}
	if os.Getenv("RESPIKE_TEST_AEROSPIKE") != "" || os.Getenv("RESPIKE_TEST_NOINLINE") != "" {
		// Every store request waits on Aerospike (and with NOINLINE): a
		// batch stops at each.
		t.Log("store requests wait: batching of store commands not asserted")
		return
	}
	if got := batched() - before; got < n {
		t.Fatalf("%d commands ran in batches, want at least %d of %d", got, n, 4*n+1)
	}
}

func TestPipelinedCommandsReplyInOrder(t *testing.T) {
	needModules(t, "strings")
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	const n = 1000
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range n {
			k := "pipe:" + strconv.Itoa(i%50)
			switch i % 5 {
			case 0:
				p.Set(ctx, k, i, 0)
			case 1:
				p.Get(ctx, "pipe:"+strconv.Itoa((i-1)%50))
			case 2:
				p.Incr(ctx, "pipe:counter")
			case 3:
				p.Echo(ctx, strconv.Itoa(i))
			case 4:
				p.Ping(ctx)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != n {
		t.Fatalf("%d replies", len(cmds))
	}
	counter := int64(0)
	for i, cmd := range cmds {
		switch i % 5 {
		case 0:
			if v, err := cmd.(*redis.StatusCmd).Result(); err != nil || v != "OK" {
				t.Fatalf("%d SET: %q %v", i, v, err)
			}
		case 1:
			if v, err := cmd.(*redis.StringCmd).Result(); err != nil || v != strconv.Itoa(i-1) {
				t.Fatalf("%d GET: %q %v, want %d", i, v, err, i-1)
			}
		case 2:
			counter++
			if v, err := cmd.(*redis.IntCmd).Result(); err != nil || v != counter {
				t.Fatalf("%d INCR: %d %v, want %d", i, v, err, counter)
			}
		case 3:
			if v, err := cmd.(*redis.StringCmd).Result(); err != nil || v != strconv.Itoa(i) {
				t.Fatalf("%d ECHO: %q %v", i, v, err)
			}
		case 4:
			if v, err := cmd.(*redis.StatusCmd).Result(); err != nil || v != "PONG" {
				t.Fatalf("%d PING: %q %v", i, v, err)
			}
		}
	}
}

func TestRESP3(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr, func(o *redis.Options) { o.Protocol = 3; o.PoolSize = 1 })
	hello, err := c.Do(ctx, "HELLO", "3").Result()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := hello.(map[interface{}]interface{})
	if !ok || m["proto"] != int64(3) || m["server"] != "redis" || m["mode"] != "standalone" {
		t.Fatalf("HELLO 3: %#v", hello)
	}
	cfg, err := c.Do(ctx, "CONFIG", "GET", "databases").Result()
	if cm, ok := cfg.(map[interface{}]interface{}); err != nil || !ok || cm["databases"] != "16" {
		t.Fatalf("CONFIG GET in RESP3: %#v %v", cfg, err)
	}
	if v, err := c.Do(ctx, "CLIENT", "GETNAME").Result(); err != redis.Nil || v != nil {
		t.Fatalf("RESP3 null: %#v %v", v, err)
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil || !strings.Contains(info, "redis_version:") {
		t.Fatalf("INFO in RESP3: %q %v", info, err)
	}

	// The raw shapes: a map for HELLO, _ for null, = for INFO.
	r := raw(t, env.daemon.Addr)
	if got := do(t, r, "HELLO", "3"); !strings.HasPrefix(got, "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n") {
		t.Fatalf("raw HELLO 3: %q", got)
	}
	if got := do(t, r, "CLIENT", "GETNAME"); got != "_\r\n" {
		t.Fatalf("raw null: %q", got)
	}
	if got := do(t, r, "INFO", "cluster"); got != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Fatalf("raw INFO: %q", got)
	}
}

func TestRESP3ModuleCommands(t *testing.T) {
	needModules(t, "strings")
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr, func(o *redis.Options) { o.Protocol = 3 })
	if err := c.Set(ctx, "r3", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "r3").Result(); err != nil || v != "v" {
		t.Fatalf("GET: %q %v", v, err)
	}
	if _, err := c.Get(ctx, "r3-missing").Result(); err != redis.Nil {
		t.Fatalf("GET missing: %v", err)
	}
	r := raw(t, env.daemon.Addr)
	do(t, r, "HELLO", "3")
	if got := do(t, r, "GET", "r3-missing"); got != "_\r\n" {
		t.Fatalf("module null in RESP3: %q", got)
	}
}

func TestAuthentication(t *testing.T) {
	d := newDaemon(t, func(c *config.Config) { c.Server.Password = "e2e-secret" })
	ctx := context.Background()

	noPass := client(t, d.Addr)
	if err := noPass.Ping(ctx).Err(); err == nil || err.Error() != "NOAUTH Authentication required." {
		t.Fatalf("PING without AUTH: %v", err)
	}
	wrong := client(t, d.Addr, func(o *redis.Options) { o.Password = "nope" })
	if err := wrong.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
	for _, proto := range []int{2, 3} {
		good := client(t, d.Addr, func(o *redis.Options) { o.Password = "e2e-secret"; o.Protocol = proto })
		if v, err := good.Ping(ctx).Result(); err != nil || v != "PONG" {
			t.Fatalf("RESP%d with the password: %q %v", proto, v, err)
		}
	}

	r := raw(t, d.Addr)
	for _, step := range []struct{ args, want string }{
		{"PING", "-NOAUTH Authentication required.\r\n"},
		{"AUTH wrong", "-WRONGPASS invalid username-password pair or user is disabled.\r\n"},
		{"AUTH default e2e-secret", "+OK\r\n"},
		{"PING", "+PONG\r\n"},
		{"RESET", "+RESET\r\n"},
		{"PING", "-NOAUTH Authentication required.\r\n"},
	} {
		if got := do(t, r, strings.Fields(step.args)...); got != step.want {
			t.Fatalf("%s: got %q want %q", step.args, got, step.want)
		}
	}
}

func TestMalformedRequestClosesTheConnection(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not a bulk", "*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"},
		{"bad count", "*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"unbalanced quotes", "ECHO \"abc\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := raw(t, env.daemon.Addr)
			if err := r.Send(append(Encode("PING"), tc.in...)); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"+PONG\r\n", tc.want} {
				got, err := r.Reply()
				if err != nil || got != want {
					t.Fatalf("got %q %v, want %q", got, err, want)
				}
			}
			if closed, err := r.Closed(); !closed || err != nil {
				t.Fatalf("connection not closed: %v", err)
			}
		})
	}
}

func TestOversizedBulk(t *testing.T) {
	d := newDaemon(t, func(c *config.Config) { c.Server.ProtoMaxBulkLen = 1 << 20 })
	r := raw(t, d.Addr)
	if err := r.Send([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Reply(); err != nil || got != "-ERR Protocol error: invalid bulk length\r\n" {
		t.Fatalf("got %q %v", got, err)
	}
	if closed, err := r.Closed(); !closed || err != nil {
		t.Fatalf("connection not closed: %v", err)
	}

	// A value at the limit goes through.
	ctx := context.Background()
	c := client(t, d.Addr)
	v := strings.Repeat("x", 1<<20)
	if got, err := c.Echo(ctx, v).Result(); err != nil || got != v {
		t.Fatalf("ECHO of 1 MiB: %v", err)
	}
}

func TestSelectIsolatesDatabases(t *testing.T) {
	needModules(t, "strings")
	flushAll(t)
	ctx := context.Background()
	db0 := client(t, env.daemon.Addr)
	db5 := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = 5 })
	if err := db0.Set(ctx, "same", "zero", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db5.Set(ctx, "same", "five", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db5.Set(ctx, "only5", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, _ := db0.Get(ctx, "same").Result(); v != "zero" {
		t.Fatalf("db0: %q", v)
	}
	if v, _ := db5.Get(ctx, "same").Result(); v != "five" {
		t.Fatalf("db5: %q", v)
	}
	if err := db0.Get(ctx, "only5").Err(); err != redis.Nil {
		t.Fatalf("db0 sees db5's key: %v", err)
	}
	if n, err := db0.DBSize(ctx).Result(); err != nil || n != 1 {
		t.Fatalf("DBSIZE db0 = %d, %v", n, err)
	}
	if n, err := db5.DBSize(ctx).Result(); err != nil || n != 2 {
		t.Fatalf("DBSIZE db5 = %d, %v", n, err)
	}
	if err := db5.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := db5.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("DBSIZE db5 after FLUSHDB = %d, %v", n, err)
	}
	if v, _ := db0.Get(ctx, "same").Result(); v != "zero" {
		t.Fatalf("FLUSHDB of db5 touched db0: %q", v)
	}
	if err := db0.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := db0.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("DBSIZE after FLUSHALL = %d, %v", n, err)
	}
}

func TestClientCommands(t *testing.T) {
	ctx := context.Background()
	a := client(t, env.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1; o.ClientName = "alpha" })
	b := raw(t, env.daemon.Addr)
	bID := strings.Trim(do(t, b, "CLIENT", "ID"), ":\r\n")
	do(t, b, "CLIENT", "SETNAME", "beta")
	do(t, b, "SELECT", "3")
	if got := do(t, b, "CLIENT", "SETINFO", "lib-name", "rawclient"); got != "+OK\r\n" {
		t.Fatalf("SETINFO: %q", got)
	}
	list, err := a.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var betaLine string
	for _, l := range strings.Split(strings.TrimSpace(list), "\n") {
		if strings.HasPrefix(l, "id="+bID+" ") {
			betaLine = l
		}
	}
	for _, want := range []string{" name=beta ", " db=3 ", " lib-name=rawclient ", " cmd=client|setinfo "} {
		if !strings.Contains(betaLine, want) {
			t.Fatalf("CLIENT LIST line %q lacks %q", betaLine, want)
		}
	}
	if !strings.Contains(list, " name=alpha ") {
		t.Fatalf("CLIENT LIST lacks alpha: %q", list)
	}
	info, err := a.Do(ctx, "CLIENT", "INFO").Text()
	if err != nil || !strings.Contains(info, " name=alpha ") || strings.Count(info, "\n") != 1 {
		t.Fatalf("CLIENT INFO: %q %v", info, err)
	}
	if n, err := a.Do(ctx, "CLIENT", "KILL", "ID", bID).Int(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL: %d %v", n, err)
	}
	if closed, err := b.Closed(); !closed || err != nil {
		t.Fatalf("killed client not closed: %v", err)
	}
}

func TestInfoSections(t *testing.T) {
	needModules(t, "strings")
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	if err := c.Do(ctx, "CONFIG", "RESETSTAT").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := c.Set(ctx, "info:"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	c.Get(ctx, "info:0")
	c.Do(ctx, "GET") // rejected: arity
	c4 := client(t, env.daemon.Addr, func(o *redis.Options) { o.DB = 4 })
	c4.Set(ctx, "x", "y", 0)

	info, err := c.InfoMap(ctx, "server", "clients", "stats", "keyspace", "commandstats", "modules").Result()
	if err != nil {
		t.Fatal(err)
	}
	check := func(section, key, want string) {
		t.Helper()
		if got := info[section][key]; got != want {
			t.Errorf("INFO %s %s = %q, want %q (section keys %v)", section, key, got, want, sortedKeys(info[section]))
		}
	}
	check("Keyspace", "db0", "keys=3,expires=0,avg_ttl=0")
	check("Keyspace", "db4", "keys=1,expires=0,avg_ttl=0")
	check("Server", "redis_mode", "standalone")
	if !strings.HasPrefix(info["Commandstats"]["cmdstat_set"], "calls=4,") {
		t.Errorf("cmdstat_set = %q", info["Commandstats"]["cmdstat_set"])
	}
	if get := info["Commandstats"]["cmdstat_get"]; !strings.HasPrefix(get, "calls=1,") || !strings.Contains(get, "rejected_calls=1,") {
		t.Errorf("cmdstat_get = %q", get)
	}
	if n, _ := strconv.Atoi(info["Clients"]["connected_clients"]); n < 2 {
		t.Errorf("connected_clients = %q", info["Clients"]["connected_clients"])
	}
	if n, _ := strconv.Atoi(info["Stats"]["total_commands_processed"]); n < 5 {
		t.Errorf("total_commands_processed = %q", info["Stats"]["total_commands_processed"])
	}
	// go-redis files "module:name=strings,ver=..." under the module's name.
	if m := info["Modules"]["strings"]; !strings.HasPrefix(m, "ver=") || !strings.Contains(m, ",path=") {
		t.Errorf("INFO modules: %v", info["Modules"])
	}
	port := env.daemon.Addr[strings.LastIndex(env.daemon.Addr, ":")+1:]
	check("Server", "tcp_port", port)
}

func TestCommandReflectsModuleManifests(t *testing.T) {
	needModules(t, "strings")
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	cmds, err := c.Command(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	get := cmds["get"]
	if get == nil || get.Arity != 2 || get.FirstKeyPos != 1 || get.LastKeyPos != 1 || get.StepCount != 1 || !get.ReadOnly {
		t.Fatalf("COMMAND get: %+v", get)
	}
	if ping := cmds["ping"]; ping == nil || ping.Arity != -1 {
		t.Fatalf("COMMAND ping: %+v", ping)
	}
	count, err := c.Do(ctx, "COMMAND", "COUNT").Int()
	if err != nil || count != len(cmds) {
		t.Fatalf("COMMAND COUNT = %d (%v), COMMAND lists %d", count, err, len(cmds))
	}
	served := 0
	for _, m := range env.backend.Runtime.Modules() {
		served += len(m.Commands)
	}
	if count < served {
		t.Fatalf("COMMAND COUNT %d is below the %d module commands", count, served)
	}

	info, err := c.Do(ctx, "COMMAND", "INFO", "set", "nosuch").Slice()
	if err != nil || len(info) != 2 || info[1] != nil {
		t.Fatalf("COMMAND INFO: %#v %v", info, err)
	}
	if set := info[0].([]interface{}); set[0] != "set" || set[3] != int64(1) {
		t.Fatalf("COMMAND INFO set: %#v", set)
	}

	docs, err := c.Do(ctx, "COMMAND", "DOCS", "get").Slice()
	if err != nil || len(docs) != 2 || docs[0] != "get" {
		t.Fatalf("COMMAND DOCS: %#v %v", docs, err)
	}
	fields := map[string]interface{}{}
	d := docs[1].([]interface{})
	for i := 0; i+1 < len(d); i += 2 {
		fields[d[i].(string)] = d[i+1]
	}
	if fields["module"] != "strings" || fields["group"] != "string" || fields["summary"] == "" {
		t.Fatalf("COMMAND DOCS get: %#v", fields)
	}

	names, err := c.CommandList(ctx, &redis.FilterBy{Module: "strings"}).Result()
	if err != nil || !contains(names, "get") || !contains(names, "set") || contains(names, "ping") {
		t.Fatalf("COMMAND LIST FILTERBY MODULE strings: %v %v", names, err)
	}
	mods, err := c.Do(ctx, "MODULE", "LIST").Slice()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range mods {
		f := m.([]interface{})
		if f[0] == "name" && f[1] == "strings" {
			found = true
		}
	}
	if !found {
		t.Fatalf("MODULE LIST: %#v", mods)
	}
	keys, err := c.Do(ctx, "COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2").StringSlice()
	if err != nil || strings.Join(keys, ",") != "a,b" {
		t.Fatalf("COMMAND GETKEYS MSET: %v %v", keys, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestTransactions(t *testing.T) {
	needModules(t, "strings")
	flushAll(t)
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	var incr *redis.IntCmd
	var get *redis.StringCmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "tx", 41, 0)
		incr = p.Incr(ctx, "tx")
		get = p.Get(ctx, "tx")
		return nil
	})
	if err != nil || incr.Val() != 42 || get.Val() != "42" {
		t.Fatalf("MULTI/EXEC: %v %d %q", err, incr.Val(), get.Val())
	}
	// WATCH and its transactions: watch_test.go.
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, "tx")
			return nil
		})
		return err
	}, "tx")
	if err != nil || c.Get(ctx, "tx").Val() != "43" {
		t.Fatalf("WATCH: %v, tx = %q", err, c.Get(ctx, "tx").Val())
	}
}
