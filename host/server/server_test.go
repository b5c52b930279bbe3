package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
)

func TestConnectionCommands(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG\r\n"},
		{[]string{"ping", "hi"}, "$2\r\nhi\r\n"},
		{[]string{"ping", "a", "b"}, "-ERR wrong number of arguments for 'ping' command\r\n"},
		{[]string{"echo", "x\r\ny"}, "$4\r\nx\r\ny\r\n"},
		{[]string{"echo"}, "-ERR wrong number of arguments for 'echo' command\r\n"},
		{[]string{"select", "15"}, "+OK\r\n"},
		{[]string{"select", "16"}, "-ERR DB index is out of range\r\n"},
		{[]string{"select", "-1"}, "-ERR DB index is out of range\r\n"},
		{[]string{"select", "x"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"select", "01"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"select", "99999999999"}, "-ERR value is out of range, value must between -2147483648 and 2147483647\r\n"},
		{[]string{"select", "99999999999999999999"}, "-ERR value is not an integer or out of range\r\n"},
		{[]string{"exec", "x"}, "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command\r\n"},
		{[]string{"select"}, "-ERR wrong number of arguments for 'select' command\r\n"},
		{[]string{"auth", "x"}, "-" + errNoPassword + "\r\n"},
		{[]string{"auth", "default", "anything"}, "+OK\r\n"},
		{[]string{"auth", "bob", "x"}, "-" + errWrongPass + "\r\n"},
		{[]string{"auth", "a", "b", "c"}, "-ERR syntax error\r\n"},
		{[]string{"hello", "4"}, "-NOPROTO unsupported protocol version\r\n"},
		{[]string{"hello", "x"}, "-ERR Protocol version is not an integer or out of range\r\n"},
		{[]string{"hello", "3", "foo"}, "-ERR Syntax error in HELLO option 'foo'\r\n"},
		{[]string{"hello", "3", "auth", "x"}, "-ERR Syntax error in HELLO option 'auth'\r\n"},
		{[]string{"hello", "2", "setname", "a b"}, "-" + errBadName + "\r\n"},
		{[]string{"swapdb", "0", "1"}, "-ERR SWAPDB is not supported by respike: databases map to Aerospike sets, which cannot be renamed\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
	// TIME is two bulk strings: seconds and microseconds.
	got := c.do("time")
	parts := strings.Split(got, "\r\n")
	if len(parts) != 6 || parts[0] != "*2" {
		t.Fatalf("TIME: %q", got)
	}
	sec, _ := strconv.ParseInt(parts[2], 10, 64)
	if d := time.Since(time.Unix(sec, 0)); d < -time.Minute || d > time.Minute {
		t.Fatalf("TIME is off by %v", d)
	}
	// QUIT answers then closes.
	if got := c.do("quit"); got != "+OK\r\n" {
		t.Fatalf("QUIT: %q", got)
	}
	c.closed()
}

func TestUnknownCommandAndArity(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"foo", "a", "b"}, "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n"},
		{[]string{"foo"}, "-ERR unknown command 'foo', with args beginning with: \r\n"},
		{[]string{"FoO", "a\r\nb"}, "-ERR unknown command 'FoO', with args beginning with: 'a  b' \r\n"},
		{[]string{"foo", "a\x00b"}, "-ERR unknown command 'foo', with args beginning with: 'a' \r\n"},
		{[]string{long, long, long}, "-ERR unknown command '" + long[:128] + "', with args beginning with: '" + long[:128] + "' \r\n"},
		{[]string{"foo", "aa", long}, "-ERR unknown command 'foo', with args beginning with: 'aa' '" + long[:123] + "' \r\n"},
		{[]string{"fget"}, "-ERR wrong number of arguments for 'fget' command\r\n"},
		{[]string{"FGET", "a", "b"}, "-ERR wrong number of arguments for 'fget' command\r\n"},
		{[]string{"fmset", "a"}, "-ERR wrong number of arguments for 'fmset' command\r\n"},
		{[]string{"client"}, "-ERR wrong number of arguments for 'client' command\r\n"},
		{[]string{"client", "foo"}, "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n"},
		{[]string{"Config", "bar", "x"}, "-ERR unknown subcommand 'bar'. Try CONFIG HELP.\r\n"},
		{[]string{"client", "id", "x"}, "-ERR wrong number of arguments for 'client|id' command\r\n"},
		{[]string{"config", "get"}, "-ERR wrong number of arguments for 'config|get' command\r\n"},
		{[]string{"fget", "k"}, "$1\r\nk\r\n"},
		{[]string{"ffail"}, "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%.40q: got %q\nwant %q", tc.args, got, tc.want)
		}
	}
}

