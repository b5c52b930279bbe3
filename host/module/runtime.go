package module

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// defaultDeadline bounds a guest call when Config.Deadline is zero.
const defaultDeadline = time.Second

// maxNameLen bounds command names, so that Lookup can lower-case a name on
// the stack.
const maxNameLen = 64

// Runtime holds the loaded modules. Its methods are safe for concurrent use.
type Runtime struct {
	cfg      Config
	st       store.Store
	inline   bool // run store requests inside the guest call
	log      *slog.Logger
	deadline time.Duration
	nInst    int
	// epoch is Clock's zero: instances keep when they were last used as
	// monotonic nanoseconds since then (clock), read with one clock read
	// where time.Now takes two.
	epoch time.Time

	wrt     wazero.Runtime
	cache   wazero.CompilationCache
	modCfg  wazero.ModuleConfig
	dog     *watchdog
	gen     atomic.Uint64 // instance generations
	reg     atomic.Pointer[registry]
	callPol sync.Pool // *call

	cmu       sync.Mutex                  // guards compiled, compiling, cseq, cclosed (compcache.go)
	compiled  map[[32]byte]*compiledEntry // compiled modules by file content
	compiling map[[32]byte]*compileWait   // compilations under way by file content
	// compilations counts contents compiled (not found in r.compiled).
	compilations atomic.Int64
	cseq         uint64
	cclosed      bool

	reapMu    sync.Mutex    // serialises reap
	recycleAt uint32        // Config.RecycleMiB in bytes; 0 never
	reapDone  chan struct{} // stops the reaper; nil without one
	reapWG    sync.WaitGroup

	mu       sync.Mutex // serialises Load, Unload and Close
	closed   bool
	stopping atomic.Bool // Close was called: guests stop at their next tick

	gates gates // contention gates (gate.go)

	// Stats counters.
	loads, swaps, refusals, unloads, draining, waits atomic.Int64
	gateWaits                                        atomic.Int64
	finals, restarts                                 atomic.Int64
	batches, batched                                 atomic.Int64
	ctrs                                             sync.Map // module name → *modCounters
}

// registry is an immutable snapshot of the loaded modules; Load and Unload
// replace it whole so that Lookup needs no lock.
type registry struct {
	cmds    map[string]*Command
	sorted  []*Command
	mods    map[string]*version
	refused map[string]ModuleInfo // newest file refused: name → info with LastError
}

