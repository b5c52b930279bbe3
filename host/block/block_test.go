package block

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/memory"
)

// wakes records the order Waiters are woken in.
type wakes struct {
	mu  sync.Mutex
	got []string
	ch  chan string
}

func (w *wakes) waiter(name string) *Waiter {
	return &Waiter{Wake: func() {
		w.mu.Lock()
		w.got = append(w.got, name)
		w.mu.Unlock()
		if w.ch != nil {
			w.ch <- name
		}
	}}
}

func (w *wakes) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	got := w.got
	w.got = nil
	return got
}

func keys(ks ...string) [][]byte {
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = []byte(k)
	}
	return out
}

// put writes key through r, as a command would.
func put(t *testing.T, r *Registry, db int, key string) {
	t.Helper()
	exec(t, r, db, codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpPut, Bin: "v", Value: codec.Int(1)}}})
}

func exec(t *testing.T, r *Registry, db int, calls ...codec.Call) *codec.Response {
	t.Helper()
	var resp codec.Response
	r.Exec(context.Background(), db, &codec.Request{Kind: codec.ReqRecords, Calls: calls}, &resp)
	if resp.Code != codec.OK {
		t.Fatalf("store: %d %s", resp.Code, resp.Msg)
	}
	return &resp
}

// TestWakeOrder: a write wakes the first waiter of its key only; writes
// while it runs wake the next when it ends; one that leaves unserved
// passes its wake on; one that blocks again keeps its place.
func TestWakeOrder(t *testing.T) {
	r := New(memory.New(memory.Options{}), Options{})
	var w wakes
	a, b, c := w.waiter("a"), w.waiter("b"), w.waiter("c")
	r.Park(a, 0, keys("k"))
	r.Park(b, 0, keys("k", "other"))
	r.Park(c, 0, keys("k"))
	if r.Waiting() != 3 {
		t.Fatalf("waiting %d", r.Waiting())
	}
	put(t, r, 0, "k")
	put(t, r, 0, "k") // a still runs: only marks the key
	if got := w.take(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v, want [a]", got)
	}
	r.Done(a) // replied: the next runs again
	if got := w.take(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("woken %v, want [b]", got)
	}
	r.Rearm(b, 0, keys("k", "other")) // found nothing; nothing written since
	if got := w.take(); len(got) != 0 {
		t.Fatalf("woken %v after a quiet re-run", got)
	}
	put(t, r, 0, "k")
	if got := w.take(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("woken %v, want [b]: it kept its place", got)
	}
	r.Done(b) // timed out while woken: the write goes to c
	if got := w.take(); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("woken %v, want [c]", got)
	}
	put(t, r, 0, "k")
	r.Rearm(c, 0, keys("k")) // written while it ran: woken again
	if got := w.take(); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("woken %v, want [c] again", got)
	}
	r.Done(c)
	if r.Waiting() != 0 || len(r.dbs[0]) != 0 {
		t.Fatalf("left %d waiters, %d queues", r.Waiting(), len(r.dbs[0]))
	}
}

// TestWhatWakes: only a successful write call to the key, in its
// database, wakes; reads, failed calls and other databases do not.
func TestWhatWakes(t *testing.T) {
	r := New(memory.New(memory.Options{}), Options{})
	var w wakes
	a := w.waiter("a")
	r.Park(a, 3, keys("k"))
	exec(t, r, 3, codec.Call{Key: []byte("k"), Ops: []codec.Op{{Code: codec.OpGet, Bin: "v"}, {Code: codec.OpGetHeader}}})
	put(t, r, 2, "k")
	put(t, r, 3, "other")
	exec(t, r, 3, codec.Call{Key: []byte("k"), Policy: codec.Policy{Exists: codec.ExistsUpdateOnly},
		Ops: []codec.Op{{Code: codec.OpPut, Bin: "v", Value: codec.Int(1)}}}) // fails: no record
	if got := w.take(); len(got) != 0 {
		t.Fatalf("woken by %v", got)
	}
	exec(t, r, 3, codec.Call{Key: []byte("x"), Ops: []codec.Op{{Code: codec.OpGet}}},
		codec.Call{Key: []byte("k"), Ops: []codec.Op{{Code: codec.OpMapPut, Bin: "m", Values: []codec.Value{codec.Int(1), codec.Int(2)}}}})
	if got := w.take(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v by a batch's write", got)
	}
	r.Done(a)
}

