package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The blocking-command tests run test/e2e/testdata/queue, whose BQPOP
// blocks as BLPOP does (QPUSH pushes, QPOP pops), on daemons of their
// own: a proxy (backend and daemon) shared by most tests, and proxies of
// their own for the tests that swap its module or need a second proxy on
// the same store.

var queueMod struct {
	once  sync.Once
	dir   string // holds queue.wasm, the plain build
	pathB string // queue.wasm built with -X main.tag=B, in a folder of its own
	err   error

	proxyOnce sync.Once
	proxy     *Backend
	daemon    *Daemon
	proxyErr  error
}

// queueBuilds builds the queue module's two variants once per test binary.
func queueBuilds(t *testing.T) (dir, pathB string) {
	t.Helper()
	queueMod.once.Do(func() {
		base := filepath.Join(filepath.Dir(env.modDir), "queue-builds")
		queueMod.dir = filepath.Join(base, "plain")
		queueMod.pathB = filepath.Join(base, "B", "queue.wasm")
		for out, flags := range map[string]string{filepath.Join(queueMod.dir, "queue.wasm"): "", queueMod.pathB: "-X main.tag=B"} {
			cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, "-ldflags="+flags, "./test/e2e/testdata/queue")
			cmd.Dir = env.root
			cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
			if b, err := cmd.CombinedOutput(); err != nil {
				queueMod.err = fmt.Errorf("building the queue module: %v\n%s", err, b)
				return
			}
		}
	})
	if queueMod.err != nil {
		t.Fatal(queueMod.err)
	}
	return queueMod.dir, queueMod.pathB
}

// queueProxy returns the address of the shared proxy serving the queue
// module, its backend, and a go-redis client of it.
func queueProxy(t *testing.T) (string, *Backend) {
	t.Helper()
	dir, _ := queueBuilds(t)
	queueMod.proxyOnce.Do(func() {
		queueMod.proxy, queueMod.proxyErr = NewBackend(context.Background(), dir, env.cacheDir, env.logger)
		if queueMod.proxyErr == nil {
			queueMod.daemon, queueMod.proxyErr = StartDaemon(testConfig(), queueMod.proxy, env.logger)
		}
	})
	if queueMod.proxyErr != nil {
		t.Fatal(queueMod.proxyErr)
	}
	return queueMod.daemon.Addr, queueMod.proxy
}

// newQueueProxy starts a proxy of the test's own on a fresh store.
func newQueueProxy(t *testing.T) (string, *Backend) {
	t.Helper()
	dir, _ := queueBuilds(t)
	b, err := NewBackend(context.Background(), dir, env.cacheDir, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return serve(t, testConfig(), b).Addr, b
}

// key returns a key name of the test's own.
func key(t *testing.T, name string) string { return t.Name() + ":" + name }

// blockedClients reads INFO blocked_clients.
func blockedClients(t *testing.T, c *redis.Client) int {
	t.Helper()
	return int(clientInfo(t, c, "clients", "blocked_clients"))
}

// clientInfo reads the integer field of INFO section from c's proxy.
func clientInfo(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	return infoValue(t, info, section, field)
}

// infoValue finds the integer field in an INFO reply of section.
func infoValue(t *testing.T, info, section, field string) int64 {
	t.Helper()
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %s:%s", section, field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s: %q", section, field, info)
	return 0
}

// awaitBlocked waits until n clients of the proxy c talks to are blocked:
// a client blocks on another goroutine, with no event to wait on.
func awaitBlocked(t *testing.T, c *redis.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for blockedClients(t, c) != n {
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients never reached %d (now %d)", n, blockedClients(t, c))
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// result is a reply received on another goroutine.
type result struct {
	val any
	err error
	at  time.Time
}

// goDo sends a command on c from a goroutine; its reply arrives on the
// channel.
func goDo(c *redis.Client, args ...any) <-chan result {
	ch := make(chan result, 1)
	go func() {
		v, err := c.Do(context.Background(), args...).Result()
		ch <- result{v, err, time.Now()}
	}()
	return ch
}

// recv waits for a reply that must come.
func recv(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("no reply")
	}
	return result{}
}

// wantPop checks a BQPOP reply: [key, elem].
func wantPop(t *testing.T, r result, key, elem string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("BQPOP: %v, want [%s %s]", r.err, key, elem)
	}
	got, ok := r.val.([]any)
	if !ok || len(got) != 2 || got[0] != key || got[1] != elem {
		t.Fatalf("BQPOP = %#v, want [%s %s]", r.val, key, elem)
	}
}