// New creates a runtime serving modules against st. It loads nothing: call
// LoadDir or Load.
func New(ctx context.Context, cfg Config, st store.Store) (*Runtime, error) {
	r := &Runtime{
		cfg:       cfg,
		st:        st,
		inline:    st != nil && st.Inline() && !cfg.NoInline,
		log:       cfg.Logger,
		deadline:  cfg.Deadline,
		nInst:     cfg.Instances,
		epoch:     clockEpoch,
		compiled:  map[[32]byte]*compiledEntry{},
		compiling: map[[32]byte]*compileWait{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.deadline <= 0 {
		r.deadline = defaultDeadline
	}
	if r.nInst <= 0 {
		// Two per CPU: a command whose goroutine blocks while it holds an
		// instance (on a store lock, or preempted) leaves another free for
		// the goroutine that replaces it on that CPU. Measured with
		// redis-benchmark -P 16 on 2 CPUs: 7-15% more throughput than one
		// per CPU, for ~9 MB more resident memory per busy module.
		r.nInst = 2 * runtime.GOMAXPROCS(0)
	}
	// No WithCloseOnContextDone: loop fuel (instrument.go) stops a looping
	// guest at a fraction of its cost.
	// No DWARF: wazero would decode a Go module's debug sections on every
	// load (about half of CompileModule's time with a warm cache, and their
	// memory), only to add source lines to trap stack traces, of which
	// error replies and logs keep the first line (failure).
	rc := wazero.NewRuntimeConfigCompiler().WithDebugInfoEnabled(false)
	if cfg.MemoryLimitMiB > 0 {
		rc = rc.WithMemoryLimitPages(uint32(min(cfg.MemoryLimitMiB, 4096) * 16)) // 64 KiB pages, 4 GiB at most
	}
	if cfg.CacheDir != "" {
		cache, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("module: compilation cache %s: %w", cfg.CacheDir, err)
		}
		r.cache = cache
		rc = rc.WithCompilationCache(cache)
	}
	r.wrt = wazero.NewRuntimeWithConfig(ctx, rc)
	fail := func(err error) (*Runtime, error) {
		_ = r.wrt.Close(ctx)
		if r.cache != nil {
			_ = r.cache.Close(ctx)
		}
		return nil, err
	}
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, r.wrt); err != nil {
		return fail(fmt.Errorf("module: instantiate WASI: %w", err))
	}
	_, err := r.wrt.NewHostModuleBuilder("respike").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(r.hostExec),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("req", "req_len", "out", "out_cap").
		Export("exec").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(r.hostTake),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32},
			[]api.ValueType{api.ValueTypeI32}).
		WithParameterNames("out", "out_cap").
		Export("take").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(r.hostTick), nil, nil).
		Export("tick").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(r.hostReply),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, nil).
		WithParameterNames("ptr", "len").
		Export("reply").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(r.hostLog),
			[]api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, nil).
		WithParameterNames("level", "ptr", "len").
		Export("log").
		Instantiate(ctx)
	if err != nil {
		return fail(fmt.Errorf("module: instantiate host module: %w", err))
	}
	// WithName("") lets many instances of one module share the runtime.
	// _initialize is the reactor's constructor (the default, _start, is
	// absent from a c-shared Go module and skipped silently).
	r.modCfg = wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithSysWalltime().
		WithSysNanotime().
		WithRandSource(rand.Reader).
		WithEnv("GOGC", "50") // keep the guest heap, hence its linear memory, small
	r.dog = newWatchdog(r.deadline)
	if cfg.RecycleMiB > 0 {
		r.recycleAt = uint32(min(cfg.RecycleMiB, 4095)) << 20
	}
	if cfg.IdleTimeout > 0 {
		r.reapDone = make(chan struct{})
		r.reapWG.Add(1)
		go func() {
			defer r.reapWG.Done()
			r.reaper(max(cfg.IdleTimeout/4, 10*time.Millisecond), r.reapDone)
		}()
	}
	r.reg.Store(&registry{
		cmds:    map[string]*Command{},
		mods:    map[string]*version{},
		refused: map[string]ModuleInfo{},
	})
	return r, nil
}

// LoadDir loads every *.wasm file in Config.Dir. A file that fails to load is
// logged, recorded for Modules and skipped; only an unreadable directory is
// an error.
func (r *Runtime) LoadDir(ctx context.Context) error {
	entries, err := os.ReadDir(r.cfg.Dir)
	if err != nil {
		return fmt.Errorf("module: read module folder: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".wasm" {
			continue
		}
		path := filepath.Join(r.cfg.Dir, e.Name())
		_, _ = r.Load(ctx, path) // Load logs and records a refusal
	}
	return nil
}

// ModuleName is the name of the module a file holds: its base name without
// ".wasm".
func ModuleName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".wasm")
}

// Load loads the module in path, or replaces the loaded module of the same
// name: new commands go to the new version while commands in flight finish
// on the old one. On failure nothing changes except the module's LastError.
func (r *Runtime) Load(ctx context.Context, path string) (ModuleInfo, error) {
	return r.load(ctx, path, nil, [32]byte{})
}

// LoadBytes is Load of a file whose content the caller has read already:
// bin, and sum its SHA-256. The watcher reads and hashes a file to know
// whether it changed; handing both over spares a second read and hash of a
// few megabytes on the way to the swap.
func (r *Runtime) LoadBytes(ctx context.Context, path string, bin []byte, sum [32]byte) (ModuleInfo, error) {
	if bin == nil {
		bin = []byte{}
	}
	return r.load(ctx, path, bin, sum)
}