// TestPoll: a write made around the registry (through another proxy)
// wakes its waiter at the next poll; no timer runs while nobody waits.
func TestPoll(t *testing.T) {
	st := memory.New(memory.Options{})
	other := New(st, Options{}) // another proxy's registry on the same store
	r := New(st, Options{PollInterval: time.Millisecond})
	w := wakes{ch: make(chan string, 4)}
	existing := w.waiter("existing")
	put(t, other, 0, "old") // exists before anyone waits
	a := w.waiter("a")
	r.Park(a, 0, keys("k"))
	put(t, other, 0, "k")
	select {
	case got := <-w.ch:
		if got != "a" {
			t.Fatalf("woken %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the poll never woke the waiter")
	}
	r.Done(a)
	// A key that exists when a client parks wakes it (a write may have
	// come between the command's attempt and Park); a poll that sees it
	// unchanged afterwards does not.
	r.Park(existing, 0, keys("old"))
	if got := <-w.ch; got != "existing" {
		t.Fatalf("woken %s", got)
	}
	r.Rearm(existing, 0, keys("old"))
	polls, _ := r.Polls()
	for n, _ := r.Polls(); n < polls+3; n, _ = r.Polls() {
		time.Sleep(time.Millisecond) // the poll runs on its timer
	}
	select {
	case got := <-w.ch:
		t.Fatalf("%s woken by a poll of an unchanged key", got)
	default:
	}
	r.Done(existing)
	// Nobody waits: the poll stops.
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		polling := r.polling
		r.mu.Unlock()
		if !polling {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still polling with nobody waiting")
		}
		time.Sleep(time.Millisecond)
	}
	polls, _ = r.Polls()
	time.Sleep(20 * time.Millisecond) // no event to wait for: a poll that should not happen
	if n, _ := r.Polls(); n != polls {
		t.Fatalf("%d polls with nobody waiting", n-polls)
	}
}

// TestRearmOnOtherKeys: a re-run that blocks on other keys moves the
// waiter to them.
func TestRearmOnOtherKeys(t *testing.T) {
	r := New(memory.New(memory.Options{}), Options{})
	var w wakes
	a := w.waiter("a")
	r.Park(a, 0, keys("k", "k"))
	if n := len(a.nodes); n != 1 {
		t.Fatalf("BLPOP k k holds %d places", n)
	}
	r.Rearm(a, 0, keys("j"))
	put(t, r, 0, "k")
	if got := w.take(); len(got) != 0 {
		t.Fatalf("woken %v by a key it no longer waits on", got)
	}
	put(t, r, 0, "j")
	if got := w.take(); strings.Join(got, ",") != "a" {
		t.Fatalf("woken %v", got)
	}
	r.Done(a)
}

// TestParkSeesEarlierWrite: a write that lands between a command's attempt
// and its Park (here, one made around the registry) wakes the waiter at
// once, with polling off.
func TestParkSeesEarlierWrite(t *testing.T) {
	st := memory.New(memory.Options{})
	r := New(st, Options{})
	put(t, New(st, Options{}), 0, "k")
	var w wakes
	a, b := w.waiter("a"), w.waiter("b")
	r.Park(a, 0, keys("k"))
	if got := w.take(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("woken %v, want [a]", got)
	}
	r.Rearm(a, 0, keys("k")) // it found nothing it could serve
	r.Park(b, 0, keys("k"))  // the key unchanged since: nothing new
	if got := w.take(); len(got) != 0 {
		t.Fatalf("woken %v by an unchanged key", got)
	}
	r.Done(a)
	r.Done(b)
}

// TestServedElsewhere: a client woken through a key it then does not take
// from (it was served from another of its keys) passes that key's wake on.
func TestServedElsewhere(t *testing.T) {
	r := New(memory.New(memory.Options{}), Options{})
	var w wakes
	a, b := w.waiter("a"), w.waiter("b")
	r.Park(a, 0, keys("k1", "k2"))
	r.Park(b, 0, keys("k2"))
	put(t, r, 0, "k1") // a runs...
	put(t, r, 0, "k2") // ...and k2's wake is its too: it is first there
	if got := w.take(); !slices.Equal(got, []string{"a", "a"}) {
		t.Fatalf("woken %v, want [a a]", got)
	}
	r.Done(a) // it replied with k1's element: k2's goes to b
	if got := w.take(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("woken %v, want [b]", got)
	}
	r.Done(b)
}

// manyStore is a memory store that is a store.Batcher, counting its
// ExecMany calls.
type manyStore struct {
	*memory.Store
	many int
}

func (s *manyStore) ExecMany(ops []store.Op) {
	s.many++
	for _, o := range ops {
		s.Exec(o.Ctx, o.DB, o.Req, o.Resp)
	}
}

// TestExecManyWakes: a pipeline window's requests reach a store that
// batches as one ExecMany through the registry, and their writes wake the
// waiters of their keys and databases as Exec's do.
func TestExecManyWakes(t *testing.T) {
	st := &manyStore{Store: memory.New(memory.Options{})}
	r := New(st, Options{})
	var w wakes
	a, b, c := w.waiter("a"), w.waiter("b"), w.waiter("c")
	r.Park(a, 0, keys("k1"))
	r.Park(b, 1, keys("k2"))
	r.Park(c, 0, keys("k3"))
	mk := func(key string, op codec.OpCode) *codec.Request {
		return &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(key), Ops: []codec.Op{{Code: op, Bin: "v", Value: codec.Int(1)}}}}}
	}
	resps := make([]codec.Response, 3)
	r.ExecMany([]store.Op{
		{Ctx: context.Background(), DB: 0, Req: mk("k1", codec.OpPut), Resp: &resps[0]},
		{Ctx: context.Background(), DB: 1, Req: mk("k2", codec.OpPut), Resp: &resps[1]},
		{Ctx: context.Background(), DB: 0, Req: mk("k3", codec.OpGet), Resp: &resps[2]}, // a read: wakes nobody
	})
	if st.many != 1 {
		t.Errorf("%d ExecMany calls reached the store, want 1", st.many)
	}
	got := w.take()
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("woken %v, want [a b]", got)
	}
	r.Done(a)
	r.Done(b)
	r.Done(c)
}
