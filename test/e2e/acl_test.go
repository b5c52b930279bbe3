package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/config"
)

// aclDaemon serves a daemon with the default user's password "adminpw" and
// the [[acl.users]] given.
func aclDaemon(t *testing.T, users ...config.ACLUser) *Daemon {
	t.Helper()
	return newDaemon(t, func(c *config.Config) {
		c.Server.Password = "adminpw"
		c.ACL.Users = users
	})
}

// wantErr fails unless err's text is want.
func wantErr(t *testing.T, what string, err error, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("%s: err %v, want %q", what, err, want)
	}
}

const (
	noPermKeys = "NOPERM this user has no permissions to access one of the keys used as arguments"
	wrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
)

func noPermCmd(cmd string) string {
	return "NOPERM this user has no permissions to run the '" + cmd + "' command"
}

func TestACLCategoryAndKeyRules(t *testing.T) {
	needModules(t, "strings", "hash")
	ctx := context.Background()
	d := aclDaemon(t,
		config.ACLUser{Name: "reader", Rules: "on >readpw ~app1:* +@read"},
		config.ACLUser{Name: "app", Rules: "on >apppw ~app1:* +@all -@dangerous -@hash"},
	)
	admin := client(t, d.Addr, func(o *redis.Options) { o.Password = "adminpw" })
	if err := admin.Set(ctx, "app1:x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, "other", "2", 0).Err(); err != nil {
		t.Fatal(err)
	}

	reader := client(t, d.Addr, func(o *redis.Options) { o.Username, o.Password = "reader", "readpw" })
	if v, err := reader.Get(ctx, "app1:x").Result(); err != nil || v != "1" {
		t.Fatalf("GET app1:x as reader: %q %v", v, err)
	}
	wantErr(t, "SET as reader", reader.Set(ctx, "app1:x", "2", 0).Err(), noPermCmd("set"))
	wantErr(t, "GET other as reader", reader.Get(ctx, "other").Err(), noPermKeys)
	wantErr(t, "FLUSHALL as reader", reader.FlushAll(ctx).Err(), noPermCmd("flushall"))
	// Refused commands change nothing.
	if v, _ := admin.Get(ctx, "app1:x").Result(); v != "1" {
		t.Fatalf("app1:x after a refused SET: %q", v)
	}

	app := client(t, d.Addr, func(o *redis.Options) { o.Username, o.Password = "app", "apppw" })
	if err := app.Set(ctx, "app1:y", "v", 0).Err(); err != nil {
		t.Fatalf("SET app1:y as app: %v", err)
	}
	wantErr(t, "SET other as app", app.Set(ctx, "other", "v", 0).Err(), noPermKeys)
	wantErr(t, "HSET as app", app.HSet(ctx, "app1:h", "f", "v").Err(), noPermCmd("hset"))
	wantErr(t, "FLUSHALL as app", app.FlushAll(ctx).Err(), noPermCmd("flushall"))
	wantErr(t, "CONFIG SET as app", app.ConfigSet(ctx, "maxclients", "10").Err(), noPermCmd("config|set"))
	if v, _ := admin.Get(ctx, "other").Result(); v != "2" {
		t.Fatalf("other after refused commands: %q", v)
	}
	if n, _ := admin.Exists(ctx, "app1:h").Result(); n != 0 {
		t.Fatalf("app1:h exists after a refused HSET")
	}

	// Pipelined module commands are checked one by one.
	cmds, _ := reader.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "app1:x")
		p.Set(ctx, "app1:x", "3", 0)
		p.Get(ctx, "other")
		return nil
	})
	if cmds[0].Err() != nil || cmds[1].Err() == nil || cmds[1].Err().Error() != noPermCmd("set") ||
		cmds[2].Err() == nil || cmds[2].Err().Error() != noPermKeys {
		t.Fatalf("pipeline as reader: %v", cmds)
	}

	// Inside MULTI the check is at queue time: the transaction aborts.
	_, err := app.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, "app1:z", "1", 0)
		p.FlushAll(ctx)
		return nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		t.Fatalf("MULTI with a refused command: %v", err)
	}
	if n, _ := admin.Exists(ctx, "app1:z").Result(); n != 0 {
		t.Fatal("a transaction with a refused command ran")
	}

	// ACL LOG shows the refusals, newest first, with Redis's fields.
	log, err := admin.Do(ctx, "acl", "log").Slice()
	if err != nil {
		t.Fatal(err)
	}
	first := map[string]any{}
	fields := log[0].([]any)
	for i := 0; i+1 < len(fields); i += 2 {
		first[fields[i].(string)] = fields[i+1]
	}
	for _, k := range []string{"count", "reason", "context", "object", "username", "age-seconds", "client-info"} {
		if _, ok := first[k]; !ok {
			t.Fatalf("ACL LOG entry without %s: %v", k, first)
		}
	}
	if first["reason"] != "command" || first["context"] != "multi" || first["object"] != "flushall" || first["username"] != "app" {
		t.Fatalf("newest ACL LOG entry: %v", first)
	}
	if !strings.Contains(first["client-info"].(string), "user=app") {
		t.Fatalf("client-info: %v", first["client-info"])
	}
	var sawKey bool
	for _, e := range log {
		f := e.([]any)
		if f[3] == "key" && f[7] == "other" && f[9] == "reader" {
			sawKey = true
		}
	}
	if !sawKey {
		t.Fatalf("no key refusal for reader in %v", log)
	}
	if err := admin.Do(ctx, "acl", "log", "reset").Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := admin.Do(ctx, "acl", "log").Slice(); len(n) != 0 {
		t.Fatalf("ACL LOG after RESET: %v", n)
	}
}

