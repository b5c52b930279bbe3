package module

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// fakeVersion is a handmade module whose every command answers its version.
func fakeVersion(v string) []byte {
	return fake{abi: codec.ABIVersion, manifest: manifest(v, "ver"), reply: doneReply("+" + v + "\r\n")}.wasm()
}

// TestCompiledByContent checks the compiled-module cache: a file whose
// content was loaded before reuses its compiled module, whatever its name;
// entries no version uses are bounded; the instrumented binary is cached
// on disk and a damaged cache file is rewritten.
func TestCompiledByContent(t *testing.T) {
	ctx := context.Background()
	dir, cache := t.TempDir(), t.TempDir()
	r := newRuntime(t, Config{CacheDir: cache}, newFakeStore(true))
	load := func(name, v string) {
		t.Helper()
		if _, err := r.Load(ctx, writeModule(t, dir, name, fakeVersion(v))); err != nil {
			t.Fatal(err)
		}
		if got := do(t, r, "ver"); got != "+"+v+"\r\n" {
			t.Fatalf("ver after loading %s = %q", v, got)
		}
	}
	entry := func(v string) *compiledEntry {
		r.cmu.Lock()
		defer r.cmu.Unlock()
		return r.compiled[sha256.Sum256(fakeVersion(v))]
	}
	idle := func() (n int) {
		r.cmu.Lock()
		defer r.cmu.Unlock()
		for _, e := range r.compiled {
			if e.refs == 0 {
				n++
			}
		}
		return n
	}

	load("m.wasm", "1")
	first := entry("1")
	load("m.wasm", "2")
	if e := entry("1"); e != first || e.refs != 0 {
		t.Fatalf("after a swap the old build's entry is %+v, want it kept with no reference", e)
	}
	load("m.wasm", "1") // a swap back reuses the compiled module
	if e := entry("1"); e != first || e.refs != 1 {
		t.Fatalf("swap back: entry %p refs %d, want the first one (%p) with 1 reference", e, e.refs, first)
	}
	for _, v := range []string{"1", "2"} {
		if _, err := os.Stat(r.fueledPath(sha256.Sum256(fakeVersion(v)))); err != nil {
			t.Errorf("instrumented build %s not cached on disk: %v", v, err)
		}
	}

	// Many builds: the unused compiled modules stay bounded.
	for i := range 2 * idleCompiled {
		load("m.wasm", "9."+string(rune('a'+i)))
	}
	if n := idle(); n != idleCompiled {
		t.Errorf("%d unused compiled modules kept, want %d", n, idleCompiled)
	}
	if entry("1") != nil {
		t.Error("the oldest unused compiled module was not evicted")
	}

	// Another runtime on the same cache folder finds the instrumented
	// binary on disk; a damaged one is rewritten.
	r2 := newRuntime(t, Config{CacheDir: cache}, newFakeStore(true))
	p := r2.fueledPath(sha256.Sum256(fakeVersion("2")))
	if err := os.WriteFile(p, []byte("\x00asm\x01\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Load(ctx, writeModule(t, dir, "n.wasm", fakeVersion("2"))); err != nil {
		t.Fatalf("load over a damaged cache file: %v", err)
	}
	if b, err := os.ReadFile(p); err != nil || len(b) < 100 {
		t.Errorf("the damaged cache file was not rewritten: %d bytes, %v", len(b), err)
	}
}

// TestPrecompile checks the speculative compilation of a staged build: a
// content precompiled is found compiled by its load (LoadBytes and Load
// alike), a load of a content being precompiled waits for it rather than
// compiling it again, and a broken content reports an error and caches
// nothing.
func TestPrecompile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := newRuntime(t, Config{CacheDir: t.TempDir()}, newFakeStore(true))

	v1 := fakeVersion("1")
	if err := r.Precompile(ctx, v1); err != nil {
		t.Fatal(err)
	}
	if n := r.compilations.Load(); n != 1 {
		t.Fatalf("%d compilations after Precompile, want 1", n)
	}
	r.cmu.Lock()
	spare := r.compiled[sha256.Sum256(v1)].spare
	r.cmu.Unlock()
	if spare == nil {
		t.Fatal("Precompile started no instance")
	}
	p := writeModule(t, dir, "m.wasm", v1)
	info, err := r.LoadBytes(ctx, p, v1, sha256.Sum256(v1))
	if err != nil {
		t.Fatal(err)
	}
	r.cmu.Lock()
	left := r.compiled[sha256.Sum256(v1)].spare
	r.cmu.Unlock()
	if v := r.reg.Load().mods["m"]; left != nil || v.slots[0].inst != spare || spare.v != v || info.Instances != 1 {
		t.Fatalf("the load did not adopt the precompiled instance: left %p, slot 0 %p, want %p; %d instances", left, v.slots[0].inst, spare, info.Instances)
	}
	if got := do(t, r, "ver"); got != "+1\r\n" {
		t.Fatalf("ver = %q", got)
	}
	if n := r.compilations.Load(); n != 1 {
		t.Fatalf("the load of a precompiled content compiled it again (%d compilations)", n)
	}

	// Loads racing a precompilation of the same content: one compilation.
	v2 := fakeVersion("2")
	p2 := writeModule(t, dir, "m2/m.wasm", v2)
	errs := make(chan error, 3)
	go func() { errs <- r.Precompile(ctx, v2) }()
	go func() { _, err := r.Load(ctx, p2); errs <- err }()
	go func() { errs <- r.Precompile(ctx, v2) }()
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := do(t, r, "ver"); got != "+2\r\n" {
		t.Fatalf("ver = %q", got)
	}
	if n := r.compilations.Load(); n != 2 {
		t.Fatalf("%d compilations, want 2: concurrent compilations of one content were not shared", n)
	}

	// A partial file (a copy caught mid-way) fails and leaves nothing.
	if err := r.Precompile(ctx, v2[:len(v2)/2]); err == nil {
		t.Fatal("Precompile of half a module succeeded")
	}
	r.cmu.Lock()
	n, busy := len(r.compiled), len(r.compiling)
	r.cmu.Unlock()
	if n != 2 || busy != 0 {
		t.Fatalf("%d compiled entries and %d compilations under way, want 2 and 0", n, busy)
	}
}

// TestPrecompiledInstanceBatches checks that the instance a load adopts
// from Precompile is complete: a Go module built with the SDK exports
// respike_batch, and the adopted instance must call it.
func TestPrecompiledInstanceBatches(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, Config{}, newFakeStore(true))
	path := filepath.Join(modDir, "kv.wasm")
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Precompile(ctx, bin); err != nil {
		t.Fatal(err)
	}
	if _, err := r.LoadBytes(ctx, path, bin, sha256.Sum256(bin)); err != nil {
		t.Fatal(err)
	}
	v := r.reg.Load().mods["kv"]
	if !v.batch {
		t.Fatal("kv does not export respike_batch: the test needs a module that does")
	}
	if in := v.slots[0].inst; in == nil || in.fBatch == nil {
		t.Fatalf("the adopted instance has no respike_batch: %+v", in)
	}
}
