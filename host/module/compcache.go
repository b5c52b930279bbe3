package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tetratelabs/wazero"
)

// Compiled modules by content.
//
// Loading a file costs, besides instantiating it, the loop-fuel rewrite
// (instrument.go) and wazero's CompileModule, which decodes and validates
// every function even when its compilation cache holds the native code:
// about 30 ms and 60 ms for a 3.5 MB Go module, more on a busy machine.
// Two caches keyed by the SHA-256 of the file as written spare them:
//
//   - In memory, the compiled module: a file whose content is served, or
//     was served recently (a swap back to the previous build, another
//     name for the same build), reuses its compiled code outright. The
//     versions holding an entry count as its references; at most
//     idleCompiled entries without a reference stay, the oldest go first.
//   - On disk, under the compilation cache folder, the instrumented binary:
//     a file new to this process (a proxy restarted, a build deployed to
//     every proxy) skips the rewrite; wazero's own cache, keyed by the
//     instrumented bytes, then finds its native code.

// idleCompiled is how many compiled modules no version uses are kept for a
// swap back. Each holds its native code (a few MB for a Go module).
const idleCompiled = 4

// fuelFormat names the loop-fuel rewrite in the instrumented-binary cache:
// change it whenever instrument's output changes, so that binaries
// rewritten by an older host are not reused.
const fuelFormat = "fuel1"

// compiledEntry is a compiled module and the versions that use it.
type compiledEntry struct {
	sum  [32]byte
	cm   wazero.CompiledModule
	refs int    // versions using it; guarded by Runtime.cmu
	used uint64 // when it was last released, in r.cseq ticks, for eviction
	// spare is an instance started by Precompile, which the next version
	// of this content takes as its first instance; guarded by Runtime.cmu.
	spare *instance
}

// compileWait is a compilation under way, which loads of the same
// content wait for rather than compile it a second time.
type compileWait struct {
	done chan struct{}
	err  error // set before done closes
}