func TestModuleStartCarriesConnectionState(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	id := c.do("client", "id")
	idNum := strings.TrimSuffix(strings.TrimPrefix(id, ":"), "\r\n")
	want := func(db, proto int) string {
		return fmt.Sprintf("*5\r\n$5\r\nfecho\r\n$1\r\na\r\n:%d\r\n:%d\r\n:%s\r\n", db, proto, idNum)
	}
	if got := c.do("fecho", "a"); got != want(0, 2) {
		t.Fatalf("got %q want %q", got, want(0, 2))
	}
	c.do("select", "7")
	c.do("hello", "3")
	if got := c.do("fecho", "a"); got != want(7, 3) {
		t.Fatalf("got %q want %q", got, want(7, 3))
	}
	if got := c.do("reset"); got != "+RESET\r\n" {
		t.Fatalf("RESET: %q", got)
	}
	if got := c.do("fecho", "a"); got != want(0, 2) {
		t.Fatalf("after RESET got %q", got)
	}
}

func TestHello(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(c.do("client", "id"), ":"), "\r\n")
	body := "$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n" + RedisVersion + "\r\n$5\r\nproto\r\n:%d\r\n" +
		"$2\r\nid\r\n:" + id + "\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
	if got, want := c.do("hello"), "*14\r\n"+fmt.Sprintf(body, 2); got != want {
		t.Fatalf("HELLO: got %q want %q", got, want)
	}
	if got, want := c.do("hello", "3", "setname", "conn1"), "%7\r\n"+fmt.Sprintf(body, 3); got != want {
		t.Fatalf("HELLO 3: got %q want %q", got, want)
	}
	if got := c.do("client", "getname"); got != "$5\r\nconn1\r\n" {
		t.Fatalf("GETNAME: %q", got)
	}
	// RESP3 shapes: null, map, verbatim.
	c.do("client", "setname", "")
	if got := c.do("client", "getname"); got != "_\r\n" {
		t.Fatalf("RESP3 null: %q", got)
	}
	if got := c.do("config", "get", "databases"); got != "%1\r\n$9\r\ndatabases\r\n$2\r\n16\r\n" {
		t.Fatalf("RESP3 CONFIG GET: %q", got)
	}
	if got := c.do("info", "cluster"); got != "=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n" {
		t.Fatalf("RESP3 INFO: %q", got)
	}
	if got := c.do("hello", "2"); !strings.HasPrefix(got, "*14\r\n") {
		t.Fatalf("back to RESP2: %q", got)
	}
	if got := c.do("client", "getname"); got != "$-1\r\n" {
		t.Fatalf("RESP2 null: %q", got)
	}
}

func TestAuthentication(t *testing.T) {
	cfg := testConfig()
	cfg.Server.Password = "s3cret"
	_, addr := startServer(t, cfg, nil, nil)
	c := dial(t, addr)
	noauth := "-NOAUTH Authentication required.\r\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ping"}, noauth},
		{[]string{"fget", "k"}, noauth},
		{[]string{"client", "setname", "x"}, noauth},
		{[]string{"multi"}, noauth},
		// Unknown commands and arity are checked before authentication.
		{[]string{"foo"}, "-ERR unknown command 'foo', with args beginning with: \r\n"},
		{[]string{"fget"}, "-ERR wrong number of arguments for 'fget' command\r\n"},
		{[]string{"hello", "3"}, "-" + errHelloNoAuth + "\r\n"},
		{[]string{"hello", "3", "auth", "default", "bad"}, "-" + errWrongPass + "\r\n"},
		{[]string{"auth", "bad"}, "-" + errWrongPass + "\r\n"},
		{[]string{"auth", "alice", "s3cret"}, "-" + errWrongPass + "\r\n"},
		{[]string{"reset"}, "+RESET\r\n"},
		{[]string{"auth", "s3cret"}, "+OK\r\n"},
		{[]string{"ping"}, "+PONG\r\n"},
		{[]string{"auth", "bad"}, "-" + errWrongPass + "\r\n"},
		{[]string{"ping"}, "+PONG\r\n"}, // a failed AUTH keeps the earlier one
		{[]string{"reset"}, "+RESET\r\n"},
		{[]string{"ping"}, noauth},
		{[]string{"auth", "default", "s3cret"}, "+OK\r\n"},
		// As Redis, CONFIG GET shows the password to a client allowed to run it.
		{[]string{"config", "get", "requirepass"}, "*2\r\n$11\r\nrequirepass\r\n$6\r\ns3cret\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}

	// HELLO AUTH authenticates and switches protocol in one step.
	c2 := dial(t, addr)
	if got := c2.do("hello", "3", "auth", "default", "s3cret"); !strings.HasPrefix(got, "%7\r\n") {
		t.Fatalf("HELLO AUTH: %q", got)
	}
	if got := c2.do("ping"); got != "+PONG\r\n" {
		t.Fatalf("after HELLO AUTH: %q", got)
	}

	// QUIT is allowed before AUTH.
	c3 := dial(t, addr)
	if got := c3.do("quit"); got != "+OK\r\n" {
		t.Fatalf("QUIT: %q", got)
	}
	c3.closed()
}

