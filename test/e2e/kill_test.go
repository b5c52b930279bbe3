package e2e

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The daemon's connection reads stay open between commands (one read per
// unpipelined command, host/server/rawio_linux.go), which a plain close of
// the socket from another goroutine would wait for: CLIENT KILL must still
// end a client at once, whatever it is doing, and the client must leave.

// killPromptly kills client id from admin, failing unless CLIENT KILL
// answers 1 within a second.
func killPromptly(t *testing.T, admin *redis.Client, id int64) {
	t.Helper()
	began := time.Now()
	n, err := admin.Do(context.Background(), "CLIENT", "KILL", "ID", id).Int()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL ID %d = %d, %v", id, n, err)
	}
	if d := time.Since(began); d > time.Second {
		t.Fatalf("CLIENT KILL took %v", d)
	}
}

// awaitLeft waits until CLIENT LIST no longer shows client id: the
// connection leaves the list as its goroutine ends, with no event to wait
// on.
func awaitLeft(t *testing.T, admin *redis.Client, id int64) {
	t.Helper()
	eventually(t, "killed client "+strconv.FormatInt(id, 10)+" leaves CLIENT LIST", 5*time.Second, func() bool {
		list, err := admin.ClientList(context.Background()).Result()
		if err != nil {
			t.Fatal(err)
		}
		return !strings.Contains(list, "id="+strconv.FormatInt(id, 10)+" ")
	})
}

func TestClientKillIdleClient(t *testing.T) {
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	victim := client(t, env.daemon.Addr, func(o *redis.Options) { o.PoolSize = 1 })
	id, err := victim.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	killPromptly(t, admin, id)
	awaitLeft(t, admin, id)
	// go-redis finds its connection closed and dials another.
	if again, err := victim.ClientID(ctx).Result(); err != nil || again == id {
		t.Fatalf("after the kill the client's connection is %d (%v), was %d", again, err, id)
	}
}

// A client killed in the middle of a long pipeline whose replies it does
// not read, so that the daemon waits to write them: the kill answers at
// once, the client's connection ends, it leaves, and nothing more of its
// pipeline runs.
func TestClientKillMidPipeline(t *testing.T) {
	needModules(t, "strings")
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	victim := raw(t, env.daemon.Addr)
	id, err := strconv.ParseInt(strings.Trim(do(t, victim, "CLIENT", "ID"), ":\r\n"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	k := key(t, "n")
	admin.Del(ctx, k)
	const total = 200000
	sent := make(chan error, 1)
	go func() { sent <- victim.Send(bytes.Repeat(Encode("INCR", k), total)) }()
	// Kill once the daemon has run some of it.
	eventually(t, "the pipeline starts", 20*time.Second, func() bool {
		n, _ := admin.Get(ctx, k).Int()
		return n > 0
	})
	killPromptly(t, admin, id)
	select {
	case <-sent: // ended by the kill, or all sent before it
	case <-time.After(20 * time.Second):
		t.Fatal("sending to the killed client never ended")
	}
	// The replies written before the kill, then the end.
	_ = victim.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, victim.br); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("the killed client's connection: %v, want its end", err)
	}
	awaitLeft(t, admin, id)
	n1, _ := admin.Get(ctx, k).Int()
	n2, _ := admin.Get(ctx, k).Int()
	if n1 != n2 || n1 >= total {
		t.Fatalf("after the kill the count went %d then %d (of %d)", n1, n2, total)
	}
}

// A client killed while it waits in BLPOP: the kill answers at once, the
// BLPOP fails, the client no longer counts as blocked, and a push later
// stays in the list rather than going to the dead client.
func TestClientKillBlockedClient(t *testing.T) {
	needModules(t, "list")
	ctx := context.Background()
	admin := client(t, env.daemon.Addr)
	victim := clientLong(t, env.daemon.Addr)
	id, err := victim.ClientID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	k := key(t, "l")
	admin.Del(ctx, k)
	got := goDo(victim, "BLPOP", k, "0")
	eventually(t, "the client blocks", 20*time.Second, func() bool {
		line, err := admin.Do(ctx, "CLIENT", "LIST", "ID", id).Text()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(line, " flags=b ")
	})
	killPromptly(t, admin, id)
	if r := recv(t, got); r.err == nil {
		t.Fatalf("the killed client's BLPOP answered %v", r.val)
	}
	awaitLeft(t, admin, id)
	if err := admin.RPush(ctx, k, "x").Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := admin.LLen(ctx, k).Result(); err != nil || n != 1 {
		t.Fatalf("LLEN after a push with the blocked client killed = %d, %v; want 1", n, err)
	}
}
