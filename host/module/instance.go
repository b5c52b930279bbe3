package module

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/respike/respike/guest-sdk/codec"
)

// version is one loaded file of a module. Commands hold it; a swap publishes
// a new version while commands in flight finish on the old one, whose
// instances close when its last command ends.
type version struct {
	rt          *Runtime
	name, path  string
	manifest    codec.Manifest
	cmds        []*Command
	loadedAt    time.Time
	loadDur     time.Duration // set before the version is published
	swaps       int64         // the module's swaps, this one included
	compiled    wazero.CompiledModule
	centry      *compiledEntry // holds compiled (compcache.go)
	deadlineErr []byte         // the reply of a command that exceeded the deadline
	batch       bool           // the module exports respike_batch
	abi         uint32         // the module's ABI version (respike_abi)
	ctr         *modCounters

	slots   []*slot
	waiters atomic.Int32 // goroutines waiting for any free slot
	// live counts the version's instances and memBytes their linear
	// memory as last seen when a call ended (reap.go).
	live     atomic.Int32
	memBytes atomic.Int64
	wake     chan struct{} // a slot was freed while someone waited

	// refs counts the registry's reference and the commands waiting on the
	// store (see Exec); the version closes when it drops to zero and can
	// never be revived.
	refs atomic.Int64
	// retired is set when the registry drops the version (swap or unload):
	// it counts in Stats.Draining until it closes.
	retired atomic.Bool
	// closing is set when the version starts closing; a command that gets
	// one of its slots afterwards runs on the module's current version.
	closing atomic.Bool
}

func (v *version) info() ModuleInfo {
	names := make([]string, len(v.cmds))
	for i, c := range v.cmds {
		names[i] = c.Info.Name
	}
	info := ModuleInfo{Name: v.name, Version: v.manifest.Version, Path: v.path, Commands: names,
		LoadedAt: v.loadedAt, LoadDuration: v.loadDur, Swaps: v.swaps,
		Instances: int(v.live.Load()), MemoryBytes: v.memBytes.Load()}
	v.ctr.fill(&info)
	return info
}

// modCounters are a module's counters across its versions.
type modCounters struct {
	traps, kills, guestNanos  atomic.Int64
	logged, logDropped        atomic.Int64
	idleReleases, memRecycles atomic.Int64

	// Suspect modules (suspect.go): the epoch after the last trap (0:
	// none), the epoch until which the module is suspect, and the turn
	// its commands take meanwhile.
	lastTrap, suspectUntil atomic.Uint64
	gate                   chan struct{}

	// The guest log's token bucket (guestlog.go).
	logMu     sync.Mutex
	logTokens float64
	logLast   time.Time
	logQuiet  int64 // lines dropped since the last line let through
}

func (m *modCounters) fill(info *ModuleInfo) {
	info.Traps, info.DeadlineKills = m.traps.Load(), m.kills.Load()
	info.GuestTime = time.Duration(m.guestNanos.Load())
	info.LogLines, info.LogDropped = m.logged.Load(), m.logDropped.Load()
	info.IdleReleases, info.MemoryRecycles = m.idleReleases.Load(), m.memRecycles.Load()
}

// counters returns the counters of the module name, creating them.
func (r *Runtime) counters(name string) *modCounters {
	c, _ := r.ctrs.LoadOrStore(name, &modCounters{gate: make(chan struct{}, suspectTurns())})
	return c.(*modCounters)
}

// retire drops the registry's reference of a version it no longer holds.
func (v *version) retire() {
	v.retired.Store(true)
	v.rt.draining.Add(1)
	v.unref()
}

