package watch

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/host/module"
)

// fakeLoader stands in for the module runtime: a file whose content starts
// with "bad" is refused, anything else loads and serves one command named
// after the module. It keeps the runtime's bookkeeping: a refusal leaves
// the previous version serving and records the error.
type fakeLoader struct {
	mu     sync.Mutex
	mods   map[string]module.ModuleInfo
	loads  []string // "name:content" of every Load, refused or not
	unload []string
	pre    []string // contents of every Precompile
}

// Precompile records the content; "\x00asm bad build" fails.
func (f *fakeLoader) Precompile(_ context.Context, bin []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pre = append(f.pre, string(bin))
	if bytes.HasPrefix(bin, []byte("\x00asm bad build")) {
		return errors.New("does not compile")
	}
	return nil
}

func newFakeLoader() *fakeLoader { return &fakeLoader{mods: map[string]module.ModuleInfo{}} }

func (f *fakeLoader) Load(_ context.Context, path string) (module.ModuleInfo, error) {
	name := module.ModuleName(path)
	data, err := os.ReadFile(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, name+":"+string(data))
	if err == nil && bytes.HasPrefix(data, []byte("bad")) {
		err = errors.New("refused: " + string(data))
	}
	if err != nil {
		info := f.mods[name]
		info.Name, info.LastError = name, err.Error()
		if info.Path == "" {
			info.Path = path
		}
		f.mods[name] = info
		return module.ModuleInfo{}, err
	}
	info := module.ModuleInfo{Name: name, Version: string(data), Path: path, Commands: []string{name}}
	f.mods[name] = info
	return info, nil
}

func (f *fakeLoader) Unload(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.mods[name]; !ok {
		return errors.New("not loaded")
	}
	delete(f.mods, name)
	f.unload = append(f.unload, name)
	return nil
}

func (f *fakeLoader) Modules() []module.ModuleInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []module.ModuleInfo
	for _, m := range f.mods {
		out = append(out, m)
	}
	return out
}

// loadLog returns the Load calls so far.
func (f *fakeLoader) loadLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.loads)
}

func (f *fakeLoader) serving(name string) (module.ModuleInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.mods[name]
	return m, ok
}

type event struct {
	name string // file base name
	o    outcome
}

// harness is a watcher of a temporary folder whose outcomes arrive on a
// channel.
type harness struct {
	t      *testing.T
	dir    string
	rt     *fakeLoader
	w      *Watcher
	events chan event
}

func newHarness(t *testing.T, debounce time.Duration) *harness {
	h := &harness{t: t, dir: t.TempDir(), rt: newFakeLoader(), events: make(chan event, 1000)}
	h.w = New(h.dir, h.rt, slog.New(slog.DiscardHandler), debounce)
	h.w.trace = func(path string, o outcome) { h.events <- event{filepath.Base(path), o} }
	return h
}

// run starts the watcher; it stops when the test ends. It returns once the
// watcher watches the folder and has reconciled it: the initial rescan's
// outcomes (one per file present) are consumed.
func (h *harness) run(files int) {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.w.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Error(err)
		}
	})
	for range files {
		h.next()
	}
	h.expect(event{filepath.Base(h.dir), watching})
}

// next returns the next outcome, failing the test after a bounded wait.
func (h *harness) next() event {
	h.t.Helper()
	select {
	case ev := <-h.events:
		return ev
	case <-time.After(20 * time.Second):
		h.t.Fatal("no reconciliation within 20s")
		return event{}
	}
}

// expect fails the test unless the next outcome is want.
func (h *harness) expect(want event) {
	h.t.Helper()
	if got := h.next(); got != want {
		h.t.Fatalf("outcome %+v, want %+v", got, want)
	}
}

// noMore checks that the watcher has nothing pending: a file written now
// is the next outcome. Files sync in the order they were written, so any
// outcome still due for an earlier event would come first.
func (h *harness) noMore() {
	h.t.Helper()
	h.write("zz-sentinel.wasm", time.Now().String())
	h.expect(event{"zz-sentinel.wasm", loaded})
}

func (h *harness) write(name, content string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, name), []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// replace writes content the way an operator should: to a hidden temporary
// name in the folder, then renamed into place.
func (h *harness) replace(name, content string) {
	h.t.Helper()
	tmp := filepath.Join(h.dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(h.dir, name)); err != nil {
		h.t.Fatal(err)
	}
}