func TestUnauthenticatedLimits(t *testing.T) {
	cfg := testConfig()
	cfg.Server.Password = "pw"
	_, addr := startServer(t, cfg, nil, nil)

	c := dial(t, addr)
	c.send("*11\r\n")
	if got := c.reply(); got != "-ERR Protocol error: unauthenticated multibulk length\r\n" {
		t.Fatalf("got %q", got)
	}
	c.closed()

	c = dial(t, addr)
	c.send("*2\r\n$4\r\necho\r\n$16385\r\n")
	if got := c.reply(); got != "-ERR Protocol error: unauthenticated bulk length\r\n" {
		t.Fatalf("got %q", got)
	}
	c.closed()

	// AUTH pipelined with a big argument: the limit no longer applies to
	// the command after AUTH, as in Redis, which runs AUTH first.
	c = dial(t, addr)
	big := strings.Repeat("v", 100000)
	c.send(encode("auth", "pw") + encode("echo", big) + encode("ping"))
	if got := c.reply(); got != "+OK\r\n" {
		t.Fatalf("AUTH: %q", got)
	}
	if got := c.reply(); got != "$100000\r\n"+big+"\r\n" {
		t.Fatalf("ECHO after AUTH: %.60q", got)
	}
	if got := c.reply(); got != "+PONG\r\n" {
		t.Fatalf("PING: %q", got)
	}
}

func TestPipelinedRepliesInOrder(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	const n = 1000
	var req strings.Builder
	var want []string
	for i := range n {
		s := strconv.Itoa(i)
		switch i % 5 {
		case 0:
			req.WriteString(encode("ping", s))
			want = append(want, "$"+strconv.Itoa(len(s))+"\r\n"+s+"\r\n")
		case 1:
			req.WriteString(encode("fget", s))
			want = append(want, "$"+strconv.Itoa(len(s))+"\r\n"+s+"\r\n")
		case 2:
			req.WriteString(encode("echo", s))
			want = append(want, "$"+strconv.Itoa(len(s))+"\r\n"+s+"\r\n")
		case 3:
			req.WriteString(encode("nosuch", s))
			want = append(want, "-ERR unknown command 'nosuch', with args beginning with: '"+s+"' \r\n")
		case 4:
			req.WriteString("PING\r\n") // inline
			want = append(want, "+PONG\r\n")
		}
	}
	// Write from another goroutine: a pipeline this long can fill both
	// socket buffers before the client reads.
	go c.send(req.String())
	for i := range n {
		if got := c.reply(); got != want[i] {
			t.Fatalf("reply %d: got %q want %q", i, got, want[i])
		}
	}
}

func TestProtocolErrors(t *testing.T) {
	cfg := testConfig()
	cfg.Server.ProtoMaxBulkLen = 1 << 20
	_, addr := startServer(t, cfg, nil, nil)
	for _, tc := range []struct {
		name, in, want string
	}{
		{"bad multibulk count", "*abc\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"element not a bulk", "*1\r\n+foo\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"},
		{"negative bulk length", "*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"bulk length not a number", "*1\r\n$4x\r\nPING\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"oversized bulk", "*2\r\n$3\r\nset\r\n$1048577\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"huge bulk", "*1\r\n$9223372036854775807\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
		{"too many arguments", "*2147483648\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"huge argument count", "*4611686018427387904\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
		{"endless header", "*" + strings.Repeat("1", 40), "-ERR Protocol error: too big mbulk count string\r\n"},
		{"endless bulk header", "*1\r\n$" + strings.Repeat("1", 40), "-ERR Protocol error: too big bulk count string\r\n"},
		{"endless inline", strings.Repeat("a", 70000), "-ERR Protocol error: too big inline request\r\n"},
		{"unbalanced quotes", "ping \"a\r\n", "-ERR Protocol error: unbalanced quotes in request\r\n"},
		{"replies before the error", encode("ping") + encode("echo", "x") + "*1\r\n$-1\r\n",
			"+PONG\r\n$1\r\nx\r\n-ERR Protocol error: invalid bulk length\r\n"},
		{"oversized bulk after commands", encode("ping") + "*1\r\n$2000000\r\n",
			"+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"},
		{"bad inline after commands", encode("ping") + "PING\r\nping \"a\r\n",
			"+PONG\r\n+PONG\r\n-ERR Protocol error: unbalanced quotes in request\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, addr)
			go c.send(tc.in)
			var got string
			for len(got) < len(tc.want) {
				got += c.reply()
			}
			if got != tc.want {
				t.Fatalf("got %q want %q", got, tc.want)
			}
			c.closed()
		})
	}

	// Empty multibulks are skipped, as Redis skips them.
	c0 := dial(t, addr)
	c0.send("*0\r\n*-1\r\n" + encode("ping"))
	if got := c0.reply(); got != "+PONG\r\n" {
		t.Fatalf("after empty multibulks: %q", got)
	}

	// A bulk exactly at the limit is fine.
	c := dial(t, addr)
	v := strings.Repeat("z", 1<<20)
	go c.send(encode("echo", v))
	if got := c.reply(); got != "$1048576\r\n"+v+"\r\n" {
		t.Fatalf("bulk at the limit: %.40q", got)
	}
}

func TestMaxClients(t *testing.T) {
	cfg := testConfig()
	cfg.Server.MaxClients = 2
	s, addr := startServer(t, cfg, nil, nil)
	a, b := dial(t, addr), dial(t, addr)
	a.do("ping")
	b.do("ping")
	c := dial(t, addr)
	if got := c.reply(); got != "-ERR max number of clients reached\r\n" {
		t.Fatalf("got %q", got)
	}
	c.closed()
	if got := a.do("info", "stats"); !strings.Contains(got, "rejected_connections:1\r\n") || !strings.Contains(got, "store_fake_calls:42\r\n") {
		t.Fatalf("INFO stats: %q", got)
	}
	// A slot frees when a client leaves.
	b.do("quit")
	b.closed()
	waitFor(t, func() bool { return s.connectedClients() == 1 })
	d := dial(t, addr)
	if got := d.do("ping"); got != "+PONG\r\n" {
		t.Fatalf("after a client left: %q", got)
	}
}

// waitFor polls cond, for state that changes on another goroutine with no
// event to wait on (a connection's cleanup).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdleTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.Server.Timeout = 1
	_, addr := startServer(t, cfg, nil, nil)
	c := dial(t, addr)
	if got := c.do("ping"); got != "+PONG\r\n" {
		t.Fatal(got)
	}
	start := time.Now()
	c.closed()
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("closed after %v, before the 1s timeout", d)
	}
}