// clientLong is a client whose reads wait long enough for any block.
func clientLong(t *testing.T, addr string) *redis.Client {
	return client(t, addr, func(o *redis.Options) { o.ReadTimeout = -1; o.PoolSize = 1 })
}

// blockInTurn blocks n clients of addr on key q, one after another, for
// ever; admin sees them blocked.
func blockInTurn(t *testing.T, addr string, admin *redis.Client, q string, n int) []<-chan result {
	t.Helper()
	var got []<-chan result
	for i := range n {
		got = append(got, goDo(clientLong(t, addr), "BQPOP", q, "0"))
		awaitBlocked(t, admin, i+1)
	}
	return got
}

func TestBlockWakesOnWrite(t *testing.T) {
	addr, _ := queueProxy(t)
	admin := client(t, addr)
	q := key(t, "q")
	c := clientLong(t, addr)
	got := goDo(c, "BQPOP", q, "0")
	awaitBlocked(t, admin, 1)
	if n, err := admin.Do(context.Background(), "QPUSH", q, "a").Int(); err != nil || n != 1 {
		t.Fatalf("QPUSH = %d, %v", n, err)
	}
	wantPop(t, recv(t, got), q, "a")
	awaitBlocked(t, admin, 0)
	// The element went to the blocked client, not left behind.
	if v, err := admin.Do(context.Background(), "QPOP", q).Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("QPOP after the wake = %v, %v, want nil", v, err)
	}

	// On several keys: the one written wakes it; a write to another key
	// does not serve it.
	q1, q2 := key(t, "q1"), key(t, "q2")
	got = goDo(c, "BQPOP", q1, q2, "0")
	awaitBlocked(t, admin, 1)
	if err := admin.Do(context.Background(), "QPUSH", key(t, "other"), "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(context.Background(), "QPUSH", q2, "b").Err(); err != nil {
		t.Fatal(err)
	}
	wantPop(t, recv(t, got), q2, "b")
}

func TestBlockTimeout(t *testing.T) {
	addr, _ := queueProxy(t)
	q := key(t, "q")
	for _, proto := range []int{2, 3} {
		r := raw(t, addr)
		if proto == 3 {
			do(t, r, "HELLO", "3")
		}
		began := time.Now()
		got := do(t, r, "BQPOP", q, "0.1")
		took := time.Since(began)
		want := map[int]string{2: "*-1\r\n", 3: "_\r\n"}[proto]
		if got != want || took < 100*time.Millisecond || took > 5*time.Second {
			t.Errorf("RESP%d: BQPOP %s 0.1 = %q after %v, want %q after 100ms", proto, q, got, took, want)
		}
	}
	r := raw(t, addr)
	for arg, want := range map[string]string{
		"-1":  "-ERR timeout is negative\r\n",
		"abc": "-ERR timeout is not a float or out of range\r\n",
		"inf": "-ERR timeout is negative\r\n",
	} {
		if got := do(t, r, "BQPOP", q, arg); got != want {
			t.Errorf("BQPOP %s %s = %q, want %q", q, arg, got, want)
		}
	}
}

// TestBlockFIFO blocks three clients on one key in turn: one push of three
// elements serves them in the order they blocked, one element each.
func TestBlockFIFO(t *testing.T) {
	addr, _ := queueProxy(t)
	admin := client(t, addr)
	q := key(t, "q")
	got := blockInTurn(t, addr, admin, q, 3)
	if err := admin.Do(context.Background(), "QPUSH", q, "a", "b", "c").Err(); err != nil {
		t.Fatal(err)
	}
	for i, elem := range []string{"a", "b", "c"} {
		wantPop(t, recv(t, got[i]), q, elem)
	}
	awaitBlocked(t, admin, 0)
}