// ref takes a reference unless the version has closed.
func (v *version) ref() bool {
	for {
		n := v.refs.Load()
		if n <= 0 {
			return false
		}
		if v.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (v *version) unref() {
	if v.refs.Add(-1) == 0 {
		v.close()
	}
}

// close closes the version's instances and compiled code.
func (v *version) close() {
	v.closing.Store(true) // before any slot is taken: see Exec
	if v.retired.Load() {
		v.rt.draining.Add(-1)
	}
	for _, s := range v.slots {
		s.mu.Lock()
		if s.inst != nil {
			s.inst.close()
			s.inst = nil
		}
		s.mu.Unlock()
	}
	v.rt.release(v.centry)
}

// slot is a place for one instance. Its mutex is held by the one goroutine
// calling into the instance; it is never held during store I/O.
type slot struct {
	v       *version
	mu      sync.Mutex
	inst    *instance     // guarded by mu; nil until created or after a failure
	call    *call         // guarded by mu; the call state of the command holding the slot
	waiters atomic.Int32  // goroutines waiting for this very slot
	wake    chan struct{} // cap 1: the slot was freed while someone waited

	cmu     sync.Mutex
	cancels []cancelReq // continuations to cancel when the slot is next free
	ncancel atomic.Int32
}

// cancelReq names a continuation of an instance generation.
type cancelReq struct {
	gen    uint64
	handle uint32
}

// acquire locks a free slot: round robin try-lock first, then a wait for the
// first slot freed.
func (v *version) acquire(ctx context.Context, hint uint32) (*slot, error) {
	n := uint32(len(v.slots))
	// The first slot tried is the hint's (the client's ID): a connection's
	// commands keep to one instance, whose memory stays in that CPU's
	// caches, and connections spread over the instances. Not a shared
	// round-robin counter: every command would update its cache line from
	// every core.
	start := hint
	// A free slot with an instance first: one without (released idle, or
	// never used) costs its command the start of an instance, worth it
	// only when every warm one is busy.
	var cold *slot
	for i := range n {
		if s := v.slots[(start+i)%n]; s.mu.TryLock() {
			if s.inst != nil {
				if cold != nil {
					cold.unlock()
				}
				return s, nil
			}
			if cold == nil {
				cold = s
			} else {
				s.unlock()
			}
		}
	}
	if cold != nil {
		return cold, nil
	}
	// Register before the second scan: a slot freed after it sees the
	// waiter and leaves a token in wake.
	v.waiters.Add(1)
	defer v.waiters.Add(-1)
	for {
		for i := range n {
			if s := v.slots[(start+i)%n]; s.mu.TryLock() {
				return s, nil
			}
		}
		select {
		case <-v.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// lock locks this slot, waiting while another command uses it.
func (s *slot) lock(ctx context.Context) error {
	if s.mu.TryLock() {
		return nil
	}
	s.waiters.Add(1)
	defer s.waiters.Add(-1)
	for {
		if s.mu.TryLock() {
			return nil
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// unlock frees the slot and wakes one waiter of each kind. A waiter that
// loses the race for the slot to another goroutine is woken again when that
// one unlocks, so no wake-up is lost.
func (s *slot) unlock() {
	s.settle()
	s.mu.Unlock()
	if s.waiters.Load() > 0 {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
	if v := s.v; v.waiters.Load() > 0 {
		select {
		case v.wake <- struct{}{}:
		default:
		}
	}
}

// ready returns the slot's instance, creating it if needed, after running the
// cancellations queued for it. Called with s.mu held; on error the slot has
// no instance.
func (s *slot) ready() (*instance, error) {
	if s.ncancel.Load() > 0 {
		s.drainCancels()
	}
	if s.inst == nil {
		in, err := s.v.instantiate(context.Background())
		if err != nil {
			s.v.rt.log.Error("module instance failed to start", "module", s.v.name, "err", err)
			return nil, err
		}
		s.inst = in
	}
	return s.inst, nil
}

// cancelLater cancels a continuation now if the slot is free, else when it
// is next locked.
func (s *slot) cancelLater(gen uint64, handle uint32) {
	s.cmu.Lock()
	s.cancels = append(s.cancels, cancelReq{gen, handle})
	s.cmu.Unlock()
	s.ncancel.Add(1)
	// If the slot is free now, nobody may lock it for a while: cancel at once.
	if s.mu.TryLock() {
		s.drainCancels()
		s.unlock()
	}
}

// drainCancels runs the queued cancellations. Called with s.mu held.
func (s *slot) drainCancels() {
	s.cmu.Lock()
	list := s.cancels
	s.cancels = nil
	s.ncancel.Store(0)
	s.cmu.Unlock()
	for _, c := range list {
		in := s.inst
		if in == nil || in.gen != c.gen {
			continue // the instance died, and the continuation with it
		}
		in.pending--
		if _, err := in.invoke(in.fCancel, uint64(c.handle), 0); err != nil {
			s.discard(failure(err))
		}
	}
}

// discard closes the slot's instance after a trap or a timeout; the next
// command on the slot gets a fresh one. Called with s.mu held.
func (s *slot) discard(reason string) {
	if s.inst == nil {
		return
	}
	s.v.rt.log.Warn("module instance discarded", "module", s.v.name, "generation", s.inst.gen, "reason", reason)
	if reason == reasonDeadline {
		s.v.ctr.kills.Add(1)
	} else {
		s.v.ctr.traps.Add(1)
	}
	s.v.rt.misbehaved(s.v.ctr, reason == reasonDeadline)
	s.drop()
}

// instance is one instantiation of a module. It is used by one goroutine at
// a time: the holder of its slot's mutex.
type instance struct {
	v   *version
	gen uint64 // unique per instance, so stale continuations are detected
	mod api.Module
	mem api.Memory

	fABI, fManifest, fBuf, fStart, fResume, fCancel api.Function
	fBatch                                          api.Function // nil: the module runs one command per call

	mark uint64 // the state the current call stored (hostReply renews it)

	// Guarded by the slot's mutex (reap.go): the continuations of commands
	// waiting on the store, when the last call began, and the linear
	// memory's size as last accounted.
	pending int
	used    int64 // Clock when the last call began
	ended   int64 // Clock when the last call returned
	memSeen uint32

	ctx   context.Context // carries the instance to host functions
	stack [2]uint64

	// state is 0 while idle and the watchdog epoch + 1 while a call runs; the
	// watchdog swaps in timedOut to claim a call that overran the deadline.
	state atomic.Uint64

	bufPtr, bufCap uint32 // the guest's message buffer, as last returned by respike_buf

	cur    *call // the command in the current guest call, for exec
	view   memView
	parked *call // holds an inline response too large for the guest's buffer, for take

	stderr tailWriter
}

type instKey struct{}

// instCtx is the context of calls into an instance: host functions find
// their instance with a type assertion rather than a Value lookup, on the
// path of every store request and reply.
type instCtx struct {
	context.Context
	in *instance
}

func (c *instCtx) Value(key any) any {
	if _, ok := key.(instKey); ok {
		return c.in
	}
	return c.Context.Value(key)
}

// instanceOf returns the instance a host function is called from, or nil.
func instanceOf(ctx context.Context) *instance {
	if c, ok := ctx.(*instCtx); ok {
		return c.in
	}
	in, _ := ctx.Value(instKey{}).(*instance)
	return in
}

// instantiate creates an instance. _initialize runs under the watchdog too,
// with ten times the deadline, so a module that loops while it initialises
// is refused rather than hanging.
func (v *version) instantiate(ctx context.Context) (*instance, error) {
	r := v.rt
	in := &instance{v: v, gen: r.gen.Add(1)}
	in.ctx = &instCtx{Context: context.Background(), in: in}
	mark := r.dog.epoch.Load() + 1 + 9*r.dog.limit
	in.state.Store(mark)
	r.dog.add(in)
	mod, err := r.wrt.InstantiateModule(context.WithValue(ctx, instKey{}, in), v.compiled, r.modCfg.WithStderr(&in.stderr))
	if !in.state.CompareAndSwap(mark, 0) {
		err = errors.New("initialisation exceeded ten times the deadline")
	}
	if err != nil {
		r.dog.remove(in)
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		return nil, fmt.Errorf("instantiate: %s", in.reason(err))
	}
	in.mod = mod
	in.mem = mod.Memory()
	in.fABI = mod.ExportedFunction("respike_abi")
	in.fManifest = mod.ExportedFunction("respike_manifest")
	in.fBuf = mod.ExportedFunction("respike_buf")
	in.fStart = mod.ExportedFunction("respike_start")
	in.fResume = mod.ExportedFunction("respike_resume")
	in.fCancel = mod.ExportedFunction("respike_cancel")
	if v.batch {
		in.fBatch = mod.ExportedFunction("respike_batch")
	}
	in.used = r.clock()
	in.memSeen = in.mem.Size()
	v.live.Add(1)
	v.memBytes.Add(int64(in.memSeen))
	return in, nil
}

func (in *instance) close() {
	in.v.live.Add(-1)
	in.v.memBytes.Add(-int64(in.memSeen))
	in.v.rt.dog.remove(in)
	_ = in.mod.Close(context.Background())
}

// errDeadline reports a call the watchdog stopped; errStopped one that
// Close stopped.
var (
	errDeadline = errors.New("deadline exceeded")
	errStopped  = errors.New("module runtime closed")
)

// invoke calls f with up to two arguments and returns its first result.
// Any error means the instance is unusable.
func (in *instance) invoke(f api.Function, a, b uint64) (uint64, error) {
	in.stack[0], in.stack[1] = a, b
	in.mark = in.v.rt.dog.epoch.Load() + 1
	in.state.Store(in.mark)
	in.stderr.reset()
	// Monotonic clock reads only: time.Now would read the wall clock too,
	// a third clock read per command for nothing.
	began := Clock()
	in.used = began
	err := f.CallWithStack(in.ctx, in.stack[:])
	// The read that ends the call is also the end of a command that
	// replied in it (pend.ended, Item.Ended): the server takes it
	// rather than reading the clock again.
	in.ended = Clock()
	in.v.ctr.guestNanos.Add(in.ended - began)
	in.parked = nil
	if !in.state.CompareAndSwap(in.mark, 0) {
		return 0, errDeadline
	}
	if err != nil {
		return 0, err
	}
	return in.stack[0], nil
}

// Read reads guest memory for codec.ReadRequest.
func (in *instance) Read(addr, n uint64) ([]byte, bool) {
	if addr > math.MaxUint32 || n > math.MaxUint32 {
		return nil, false
	}
	return in.mem.Read(uint32(addr), uint32(n))
}

// memView reads guest memory through one view of all of it, for hostExec:
// while a host function runs the guest does not, so its memory can neither
// grow nor move, and each read is a bounds check and a slice, where
// api.Memory.Read through instance.Read is two interface calls; a GET's
// request takes four to six reads (docs/performance.md, "Host CPU per
// unpipelined command"). Empty outside hostExec.
type memView struct{ b []byte }

// Read returns the n bytes at addr, as instance.Read does.
func (v *memView) Read(addr, n uint64) ([]byte, bool) {
	if addr > uint64(len(v.b)) || n > uint64(len(v.b))-addr {
		return nil, false
	}
	return v.b[addr : addr+n : addr+n], true
}

func (v *memView) clear() { v.b = nil }

// grow makes the guest's message buffer hold at least n bytes.
func (in *instance) grow(n uint32) error {
	// Ask for some headroom so that the next messages fit without a call.
	want := max(n, 4096)
	ptr, err := in.invoke(in.fBuf, uint64(want), 0)
	if err != nil {
		return err
	}
	if uint32(ptr)%8 != 0 {
		return errors.New("respike_buf returned a misaligned buffer")
	}
	in.bufPtr, in.bufCap = uint32(ptr), want
	return nil
}

// Messages are laid out directly in the guest's message buffer: the
// layout functions append to an empty slice over guest memory, which has
// the buffer's capacity, so nothing is copied when the message fits. One
// that does not fit is appended elsewhere, and then the buffer grows and
// the message is laid out again.

// bufView returns the guest's message buffer as an empty slice with the
// buffer's capacity; nil when there is none yet. Valid until the next call
// into the instance (a guest's memory.grow moves it).
func (in *instance) bufView() []byte {
	if in.bufCap == 0 {
		return nil
	}
	b, ok := in.mem.Read(in.bufPtr, in.bufCap)
	if !ok {
		return nil
	}
	return b[:0:len(b)]
}

// inPlace reports whether lay was laid out in view, not moved by append.
func inPlace(lay, view []byte) bool {
	return cap(view) > 0 && len(lay) > 0 && unsafe.SliceData(lay) == unsafe.SliceData(view)
}

// layout lays a message out in the guest's message buffer with lay (which
// appends the message for a guest that sees it at the address given) and
// returns its length.
func (in *instance) layout(lay func(dst []byte, base uint64) []byte) (uint32, error) {
	view := in.bufView()
	msg := lay(view, uint64(in.bufPtr))
	if inPlace(msg, view) {
		return uint32(len(msg)), nil
	}
	if err := in.grow(uint32(len(msg))); err != nil {
		return 0, err
	}
	view = in.bufView()
	msg = lay(view, uint64(in.bufPtr))
	if !inPlace(msg, view) {
		return 0, errors.New("respike_buf returned a buffer outside guest memory")
	}
	return uint32(len(msg)), nil
}

// writeStart lays c's start message out in the guest's message buffer
// (codec.AppendStart) and returns its length.
func (in *instance) writeStart(c *call) (uint32, error) {
	return in.layout(func(dst []byte, base uint64) []byte { return codec.AppendStart(dst, base, c.start) })
}

// writeResponse lays c's response out in the guest's message buffer
// (codec.AppendResponse) and returns its length.
func (in *instance) writeResponse(c *call) (uint32, error) {
	return in.layout(func(dst []byte, base uint64) []byte { return codec.AppendResponse(dst, base, c.rq.Kind, &c.resp) })
}

// writeBatchFlags lays c's batch out in the guest's message buffer
// (codec.AppendBatchFlags) with flags in its header (codec.BatchFinals,
// for a module of ABI 8 or later; 0 otherwise) and returns its length.
func (in *instance) writeBatchFlags(c *call, flags uint32) (uint32, error) {
	starts := c.starts[:0]
	for i := range c.items {
		starts = append(starts, c.items[i].Start)
	}
	c.starts = starts
	n, err := in.layout(func(dst []byte, base uint64) []byte { return codec.AppendBatchFlags(dst, base, starts, flags) })
	clear(starts) // the arguments are the client's read buffer
	return n, err
}

// answer returns the guest memory view a packed ptr<<32|len designates. It
// is valid until the next call into the instance.
func (in *instance) answer(packed uint64) ([]byte, bool) {
	return in.mem.Read(uint32(packed>>32), uint32(packed))
}

// reason describes why a call into the instance failed, for the error
// reply: the trap or the exit code, with what the guest printed first during
// the call (the Go runtime prints "fatal error: ..." or "panic: ..." before
// it aborts or exits).
func (in *instance) reason(err error) string {
	line := in.stderr.firstLine()
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		msg := fmt.Sprintf("module exited with code %d", exit.ExitCode())
		if line != "" {
			msg += ": " + line
		}
		return msg
	}
	if line != "" {
		return line + " (" + failure(err) + ")"
	}
	return failure(err)
}

// failure is the gist of a wazero error: its first line (the rest is a
// stack trace) from "wasm error:" on.
func failure(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "wasm error:"); i >= 0 {
		s = s[i:]
	}
	s = strings.TrimSuffix(s, " (recovered by wazero)") // a host function's panic
	return strings.TrimSpace(s)
}

// tailWriter keeps the first bytes a guest writes to stderr during one call;
// the Go runtime's fatal error message comes first, its stack trace after.
// Only the goroutine calling into the instance touches it.
type tailWriter struct{ buf []byte }

const stderrKeep = 512

func (w *tailWriter) Write(p []byte) (int, error) {
	if room := stderrKeep - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (w *tailWriter) reset() { w.buf = w.buf[:0] }

// firstLine returns the Go runtime's "fatal error:" or "panic:" line if
// there is one, else the first line written.
func (w *tailWriter) firstLine() string {
	first := ""
	for line := range strings.Lines(string(w.buf)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") {
			return line
		}
		if first == "" {
			first = line
		}
	}
	return first
}