func TestACLAuth(t *testing.T) {
	ctx := context.Background()
	d := aclDaemon(t,
		config.ACLUser{Name: "alice", Rules: "on >alicepw allkeys +@all"},
		config.ACLUser{Name: "bob", Rules: "off >bobpw allkeys +@all"},
	)
	c := client(t, d.Addr)
	wantErr(t, "PING before AUTH", c.Ping(ctx).Err(), "NOAUTH Authentication required.")
	wantErr(t, "AUTH wrong password", c.Do(ctx, "auth", "alice", "nope").Err(), wrongPass)
	wantErr(t, "AUTH off user", c.Do(ctx, "auth", "bob", "bobpw").Err(), wrongPass)
	wantErr(t, "AUTH unknown user", c.Do(ctx, "auth", "carol", "x").Err(), wrongPass)
	if err := c.Do(ctx, "auth", "alice", "alicepw").Err(); err != nil {
		t.Fatal(err)
	}
	if who, _ := c.Do(ctx, "acl", "whoami").Text(); who != "alice" {
		t.Fatalf("ACL WHOAMI: %q", who)
	}

	// HELLO 3 AUTH: go-redis sends it when the protocol is 3.
	c3 := client(t, d.Addr, func(o *redis.Options) { o.Protocol, o.Username, o.Password = 3, "alice", "alicepw" })
	if who, err := c3.Do(ctx, "acl", "whoami").Text(); err != nil || who != "alice" {
		t.Fatalf("ACL WHOAMI after HELLO 3 AUTH: %q %v", who, err)
	}
	bad := client(t, d.Addr, func(o *redis.Options) { o.Protocol, o.Username, o.Password = 3, "alice", "wrong" })
	wantErr(t, "HELLO 3 AUTH wrong password", bad.Ping(ctx).Err(), wrongPass)

	// The failed logins are in ACL LOG as reason auth.
	admin := client(t, d.Addr, func(o *redis.Options) { o.Password = "adminpw" })
	log, err := admin.Do(ctx, "acl", "log").Slice()
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]bool{}
	for _, e := range log {
		f := e.([]any)
		if f[3] == "auth" && f[7] == "AUTH" {
			users[f[9].(string)] = true
		}
	}
	if !users["alice"] || !users["bob"] || !users["carol"] {
		t.Fatalf("auth failures in ACL LOG: %v", log)
	}

	// A user turned off at runtime cannot log in; DELUSER closes its
	// connections.
	if err := admin.Do(ctx, "acl", "setuser", "alice", "off").Err(); err != nil {
		t.Fatal(err)
	}
	again := client(t, d.Addr, func(o *redis.Options) { o.Username, o.Password = "alice", "alicepw" })
	wantErr(t, "AUTH after off", again.Ping(ctx).Err(), wrongPass)
	if n, err := admin.Do(ctx, "acl", "deluser", "alice", "nobody").Int(); err != nil || n != 1 {
		t.Fatalf("ACL DELUSER: %d %v", n, err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("a connection of a deleted user still runs commands")
	}
}

