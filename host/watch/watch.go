// Package watch keeps a module runtime in step with its commands folder: a
// new or changed .wasm file is loaded (and swapped in when it validates), a
// removed one is unloaded. Writes are debounced so a file being written is
// loaded once, after the writes stop; a file renamed into place within the
// folder is loaded at once (one moved in from elsewhere after a settle of
// a few milliseconds); content hashes keep an unchanged file from being
// compiled again.
//
// Names starting with a dot are not loaded, so that an operator (or an
// editor) can write ".kv.wasm.tmp" and rename it to "kv.wasm": the rename is
// one event and the module never sees a partial file. Such a staged build
// is compiled speculatively as soon as its writes stop (stage.go), so that
// its rename finds its code compiled.
package watch

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/respike/respike/host/module"
)

// DefaultDebounce is how long a file written in place must stay quiet
// before it is loaded when New is given no debounce.
const DefaultDebounce = 200 * time.Millisecond

// Loader is the part of the module runtime the watcher drives.
type Loader interface {
	Load(ctx context.Context, path string) (module.ModuleInfo, error)
	Unload(name string) error
	Modules() []module.ModuleInfo
}

// bytesLoader is a Loader that takes a file's content read already (the
// module runtime): the watcher reads and hashes every file it syncs, and
// handing both over spares the runtime a second read and hash.
type bytesLoader interface {
	LoadBytes(ctx context.Context, path string, bin []byte, sum [32]byte) (module.ModuleInfo, error)
}

// precompiler is a Loader that can compile a content ahead of its load
// (the module runtime): the watcher has it compile a build staged under a
// temporary name, so that its rename into place finds it compiled.
type precompiler interface {
	Precompile(ctx context.Context, bin []byte) error
}

// Watcher reconciles a folder of modules with a Loader. Its methods are safe
// for concurrent use.
type Watcher struct {
	dir      string
	rt       Loader
	log      *slog.Logger
	debounce time.Duration

	// op serialises reconciliations, so that an event and a SIGHUP never
	// compile one file twice at once.
	op   sync.Mutex
	seen map[string][32]byte // module name → hash of the file last loaded or refused; guarded by op

	// Speculative compilation of staged files (stage.go).
	spec *stager

	// trace, when set (by tests), is told the outcome of each file synced.
	trace func(path string, o outcome)
}

// outcome is what reconciling one file did.
type outcome string

const (
	loaded    outcome = "loaded"    // loaded or swapped in
	refused   outcome = "refused"   // the runtime refused it; the previous state serves
	unchanged outcome = "unchanged" // same content as last time: nothing to do
	unloaded  outcome = "unloaded"  // the file is gone and so is its module
	absent    outcome = "absent"    // the file is gone and served nothing of ours
	failed    outcome = "failed"    // the file could not be read
	watching  outcome = "watching"  // Run watches the folder and has reconciled it (path is the folder)
)

// New returns a watcher of dir driving rt. debounce is how long a file must
// stay quiet before it is loaded (0 means DefaultDebounce); logger nil
// means slog.Default().
func New(dir string, rt Loader, logger *slog.Logger, debounce time.Duration) *Watcher {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	if logger == nil {
		logger = slog.Default()
	}
	w := &Watcher{dir: filepath.Clean(dir), rt: rt, log: logger, debounce: debounce, seen: map[string][32]byte{}}
	if pc, ok := rt.(precompiler); ok {
		w.spec = newStager(pc, logger)
	}
	return w
}

// isModuleFile reports whether a file name in the folder is a module.
func isModuleFile(name string) bool {
	base := filepath.Base(name)
	return strings.HasSuffix(base, ".wasm") && !strings.HasPrefix(base, ".") && len(base) > len(".wasm")
}