// compile returns the compiled module of the file content bin, whose
// SHA-256 is sum, with a reference taken, compiling it (with loop fuel) if
// no cache holds it. A compilation of the same content under way (a
// speculative one, Precompile) is waited for, not repeated.
func (r *Runtime) compile(ctx context.Context, bin []byte, sum [32]byte) (*compiledEntry, error) {
	for {
		r.cmu.Lock()
		if e := r.compiled[sum]; e != nil {
			e.refs++
			r.cmu.Unlock()
			return e, nil
		}
		w := r.compiling[sum]
		if w == nil {
			break // ours to compile, r.cmu held
		}
		r.cmu.Unlock()
		select {
		case <-w.done:
			if w.err != nil {
				return nil, w.err
			}
			// Compiled: the entry is in r.compiled unless evicted since.
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	w := &compileWait{done: make(chan struct{})}
	r.compiling[sum] = w
	r.cmu.Unlock()

	r.compilations.Add(1)
	cm, err := r.compileNew(ctx, bin, sum)

	r.cmu.Lock()
	defer r.cmu.Unlock()
	delete(r.compiling, sum)
	w.err = err
	close(w.done)
	if err != nil {
		return nil, err
	}
	e := &compiledEntry{sum: sum, cm: cm, refs: 1}
	r.compiled[sum] = e
	return e, nil
}

// compileNew compiles content new to this process: the instrumented binary
// from the disk cache, or instrumented now, then wazero's CompileModule
// (which finds the native code in its own cache when it has it).
func (r *Runtime) compileNew(ctx context.Context, bin []byte, sum [32]byte) (wazero.CompiledModule, error) {
	fueled := r.readFueled(sum)
	if fueled != nil {
		cm, err := r.wrt.CompileModule(ctx, fueled)
		if err == nil {
			return cm, nil
		}
		// A damaged cache file: rewrite it.
		_ = os.Remove(r.fueledPath(sum))
	}
	fueled, err := instrument(bin)
	if err != nil {
		return nil, fmt.Errorf("add loop fuel: %w", err)
	}
	cm, err := r.wrt.CompileModule(ctx, fueled)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	r.writeFueled(sum, fueled)
	return cm, nil
}

// Precompile compiles the file content bin ahead of its load, so that a
// Load of the same content (the file renamed into place, a fleet deploy)
// finds it compiled: the watcher calls it for a build being staged under a
// temporary name. The result stays as an unused entry (idleCompiled
// bounds them); a load of the content while it compiles waits for it. It
// returns the compilation's error (a partial file, not a module), which
// nobody needs to see: the load of a bad file reports its own.
func (r *Runtime) Precompile(ctx context.Context, bin []byte) error {
	sum := sha256.Sum256(bin)
	r.cmu.Lock()
	closed := r.cclosed
	r.cmu.Unlock()
	if closed {
		return errors.New("module runtime closed")
	}
	e, err := r.compile(ctx, bin, sum)
	if err != nil {
		return err
	}
	defer r.release(e)
	r.cmu.Lock()
	has := e.spare != nil
	r.cmu.Unlock()
	if has {
		return nil
	}
	// Start the version's first instance now too (a Go module's runtime
	// initialisation, and its memory's first touch, take milliseconds to
	// tens of them): the load then only checks and publishes. The
	// instance belongs to a stand-in version until a load adopts it
	// (takeSpare).
	pv := &version{rt: r, compiled: e.cm, ctr: &modCounters{gate: make(chan struct{}, suspectTurns())}}
	_, pv.batch = e.cm.ExportedFunctions()["respike_batch"] // as prepare sets it: instantiate looks the export up
	in, err := pv.instantiate(ctx)
	if err != nil {
		return err // the load will say it again, as its own refusal
	}
	r.cmu.Lock()
	defer r.cmu.Unlock()
	if e.spare != nil || r.cclosed {
		in.close()
		return nil
	}
	e.spare = in
	return nil
}

// takeSpare hands the instance Precompile started for e's content to v,
// or returns nil.
func (r *Runtime) takeSpare(e *compiledEntry, v *version) *instance {
	r.cmu.Lock()
	in := e.spare
	e.spare = nil
	r.cmu.Unlock()
	if in == nil {
		return nil
	}
	// in.fBatch is set already: Precompile's stand-in version read
	// v.batch from the same compiled module's exports.
	in.v = v
	in.used = r.clock()
	v.live.Add(1)
	v.memBytes.Add(int64(in.memSeen))
	return in
}

// release drops a version's reference on e; an entry nobody uses stays
// for a swap back until idleCompiled newer ones push it out.
func (r *Runtime) release(e *compiledEntry) {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	r.cseq++
	e.used = r.cseq
	if r.cclosed {
		r.evict(e)
		return
	}
	var idle []*compiledEntry
	for _, o := range r.compiled {
		if o.refs == 0 {
			idle = append(idle, o)
		}
	}
	for len(idle) > idleCompiled {
		oldest := 0
		for i, o := range idle {
			if o.used < idle[oldest].used {
				oldest = i
			}
		}
		r.evict(idle[oldest])
		idle = append(idle[:oldest], idle[oldest+1:]...)
	}
}

// evict closes an entry nobody uses. Called with r.cmu held.
func (r *Runtime) evict(e *compiledEntry) {
	delete(r.compiled, e.sum)
	if e.spare != nil {
		e.spare.close()
		e.spare = nil
	}
	_ = e.cm.Close(context.Background())
}

// closeCompiled closes every entry nobody uses, at Close; the others
// close with their last version.
func (r *Runtime) closeCompiled() {
	r.cmu.Lock()
	defer r.cmu.Unlock()
	r.cclosed = true
	for _, e := range r.compiled {
		if e.refs == 0 {
			r.evict(e)
		}
	}
}

// fueledPath is where the instrumented binary of the content sum is
// cached, "" when there is no cache folder.
func (r *Runtime) fueledPath(sum [32]byte) string {
	if r.cfg.CacheDir == "" {
		return ""
	}
	return filepath.Join(r.cfg.CacheDir, "respike-"+fuelFormat+"-"+strconv.Itoa(loopFuel), hex.EncodeToString(sum[:])+".wasm")
}

// readFueled returns the cached instrumented binary of the content sum,
// or nil.
func (r *Runtime) readFueled(sum [32]byte) []byte {
	p := r.fueledPath(sum)
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil
	}
	return b
}

// writeFueled caches an instrumented binary, written whole or not at all
// (a temporary file renamed into place). A failure only costs the next
// load the rewrite.
func (r *Runtime) writeFueled(sum [32]byte, fueled []byte) {
	p := r.fueledPath(sum)
	if p == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.log.Debug("cache the instrumented module", "err", err)
		return
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		r.log.Debug("cache the instrumented module", "err", err)
		return
	}
	_, err = f.Write(fueled)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		r.log.Debug("cache the instrumented module", "err", err)
	}
}
