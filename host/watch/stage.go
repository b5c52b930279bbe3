package watch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Speculative compilation of staged builds.
//
// The documented deploy writes the build under a hidden name in the folder
// and renames it into place (cp x.wasm commands/.x.wasm.tmp && mv …). The
// rename is what swaps, but the build's content is known as soon as its
// writes stop: compiling it then (the runtime keeps it by SHA-256, as an
// unused entry, and a load of the same content waits for a compilation
// under way rather than repeating it) moves the compile, the bulk of a
// swap, ahead of the rename. A deploy that copies first and renames a
// little later (scp then ssh mv, a CI step) then swaps in the time of an
// instantiation; one that renames at once loses nothing.
//
// The cost is one compile per staged content, which the swap would pay
// anyway; a staged file that is never renamed wasted it once. A file still
// being written when its writes pause fails to compile (a truncated
// module fails early) and is tried again after its next writes.

// stageQuiet is how long a staged file's writes must pause before it is
// compiled speculatively.
const stageQuiet = 20 * time.Millisecond

// stageRemembered bounds the contents compiled speculatively that are
// remembered, so that an unchanged staged file is not compiled twice.
const stageRemembered = 16

// isStagedFile reports whether a file name in the folder is a build staged
// under a hidden temporary name: it starts with a dot and mentions .wasm.
func isStagedFile(name string) bool {
	base := filepath.Base(name)
	return strings.HasPrefix(base, ".") && strings.Contains(base, ".wasm")
}

// stager compiles staged files, one at a time, in its own goroutine: the
// watcher's loop must stay free for the rename's event.
type stager struct {
	pc  precompiler
	log *slog.Logger

	mu      sync.Mutex
	pending map[string]time.Time // staged file → its last write
	done    [][32]byte           // contents compiled, newest last
	kick    chan struct{}        // cap 1: pending changed

	// trace, when set (by tests), is told each staged file compiled and
	// the outcome.
	trace func(path string, err error)
}

func newStager(pc precompiler, log *slog.Logger) *stager {
	return &stager{pc: pc, log: log, pending: map[string]time.Time{}, kick: make(chan struct{}, 1)}
}

// written notes a write (or the creation) of a staged file.
func (s *stager) written(path string, at time.Time) {
	s.mu.Lock()
	s.pending[path] = at
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run compiles staged files whose writes have paused, until ctx is done.
func (s *stager) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-timer.C:
		}
		due, next := s.due(time.Now())
		for _, path := range due {
			s.compile(ctx, path)
		}
		if next > 0 {
			timer.Reset(next)
		}
	}
}

// due takes the staged files quiet for stageQuiet out of pending, and
// returns how long until the next one is, or 0.
func (s *stager) due(now time.Time) (due []string, next time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for path, at := range s.pending {
		if wait := stageQuiet - now.Sub(at); wait > 0 {
			if next == 0 || wait < next {
				next = wait
			}
			continue
		}
		due = append(due, path)
		delete(s.pending, path)
	}
	return due, next
}

// compile compiles a staged file's content unless it was compiled before,
// or is gone (renamed already: its load compiles it) or not a module.
func (s *stager) compile(ctx context.Context, path string) {
	bin, err := os.ReadFile(path)
	if err == nil && (len(bin) < 8 || !bytes.HasPrefix(bin, []byte("\x00asm"))) {
		err = errNotModule
	}
	if err != nil {
		s.report(path, err)
		return
	}
	sum := sha256.Sum256(bin)
	s.mu.Lock()
	for _, d := range s.done {
		if d == sum {
			s.mu.Unlock()
			s.report(path, errCompiledBefore)
			return
		}
	}
	s.mu.Unlock()
	start := time.Now()
	err = s.pc.Precompile(ctx, bin)
	s.report(path, err)
	if err != nil {
		// Most likely a file still being written: its next write brings
		// it back.
		s.log.Debug("staged module file not compiled", "path", path, "err", err)
		return
	}
	s.log.Info("staged module file compiled ahead of its rename", "path", path, "took", time.Since(start))
	s.mu.Lock()
	s.done = append(s.done, sum)
	if len(s.done) > stageRemembered {
		s.done = s.done[1:]
	}
	s.mu.Unlock()
}

// Reasons a staged file is not compiled, for tests.
var (
	errNotModule      = errors.New("not a WebAssembly module")
	errCompiledBefore = errors.New("content compiled before")
)

func (s *stager) report(path string, err error) {
	if s.trace != nil {
		s.trace(path, err)
	}
}