// load is Load, of the content bin (hashed sum) when bin is not nil.
func (r *Runtime) load(ctx context.Context, path string, bin []byte, sum [32]byte) (ModuleInfo, error) {
	name := ModuleName(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ModuleInfo{}, fmt.Errorf("module %s: runtime closed", path)
	}
	start := time.Now()
	v, err := r.prepare(ctx, name, path, bin, sum)
	if err != nil {
		r.refusals.Add(1)
		err = fmt.Errorf("module %s: %w", path, err)
		r.publish(func(g *registry) {
			info := ModuleInfo{Name: name, Path: path}
			if old := g.mods[name]; old != nil {
				info = old.info()
			}
			info.LastError = err.Error()
			g.refused[name] = info
		})
		r.log.Error("module refused", "module", name, "path", path, "err", err)
		return ModuleInfo{}, err
	}
	old := r.reg.Load().mods[name]
	if old != nil {
		v.swaps = old.swaps + 1
	}
	v.loadDur = time.Since(start) // publishing takes microseconds more
	r.publish(func(g *registry) {
		g.mods[name] = v
		delete(g.refused, name)
	})
	if old != nil {
		r.swaps.Add(1)
		old.retire() // closes its instances once its commands in flight end
		r.log.Info("module swapped", "module", name, "path", path, "version", v.manifest.Version,
			"old_version", old.manifest.Version, "took", v.loadDur)
	} else {
		r.loads.Add(1)
		r.log.Info("module loaded", "module", name, "path", path, "version", v.manifest.Version,
			"commands", len(v.cmds), "took", v.loadDur)
	}
	return v.info(), nil
}

// prepare compiles and checks a module and returns it ready to publish.
// Called with r.mu held.
func (r *Runtime) prepare(ctx context.Context, name, path string, bin []byte, sum [32]byte) (*version, error) {
	if name == "" {
		return nil, errors.New("empty module name")
	}
	if bin == nil {
		var err error
		if bin, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		sum = sha256.Sum256(bin)
	}
	ce, err := r.compile(ctx, bin, sum)
	if err != nil {
		return nil, err
	}
	compiled := ce.cm
	v := &version{rt: r, name: name, path: path, centry: ce, compiled: compiled, loadedAt: time.Now(), ctr: r.counters(name)}
	ok := false
	defer func() {
		if !ok {
			v.close()
		}
	}()
	if err := checkExports(compiled); err != nil {
		return nil, err
	}
	// respike_batch is optional: a module without it runs one command
	// per call.
	_, v.batch = compiled.ExportedFunctions()["respike_batch"]
	v.slots = make([]*slot, r.nInst)
	for i := range v.slots {
		v.slots[i] = &slot{v: v, wake: make(chan struct{}, 1)}
	}
	v.wake = make(chan struct{}, len(v.slots))
	v.refs.Store(1)          // the registry's reference
	in := r.takeSpare(ce, v) // started by Precompile, if it ran
	if in == nil {
		if in, err = v.instantiate(ctx); err != nil {
			return nil, err
		}
	}
	v.slots[0].inst = in
	abi, err := in.invoke(in.fABI, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("respike_abi: %s", failure(err))
	}
	if uint32(abi) < codec.MinABIVersion || uint32(abi) > codec.ABIVersion {
		return nil, fmt.Errorf("ABI version %d, this host speaks %d to %d: rebuild the module with a matching guest SDK",
			uint32(abi), codec.MinABIVersion, codec.ABIVersion)
	}
	v.abi = uint32(abi)
	packed, err := in.invoke(in.fManifest, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("respike_manifest: %s", failure(err))
	}
	raw, okRead := in.mem.Read(uint32(packed>>32), uint32(packed))
	if !okRead {
		return nil, errors.New("respike_manifest points outside guest memory")
	}
	man, err := codec.DecodeManifest(raw) // copies what it keeps
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	v.manifest = man
	if err := r.validate(name, &man); err != nil {
		return nil, err
	}
	v.cmds = make([]*Command, len(man.Commands))
	for i, ci := range man.Commands {
		v.cmds[i] = &Command{Info: ci, Module: name, impl: v, index: uint32(i), writes: slices.Contains(ci.Flags, "write")}
	}
	v.deadlineErr = errorReply(name, fmt.Sprintf("command exceeded the %s deadline", r.deadline))
	ok = true
	return v, nil
}