func TestACLBadConfigRefused(t *testing.T) {
	cfg := testConfig()
	cfg.ACL.Users = []config.ACLUser{{Name: "x", Rules: "on +nosuchcommand"}}
	d, err := StartDaemon(cfg, env.backend, env.logger)
	if err == nil {
		err = d.Stop()
	}
	if err == nil || !strings.Contains(err.Error(), "Unknown command or category name in ACL") {
		t.Fatalf("a bad [acl] user: %v", err)
	}
}

// Rules changed between MULTI and EXEC apply at EXEC, as in Redis.
func TestACLRulesChangedBeforeExec(t *testing.T) {
	needModules(t, "strings")
	ctx := context.Background()
	d := aclDaemon(t, config.ACLUser{Name: "ex", Rules: "on >expw ~ex:* +@all"})
	admin := client(t, d.Addr, func(o *redis.Options) { o.Password = "adminpw" })
	c := raw(t, d.Addr)
	if got := do(t, c, "auth", "ex", "expw"); got != "+OK\r\n" {
		t.Fatalf("AUTH: %q", got)
	}
	do(t, c, "multi")
	if got := do(t, c, "set", "ex:a", "1"); got != "+QUEUED\r\n" {
		t.Fatalf("SET in MULTI: %q", got)
	}
	do(t, c, "get", "ex:a")
	if err := admin.Do(ctx, "acl", "setuser", "ex", "-set").Err(); err != nil {
		t.Fatal(err)
	}
	want := "*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. " +
		"This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n$-1\r\n"
	if got := do(t, c, "exec"); got != want {
		t.Fatalf("EXEC after the rules changed:\n got  %q\n want %q", got, want)
	}
	if n, _ := admin.Exists(ctx, "ex:a").Result(); n != 0 {
		t.Fatal("a command denied at EXEC ran")
	}
}

// %R~ and %W~ patterns separate reading from writing, for module
// commands' manifest key positions; movablekeys commands need allkeys.
func TestACLReadWritePatterns(t *testing.T) {
	needModules(t, "strings", "keys")
	ctx := context.Background()
	d := aclDaemon(t, config.ACLUser{Name: "rw", Rules: "on >rwpw %R~r:* %W~w:* ~b:* +@all"})
	c := client(t, d.Addr, func(o *redis.Options) { o.Username, o.Password = "rw", "rwpw" })
	if err := c.Get(ctx, "r:1").Err(); err != redis.Nil {
		t.Fatalf("GET r:1: %v", err)
	}
	wantErr(t, "SET r:1", c.Set(ctx, "r:1", "v", 0).Err(), noPermKeys)
	if err := c.Set(ctx, "w:1", "v", 0).Err(); err != nil {
		t.Fatalf("SET w:1: %v", err)
	}
	wantErr(t, "GET w:1", c.Get(ctx, "w:1").Err(), noPermKeys)
	if err := c.MSet(ctx, "w:2", "v", "b:2", "v").Err(); err != nil {
		t.Fatalf("MSET w:2 b:2: %v", err)
	}
	wantErr(t, "MSET w:3 r:3", c.MSet(ctx, "w:3", "v", "r:3", "v").Err(), noPermKeys)
	wantErr(t, "SORT b:2 (movablekeys)", c.Sort(ctx, "b:2", &redis.Sort{}).Err(), noPermKeys)
}
