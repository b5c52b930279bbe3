// Package watch keeps a module runtime in step with its commands folder: a
// new or changed .wasm file is loaded (and swapped in when it validates), a
// removed one is unloaded. Events are debounced so a file being written is
// loaded once, after the writes stop.
package watch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/respike/respike/host/module"
)

// Loader is the part of the module runtime the watcher drives.
type Loader interface {
	Load(ctx context.Context, path string) (module.ModuleInfo, error)
	Unload(name string) error
	Modules() []module.ModuleInfo
}

// Watcher reconciles a folder of modules with a Loader.
type Watcher struct {
	dir      string
	rt       Loader
	log      *slog.Logger
	debounce time.Duration

	mu     sync.Mutex
	loaded map[string][32]byte // module name → content hash of the file last loaded (or refused)
}

// New returns a watcher of dir. debounce is how long a file must stay quiet
// before it is loaded (0 means 200ms).
func New(dir string, rt Loader, logger *slog.Logger, debounce time.Duration) *Watcher {
	if debounce <= 0 {
		debounce = 200 * time.Millisecond
	}
	if logger == nil {
		logger = slog.Default()
	}
	w := &Watcher{dir: dir, rt: rt, log: logger, debounce: debounce, loaded: map[string][32]byte{}}
	return w
}

// Run watches the folder until ctx is done. It reconciles once at start, so
// modules loaded before Run are not loaded again unless they changed.
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	defer fw.Close()
	if err := fw.Add(w.dir); err != nil {
		return fmt.Errorf("watch %s: %w", w.dir, err)
	}
	w.Rescan(ctx)

	pending := map[string]time.Time{} // path → last event
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			if !strings.HasSuffix(ev.Name, ".wasm") {
				continue
			}
			pending[ev.Name] = time.Now()
			timer.Reset(w.debounce)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: reconcile the whole folder instead.
			w.log.Warn("module watch error; rescanning", "dir", w.dir, "err", err)
			w.Rescan(ctx)
		case <-timer.C:
			now := time.Now()
			next := time.Duration(0)
			for path, at := range pending {
				if quiet := now.Sub(at); quiet < w.debounce {
					if d := w.debounce - quiet; next == 0 || d < next {
						next = d
					}
					continue
				}
				delete(pending, path)
				w.sync(ctx, path)
			}
			if next > 0 {
				timer.Reset(next)
			}
		}
	}
}

// Rescan reconciles the whole folder: loads new and changed files, unloads
// modules whose file is gone. The daemon calls it on SIGHUP.
func (w *Watcher) Rescan(ctx context.Context) {
	present := map[string]bool{}
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		w.log.Error("read modules folder", "dir", w.dir, "err", err)
		return
	}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".wasm") {
			continue
		}
		present[strings.TrimSuffix(e.Name(), ".wasm")] = true
		w.sync(ctx, filepath.Join(w.dir, e.Name()))
	}
	for _, m := range w.rt.Modules() {
		if filepath.Dir(m.Path) == filepath.Clean(w.dir) && !present[m.Name] {
			w.unload(m.Name)
		}
	}
}

// sync loads path if its content changed since it was last seen, or unloads
// its module if the file is gone.
func (w *Watcher) sync(ctx context.Context, path string) {
	name := strings.TrimSuffix(filepath.Base(path), ".wasm")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		w.unload(name)
		return
	}
	if err != nil {
		w.log.Error("read module", "path", path, "err", err)
		return
	}
	sum := sha256.Sum256(data)
	w.mu.Lock()
	prev, seen := w.loaded[name]
	w.mu.Unlock()
	if seen && prev == sum && w.isLoaded(name) {
		return
	}
	start := time.Now()
	info, err := w.rt.Load(ctx, path)
	w.mu.Lock()
	w.loaded[name] = sum // a refused version is not retried until it changes
	w.mu.Unlock()
	if err != nil {
		w.log.Error("module refused; the previous version keeps serving", "path", path, "err", err)
		return
	}
	w.log.Info("module loaded", "module", info.Name, "version", info.Version,
		"commands", len(info.Commands), "took", time.Since(start).Round(time.Microsecond))
}

func (w *Watcher) isLoaded(name string) bool {
	for _, m := range w.rt.Modules() {
		if m.Name == name && len(m.Commands) > 0 {
			return true
		}
	}
	return false
}

func (w *Watcher) unload(name string) {
	w.mu.Lock()
	delete(w.loaded, name)
	w.mu.Unlock()
	if err := w.rt.Unload(name); err != nil {
		w.log.Debug("unload", "module", name, "err", err)
		return
	}
	w.log.Info("module unloaded", "module", name)
}