// Run watches the folder until ctx is done. It reconciles once at start
// (modules this watcher loaded before are not loaded again unless their
// file changed) and again when the kernel's event queue overflows. It
// returns an error only when the folder cannot be watched.
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	defer fw.Close()
	if err := fw.Add(w.dir); err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	if err := w.rescan(ctx, false); err != nil {
		w.log.Error("reconcile the commands folder", "dir", w.dir, "err", err)
	}
	if w.spec != nil {
		go w.spec.run(ctx)
	}
	w.report(w.dir, watching)

	pending := map[string]change{}
	timer := time.NewTimer(w.debounce)
	timer.Stop()
	// armed says the timer will fire at due, at the latest one debounce
	// period after the newest event: a file written without pause for
	// minutes does not hold back the others.
	armed := false
	var due time.Time
	// renaming says the previous event was a file renamed away: inotify
	// reports a rename within the folder as that event immediately
	// followed by the creation of the new name, which then is a whole
	// file (the documented deploy, .x.wasm.tmp renamed to x.wasm).
	renaming := false
	note := func(ev fsnotify.Event) {
		renamed := renaming && ev.Op == fsnotify.Create
		renaming = ev.Has(fsnotify.Rename)
		if w.spec != nil && isStagedFile(ev.Name) {
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) {
				w.spec.written(ev.Name, time.Now())
			}
			return
		}
		if !isModuleFile(ev.Name) {
			return
		}
		c := change{at: time.Now(), whole: ev.Op == fsnotify.Create, renamed: renamed}
		pending[ev.Name] = c
		if at := c.at.Add(w.quiet(c)); !armed || at.Before(due) {
			timer.Reset(time.Until(at))
			armed, due = true, at
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			note(ev)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: reconcile the whole folder instead.
			w.log.Warn("module watch error; rescanning the folder", "dir", w.dir, "err", err)
			if err := w.rescan(ctx, false); err != nil {
				w.log.Error("reconcile the commands folder", "dir", w.dir, "err", err)
			}
		case <-timer.C:
			armed = false
			// Events already delivered come first: a write that follows a
			// file's creation makes it one being written.
		drain:
			for {
				select {
				case ev, ok := <-fw.Events:
					if !ok {
						break drain
					}
					note(ev)
				default:
					break drain
				}
			}
			if armed && time.Now().Before(due) {
				continue // an event moved the next check earlier
			}
			if next := w.syncQuiet(ctx, pending); next > 0 {
				timer.Reset(next)
				armed, due = true, time.Now().Add(next)
			}
		}
	}
}

// settle is how long a file that appeared whole (its last event a
// creation: a rename into place, or a new file whose writes have not
// begun) waits for a write event before it is loaded. A rename is one
// complete event and needs no debounce; a copy creates the file and
// writes it at once, so its first write arrives well within this.
const settle = 10 * time.Millisecond

// change is a pending event of a module file.
type change struct {
	at      time.Time // the last event
	whole   bool      // the last event was the file's creation (see settle)
	renamed bool      // ... by a rename within the folder: complete at once
}

// quiet is how long the file of c must stay quiet before it is loaded.
func (w *Watcher) quiet(c change) time.Duration {
	if c.renamed {
		return 0
	}
	if c.whole {
		return min(settle, w.debounce)
	}
	return w.debounce
}

// syncQuiet reconciles the pending files that have been quiet long enough,
// in the order they were written, and removes them from pending. It
// returns how long until the next pending file is quiet, or 0.
func (w *Watcher) syncQuiet(ctx context.Context, pending map[string]change) time.Duration {
	now := time.Now()
	var due []string
	next := time.Duration(0)
	for path, c := range pending {
		if c.whole && now.Sub(c.at) >= w.quiet(c) {
			// An empty file was created and not written yet (a copy that
			// has not begun): its writes are debounced.
			if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
				c.whole, c.renamed = false, false
				pending[path] = c
			}
		}
		if quiet := now.Sub(c.at); quiet < w.quiet(c) {
			if d := w.quiet(c) - quiet; next == 0 || d < next {
				next = d
			}
			continue
		}
		due = append(due, path)
	}
	slices.SortFunc(due, func(a, b string) int { return pending[a].at.Compare(pending[b].at) })
	for _, path := range due {
		delete(pending, path)
	}
	w.op.Lock()
	defer w.op.Unlock()
	for _, path := range due {
		w.sync(ctx, path, false)
	}
	return next
}

