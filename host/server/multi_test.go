package server

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// TestWatchExec checks EXEC's answer to watched keys that changed (here
// by the store's generations, as another proxy's writes change them) and
// when watches are forgotten, as Redis does.
func TestWatchExec(t *testing.T) {
	st := &fakeStore{counts: map[int]int64{}}
	_, addr := startServer(t, testConfig(), nil, st)
	c := dial(t, addr)
	st.setGen(0, "k", 5)
	steps := []struct {
		args []string
		want string
		then func()
	}{
		// Unchanged: EXEC runs.
		{[]string{"watch", "k", "k", "absent"}, "+OK\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"ping"}, "+QUEUED\r\n", nil},
		{[]string{"exec"}, "*1\r\n+PONG\r\n", nil},
		// Written since WATCH: null, nothing runs.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 6) }},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"ping"}, "+QUEUED\r\n", nil},
		{[]string{"exec"}, "*-1\r\n", nil},
		// EXEC forgot the watch.
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*0\r\n", nil},
		// Created since WATCH.
		{[]string{"watch", "absent"}, "+OK\r\n", func() { st.setGen(0, "absent", 1) }},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*-1\r\n", nil},
		// Deleted (or expired) since WATCH.
		{[]string{"watch", "absent"}, "+OK\r\n", func() { st.setGen(0, "absent", 0) }},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*-1\r\n", nil},
		// The first WATCH of a key counts.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 7) }},
		{[]string{"watch", "k"}, "+OK\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*-1\r\n", nil},
		// UNWATCH forgets.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 8) }},
		{[]string{"unwatch"}, "+OK\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*0\r\n", nil},
		// EXEC without MULTI keeps the watch; EXECABORT forgets it.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 9) }},
		{[]string{"exec"}, "-ERR EXEC without MULTI\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"nosuch"}, "-ERR unknown command 'nosuch', with args beginning with: \r\n", nil},
		{[]string{"exec"}, "-EXECABORT Transaction discarded because of previous errors.\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*0\r\n", nil},
		// DISCARD forgets it.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 10) }},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"discard"}, "+OK\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*0\r\n", nil},
		// RESET forgets it.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 11) }},
		{[]string{"reset"}, "+RESET\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*0\r\n", nil},
		// A watch is on the key of the database selected at WATCH.
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(1, "k", 1) }},
		{[]string{"select", "1"}, "+OK\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*0\r\n", nil},
		{[]string{"select", "1"}, "+OK\r\n", nil},
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(1, "k", 2) }},
		{[]string{"select", "0"}, "+OK\r\n", nil},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "*-1\r\n", nil},
		// RESP3's null.
		{[]string{"hello", "3"}, "", nil},
		{[]string{"watch", "k"}, "+OK\r\n", func() { st.setGen(0, "k", 12) }},
		{[]string{"multi"}, "+OK\r\n", nil},
		{[]string{"exec"}, "_\r\n", nil},
	}
	for i, s := range steps {
		got := c.do(s.args...)
		if s.want != "" && got != s.want {
			t.Errorf("step %d %q: got %q want %q", i, s.args, got, s.want)
		}
		if s.then != nil {
			s.then()
		}
	}
}

// TestWatchAbortInsideExec checks EXEC when a write inside the
// transaction finds a watched key changed: the null reply, and the
// commands after that write do not run.
func TestWatchAbortInsideExec(t *testing.T) {
	st := &fakeStore{counts: map[int]int64{}}
	rt := newFakeRuntime()
	rt.addWrite()
	_, addr := startServer(t, testConfig(), rt, st)
	c := dial(t, addr)
	st.setGen(0, "k", 5)
	generr := strconv.Itoa(int(codec.GenerationError))
	for _, s := range []struct{ args, want string }{
		// Passing writes chain their generations.
		{"watch k", "+OK\r\n"},
		{"multi", "+OK\r\n"},
		{"fwrite k 0 6", "+QUEUED\r\n"},
		{"fwrite k 0 7", "+QUEUED\r\n"},
		{"exec", "*2\r\n+OK\r\n+OK\r\n"},
		// A failed condition: null, the rest does not run.
		{"watch k", "+OK\r\n"},
		{"multi", "+OK\r\n"},
		{"fwrite other 0 1", "+QUEUED\r\n"},
		{"fwrite k " + generr + " 0", "+QUEUED\r\n"},
		{"fwrite other 0 2", "+QUEUED\r\n"},
		{"ping", "+QUEUED\r\n"},
		{"exec", "*-1\r\n"},
		// Without watches nothing is guarded.
		{"multi", "+OK\r\n"},
		{"fwrite k " + generr + " 0", "+QUEUED\r\n"},
		{"exec", "*1\r\n+OK\r\n"},
	} {
		if got := c.do(strings.Fields(s.args)...); got != s.want {
			t.Errorf("%s: got %q want %q", s.args, got, s.want)
		}
	}
	if n := rt.writes.Load(); n != 5 {
		t.Errorf("fwrite ran %d times, want 5 (not the one after the failed condition)", n)
	}
}

