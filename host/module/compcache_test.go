package module

import (
	"context"
	"crypto/sha256"
	"os"
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
