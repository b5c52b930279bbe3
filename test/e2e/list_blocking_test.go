package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP through go-redis on the main
// daemon: they answer at once when a list has elements, time out with a
// nil reply after their timeout, and a blocked client is served by a push
// from another client, FIFO among the blocked clients; a woken BLMOVE
// moves the element to its destination.
func TestListBlockingPops(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	k1, k2, dst := key(t, "a"), key(t, "b"), key(t, "dst")
	c.Del(ctx, k1, k2, dst)

	// Elements present: no blocking, the first non-empty key in order.
	c.RPush(ctx, k2, "one", "two", "three")
	if got, err := c.BLPop(ctx, time.Second, k1, k2).Result(); err != nil || len(got) != 2 || got[0] != k2 || got[1] != "one" {
		t.Fatalf("BLPOP on a non-empty list: %q, %v", got, err)
	}
	if got, err := c.BRPop(ctx, time.Second, k1, k2).Result(); err != nil || len(got) != 2 || got[0] != k2 || got[1] != "three" {
		t.Fatalf("BRPOP on a non-empty list: %q, %v", got, err)
	}
	if got, err := c.BLMove(ctx, k2, dst, "LEFT", "RIGHT", time.Second).Result(); err != nil || got != "two" {
		t.Fatalf("BLMOVE on a non-empty list: %q, %v", got, err)
	}
	if n := c.Exists(ctx, k2).Val(); n != 0 {
		t.Fatalf("the emptied list still exists (EXISTS %d)", n)
	}

	// Nothing to pop: a timeout answers nil after at least the timeout.
	// (Through Do: go-redis rounds a typed command's timeout up to 1s.)
	for name, args := range map[string][]any{
		"BLPOP":      {"BLPOP", k1, k2, "0.1"},
		"BRPOP":      {"BRPOP", k1, "0.1"},
		"BLMPOP":     {"BLMPOP", "0.1", "2", k1, k2, "LEFT", "COUNT", "10"},
		"BLMOVE":     {"BLMOVE", k1, dst, "RIGHT", "LEFT", "0.1"},
		"BRPOPLPUSH": {"BRPOPLPUSH", k1, dst, "0.1"},
	} {
		do := func() error { return c.Do(ctx, args...).Err() }
		start := time.Now()
		if err := do(); err != redis.Nil {
			t.Fatalf("%s timeout: %v, want redis.Nil", name, err)
		}
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("%s timed out after %v, before its 100ms", name, d)
		}
	}
	if got := c.LRange(ctx, dst, 0, -1).Val(); len(got) != 1 || got[0] != "two" {
		t.Fatalf("destination after timed-out moves: %q", got)
	}
	if n := blockedClients(t, c); n != 0 {
		t.Fatalf("blocked_clients %d after the timeouts", n)
	}

	// Three blocked clients, served in the order they blocked: BLPOP on two
	// keys, BLMPOP with a count, BRPOP.
	first := goDo(clientLong(t, env.daemon.Addr), "BLPOP", k1, k2, "0")
	awaitBlocked(t, c, 1)
	second := goDo(clientLong(t, env.daemon.Addr), "BLMPOP", "0", "2", k1, k2, "LEFT", "COUNT", "2")
	awaitBlocked(t, c, 2)
	third := goDo(clientLong(t, env.daemon.Addr), "BRPOP", k2, "0")
	awaitBlocked(t, c, 3)
	if err := c.RPush(ctx, k2, "p", "q", "r", "s").Err(); err != nil {
		t.Fatal(err)
	}
	wantPop(t, recv(t, first), k2, "p")
	if r := recv(t, second); r.err != nil || fmt.Sprint(r.val) != fmt.Sprint([]any{k2, []any{"q", "r"}}) {
		t.Fatalf("BLMPOP woken: %#v, %v", r.val, r.err)
	}
	wantPop(t, recv(t, third), k2, "s")
	if n := c.Exists(ctx, k2).Val(); n != 0 {
		t.Fatalf("the emptied list still exists (EXISTS %d)", n)
	}

	// A blocked BLMOVE and BRPOPLPUSH move the element when woken; BLMOVE
	// blocks on its source only, so a push to its destination leaves it
	// blocked.
	c.Del(ctx, dst)
	move := goDo(clientLong(t, env.daemon.Addr), "BLMOVE", k1, dst, "RIGHT", "LEFT", "0")
	awaitBlocked(t, c, 1)
	c.RPush(ctx, dst, "d")
	if n := blockedClients(t, c); n != 1 {
		t.Fatalf("blocked_clients %d after a push to BLMOVE's destination, want 1", n)
	}
	rpl := goDo(clientLong(t, env.daemon.Addr), "BRPOPLPUSH", k1, dst, "0")
	awaitBlocked(t, c, 2)
	c.RPush(ctx, k1, "x", "y")
	if r := recv(t, move); r.err != nil || r.val != "y" {
		t.Fatalf("BLMOVE woken: %#v, %v, want y", r.val, r.err)
	}
	if r := recv(t, rpl); r.err != nil || r.val != "x" {
		t.Fatalf("BRPOPLPUSH woken: %#v, %v, want x", r.val, r.err)
	}
	if got := c.LRange(ctx, dst, 0, -1).Val(); strings.Join(got, ",") != "x,y,d" {
		t.Fatalf("destination after the woken moves: %q, want x y d", got)
	}
	if n := c.Exists(ctx, k1).Val(); n != 0 {
		t.Fatalf("the emptied source still exists (EXISTS %d)", n)
	}

	// Inside MULTI a blocking command is its non-blocking form: nil at once.
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BLPop(ctx, 0, k1)
		p.BLMove(ctx, k1, dst, "LEFT", "LEFT", 0)
		p.BLMPop(ctx, 0, "right", 1, k1)
		p.RPush(ctx, k1, "m")
		p.BRPop(ctx, 0, k1)
		return nil
	})
	if len(cmds) != 5 || cmds[0].Err() != redis.Nil || cmds[1].Err() != redis.Nil || cmds[2].Err() != redis.Nil {
		t.Fatalf("blocking pops on an empty list in MULTI: %v, %v", cmds, err)
	}
	if got, err := cmds[4].(*redis.StringSliceCmd).Result(); err != nil || len(got) != 2 || got[1] != "m" {
		t.Fatalf("BRPOP in MULTI after a push: %q, %v", got, err)
	}
}