// TestWatchStoreDown checks that WATCH and EXEC report a store that cannot
// be read instead of guessing.
func TestWatchStoreDown(t *testing.T) {
	st := &fakeStore{counts: map[int]int64{}}
	_, addr := startServer(t, testConfig(), nil, st)
	c := dial(t, addr)
	if got := c.do("watch", "k"); got != "+OK\r\n" {
		t.Fatalf("watch: %q", got)
	}
	c.do("multi")
	st.mu.Lock()
	st.down = true
	st.mu.Unlock()
	if got := c.do("exec"); got != "-ERR EXEC could not check the watched keys, transaction discarded: no nodes reachable\r\n" {
		t.Errorf("exec: %q", got)
	}
	if got := c.do("watch", "k"); got != "-ERR WATCH could not read the keys: no nodes reachable\r\n" {
		t.Errorf("watch: %q", got)
	}
}

// guardedExec runs rq on st through g, as the module runtime does; nil
// when g refuses it.
func guardedExec(g *txGuard, st *memory.Store, rq *codec.Request) *codec.Response {
	var resp codec.Response
	if !g.Before(0, rq) {
		return nil
	}
	st.Exec(context.Background(), 0, rq, &resp)
	g.After(0, rq, &resp)
	return &resp
}

func setCall(key, val string, exists codec.ExistsPolicy) *codec.Request {
	return &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(key),
		Policy: codec.Policy{Exists: exists}, Ops: []codec.Op{{Code: codec.OpPut, Bin: "v", Value: codec.Str(val)}}}}}
}

func getCall(key string) *codec.Request {
	return &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(key),
		Ops: []codec.Op{{Code: codec.OpGet, Bin: "v"}}}}}
}