func TestRescan(t *testing.T) {
	h := newHarness(t, 0)
	ctx := context.Background()
	h.write("a.wasm", "a1")
	h.write("b.wasm", "b1")
	h.write("notes.txt", "not a module")
	h.write(".hidden.wasm", "a temporary file")
	if err := os.Mkdir(filepath.Join(h.dir, "sub.wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.rt.loadLog(); !slices.Equal(got, []string{"a:a1", "b:b1"}) {
		t.Fatalf("loads after the first rescan = %q", got)
	}
	// Unchanged files are not loaded again.
	if err := h.w.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.rt.loadLog(); len(got) != 2 {
		t.Fatalf("a rescan of an unchanged folder loaded %q", got[2:])
	}
	// A changed file is, a removed one is unloaded.
	h.write("a.wasm", "a2")
	if err := os.Remove(filepath.Join(h.dir, "b.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.rt.loadLog(); !slices.Equal(got[2:], []string{"a:a2"}) {
		t.Fatalf("loads after a change = %q", got[2:])
	}
	if _, ok := h.rt.serving("b"); ok || !slices.Equal(h.rt.unload, []string{"b"}) {
		t.Fatalf("b not unloaded: unloads %q", h.rt.unload)
	}
	// A module unloaded behind the watcher's back (MODULE UNLOAD) comes back
	// on the next rescan.
	if err := h.rt.Unload("a"); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	if m, ok := h.rt.serving("a"); !ok || m.Version != "a2" {
		t.Fatalf("a after MODULE UNLOAD and a rescan: %+v %v", m, ok)
	}
	// A module served from elsewhere (MODULE LOAD of another path) is not
	// unloaded by the folder's rescan.
	other := filepath.Join(t.TempDir(), "c.wasm")
	if err := os.WriteFile(other, []byte("c"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.rt.Load(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := h.w.Rescan(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.rt.serving("c"); !ok {
		t.Fatal("the rescan unloaded a module loaded from outside the folder")
	}
	// An unreadable folder is an error, and cannot be watched.
	missing := New(filepath.Join(h.dir, "missing"), h.rt, slog.New(slog.DiscardHandler), 0)
	if err := missing.Rescan(ctx); err == nil {
		t.Error("Rescan of a missing folder succeeded")
	}
	if err := missing.Run(ctx); err == nil {
		t.Error("Run on a missing folder succeeded")
	}
}

func TestDebounceCoalescesBurst(t *testing.T) {
	// The burst below takes microseconds; a whole second of quiet makes
	// the test immune to a loaded machine's pauses.
	h := newHarness(t, time.Second)
	h.run(0)
	f, err := os.Create(filepath.Join(h.dir, "burst.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	want := ""
	for i := range 50 {
		chunk := string(rune('a' + i%26))
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
		want += chunk
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	h.expect(event{"burst.wasm", loaded})
	h.noMore()
	if got := h.rt.loadLog(); len(got) != 2 || got[0] != "burst:"+want {
		t.Fatalf("loads = %q, want one load of the whole file then the sentinel", got)
	}
}

func TestRenameIntoPlace(t *testing.T) {
	h := newHarness(t, 250*time.Millisecond)
	h.write("kv.wasm", "v1")
	h.run(1)
	h.replace("kv.wasm", "v2")
	h.expect(event{"kv.wasm", loaded})
	h.replace("kv.wasm", "v3")
	h.expect(event{"kv.wasm", loaded})
	h.noMore()
	// The temporary names are never loaded.
	if got := h.rt.loadLog(); !slices.Equal(got[:3], []string{"kv:v1", "kv:v2", "kv:v3"}) {
		t.Fatalf("loads = %q", got)
	}
	if m, _ := h.rt.serving("kv"); m.Version != "v3" {
		t.Fatalf("serving %+v", m)
	}
}

// TestRenameNeedsNoDebounce checks that a file renamed into place loads
// without waiting for the debounce period, which here is longer than the
// harness waits for an outcome, while a file created and written in place
// still waits for its writes to stop.
func TestRenameNeedsNoDebounce(t *testing.T) {
	h := newHarness(t, time.Hour)
	h.run(0)
	h.replace("kv.wasm", "v1")
	h.expect(event{"kv.wasm", loaded})
	h.replace("kv.wasm", "v2")
	h.expect(event{"kv.wasm", loaded})
	if got := h.rt.loadLog(); !slices.Equal(got, []string{"kv:v1", "kv:v2"}) {
		t.Fatalf("loads = %q", got)
	}
	// Created and written: debounced (an hour), so the rename after it is
	// the next outcome, and the written file is not loaded meanwhile.
	h.write("slow.wasm", "partial")
	h.replace("kv.wasm", "v3")
	h.expect(event{"kv.wasm", loaded})
	if got := h.rt.loadLog(); !slices.Equal(got, []string{"kv:v1", "kv:v2", "kv:v3"}) {
		t.Fatalf("loads = %q: the file written in place was not debounced", got)
	}
}

func TestRemoval(t *testing.T) {
	h := newHarness(t, 250*time.Millisecond)
	h.write("a.wasm", "a")
	h.write("b.wasm", "b")
	h.run(2)
	if err := os.Remove(filepath.Join(h.dir, "a.wasm")); err != nil {
		t.Fatal(err)
	}
	h.expect(event{"a.wasm", unloaded})
	// Renamed away (to a name that is not a module) counts as removed.
	if err := os.Rename(filepath.Join(h.dir, "b.wasm"), filepath.Join(h.dir, "b.wasm.off")); err != nil {
		t.Fatal(err)
	}
	h.expect(event{"b.wasm", unloaded})
	if _, ok := h.rt.serving("a"); ok {
		t.Error("a still served")
	}
	if _, ok := h.rt.serving("b"); ok {
		t.Error("b still served")
	}
}

func TestUnchangedContentNotReloaded(t *testing.T) {
	h := newHarness(t, 250*time.Millisecond)
	h.write("kv.wasm", "v1")
	h.run(1)
	// Rewritten with the same bytes, and touched.
	h.write("kv.wasm", "v1")
	h.expect(event{"kv.wasm", unchanged})
	now := time.Now()
	if err := os.Chtimes(filepath.Join(h.dir, "kv.wasm"), now, now); err != nil {
		t.Fatal(err)
	}
	h.expect(event{"kv.wasm", unchanged})
	if got := h.rt.loadLog(); len(got) != 1 {
		t.Fatalf("loads = %q, want the first only", got)
	}
}

func TestRefusedVersionNotRetriedUntilChanged(t *testing.T) {
	h := newHarness(t, 250*time.Millisecond)
	h.write("kv.wasm", "v1")
	h.write("new.wasm", "bad new")
	h.run(2)
	// A refused new version leaves the old one serving.
	h.replace("kv.wasm", "bad v2")
	h.expect(event{"kv.wasm", refused})
	if m, _ := h.rt.serving("kv"); m.Version != "v1" || m.LastError == "" {
		t.Fatalf("after a refused version: %+v", m)
	}
	// The same bytes again (an editor saving twice) are not retried, for a
	// module with a serving version or without one.
	h.write("kv.wasm", "bad v2")
	h.expect(event{"kv.wasm", unchanged})
	h.write("new.wasm", "bad new")
	h.expect(event{"new.wasm", unchanged})
	if got := h.rt.loadLog(); !slices.Equal(got, []string{"kv:v1", "new:bad new", "kv:bad v2"}) {
		t.Fatalf("loads = %q", got)
	}
	// A changed file is tried again.
	h.replace("kv.wasm", "v3")
	h.expect(event{"kv.wasm", loaded})
	if m, _ := h.rt.serving("kv"); m.Version != "v3" || m.LastError != "" {
		t.Fatalf("after a good version: %+v", m)
	}
	// An explicit Rescan (SIGHUP) retries refused files: what refused them
	// may have changed. Loaded unchanged files stay as they are.
	if err := h.w.Rescan(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := h.rt.loadLog()
	if !slices.Equal(got[4:], []string{"new:bad new"}) {
		t.Fatalf("loads of the rescan = %q, want the refused file only", got[4:])
	}
}

func TestBusyFileDoesNotHoldBackOthers(t *testing.T) {
	h := newHarness(t, 250*time.Millisecond)
	h.run(0)
	// busy.wasm is appended to every 20ms, never quiet for the debounce
	// period, until quiet.wasm, written once, has loaded.
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		f, err := os.Create(filepath.Join(h.dir, "busy.wasm"))
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
				if _, err := f.WriteString("x"); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	h.write("quiet.wasm", "q")
	for {
		if ev := h.next(); ev == (event{"quiet.wasm", loaded}) {
			break
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStagedBuildCompiledAhead checks the speculative compilation of a
// build staged under a hidden name: once its writes pause it is compiled
// (not loaded), a file that is no module is not, the same content is not
// compiled twice, and the rename then loads it at once.
func TestStagedBuildCompiledAhead(t *testing.T) {
	h := newHarness(t, time.Hour)
	errAny := errors.New("any error")
	type staged struct {
		name string
		err  error
	}
	compiled := make(chan staged, 100)
	h.w.spec.trace = func(path string, err error) { compiled <- staged{filepath.Base(path), err} }
	h.run(0)
	next := func(want staged) {
		t.Helper()
		select {
		case got := <-compiled:
			ok := got.name == want.name && (got.err == nil) == (want.err == nil)
			if ok && want.err != nil && want.err != errAny {
				ok = errors.Is(got.err, want.err)
			}
			if !ok {
				t.Fatalf("staged %+v, want %+v", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s not compiled within 20s", want.name)
		}
	}
	h.write(".notes.wasm.txt", "no module")
	next(staged{".notes.wasm.txt", errNotModule})
	h.write(".kv.wasm.tmp", "\x00asm v1 build")
	next(staged{".kv.wasm.tmp", nil})
	h.write(".other.wasm.tmp", "\x00asm v1 build") // same content
	next(staged{".other.wasm.tmp", errCompiledBefore})
	h.write(".bad.wasm.tmp", "\x00asm bad build")
	next(staged{".bad.wasm.tmp", errAny})
	if got := h.rt.loadLog(); len(got) != 0 {
		t.Fatalf("staged files were loaded: %q", got)
	}
	if err := os.Rename(filepath.Join(h.dir, ".kv.wasm.tmp"), filepath.Join(h.dir, "kv.wasm")); err != nil {
		t.Fatal(err)
	}
	h.expect(event{"kv.wasm", loaded}) // an hour's debounce: the rename is loaded at once
	h.rt.mu.Lock()
	pre := slices.Clone(h.rt.pre)
	h.rt.mu.Unlock()
	if !slices.Equal(pre, []string{"\x00asm v1 build", "\x00asm bad build"}) {
		t.Fatalf("precompiled %q", pre)
	}
}