// CLIENT UNBLOCK ends a BLPOP's or a BLMOVE's wait with the timeout reply
// or with an error, and the list is left as it was.
func TestListClientUnblock(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	q, dst := key(t, "q"), key(t, "dst")
	c.Del(ctx, q, dst)
	r := raw(t, env.daemon.Addr)
	id := strings.TrimSuffix(strings.TrimPrefix(do(t, r, "CLIENT", "ID"), ":"), "\r\n")
	ctl := raw(t, env.daemon.Addr)
	for _, tc := range []struct {
		cmd  []string
		how  string
		want string
	}{
		{[]string{"BLPOP", q, "0"}, "TIMEOUT", "*-1\r\n"},
		{[]string{"BLMPOP", "0", "1", q, "RIGHT"}, "TIMEOUT", "*-1\r\n"},
		{[]string{"BLMOVE", q, dst, "LEFT", "LEFT", "0"}, "TIMEOUT", "*-1\r\n"},
		{[]string{"BRPOP", q, "0"}, "ERROR", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
		{[]string{"BRPOPLPUSH", q, dst, "0"}, "ERROR", "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"},
	} {
		if err := r.Send(Encode(tc.cmd...)); err != nil {
			t.Fatal(err)
		}
		awaitBlocked(t, c, 1)
		if got := do(t, ctl, "CLIENT", "UNBLOCK", id, tc.how); got != ":1\r\n" {
			t.Fatalf("CLIENT UNBLOCK %s %s = %q, want :1", id, tc.how, got)
		}
		if got, err := r.Reply(); err != nil || got != tc.want {
			t.Fatalf("%q unblocked with %s: %q, %v, want %q", tc.cmd, tc.how, got, err, tc.want)
		}
		awaitBlocked(t, c, 0)
	}
	if n := c.Exists(ctx, q, dst).Val(); n != 0 {
		t.Fatalf("unblocked commands left keys behind (EXISTS %d)", n)
	}
}