// TestTxGuard checks the conditions the guard adds to a transaction's
// writes on the memory store: a write applies only while the watched key
// is as the transaction expects, and anything showing otherwise aborts.
func TestTxGuard(t *testing.T) {
	ctx := context.Background()
	st := memory.New(memory.Options{})
	var resp codec.Response
	st.Exec(ctx, 0, setCall("k", "a", codec.ExistsUpdate), &resp) // generation 1
	newGuard := func(keys map[string]uint32) *txGuard {
		m := map[string]*header{}
		for k, g := range keys {
			m[k] = &header{gen: g, void: -1}
		}
		return &txGuard{keys: watches{0: m}}
	}
	value := func(key string) string {
		var r codec.Response
		st.Exec(ctx, 0, getCall(key), &r)
		if r.Results[0].Code != codec.OK {
			return "<absent>"
		}
		return string(r.Results[0].Values[0].Bytes)
	}

	// Unchanged: writes apply, and follow the generation they make.
	g := newGuard(map[string]uint32{"k": 1})
	for _, v := range []string{"b", "c"} {
		if r := guardedExec(g, st, setCall("k", v, codec.ExistsUpdate)); r == nil || r.Results[0].Code != codec.OK || g.aborted {
			t.Fatalf("set %s under an unchanged watch: %+v aborted=%v", v, r, g.aborted)
		}
	}
	if v := value("k"); v != "c" {
		t.Fatalf("k = %q, want c", v)
	}

	// Written by someone else (k is at generation 3 now): the write fails
	// and the transaction aborts. The command that saw it may still
	// write elsewhere (to undo an earlier step); cmdExec runs no other.
	g = newGuard(map[string]uint32{"k": 1})
	guardedExec(g, st, setCall("k", "x", codec.ExistsUpdate))
	if !g.aborted || value("k") != "c" {
		t.Fatalf("a stale watch's write: aborted=%v k=%q", g.aborted, value("k"))
	}
	if r := guardedExec(g, st, setCall("other", "undo", codec.ExistsUpdate)); r == nil || value("other") != "undo" {
		t.Fatalf("an unwatched write after the abort was refused: %+v", r)
	}

	// Absent at WATCH, created since: create-only fails; an update-only
	// write fails too, where it would have applied.
	st.Exec(ctx, 0, setCall("new", "n", codec.ExistsUpdate), &resp)
	for _, ex := range []codec.ExistsPolicy{codec.ExistsUpdate, codec.ExistsReplace, codec.ExistsUpdateOnly, codec.ExistsReplaceOnly} {
		g = newGuard(map[string]uint32{"new": 0})
		guardedExec(g, st, setCall("new", "x", ex))
		if !g.aborted || value("new") != "n" {
			t.Errorf("exists policy %d on a key created since WATCH: aborted=%v new=%q", ex, g.aborted, value("new"))
		}
	}
	// Absent and still absent: an update-only write finds nothing, as it
	// would have; a plain write creates it.
	g = newGuard(map[string]uint32{"none": 0})
	if r := guardedExec(g, st, setCall("none", "x", codec.ExistsUpdateOnly)); r == nil || r.Results[0].Code != codec.NotFound || g.aborted {
		t.Fatalf("update-only on a still absent key: %+v aborted=%v", r, g.aborted)
	}
	if r := guardedExec(g, st, setCall("none", "y", codec.ExistsUpdate)); r == nil || r.Results[0].Code != codec.OK || g.aborted || value("none") != "y" {
		t.Fatalf("create of a still absent key: %+v aborted=%v", r, g.aborted)
	}

	// Deleted since WATCH: the write does not re-create it.
	st.Exec(ctx, 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte("k"),
		Ops: []codec.Op{{Code: codec.OpDelete}}}}}, &resp)
	for _, ex := range []codec.ExistsPolicy{codec.ExistsUpdate, codec.ExistsCreateOnly, codec.ExistsReplace} {
		g = newGuard(map[string]uint32{"k": 3})
		guardedExec(g, st, setCall("k", "x", ex))
		if !g.aborted || value("k") != "<absent>" {
			t.Errorf("exists policy %d on a key deleted since WATCH: aborted=%v k=%q", ex, g.aborted, value("k"))
		}
	}

	// A read that sees another generation aborts; one that sees the
	// expected one does not.
	g = newGuard(map[string]uint32{"none": 9})
	guardedExec(g, st, getCall("none"))
	if !g.aborted {
		t.Errorf("a read of a changed key did not abort")
	}
	g = newGuard(map[string]uint32{"none": 1})
	guardedExec(g, st, getCall("none"))
	if g.aborted {
		t.Errorf("a read of an unchanged key aborted")
	}
	// A command's own generation condition other than the watched one
	// means the key changed: the write does not apply, even when its own
	// condition holds.
	st.Exec(ctx, 0, setCall("none", "y2", codec.ExistsUpdate), &resp) // generation 2
	g = newGuard(map[string]uint32{"none": 1})
	rq := setCall("none", "z", codec.ExistsUpdate)
	rq.Calls[0].Policy.Generation = 2
	guardedExec(g, st, rq)
	if !g.aborted || value("none") != "y2" {
		t.Errorf("a write conditioned on another generation: aborted=%v none=%q", g.aborted, value("none"))
	}
}

func TestSameRecord(t *testing.T) {
	for _, tc := range []struct {
		a, b header
		want bool
	}{
		{header{0, 0, false}, header{0, 0, false}, true},
		{header{1, -1, false}, header{1, -1, false}, true},
		{header{1, -1, false}, header{2, -1, false}, false},
		{header{1, 100000, false}, header{1, 101000, false}, true}, // whole seconds, read a second apart
		{header{1, 101000, false}, header{1, 100000, false}, true},
		{header{1, 100000, false}, header{1, 102000, false}, false}, // created again, with a later expiry
		{header{1, -1, false}, header{1, 100000, false}, false},     // created again, expiring
		{header{1, 100000, false}, header{1, -1, false}, false},
		{header{0, 0, false}, header{1, -1, false}, false},
		{header{1, 100123, true}, header{1, 100123, true}, true},   // the same exact expiry
		{header{1, 100123, true}, header{1, 100124, true}, false},  // created again a millisecond later
		{header{1, 100000, true}, header{1, 100000, false}, false}, // one exact, one in seconds
		{header{1, 100123, true}, header{1, -1, false}, false},
	} {
		if got := sameRecord(tc.a, tc.b); got != tc.want {
			t.Errorf("sameRecord(%+v, %+v) = %v", tc.a, tc.b, got)
		}
	}
}
