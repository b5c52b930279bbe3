package module

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/respike/respike/guest-sdk/codec"
)

// fill starts an instance in every slot of the serving version of module.
func fill(t *testing.T, r *Runtime, module string) *version {
	t.Helper()
	v := r.reg.Load().mods[module]
	for _, s := range v.slots {
		s.mu.Lock()
		if _, err := s.ready(); err != nil {
			t.Fatal(err)
		}
		s.unlock()
	}
	return v
}

func moduleInfo(t *testing.T, r *Runtime, name string) ModuleInfo {
	t.Helper()
	for _, m := range r.Modules() {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("module %s not listed", name)
	return ModuleInfo{}
}

// TestReapIdle checks that the reaper releases the instances unused for
// the idle timeout, never the last one of a module nor a busy one, and
// that commands then go to the warm instance left rather than start one.
// The reaper is called directly with the time it would see.
func TestReapIdle(t *testing.T) {
	dir := t.TempDir()
	r := newRuntime(t, Config{Instances: 4, IdleTimeout: time.Minute}, newFakeStore(true))
	if _, err := r.Load(context.Background(), writeModule(t, dir, "m.wasm", fakeVersion("1"))); err != nil {
		t.Fatal(err)
	}
	v := fill(t, r, "m")
	if m := moduleInfo(t, r, "m"); m.Instances != 4 || m.MemoryBytes <= 0 {
		t.Fatalf("after filling the slots: %d instances, %d bytes", m.Instances, m.MemoryBytes)
	}
	if n := r.reap(time.Now()); n != 0 {
		t.Fatalf("reap released %d instances used just now", n)
	}

	// A busy slot is skipped: the others go, and it stays as the warm one.
	busy := v.slots[2]
	busy.mu.Lock()
	n := r.reap(time.Now().Add(2 * time.Minute))
	kept := busy.inst != nil
	busy.unlock()
	if n != 3 || !kept {
		t.Fatalf("reap released %d idle instances with one busy (kept: %v), want 3 and the busy one kept", n, kept)
	}
	if n := r.reap(time.Now().Add(2 * time.Minute)); n != 0 {
		t.Fatalf("reap released %d more, want 0: the last instance stays", n)
	}
	m := moduleInfo(t, r, "m")
	if m.Instances != 1 || m.IdleReleases != 3 {
		t.Fatalf("after the reaps: %d instances, %d idle releases; want 1 and 3", m.Instances, m.IdleReleases)
	}
	single := m.MemoryBytes

	// Commands from clients whose own slot is empty use the warm instance.
	for id := range 8 {
		start := &codec.Start{Proto: 2, ClientID: uint64(id), Args: [][]byte{[]byte("ver")}}
		if got := string(r.Exec(context.Background(), r.Lookup([]byte("ver")), start, nil)); got != "+1\r\n" {
			t.Fatalf("ver = %q", got)
		}
	}
	if m := moduleInfo(t, r, "m"); m.Instances != 1 || m.MemoryBytes != single {
		t.Errorf("after serial commands: %d instances, %d bytes; want the one warm instance, %d bytes", m.Instances, m.MemoryBytes, single)
	}
	// Without an idle timeout nothing is released.
	r2 := newRuntime(t, Config{Instances: 2}, newFakeStore(true))
	if _, err := r2.Load(context.Background(), writeModule(t, dir, "m.wasm", fakeVersion("1"))); err != nil {
		t.Fatal(err)
	}
	fill(t, r2, "m")
	if n := r2.reap(time.Now().Add(time.Hour)); n != 0 {
		t.Errorf("reap without an idle timeout released %d", n)
	}
}

// TestRecycleLargeMemory checks that an instance whose memory grew past
// Config.RecycleMiB for a large value is replaced once its call ends, and
// the next command gets a fresh, small one.
func TestRecycleLargeMemory(t *testing.T) {
	// A generous deadline: a large value is slow to copy on a busy machine.
	r := newRuntime(t, Config{Instances: 1, RecycleMiB: 6, Deadline: time.Minute}, newFakeStore(true), "kv.wasm")
	do(t, r, "set", "small", "x")
	small := moduleInfo(t, r, "kv")
	if small.Instances != 1 || small.MemoryBytes <= 0 || small.MemoryBytes > 6<<20 {
		t.Fatalf("after a small command: %d instances, %d bytes", small.Instances, small.MemoryBytes)
	}
	t.Logf("a small command: %d bytes of memory", small.MemoryBytes)
	big := strings.Repeat("v", 3<<20)
	if got := do(t, r, "set", "big", big); got != "+OK\r\n" {
		t.Fatalf("set big = %q", got)
	}
	if m := moduleInfo(t, r, "kv"); m.Instances != 0 || m.MemoryBytes != 0 || m.MemoryRecycles != 1 {
		t.Fatalf("after a large value: %d instances, %d bytes, %d recycles; want the instance replaced", m.Instances, m.MemoryBytes, m.MemoryRecycles)
	}
	if got := do(t, r, "get", "small"); got != "$1\r\nx\r\n" {
		t.Fatalf("get on a fresh instance = %q", got)
	}
	if m := moduleInfo(t, r, "kv"); m.Instances != 1 || m.MemoryBytes > 6<<20 {
		t.Errorf("after the next command: %d instances, %d bytes", m.Instances, m.MemoryBytes)
	}
}

// TestReleaseSparesContinuations checks that neither the reaper nor
// recycling closes an instance while a command waits on the store with its
// continuation in it: the command completes with its right reply.
func TestReleaseSparesContinuations(t *testing.T) {
	st := newFakeStore(false) // every request ends the guest call and resumes it
	// RecycleMiB 1: every instance is over it, so each is replaced as
	// soon as nothing lives in it.
	r := newRuntime(t, Config{Instances: 1, IdleTimeout: time.Minute, RecycleMiB: 1}, st, "kv.wasm")
	do(t, r, "set", "k", "v")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	st.setHook(func(ctx context.Context, req *codec.Request) {
		once.Do(func() {
			close(held)
			<-release
		})
	})
	got := make(chan string, 1)
	go func() { got <- do(t, r, "get", "k") }()
	<-held
	// The get waits in the store; its slot is free and its instance holds
	// its continuation.
	v := r.reg.Load().mods["kv"]
	if n := v.live.Load(); n != 1 {
		t.Fatalf("%d instances while a command waits, want 1 (not recycled)", n)
	}
	if n := r.reap(time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("reap released %d instances holding a continuation", n)
	}
	close(release)
	if g := <-got; g != "$1\r\nv\r\n" {
		t.Fatalf("get across the release attempts = %q", g)
	}
	st.setHook(nil)
	if m := moduleInfo(t, r, "kv"); m.Instances != 0 || m.MemoryRecycles == 0 {
		t.Errorf("after the command: %d instances, %d recycles; want it replaced now", m.Instances, m.MemoryRecycles)
	}
}

// TestReleasedMemoryIsCollected checks that nothing keeps the memory of a
// released instance from the garbage collector: the slot's call state
// holds a decoded request pointing into it.
func TestReleasedMemoryIsCollected(t *testing.T) {
	r := newRuntime(t, Config{Instances: 2, IdleTimeout: time.Minute, Deadline: time.Minute}, newFakeStore(true), "kv.wasm")
	v := fill(t, r, "kv")
	start := &codec.Start{Proto: 2, ClientID: 1, Args: [][]byte{[]byte("set"), []byte("k"), []byte(strings.Repeat("v", 1<<20))}}
	if got := string(r.Exec(context.Background(), r.Lookup([]byte("set")), start, nil)); got != "+OK\r\n" {
		t.Fatalf("set = %q", got)
	}
	b, _ := v.slots[1].inst.mem.Read(0, 1)
	mem := weak.Make(&b[0])
	b = nil
	v.slots[0].mu.Lock() // busy: the reaper releases slot 1's instance
	n := r.reap(time.Now().Add(time.Hour))
	v.slots[0].unlock()
	if n != 1 || v.slots[1].inst != nil {
		t.Fatalf("reap released %d instances, slot 1 has %v", n, v.slots[1].inst)
	}
	runtime.GC()
	runtime.GC()
	if mem.Value() != nil {
		t.Error("a released instance's memory is still reachable after a collection")
	}
}
