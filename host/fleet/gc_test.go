package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// readerFleet is a Fleet named "reader" over a new embedded store, for
// tests that publish with Publish and read what it left.
func readerFleet(t *testing.T) (*memory.Store, *Fleet) {
	t.Helper()
	st := memory.New(memory.Options{})
	t.Cleanup(func() { st.Close() })
	f, err := New(st, nil, Config{Proxy: "reader", Staging: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return st, f
}

// chunkExists reports whether chunk i of e is in the store.
func chunkExists(t *testing.T, f *Fleet, e Entry, i int) bool {
	t.Helper()
	c := codec.Call{Key: []byte(e.ChunkKey(i))}
	c.Header()
	_, err := f.exec(context.Background(), c)
	if err != nil && err != errNotFound {
		t.Fatal(err)
	}
	return err == nil
}

// Deploys of one module racing each other leave the chunks of the deploy
// the index names and of no other: each deploy deletes the deploy its
// index write replaced, read in the same atomic call, and deploys of the
// same bytes do not share chunks.
func TestConcurrentDeploysLeaveNoOrphans(t *testing.T) {
	ctx := context.Background()
	st, f := readerFleet(t)
	var all []Entry
	var mu sync.Mutex
	for round := range 20 {
		var wg sync.WaitGroup
		for p := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Half the deploys are of one of two builds, each
				// deployed again and again, as an operator retrying
				// does; the others are new bytes every time.
				bin := bytes.Repeat([]byte(fmt.Sprintf("round %d proxy %d;", round, p)), 10)
				if p < 2 {
					bin = bytes.Repeat([]byte(fmt.Sprintf("build %d;", (round+p)%2)), 10)
				}
				e, err := Publish(ctx, st, "mod", bin, 16, "1.0.0", fmt.Sprint("p", p))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				all = append(all, e)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	idx, _, err := f.readIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cur := idx["mod"]
	for _, e := range all {
		want := e.sameChunks(cur)
		for i := range e.Chunks {
			if got := chunkExists(t, f, e, i); got != want {
				t.Fatalf("version by %s at %d: chunk %d present %v, want %v (the index names %s)", e.DeployedBy, e.DeployedAt, i, got, want, cur.SHA256[:8])
			}
		}
	}
	if got, err := f.fetch(ctx, cur); err != nil || len(got) != cur.Size {
		t.Fatalf("fetch of the indexed version: %v", err)
	}
	// Every deploy committed: nothing is pending.
	f.cfg.ChunkGrace = time.Nanosecond
	if p := pending(t, f); len(p) != 0 {
		t.Fatalf("pending after committed deploys: %v", p)
	}
}

// A deploy deletes the chunks of the deploy it replaced after its index
// write; by then a racing deploy of those same bytes may have committed.
// The late delete must not take that deploy's chunks: here A, then B
// replacing A, then A again, then B's delete of the first A's chunks
// arriving last. (With chunks named by content alone, the index named A
// and A's chunks were gone: CI saw it in TestFleetLeftovers.)
func TestLateDeleteSparesARedeployOfTheSameBytes(t *testing.T) {
	ctx := context.Background()
	st, f := readerFleet(t)
	a, b := []byte("build A, some bytes"), []byte("build B, other bytes")
	first, err := Publish(ctx, st, "mod", a, 4, "1", "p1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, st, "mod", b, 4, "2", "p2"); err != nil {
		t.Fatal(err)
	}
	again, err := Publish(ctx, st, "mod", a, 4, "1", "p1")
	if err != nil {
		t.Fatal(err)
	}
	if again.SHA256 != first.SHA256 || again.sameChunks(first) {
		t.Fatalf("two deploys of the same bytes: %+v and %+v, want one hash and chunks of their own", first, again)
	}
	f.deleteChunks(ctx, first) // the replacing deploy's delete, late
	idx, _, err := f.readIndex(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cur := idx["mod"]; !cur.sameChunks(again) {
		t.Fatalf("index names %+v, want the second deploy of A %+v", cur, again)
	}
	if got, err := f.fetch(ctx, idx["mod"]); err != nil || !bytes.Equal(got, a) {
		t.Fatalf("fetch of the indexed deploy after the late delete: %q, %v", got, err)
	}
}

// pending returns the pending record's entries.
func pending(t *testing.T, f *Fleet) []Entry {
	t.Helper()
	c := codec.Call{Key: []byte(PendingKey)}
	c.Get(BinPending)
	res, err := f.exec(context.Background(), c)
	if err == errNotFound {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []Entry
	if v := res[0].Values[0]; v.Kind == codec.KindMap {
		for i := 1; i < len(v.List); i += 2 {
			var e Entry
			if err := json.Unmarshal(v.List[i].Bytes, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, e)
		}
	}
	return out
}

// A deploy that wrote chunks and never committed (its proxy crashed) is
// swept once ChunkGrace old, not before; a pending entry whose deploy did
// commit only leaves the pending record.
func TestUncommittedDeploySwept(t *testing.T) {
	ctx := context.Background()
	st := memory.New(memory.Options{})
	defer st.Close()
	f, err := New(st, nil, Config{Proxy: "p", Staging: t.TempDir(), ChunkBytes: 8, ChunkGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	committed, err := Publish(ctx, st, "live", []byte("the live version's bytes"), 8, "1", "p")
	if err != nil {
		t.Fatal(err)
	}
	// The crashed deploy: pending, chunks, no index entry. And the live
	// one's pending entry as a crash between its index write and the
	// clearing would leave it.
	began := time.Now().Add(-time.Minute).UnixMilli()
	crashed := Entry{Name: "live", SHA256: "00ff", Size: 20, Chunks: 3, DeployedAt: began, DeployedBy: "gone"}
	stuck := committed
	stuck.DeployedAt = began
	for _, e := range []Entry{crashed, stuck} {
		if err := f.setPending(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for i := range crashed.Chunks {
		c := codec.Call{Key: []byte(crashed.ChunkKey(i))}
		c.Put(BinData, codec.Bytes([]byte("partial!")))
		if _, err := f.exec(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	f.Heartbeat(ctx) // younger than the grace: kept
	if !chunkExists(t, f, crashed, 0) || len(pending(t, f)) != 2 {
		t.Fatal("a pending deploy younger than ChunkGrace was swept")
	}
	f.cfg.ChunkGrace = 30 * time.Second
	f.Heartbeat(ctx)
	for i := range crashed.Chunks {
		if chunkExists(t, f, crashed, i) {
			t.Errorf("chunk %d of the uncommitted deploy not swept", i)
		}
	}
	for i := range committed.Chunks {
		if !chunkExists(t, f, committed, i) {
			t.Errorf("chunk %d of the committed version was swept", i)
		}
	}
	if p := pending(t, f); len(p) != 0 {
		t.Errorf("pending after the sweep: %v", p)
	}
	if c := f.Counters(); c.Swept != 1 || c.Heartbeats != 2 {
		t.Errorf("counters %+v: want 1 swept, 2 heartbeats", c)
	}
}

// A proxy that stops beating is marked stale after StaleAfter, and its
// states are removed after ForgetAfter by another proxy's heartbeat; a
// proxy forgotten while away writes its states again when it beats.
func TestStaleProxiesForgotten(t *testing.T) {
	ctx := context.Background()
	st := memory.New(memory.Options{})
	defer st.Close()
	newProxy := func(name string) *Fleet {
		f, err := New(st, nil, Config{Proxy: name, Staging: t.TempDir(), StaleAfter: time.Minute, ForgetAfter: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		f.report(ctx, map[string]Status{"mod": {Proxy: name, Module: "mod", SHA256: "ab", State: StateServing, At: time.Now().UnixMilli()}}, nil)
		f.mu.Unlock()
		return f
	}
	a, b := newProxy("a"), newProxy("b")
	a.Heartbeat(ctx)
	b.Heartbeat(ctx)
	states := func() map[string]Status {
		t.Helper()
		all, err := a.Fleet(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]Status{}
		for _, s := range all {
			out[s.Proxy] = s
		}
		return out
	}
	now := time.Now().UnixMilli()
	for _, p := range []string{"a", "b"} {
		s := states()[p]
		if s.Stale || now-s.LastSeen > 10_000 {
			t.Fatalf("%s right after its heartbeat: %+v", p, s)
		}
	}
	// b's last heartbeat 2 minutes ago: stale, not yet forgotten.
	setSeen := func(proxy string, ago time.Duration) {
		c := codec.Call{Key: []byte(StatusKey)}
		c.MapPut(BinSeen, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte(proxy)), codec.Int(time.Now().Add(-ago).UnixMilli())})
		if _, err := a.exec(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	setSeen("b", 2*time.Minute)
	a.Heartbeat(ctx)
	if s := states(); !s["b"].Stale || s["a"].Stale {
		t.Fatalf("b unseen for 2 minutes: %+v", s)
	}
	// And 2 hours ago: a's heartbeat forgets b.
	setSeen("b", 2*time.Hour)
	a.Heartbeat(ctx)
	if s := states(); len(s) != 1 || s["a"].Proxy != "a" {
		t.Fatalf("after forgetting b: %+v", s)
	}
	if c := a.Counters(); c.Forgotten != 1 {
		t.Errorf("a forgot %d proxies, want 1", c.Forgotten)
	}
	// b comes back: its heartbeat writes its states again.
	b.Heartbeat(ctx)
	if s := states(); len(s) != 2 || s["b"].Stale || s["b"].State != StateServing {
		t.Fatalf("after b's return: %+v", s)
	}
	// A proxy of an older version wrote no heartbeat: its states' time
	// stands in, and forgets it too.
	old := Status{Proxy: "old", Module: "mod", SHA256: "ab", State: StateServing, At: time.Now().Add(-2 * time.Hour).UnixMilli()}
	a.mu.Lock()
	a.report(ctx, map[string]Status{"mod": old}, nil)
	delete(a.status, "mod") // written as "old"'s, not a's own
	a.mu.Unlock()
	a.mu.Lock()
	a.report(ctx, map[string]Status{"mod": {Proxy: "a", Module: "mod", SHA256: "ab", State: StateServing, At: time.Now().UnixMilli()}}, nil)
	a.mu.Unlock()
	a.Heartbeat(ctx)
	if s := states(); len(s) != 2 || s["old"].Proxy != "" {
		t.Fatalf("the heartbeat-less proxy was not forgotten: %+v", s)
	}
	// A clean stop leaves: b is gone from the record at once.
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if s := states(); len(s) != 1 || s["b"].Proxy != "" {
		t.Fatalf("after b left: %+v", s)
	}
}