func TestClientCommands(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	a, b := dial(t, addr), dial(t, addr)
	aID := strings.TrimSuffix(strings.TrimPrefix(a.do("client", "id"), ":"), "\r\n")
	bID := strings.TrimSuffix(strings.TrimPrefix(b.do("client", "id"), ":"), "\r\n")
	if aID == bID {
		t.Fatal("two clients share an id")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"client", "getname"}, "$-1\r\n"},
		{[]string{"client", "setname", "alpha"}, "+OK\r\n"},
		{[]string{"client", "getname"}, "$5\r\nalpha\r\n"},
		{[]string{"client", "setname", "has space"}, "-" + errBadName + "\r\n"},
		{[]string{"client", "setname", "new\nline"}, "-" + errBadName + "\r\n"},
		{[]string{"client", "setinfo", "LIB-NAME", "go-redis(,go1.26)"}, "+OK\r\n"},
		{[]string{"client", "setinfo", "lib-ver", "9.23.0"}, "+OK\r\n"},
		{[]string{"client", "setinfo", "lib-name", "a b"}, "-ERR lib-name cannot contain spaces, newlines or special characters.\r\n"},
		{[]string{"client", "setinfo", "lib-foo", "a"}, "-ERR Unrecognized option 'lib-foo'\r\n"},
		{[]string{"client", "no-evict", "on"}, "+OK\r\n"},
		{[]string{"client", "no-evict", "maybe"}, "-ERR syntax error\r\n"},
		{[]string{"client", "no-touch", "OFF"}, "+OK\r\n"},
		{[]string{"client", "list", "type", "pubsub"}, "$0\r\n\r\n"},
		{[]string{"client", "list", "type", "bogus"}, "-ERR Unknown client type 'bogus'\r\n"},
		{[]string{"client", "list", "id", "x"}, "-ERR Invalid client ID\r\n"},
		{[]string{"client", "list", "bogus"}, "-ERR syntax error\r\n"},
	} {
		if got := a.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
	info := a.do("client", "info")
	for _, want := range []string{"id=" + aID + " ", " name=alpha ", " db=0 ", " resp=2 ", " cmd=client|info ",
		" lib-name=go-redis(,go1.26) ", " lib-ver=9.23.0\n", " flags=N ", " multi=-1 "} {
		if !strings.Contains(info, want) {
			t.Errorf("CLIENT INFO %q lacks %q", info, want)
		}
	}
	b.do("select", "3")
	b.do("client", "setname", "beta")
	list := a.do("client", "list")
	lines := strings.Split(strings.TrimSuffix(list[strings.Index(list, "\r\n")+2:len(list)-2], "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "id="+aID+" ") || !strings.HasPrefix(lines[1], "id="+bID+" ") ||
		!strings.Contains(lines[1], " name=beta ") || !strings.Contains(lines[1], " db=3 ") {
		t.Fatalf("CLIENT LIST:\n%s", list)
	}
	if got := a.do("client", "list", "id", bID); !strings.Contains(got, "name=beta") || strings.Contains(got, "name=alpha") {
		t.Fatalf("CLIENT LIST ID: %q", got)
	}

	// CLIENT REPLY: OFF and SKIP suppress replies, ON answers again.
	a.send(encode("client", "reply", "off") + encode("ping", "1") + encode("client", "reply", "on") + encode("ping", "2"))
	if got := a.reply(); got != "+OK\r\n" {
		t.Fatalf("REPLY ON: %q", got)
	}
	if got := a.reply(); got != "$1\r\n2\r\n" {
		t.Fatalf("after REPLY ON: %q", got)
	}
	a.send(encode("client", "reply", "skip") + encode("ping", "1") + encode("ping", "2"))
	if got := a.reply(); got != "$1\r\n2\r\n" {
		t.Fatalf("REPLY SKIP: %q", got)
	}
	// ON answers even right after SKIP (Redis clears both flags first).
	a.send(encode("client", "reply", "skip") + encode("client", "reply", "on") + encode("ping", "3"))
	if got := a.reply(); got != "+OK\r\n" {
		t.Fatalf("REPLY ON after SKIP: %q", got)
	}
	if got := a.reply(); got != "$1\r\n3\r\n" {
		t.Fatalf("after SKIP, ON: %q", got)
	}

	// CLIENT KILL closes another connection.
	if got := a.do("client", "kill", "id", bID); got != ":1\r\n" {
		t.Fatalf("KILL: %q", got)
	}
	b.closed()
	if got := a.do("client", "kill", "127.0.0.1:1"); got != "-ERR No such client\r\n" {
		t.Fatalf("KILL unknown: %q", got)
	}
	if got := a.do("client", "help"); !strings.HasPrefix(got, "*") {
		t.Fatalf("HELP: %q", got)
	}
}

func TestCommandIntrospection(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	count, _ := strconv.Atoi(strings.Trim(c.do("command", "count"), ":\r\n"))
	if want := len(builtins.top) + 4; count != want {
		t.Fatalf("COMMAND COUNT = %d, want %d", count, want)
	}
	// Byte for byte what redis-server 7.0 answers for ECHO.
	echo := "*10\r\n$4\r\necho\r\n:2\r\n*3\r\n+loading\r\n+stale\r\n+fast\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n"
	if got := c.do("command", "info", "ECHO", "nosuch"); got != "*2\r\n"+echo+"$-1\r\n" {
		t.Fatalf("COMMAND INFO echo: %q", got)
	}
	// A module command's entry comes from its manifest.
	fget := "*10\r\n$4\r\nfget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n" +
		"*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n" +
		"$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n"
	if got := c.do("command", "info", "fget"); got != "*1\r\n"+fget {
		t.Fatalf("COMMAND INFO fget:\n got %q\nwant %q", got, "*1\r\n"+fget)
	}
	if got := c.do("command", "info", "client|id"); !strings.HasPrefix(got, "*1\r\n*10\r\n$9\r\nclient|id\r\n:2\r\n") {
		t.Fatalf("COMMAND INFO client|id: %q", got)
	}
	all := c.do("command")
	if !strings.HasPrefix(all, "*"+strconv.Itoa(count)+"\r\n") || !strings.Contains(all, fget) || !strings.Contains(all, echo) {
		t.Fatalf("COMMAND lacks entries: %.200q", all)
	}
	if got := c.do("command", "docs", "fget", "nosuch"); got != "*2\r\n$4\r\nfget\r\n*8\r\n$7\r\nsummary\r\n$9\r\nGet a key\r\n"+
		"$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n$6\r\nmodule\r\n$4\r\ntest\r\n" {
		t.Fatalf("COMMAND DOCS: %q", got)
	}
	if got := c.do("command", "docs", "echo"); got != "*2\r\n$4\r\necho\r\n*6\r\n$7\r\nsummary\r\n$21\r\nEcho the given string\r\n"+
		"$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$10\r\nconnection\r\n" {
		t.Fatalf("COMMAND DOCS echo: %q", got)
	}
	if got := c.do("command", "list", "filterby", "module", "test"); got != "*4\r\n$5\r\nfecho\r\n$5\r\nffail\r\n$4\r\nfget\r\n$5\r\nfmset\r\n" {
		t.Fatalf("COMMAND LIST FILTERBY MODULE: %q", got)
	}
	if got := c.do("command", "list", "filterby", "pattern", "client|s*"); got != "*3\r\n$14\r\nclient|setinfo\r\n$14\r\nclient|setname\r\n" &&
		got != "*2\r\n$14\r\nclient|setinfo\r\n$14\r\nclient|setname\r\n" {
		t.Fatalf("COMMAND LIST FILTERBY PATTERN: %q", got)
	}
	if got := c.do("command", "list", "filterby", "aclcat", "transaction"); got != "*5\r\n$7\r\ndiscard\r\n$4\r\nexec\r\n$5\r\nmulti\r\n$7\r\nunwatch\r\n$5\r\nwatch\r\n" {
		t.Fatalf("COMMAND LIST FILTERBY ACLCAT: %q", got)
	}
	if got := c.do("command", "list", "bogus"); got != "-ERR syntax error\r\n" {
		t.Fatalf("COMMAND LIST bogus: %q", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"command", "getkeys", "fget", "k"}, "*1\r\n$1\r\nk\r\n"},
		{[]string{"command", "getkeys", "fmset", "a", "1", "b", "2"}, "*2\r\n$1\r\na\r\n$1\r\nb\r\n"},
		{[]string{"command", "getkeys", "nosuch", "a"}, "-ERR Invalid command specified\r\n"},
		{[]string{"command", "getkeys", "fget", "a", "b"}, "-ERR Invalid number of arguments specified for command\r\n"},
		{[]string{"command", "getkeys", "echo", "a"}, "-ERR The command has no key arguments\r\n"},
		{[]string{"command", "getkeys", "fget"}, "-ERR wrong number of arguments for 'command|getkeys' command\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
}

func TestInfo(t *testing.T) {
	st := &fakeStore{counts: map[int]int64{0: 3, 5: 7}}
	_, addr := startServer(t, testConfig(), nil, st)
	c := dial(t, addr)
	c.do("fget", "x")
	c.do("fget", "y")
	c.do("fget")
	c.do("ffail")
	c.do("nosuch")

	keyspace := "# Keyspace\r\ndb0:keys=3,expires=0,avg_ttl=0\r\ndb5:keys=7,expires=0,avg_ttl=0\r\n"
	if got := c.do("info", "keyspace"); got != bulk(keyspace) {
		t.Fatalf("keyspace: %q", got)
	}
	cs := c.do("info", "commandstats")
	for _, want := range []string{
		"cmdstat_fget:calls=2,usec=", ",rejected_calls=1,failed_calls=0\r\n",
		"cmdstat_ffail:calls=1,", ",rejected_calls=0,failed_calls=1\r\n",
	} {
		if !strings.Contains(cs, want) {
			t.Errorf("commandstats %q lacks %q", cs, want)
		}
	}
	es := c.do("info", "errorstats")
	for _, want := range []string{"errorstat_ERR:count=2\r\n", "errorstat_WRONGTYPE:count=1\r\n"} {
		if !strings.Contains(es, want) {
			t.Errorf("errorstats %q lacks %q", es, want)
		}
	}
	if got := c.do("info", "modules"); !strings.Contains(got, "module:name=test,ver=10203,version=1.2.3,path=/x/test.wasm,commands=4,swaps=0,load_usec=0,traps=0,deadline_kills=0,guest_usec=0\r\n") {
		t.Fatalf("modules: %q", got)
	}
	def := c.do("info")
	for _, want := range []string{"# Server\r\n", "redis_version:" + RedisVersion + "\r\n", "respike_version:" + Version + "\r\n",
		"tcp_port:" + addr[strings.LastIndex(addr, ":")+1:] + "\r\n", "uptime_in_seconds:",
		"\r\n\r\n# Clients\r\nconnected_clients:1\r\n", "# Stats\r\n", "total_commands_processed:", "total_connections_received:1\r\n",
		"# Replication\r\nrole:master\r\n", "# Modules\r\n", "# Errorstats\r\n", "# Keyspace\r\ndb0:keys=3"} {
		if !strings.Contains(def, want) {
			t.Errorf("INFO lacks %q", want)
		}
	}
	if strings.Contains(def, "# Commandstats") {
		t.Error("INFO without arguments includes commandstats")
	}
	if got := c.do("info", "bogus"); got != "$0\r\n\r\n" {
		t.Fatalf("unknown section: %q", got)
	}
	if got := c.do("info", "CLUSTER", "keyspace"); got != bulk("# Cluster\r\ncluster_enabled:0\r\n\r\n"+keyspace) {
		t.Fatalf("two sections: %q", got)
	}
	if got := c.do("config", "resetstat"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := c.do("info", "commandstats"); strings.Contains(got, "cmdstat_fget") {
		t.Fatalf("RESETSTAT kept stats: %q", got)
	}
}

func TestKeyspaceCommands(t *testing.T) {
	st := &fakeStore{counts: map[int]int64{0: 3, 2: 4}}
	_, addr := startServer(t, testConfig(), nil, st)
	c := dial(t, addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"dbsize"}, ":3\r\n"},
		{[]string{"select", "2"}, "+OK\r\n"},
		{[]string{"dbsize"}, ":4\r\n"},
		{[]string{"flushdb", "bogus"}, "-ERR syntax error\r\n"},
		{[]string{"flushdb", "sync", "async"}, "-ERR syntax error\r\n"},
		{[]string{"flushdb", "ASYNC"}, "+OK\r\n"},
		{[]string{"dbsize"}, ":0\r\n"},
		{[]string{"select", "0"}, "+OK\r\n"},
		{[]string{"dbsize"}, ":3\r\n"},
		{[]string{"flushall"}, "+OK\r\n"},
		{[]string{"dbsize"}, ":0\r\n"},
		{[]string{"dbsize", "x"}, "-ERR wrong number of arguments for 'dbsize' command\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
	if strings.Join(st.truncated, ",") != "2,all" {
		t.Fatalf("truncations: %v", st.truncated)
	}
	// A store that is down answers an error at once.
	st.mu.Lock()
	st.down = true
	st.mu.Unlock()
	for _, cmd := range []string{"dbsize", "flushdb", "flushall"} {
		if got := c.do(cmd); got != "-ERR backend unavailable: no nodes reachable\r\n" {
			t.Errorf("%s with the store down: %q", cmd, got)
		}
	}
	if got := c.do("info", "keyspace"); got != bulk("# Keyspace\r\n") {
		t.Errorf("INFO keyspace with the store down: %q", got)
	}
}

func TestConfigCommands(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"config", "get", "save"}, "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"},
		{[]string{"config", "get", "appendonly", "databases"}, "*4\r\n$10\r\nappendonly\r\n$2\r\nno\r\n$9\r\ndatabases\r\n$2\r\n16\r\n"},
		{[]string{"config", "get", "maxmemory-p*"}, "*2\r\n$16\r\nmaxmemory-policy\r\n$10\r\nnoeviction\r\n"},
		{[]string{"config", "get", "MAXCLIENTS"}, "*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n"},
		{[]string{"config", "get", "requirepass"}, "*2\r\n$11\r\nrequirepass\r\n$0\r\n\r\n"},
		{[]string{"config", "get", "nosuch"}, "*0\r\n"},
		{[]string{"config", "set", "save", "900 1"}, "+OK\r\n"},
		{[]string{"config", "set", "appendonly", "no"}, "+OK\r\n"},
		// Accepted and remembered: it has no effect on respike.
		{[]string{"config", "set", "appendonly", "yes"}, "+OK\r\n"},
		{[]string{"config", "get", "appendonly"}, "*2\r\n$10\r\nappendonly\r\n$3\r\nyes\r\n"},
		{[]string{"config", "set", "port", "1"}, "-ERR CONFIG SET failed (possibly related to argument 'port') - respike does not change its listener at run time; edit [server] listen in the configuration file\r\n"},
		{[]string{"config", "set", "foo", "bar"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'\r\n"},
		{[]string{"config", "set", "save", "", "appendonly"}, "-ERR syntax error\r\n"},
		{[]string{"config", "rewrite"}, "-ERR The server is running without a config file\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	if got := c.do("config", "get", "port"); got != fmt.Sprintf("*2\r\n$4\r\nport\r\n$%d\r\n%s\r\n", len(port), port) {
		t.Fatalf("CONFIG GET port: %q", got)
	}
}

func TestMultiExec(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exec"}, "-ERR EXEC without MULTI\r\n"},
		{[]string{"discard"}, "-ERR DISCARD without MULTI\r\n"},
		{[]string{"watch", "k"}, "+OK\r\n"},
		{[]string{"unwatch"}, "+OK\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"multi"}, "-ERR MULTI calls can not be nested\r\n"},
		{[]string{"watch", "k"}, "-ERR WATCH inside MULTI is not allowed\r\n"},
		{[]string{"fget", "a"}, "+QUEUED\r\n"},
		{[]string{"ping"}, "+QUEUED\r\n"},
		{[]string{"select", "2"}, "+QUEUED\r\n"},
		{[]string{"exec"}, "*3\r\n$1\r\na\r\n+PONG\r\n+OK\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"fget", "a"}, "+QUEUED\r\n"},
		{[]string{"discard"}, "+OK\r\n"},
		{[]string{"exec"}, "-ERR EXEC without MULTI\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"nosuch"}, "-ERR unknown command 'nosuch', with args beginning with: \r\n"},
		{[]string{"fget"}, "-ERR wrong number of arguments for 'fget' command\r\n"},
		{[]string{"ping"}, "+QUEUED\r\n"},
		{[]string{"exec"}, "-EXECABORT Transaction discarded because of previous errors.\r\n"},
		{[]string{"ping"}, "+PONG\r\n"},
		{[]string{"multi"}, "+OK\r\n"},
		{[]string{"reset"}, "+RESET\r\n"},
		{[]string{"exec"}, "-ERR EXEC without MULTI\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
}

func TestMultiExecReplies(t *testing.T) {
	_, addr := startServer(t, testConfig(), nil, nil)
	c := dial(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(c.do("client", "id"), ":"), "\r\n")
	c.send(encode("multi") + encode("fget", "a") + encode("ping") + encode("select", "2") + encode("fecho") +
		encode("ffail") + encode("exec"))
	want := []string{"+OK\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n", "+QUEUED\r\n",
		"*5\r\n$1\r\na\r\n+PONG\r\n+OK\r\n*4\r\n$5\r\nfecho\r\n:2\r\n:2\r\n:" + id + "\r\n" +
			"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"}
	for i, w := range want {
		if got := c.reply(); got != w {
			t.Fatalf("reply %d: got %q want %q", i, got, w)
		}
	}
	if got := c.do("fecho"); !strings.Contains(got, "\r\n:2\r\n:2\r\n") {
		t.Fatalf("SELECT inside EXEC did not apply: %q", got)
	}
}

func TestModuleAdminCommands(t *testing.T) {
	rt := newFakeRuntime()
	_, addr := startServer(t, testConfig(), rt, nil)
	c := dial(t, addr)
	want := "*1\r\n*20\r\n$4\r\nname\r\n$4\r\ntest\r\n$3\r\nver\r\n:10203\r\n$4\r\npath\r\n$12\r\n/x/test.wasm\r\n$4\r\nargs\r\n*0\r\n" +
		"$7\r\nversion\r\n$5\r\n1.2.3\r\n$8\r\ncommands\r\n*4\r\n$5\r\nfecho\r\n$5\r\nffail\r\n$4\r\nfget\r\n$5\r\nfmset\r\n" +
		"$9\r\nloaded_at\r\n:0\r\n$9\r\nload_usec\r\n:0\r\n$5\r\nswaps\r\n:0\r\n$10\r\nlast_error\r\n$0\r\n\r\n"
	if got := c.do("module", "list"); got != want {
		t.Fatalf("MODULE LIST:\n got %q\nwant %q", got, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"module", "load", "/m/new.wasm"}, "+OK\r\n"},
		{[]string{"module", "load", "/m/bad.wasm"}, "-ERR Error loading the extension: not a module\r\n"},
		{[]string{"module", "load", "/m/x.wasm", "arg"}, "-ERR Error loading the extension: respike modules take no arguments\r\n"},
		{[]string{"module", "unload", "test"}, "+OK\r\n"},
		{[]string{"module", "unload", "nope"}, "-ERR Error unloading module: no such module with that name\r\n"},
	} {
		if got := c.do(tc.args...); got != tc.want {
			t.Errorf("%q: got %q want %q", tc.args, got, tc.want)
		}
	}
	if len(rt.loaded) != 1 || rt.loaded[0] != "/m/new.wasm" {
		t.Fatalf("loaded: %v", rt.loaded)
	}

	cfg := testConfig()
	cfg.Server.EnableModuleCommand = "no"
	_, addr2 := startServer(t, cfg, rt, nil)
	c2 := dial(t, addr2)
	if got := c2.do("module", "load", "/m/new.wasm"); got != "-"+errModuleNotAllowed+"\r\n" {
		t.Fatalf("MODULE LOAD when disabled: %q", got)
	}
	if got := c2.do("module", "list"); !strings.HasPrefix(got, "*1\r\n") {
		t.Fatalf("MODULE LIST when disabled: %q", got)
	}
}

func TestShutdownWaitsForInFlightCommands(t *testing.T) {
	rt := newFakeRuntime()
	started := make(chan struct{})
	release := make(chan struct{})
	rt.add("test", codec.CommandInfo{Name: "fslow", Arity: 1}, func(ctx context.Context, _ *codec.Start, w *resp.Writer) {
		close(started)
		select {
		case <-release:
			w.Simple("DONE")
		case <-ctx.Done():
			w.Error("ERR cancelled")
		}
	})
	s := newServer(testConfig(), rt, &fakeStore{counts: map[int]int64{}}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	idle := dial(t, ln.Addr().String())
	idle.do("ping")
	busy := dial(t, ln.Addr().String())
	busy.send(encode("fslow"))
	<-started

	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	idle.closed() // idle connections close at once
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("still accepting after Shutdown")
	}
	close(release)
	if got := busy.reply(); got != "+DONE\r\n" {
		t.Fatalf("in-flight reply: %q", got)
	}
	busy.closed()
	if err := <-stopped; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestShutdownCancelsWhenOutOfTime(t *testing.T) {
	rt := newFakeRuntime()
	started := make(chan struct{})
	rt.add("test", codec.CommandInfo{Name: "fstuck", Arity: 1}, func(ctx context.Context, _ *codec.Start, w *resp.Writer) {
		close(started)
		<-ctx.Done()
		w.Error("ERR cancelled")
	})
	s := newServer(testConfig(), rt, &fakeStore{counts: map[int]int64{}}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	c := dial(t, ln.Addr().String())
	c.send(encode("fstuck"))
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
		t.Fatalf("Shutdown = %v, want deadline exceeded", err)
	}
	c.closed()
}

func TestConcurrentClients(t *testing.T) {
	s, addr := startServer(t, testConfig(), nil, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial(t, addr)
			c.do("client", "setname", "c"+strconv.Itoa(i))
			for j := range 100 {
				v := strconv.Itoa(j)
				if got := c.do("fget", v); got != "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n" {
					t.Errorf("got %q", got)
					return
				}
				if j%25 == 0 {
					c.do("client", "list")
					c.do("info")
				}
			}
		}()
	}
	wg.Wait()
	if got := s.stats.totalConns.Load(); got != 8 {
		t.Fatalf("total connections %d", got)
	}
}

// bulk returns s as a RESP2 bulk string.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// A panic in the proxy while it runs one client's command (a bug) ends that
// client's connection, not the proxy: other clients go on, and INFO counts
// it.
func TestPanicEndsOnlyItsConnection(t *testing.T) {
	rt := newFakeRuntime()
	rt.add("test", codec.CommandInfo{Name: "fpanic", Arity: 1, Flags: []string{"fast"}, Group: "generic"},
		func(context.Context, *codec.Start, *resp.Writer) { panic("a bug") })
	_, addr := startServer(t, testConfig(), rt, nil)
	other := dial(t, addr)
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	c := dial(t, addr)
	c.send(encode("fpanic"))
	c.closed()
	if got := other.do("PING"); got != "+PONG\r\n" {
		t.Errorf("another client after the panic: PING = %q", got)
	}
	if got := dial(t, addr).do("fecho", "x"); !strings.HasPrefix(got, "*5\r\n$5\r\nfecho\r\n$1\r\nx\r\n") {
		t.Errorf("a new client after the panic: %q", got)
	}
	if info := other.do("INFO", "stats"); !strings.Contains(info, "respike_internal_errors:1\r\n") {
		t.Errorf("INFO stats does not count the panic:\n%s", info)
	}
}