// Rescan reconciles the whole folder: it loads new and changed files,
// retries files refused before (what they depend on, such as a command
// another module held, may have changed), and unloads the modules whose
// file is gone. Unchanged modules are not compiled again. The daemon calls
// it at start and on SIGHUP. It returns an error only when the folder
// cannot be read.
func (w *Watcher) Rescan(ctx context.Context) error { return w.rescan(ctx, true) }

func (w *Watcher) rescan(ctx context.Context, retryRefused bool) error {
	w.op.Lock()
	defer w.op.Unlock()
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		return fmt.Errorf("read the commands folder: %w", err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || !isModuleFile(e.Name()) {
			continue
		}
		path := filepath.Join(w.dir, e.Name())
		present[module.ModuleName(path)] = true
		w.sync(ctx, path, retryRefused)
	}
	for _, m := range w.rt.Modules() {
		if present[m.Name] || !w.inFolder(m.Path) {
			continue
		}
		if _, err := os.Stat(m.Path); errors.Is(err, fs.ErrNotExist) {
			w.report(m.Path, w.removed(m.Name, m.Path))
		}
	}
	for name := range w.seen {
		if !present[name] {
			delete(w.seen, name)
		}
	}
	return nil
}

// sync loads path if its content changed since it was last seen, or
// unloads its module if the file is gone. Called with w.op held.
func (w *Watcher) sync(ctx context.Context, path string, retryRefused bool) {
	name := module.ModuleName(path)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		w.report(path, w.removed(name, path))
		return
	case err != nil:
		w.log.Error("read module file", "path", path, "err", err)
		w.report(path, failed)
		return
	}
	sum := sha256.Sum256(data)
	info, known := w.module(name)
	// An unloaded module (MODULE UNLOAD) is not known: its file loads again.
	if prev, ok := w.seen[name]; ok && prev == sum && known && (info.LastError == "" || !retryRefused) {
		w.report(path, unchanged)
		return
	}
	// If the file changed since it was read, its event brings the watcher
	// back here.
	if bl, ok := w.rt.(bytesLoader); ok {
		_, err = bl.LoadBytes(ctx, path, data, sum)
	} else {
		_, err = w.rt.Load(ctx, path)
	}
	w.seen[name] = sum // a refused version is not retried until it changes
	if err != nil {
		// The runtime logs the reason and shows it in Modules.
		w.log.Debug("module file refused; the previous state keeps serving", "path", path, "err", err)
		w.report(path, refused)
		return
	}
	w.report(path, loaded)
}

// removed unloads the module of a file that is gone, unless the module is
// served from another file (MODULE LOAD of another path).
func (w *Watcher) removed(name, path string) outcome {
	delete(w.seen, name)
	info, known := w.module(name)
	if !known || !samePath(info.Path, path) {
		return absent
	}
	if err := w.rt.Unload(name); err != nil {
		w.log.Debug("unload", "module", name, "err", err)
		return absent
	}
	return unloaded
}

// module returns the runtime's description of a module, loaded or refused.
func (w *Watcher) module(name string) (module.ModuleInfo, bool) {
	for _, m := range w.rt.Modules() {
		if m.Name == name {
			return m, true
		}
	}
	return module.ModuleInfo{}, false
}

// inFolder reports whether path names a file directly in the watched folder.
func (w *Watcher) inFolder(path string) bool {
	return path != "" && samePath(filepath.Dir(path), w.dir)
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	a1, err1 := filepath.Abs(a)
	b1, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && a1 == b1
}

func (w *Watcher) report(path string, o outcome) {
	if w.trace != nil {
		w.trace(path, o)
	}
}