// requiredExports are the guest's ABI exports and their signatures.
var requiredExports = []struct {
	name          string
	params, reslt []api.ValueType
}{
	{"respike_abi", nil, []api.ValueType{api.ValueTypeI32}},
	{"respike_manifest", nil, []api.ValueType{api.ValueTypeI64}},
	{"respike_buf", []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	{"respike_start", []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
	{"respike_resume", []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
	{"respike_cancel", []api.ValueType{api.ValueTypeI32}, nil},
}

func checkExports(m wazero.CompiledModule) error {
	exp := m.ExportedFunctions()
	for _, want := range requiredExports {
		def, ok := exp[want.name]
		if !ok {
			return fmt.Errorf("missing export %s: is it built with the respike guest SDK (-buildmode=c-shared)?", want.name)
		}
		if !slices.Equal(def.ParamTypes(), want.params) || !slices.Equal(def.ResultTypes(), want.reslt) {
			return fmt.Errorf("export %s has the wrong signature", want.name)
		}
	}
	if def, ok := exp["respike_batch"]; ok &&
		(!slices.Equal(def.ParamTypes(), []api.ValueType{api.ValueTypeI32}) || !slices.Equal(def.ResultTypes(), []api.ValueType{api.ValueTypeI64})) {
		return errors.New("export respike_batch has the wrong signature")
	}
	if mem := m.ExportedMemories(); len(mem) == 0 {
		return errors.New("exports no memory")
	}
	return nil
}

// validate checks a manifest against the host's names and the other
// modules' commands. Called with r.mu held.
func (r *Runtime) validate(module string, m *codec.Manifest) error {
	g := r.reg.Load()
	seen := make(map[string]bool, len(m.Commands))
	if len(m.Commands) == 0 {
		return errors.New("manifest declares no command")
	}
	for _, c := range m.Commands {
		if err := checkName(c.Name); err != nil {
			return err
		}
		if seen[c.Name] {
			return fmt.Errorf("command %q declared twice", c.Name)
		}
		seen[c.Name] = true
		if c.Arity == 0 {
			return fmt.Errorf("command %q has arity 0 (n: exactly n arguments, -n: at least n, counting the name)", c.Name)
		}
		if r.cfg.Reserved != nil && r.cfg.Reserved(c.Name) {
			return fmt.Errorf("command %q is served by the proxy itself", c.Name)
		}
		if other, ok := g.cmds[c.Name]; ok && other.Module != module {
			return fmt.Errorf("command %q is already served by module %s", c.Name, other.Module)
		}
	}
	return nil
}

func checkName(name string) error {
	if name == "" {
		return errors.New("manifest has a command with an empty name")
	}
	if len(name) > maxNameLen {
		return fmt.Errorf("command name %.20q... is longer than %d bytes", name, maxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c <= ' ' || c >= 0x7f || c >= 'A' && c <= 'Z' {
			return fmt.Errorf("command name %q must be lower-case printable ASCII without spaces", name)
		}
	}
	return nil
}

// publish applies edit to a copy of the registry and stores it. Called with
// r.mu held.
func (r *Runtime) publish(edit func(g *registry)) {
	old := r.reg.Load()
	g := &registry{
		cmds:    make(map[string]*Command, len(old.cmds)),
		mods:    make(map[string]*version, len(old.mods)),
		refused: make(map[string]ModuleInfo, len(old.refused)),
	}
	for k, v := range old.mods {
		g.mods[k] = v
	}
	for k, v := range old.refused {
		g.refused[k] = v
	}
	edit(g)
	for _, v := range g.mods {
		for _, c := range v.cmds {
			g.cmds[c.Info.Name] = c
			g.sorted = append(g.sorted, c)
		}
	}
	slices.SortFunc(g.sorted, func(a, b *Command) int { return strings.Compare(a.Info.Name, b.Info.Name) })
	r.reg.Store(g)
}

// Unload removes a module and its commands; commands in flight finish.
func (r *Runtime) Unload(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.reg.Load()
	v := g.mods[name]
	_, refused := g.refused[name]
	if v == nil && !refused {
		return fmt.Errorf("module %s is not loaded", name)
	}
	r.publish(func(g *registry) {
		delete(g.mods, name)
		delete(g.refused, name)
	})
	if v != nil {
		r.unloads.Add(1)
		v.retire()
		r.log.Info("module unloaded", "module", name)
	}
	return nil
}

// clock is the monotonic time since the runtime was made, in nanoseconds.
func (r *Runtime) clock() int64 { return Clock() }

// clockEpoch is Clock's zero, shared by every runtime so that a caller
// can put the runtime's readings (Item.Ended) on its own clock.
var clockEpoch = time.Now()

// Clock is a monotonic clock: nanoseconds since Epoch.
func Clock() int64 { return int64(time.Since(clockEpoch)) }

// Epoch is when Clock reads 0.
func Epoch() time.Time { return clockEpoch }

// Lookup returns the command called name, matched case-insensitively, or nil.
// It takes no lock and does not allocate.
func (r *Runtime) Lookup(name []byte) *Command { return r.reg.Load().lookup(name) }

// lookup is the command called name in g, matched case-insensitively, or
// nil.
func (g *registry) lookup(name []byte) *Command {
	var buf [maxNameLen]byte
	if len(name) > len(buf) {
		return nil
	}
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return g.cmds[string(buf[:len(name)])]
}

// LookupCache remembers the answer of one lookup, for LookupCached: a
// connection mostly sends one command name after another.
type LookupCache struct {
	reg  *registry
	n    int
	name [16]byte
	cmd  *Command
}

// LookupCached is Lookup for a caller that keeps a LookupCache: the same
// name as the last time, while no module was loaded, swapped or unloaded
// since, is answered from lc without hashing it (~190 instructions of an
// unpipelined GET's host work; docs/performance.md, "Host CPU per
// unpipelined command"). Names longer than the cache holds are looked up
// each time. lc belongs to one goroutine.
func (r *Runtime) LookupCached(lc *LookupCache, name []byte) *Command {
	g := r.reg.Load()
	if g == lc.reg && len(name) == lc.n && string(name) == string(lc.name[:lc.n]) {
		return lc.cmd
	}
	cmd := g.lookup(name)
	if len(name) <= len(lc.name) {
		lc.reg, lc.n, lc.cmd = g, copy(lc.name[:], name), cmd
	}
	return cmd
}

// Commands returns every served command, sorted by name. The slice is shared:
// do not modify it.
func (r *Runtime) Commands() []*Command { return r.reg.Load().sorted }

// Modules describes the loaded modules and the refused ones, sorted by name.
func (r *Runtime) Modules() []ModuleInfo {
	g := r.reg.Load()
	out := make([]ModuleInfo, 0, len(g.mods)+len(g.refused))
	for name, v := range g.mods {
		if _, ok := g.refused[name]; !ok {
			out = append(out, v.info())
		}
	}
	for _, info := range g.refused {
		r.counters(info.Name).fill(&info)
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b ModuleInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Stats returns the runtime's load, swap and refusal counts.
func (r *Runtime) Stats() Stats {
	return Stats{
		Loads:     r.loads.Load(),
		Swaps:     r.swaps.Load(),
		Refusals:  r.refusals.Load(),
		Unloads:   r.unloads.Load(),
		Draining:  r.draining.Load(),
		Waits:     r.waits.Load(),
		Batches:   r.batches.Load(),
		Batched:   r.batched.Load(),
		GateWaits: r.gateWaits.Load(),
		Finals:    r.finals.Load(),
		Restarts:  r.restarts.Load(),
	}
}

// Close unloads every module and releases the runtime. Commands still in
// flight answer an error.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.stopping.Store(true)
	g := r.reg.Load()
	r.publish(func(g *registry) { clear(g.mods); clear(g.refused) })
	r.mu.Unlock()
	for _, v := range g.mods {
		v.unref()
	}
	r.closeCompiled()
	if r.reapDone != nil {
		close(r.reapDone)
		r.reapWG.Wait()
	}
	r.dog.stop()
	err := r.wrt.Close(ctx)
	if r.cache != nil {
		err = errors.Join(err, r.cache.Close(ctx))
	}
	return err
}

// errorReply formats an error reply naming the module.
func errorReply(module, reason string) []byte {
	b := append([]byte("-ERR module "), module...)
	b = append(b, ": "...)
	for i := 0; i < len(reason); i++ {
		c := reason[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, '\r', '\n')
}