// TestBlockAcrossProxies blocks a client on one proxy and writes through
// another on the same store, with its own runtime and registry: the first
// proxy sees the write by polling the keys its clients wait on.
func TestBlockAcrossProxies(t *testing.T) {
	addrA, a := newQueueProxy(t)
	dir, _ := queueBuilds(t)
	b, err := a.NewProxy(context.Background(), dir, env.cacheDir, env.logger, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	addrB := serve(t, testConfig(), b).Addr
	adminA, adminB := client(t, addrA), client(t, addrB)
	q := key(t, "q")
	for _, way := range []struct {
		block, write string
		admin        *redis.Client
	}{{addrA, addrB, adminA}, {addrB, addrA, adminB}} {
		got := goDo(clientLong(t, way.block), "BQPOP", q, "0")
		awaitBlocked(t, way.admin, 1)
		if err := client(t, way.write).Do(context.Background(), "QPUSH", q, way.write).Err(); err != nil {
			t.Fatal(err)
		}
		wantPop(t, recv(t, got), q, way.write)
		awaitBlocked(t, way.admin, 0)
	}
}

func TestClientUnblock(t *testing.T) {
	addr, _ := queueProxy(t)
	admin := client(t, addr)
	q := key(t, "q")
	r := raw(t, addr)
	id := strings.TrimSuffix(strings.TrimPrefix(do(t, r, "CLIENT", "ID"), ":"), "\r\n")
	ctl := raw(t, addr)
	for _, tc := range []struct{ how, want string }{
		{"", "*-1\r\n"}, {"TIMEOUT", "*-1\r\n"}, {"error", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
	} {
		if err := r.Send(Encode("BQPOP", q, "0")); err != nil {
			t.Fatal(err)
		}
		awaitBlocked(t, admin, 1)
		if list := do(t, ctl, "CLIENT", "LIST", "ID", id); !strings.Contains(list, " flags=b ") {
			t.Fatalf("CLIENT LIST of a blocked client: %q, want flags=b", list)
		}
		args := []string{"CLIENT", "UNBLOCK", id}
		if tc.how != "" {
			args = append(args, tc.how)
		}
		if got := do(t, ctl, args...); got != ":1\r\n" {
			t.Fatalf("%q = %q, want :1", args, got)
		}
		if got, err := r.Reply(); err != nil || got != tc.want {
			t.Fatalf("after %q the blocked client got %q, %v, want %q", args, got, err, tc.want)
		}
		awaitBlocked(t, admin, 0)
	}
	for args, want := range map[string]string{
		"CLIENT UNBLOCK " + id:       ":0\r\n", // not blocked
		"CLIENT UNBLOCK 999999":      ":0\r\n",
		"CLIENT UNBLOCK abc":         "-ERR value is not an integer or out of range\r\n",
		"CLIENT UNBLOCK 1 foo":       "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n",
		"CLIENT UNBLOCK abc foo":     "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n",
		"CLIENT UNBLOCK 1 error foo": "-ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.\r\n",
	} {
		if got := do(t, ctl, strings.Fields(args)...); got != want {
			t.Errorf("%s = %q, want %q", args, got, want)
		}
	}
	// The unblocked client carries on.
	if got := do(t, r, "PING"); got != "+PONG\r\n" {
		t.Fatalf("PING after unblock = %q", got)
	}
}

// TestBlockDisconnect closes a blocked client's connection: it is
// forgotten, and the next push is not lost to it.
func TestBlockDisconnect(t *testing.T) {
	addr, b := queueProxy(t)
	admin := client(t, addr)
	q := key(t, "q")
	r, err := DialRaw(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send(Encode("BQPOP", q, "0")); err != nil {
		t.Fatal(err)
	}
	awaitBlocked(t, admin, 1)
	r.Close()
	awaitBlocked(t, admin, 0)
	if w := b.Store.(interface{ Waiting() int }).Waiting(); w != 0 {
		t.Fatalf("the registry still holds %d waiters", w)
	}
	if err := admin.Do(context.Background(), "QPUSH", q, "kept").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := admin.Do(context.Background(), "QPOP", q).Text(); err != nil || v != "kept" {
		t.Fatalf("QPOP = %q, %v, want kept", v, err)
	}
}

// TestBlockSwap swaps the queue module while clients are blocked: none is
// lost, and each runs again on the new version.
func TestBlockSwap(t *testing.T) {
	addr, b := newQueueProxy(t)
	_, pathB := queueBuilds(t)
	admin := client(t, addr)
	q := key(t, "q")
	got := blockInTurn(t, addr, admin, q, 3)
	if _, err := b.Runtime.Load(context.Background(), pathB); err != nil {
		t.Fatal(err)
	}
	if tag, err := admin.Do(context.Background(), "QTAG").Text(); err != nil || tag != "B" {
		t.Fatalf("QTAG after the swap = %q, %v", tag, err)
	}
	if blockedClients(t, admin) != 3 {
		t.Fatalf("blocked clients after the swap: %d", blockedClients(t, admin))
	}
	if err := admin.Do(context.Background(), "QPUSH", q, "1", "2", "3").Err(); err != nil {
		t.Fatal(err)
	}
	for i, elem := range []string{"B:1", "B:2", "B:3"} {
		wantPop(t, recv(t, got[i]), q, elem)
	}
}

// TestBlockInMulti: inside MULTI a blocking command answers at once, as
// its non-blocking form, with its timeout reply when it finds nothing.
func TestBlockInMulti(t *testing.T) {
	addr, _ := queueProxy(t)
	q := key(t, "q")
	r := raw(t, addr)
	for _, args := range [][]string{{"MULTI"}, {"BQPOP", q, "0"}, {"QPUSH", q, "a"}, {"BQPOP", q, "0"}, {"BQPOP", q, "0"}} {
		do(t, r, args...)
	}
	want := "*4\r\n*-1\r\n:1\r\n*2\r\n$" + strconv.Itoa(len(q)) + "\r\n" + q + "\r\n$1\r\na\r\n*-1\r\n"
	if got := do(t, r, "EXEC"); got != want {
		t.Fatalf("EXEC = %q, want %q", got, want)
	}
	// Blocking works again after EXEC.
	got := do(t, r, "BQPOP", q, "0.01")
	if got != "*-1\r\n" {
		t.Fatalf("BQPOP after EXEC = %q", got)
	}
}

// TestBlockPipeline sends commands before and after a blocking one in one
// write: the one before is answered while it waits, the ones after wait
// for it, and the replies stay in order.
func TestBlockPipeline(t *testing.T) {
	addr, _ := queueProxy(t)
	admin := client(t, addr)
	q := key(t, "q")
	r := raw(t, addr)
	var pipe []byte
	for _, args := range [][]string{{"PING", "before"}, {"BQPOP", q, "0"}, {"PING", "after"}, {"QPOP", q}} {
		pipe = append(pipe, Encode(args...)...)
	}
	if err := r.Send(pipe); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Reply(); err != nil || got != "$6\r\nbefore\r\n" {
		t.Fatalf("first reply = %q, %v", got, err)
	}
	awaitBlocked(t, admin, 1)
	if err := admin.Do(context.Background(), "QPUSH", q, "x", "y").Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"*2\r\n$" + strconv.Itoa(len(q)) + "\r\n" + q + "\r\n$1\r\nx\r\n", "$5\r\nafter\r\n", "$1\r\ny\r\n"}
	for _, w := range want {
		if got, err := r.Reply(); err != nil || got != w {
			t.Fatalf("reply = %q, %v, want %q", got, err, w)
		}
	}
}

// TestBlockShutdown stops a proxy while a client is blocked for ever: the
// stop does not wait for it, and the client sees its connection close.
func TestBlockShutdown(t *testing.T) {
	dir, _ := queueBuilds(t)
	b, err := NewBackend(context.Background(), dir, env.cacheDir, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	d, err := StartDaemon(testConfig(), b, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	r := raw(t, d.Addr)
	if err := r.Send(Encode("BQPOP", key(t, "q"), "0")); err != nil {
		t.Fatal(err)
	}
	awaitBlocked(t, client(t, d.Addr), 1)
	began := time.Now()
	if err := d.Stop(); err != nil {
		t.Fatalf("stop with a blocked client: %v", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("stop took %v: it waited for the blocked client", took)
	}
	if closed, err := r.Closed(); !closed {
		t.Fatalf("the blocked client's connection is still open: %v", err)
	}
}
