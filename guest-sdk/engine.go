package sdk

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/internal/hook"
)

// The engine runs as Go-compiled WebAssembly on wazero, where every call,
// taken branch and loop iteration spills and reloads registers and goes
// through a jump table, and every memory access is bounds-checked: a few
// lines of Go cost tens of nanoseconds. The path every command takes
// (start, lookup, steps, request encoding, response decoding) is written to
// make few calls and branches and no allocation; cold paths live in
// functions of their own. Measure changes with the host/module benchmarks
// (BenchmarkExecStrings, BenchmarkDeadlineMechanism/none/echo).

// engine is the module's side of the ABI: the registry filled by init
// functions and the commands in flight. A wasm module is a process of its
// own, so the engine is package state, as a main package's would be.
type engine struct {
	commands map[string]Step // by lower-case name; registration only
	byIndex  []Step          // in manifest order, for codec.Start.Cmd
	table    [cmdBuckets][]cmdEntry
	long     []cmdEntry // names longer than 16 bytes, compared byte by byte
	manifest codec.Manifest
	manBuf   []byte

	ctxs []*Ctx   // by handle
	free []uint32 // handles of idle Ctxs
	// untrimmed counts releases since a Ctx's buffers were last checked.
	untrimmed int

	in  []byte // host→guest message buffer (respike_buf)
	dec codec.Decoder

	// inline stands for the host's exec in native tests (sdktest): it runs
	// a request at once, or reports false when the host will answer
	// through resume instead. In wasm, execInline calls the host directly.
	inline func(req []byte) ([]byte, bool)
	// reply stands for the host's reply in native tests: it receives each
	// reply of a batch.
	reply func(resp []byte)
	// log stands for the host's log in native tests.
	log func(level int32, msg string)
}

var eng = engine{
	commands: map[string]Step{},
	manifest: codec.Manifest{Module: "module", Version: "0"},
}

// maxKeep is the buffer capacity a Ctx keeps between commands; larger
// buffers are dropped so one huge value does not pin guest memory.
const maxKeep = 64 << 10

func init() {
	hook.Start = eng.start
	hook.Resume = eng.resume
	hook.Cancel = eng.cancel
	hook.Manifest = eng.manifestBytes
	hook.SetInline = func(f func([]byte) ([]byte, bool)) { eng.inline = f }
	hook.Batch = eng.batch
	hook.SetReply = func(f func([]byte)) { eng.reply = f }
	hook.SetLog = func(f func(int32, string)) { eng.log = f }
}

func (e *engine) manifestBytes() []byte {
	if e.manBuf == nil {
		e.manBuf = codec.AppendManifest(nil, &e.manifest)
	}
	return e.manBuf
}

// buffer returns the host→guest buffer with room for n bytes.
func (e *engine) buffer(n int) []byte {
	if cap(e.in) < n {
		e.in = make([]byte, n)
	}
	return e.in[:n]
}

func (e *engine) acquire() *Ctx {
	if n := len(e.free); n > 0 {
		h := e.free[n-1]
		e.free = e.free[:n-1]
		return e.ctxs[h]
	}
	return e.newCtx()
}

func (e *engine) newCtx() *Ctx {
	c := &Ctx{handle: uint32(len(e.ctxs))}
	c.res = &c.noRes
	c.st = &c.ownSt
	e.ctxs = append(e.ctxs, c)
	return c
}

func (e *engine) release(c *Ctx) {
	c.next = nil
	c.pending, c.final = false, nil
	c.blocked, c.blockOn = false, nil
	c.res = &c.noRes // let go of the host's buffers
	c.ownSt.Args = nil
	c.vals = c.vals[:0]
	// Checking every buffer's size costs as much as the rest of release
	// (six comparisons and a loop over its calls), so a Ctx is checked
	// when it waited (it may then sit idle under the others) and otherwise
	// every trimEvery releases: the Ctx released last is the next one
	// acquired, so one that ran a big command is checked within trimEvery
	// commands. (Wasm memory never shrinks: trimming only lets the guest's
	// allocator reuse it, and a few commands later does as well.)
	if e.untrimmed++; e.untrimmed >= trimEvery || c.st == &c.ownSt {
		e.untrimmed = 0
		c.trimIfBig()
	}
	c.st = &c.ownSt
	e.free = append(e.free, c.handle)
}

// trimIfBig drops c's buffers if a large command grew any of them.
func (c *Ctx) trimIfBig() {
	if cap(c.argBuf)|cap(c.B)|cap(c.reqBuf) > maxKeep || cap(c.req.Calls)|cap(c.argHdrs) > 64 || cap(c.vals) > 1024 || c.bigCalls() {
		c.trim()
	}
}

// trimEvery is how many releases may pass between two checks of a Ctx's
// buffers (release).
const trimEvery = 16

// bigCalls reports whether a call kept for reuse holds encoded ops larger
// than maxKeep (a big value written).
func (c *Ctx) bigCalls() bool {
	calls := c.req.Calls[:cap(c.req.Calls)]
	for i := range calls {
		if calls[i].EncodedCap() > maxKeep {
			return true
		}
	}
	return false
}

// trim drops the buffers a large command grew.
func (c *Ctx) trim() {
	if cap(c.argBuf) > maxKeep {
		c.argBuf = nil
	}
	if cap(c.B) > maxKeep {
		c.B = nil
	}
	if cap(c.reqBuf) > maxKeep {
		c.reqBuf = nil
	}
	if cap(c.req.Calls) > 64 || c.bigCalls() {
		c.req.Calls = nil
	}
	if cap(c.argHdrs) > 64 {
		c.argHdrs = nil
	}
	if cap(c.vals) > 1024 {
		c.vals = nil
	}
}

// start runs a new command from a Start message laid out in msg (the
// message buffer) and returns the guest's answer (status byte first). The
// answer stays valid until the next call.
//
// It is the path of every command that arrives alone, so it does by hand,
// in one function, what begin, drive and release do: in Go's WebAssembly a
// call costs ~100-200 instructions (the prologue's stack check, the
// resumption br_table, the host's loop fuel, arguments through memory):
// doing without those calls (and execInline's, in run) saved ~950 of an
// unpipelined GET's 11,100 instructions (docs/performance.md, "The fixed
// cost of a command").
func (e *engine) start(msg []byte) (out []byte) {
	st := codec.StartAt(msg)
	if st == nil || len(st.Args) == 0 {
		return doneError("ERR respike: malformed start message")
	}
	c := e.acquire()
	// begin's work (runBatch's commands call begin).
	c.prepare(st)
	if i := int(st.Cmd) - 1; uint(i) < uint(len(e.byIndex)) {
		c.next = e.byIndex[i]
	} else if c.next = e.lookup(st.Args[0]); c.next == nil {
		return e.refuse(c, "")
	}
	// drive's work: a panic in a step is the command's error reply. The
	// deferred function calls recover only when run did not return (see
	// drive).
	returned := false
	defer func() {
		if !returned {
			if r := recover(); r != nil {
				out = e.panicked(c, r)
			}
		}
	}()
	out = e.run(c)
	switch out[0] {
	case codec.StatusPending:
	case codec.StatusDone:
		// release's work for a command that replied within this call:
		// it never waited (its arguments are the message's, not owned),
		// never blocked and has no request pending.
		c.next, c.final = nil, nil
		c.res = &c.noRes
		c.vals = c.vals[:0]
		if e.untrimmed++; e.untrimmed >= trimEvery {
			e.untrimmed = 0
			c.trimIfBig()
		}
		e.free = append(e.free, c.handle)
	default:
		e.release(c) // blocked, or a final answer
	}
	returned = true
	return out
}

// begin prepares c to run the command st names; false when there is no
// such command (c is then released and the error is the answer). start
// does the same by hand.
func (e *engine) begin(c *Ctx, st *codec.Start) bool {
	c.prepare(st)
	if i := int(st.Cmd) - 1; uint(i) < uint(len(e.byIndex)) {
		c.next = e.byIndex[i]
	} else if c.next = e.lookup(st.Args[0]); c.next == nil {
		return false
	}
	return true
}

// prepare readies c to run a command of st: its arguments, N zeroed, B
// empty, the reply started. Small enough to be inlined (begin, start).
func (c *Ctx) prepare(st *codec.Start) {
	c.st = st
	// Element by element: [8]int64{} is a 64-byte zeroing, which Go's
	// WebAssembly does with memory.fill, and wazero's memory.fill is a
	// doubling loop of six calls to memmove (~300 instructions).
	c.N[0], c.N[1], c.N[2], c.N[3], c.N[4], c.N[5], c.N[6], c.N[7] = 0, 0, 0, 0, 0, 0, 0, 0
	c.B = c.B[:0]
	c.w.Proto = int(st.Proto)
	c.w.Buf = append(c.w.Buf[:0], codec.StatusDone)
}

// batch runs the commands of a batch message (codec.AppendBatch) in order.
// Each command's reply goes to the host as soon as it is done (replyHost),
// so a trap or a deadline in a later command loses nothing before it. It
// stops at a command that waits on the store and returns that command's
// Pending answer (the host resumes it, then sends the rest of the batch
// again); nil when every command replied.
//
// One deferred recover serves the whole batch: a command that panics
// replies its error and the batch goes on after it.
func (e *engine) batch(msg []byte) []byte {
	n := codec.BatchLen(msg)
	if n == 0 {
		replyHost(doneError("ERR respike: malformed batch message")[1:])
		return nil
	}
	finals := codec.BatchFlags(msg)&codec.BatchFinals != 0
	for i := 0; i < n; {
		var ans []byte
		if i, ans = e.runBatch(msg, i, n, finals); ans != nil {
			return ans
		}
	}
	return nil
}

// runBatch runs the batch's commands from i until one waits, one panics,
// or the batch ends, and returns the index of the next command to run and
// the answer of the one that waits. Commands that reply at once share one
// Ctx: it is released (and its buffers trimmed) once, at the end. With
// finals (codec.BatchFinals), a command that ends with a final answer
// hands it to the host as its reply and the batch goes on.
func (e *engine) runBatch(msg []byte, i, n int, finals bool) (next int, ans []byte) {
	c := e.acquire()
	defer func() {
		if r := recover(); r != nil {
			replyHost(e.panicked(c, r)[1:]) // releases c
			next, ans = i+1, nil
		}
	}()
	for ; i < n; i++ {
		st := codec.BatchStart(msg, i)
		if st == nil || len(st.Args) == 0 {
			replyHost(doneError("ERR respike: malformed start message")[1:])
			continue
		}
		if !e.begin(c, st) {
			replyHost(doneError(unknownCommand(st))[1:])
			continue
		}
		out := e.run(c)
		if out[0] == codec.StatusFinal && finals {
			// The host reads the request and the recipe during this
			// call, before the next command reuses c's buffers.
			replyHost(out)
			c.res = &c.noRes
			c.vals = c.vals[:0]
			c.pending, c.final = false, nil
			continue
		}
		if out[0] == codec.StatusBlock || out[0] == codec.StatusFinal {
			// The command blocks, or ends with a final answer: it has
			// ended here, and so has the batch, since the commands after
			// it wait for its reply.
			e.release(c)
			return i, out
		}
		if out[0] != codec.StatusDone {
			return i, out // c waits; the next command gets a Ctx of its own
		}
		replyHost(out[1:])
		// What release resets that begin does not.
		c.res = &c.noRes
		c.vals = c.vals[:0]
	}
	e.release(c)
	return n, nil
}

// own copies the start message out of the message buffer, which the host
// overwrites while this command waits: the arguments must live for the
// whole command.
func (c *Ctx) own() {
	if c.st == &c.ownSt {
		return
	}
	args := c.st.Args
	n := 0
	for _, a := range args {
		n += len(a)
	}
	if cap(c.argBuf) < n {
		c.argBuf = make([]byte, 0, 2*n)
	}
	buf := c.argBuf[:0]
	hdrs := c.argHdrs[:0]
	for _, a := range args {
		off := len(buf)
		buf = append(buf, a...)
		hdrs = append(hdrs, buf[off:len(buf):len(buf)])
	}
	c.argBuf, c.argHdrs = buf, hdrs
	c.ownSt = codec.Start{Proto: c.st.Proto, Restart: c.st.Restart, DB: c.st.DB, Cmd: c.st.Cmd, ClientID: c.st.ClientID, Now: c.st.Now, Args: hdrs}
	c.st = &c.ownSt
}

// refuse ends a command that cannot start with an error reply: msg, or
// the unknown command error when msg is empty.
func (e *engine) refuse(c *Ctx, msg string) []byte {
	if msg == "" {
		msg = unknownCommand(c.st)
	}
	e.release(c)
	return doneError(msg)
}

// unknownCommand is the error for a command this module does not have.
func unknownCommand(st *codec.Start) string {
	return "ERR unknown command '" + string(st.Args[0]) + "', with args beginning with: "
}

// resume continues the command with handle h with an encoded Response.
func (e *engine) resume(h uint32, msg []byte) []byte {
	if int(h) >= len(e.ctxs) || e.ctxs[h].next == nil {
		return doneError("ERR respike: resume of an unknown command")
	}
	c := e.ctxs[h]
	if !e.deliver(c, msg) {
		return e.finish(c)
	}
	return e.drive(c)
}

// cancel drops the command with handle h (its client went away or the host
// gave up on it).
func (e *engine) cancel(h uint32) {
	if int(h) < len(e.ctxs) && e.ctxs[h].next != nil {
		e.release(e.ctxs[h])
	}
}

// deliver decodes a response into c; on a failed request it writes the
// error reply and reports false.
//
// The host laid the response out in msg as this module's own Go values
// (codec.AppendResponse): delivering it is taking its address. msg stays
// untouched until the step that reads it returns.
func (e *engine) deliver(c *Ctx, msg []byte) bool {
	c.pending = false
	c.vals = c.vals[:0]
	if r := codec.ResponseAt(msg); r != nil && r.Code == codec.OK {
		c.res = r
		return true
	}
	c.failedResponse(msg)
	return false
}

// failedResponse takes a response that reports a failed request, or a
// malformed one, and returns the error reply it writes.
func (c *Ctx) failedResponse(msg []byte) []byte {
	c.res = codec.ResponseAt(msg)
	c.requestFailed()
	return c.w.Buf
}

// requestFailed replaces the reply with the error of a request that failed
// as a whole, or whose response was malformed.
func (c *Ctx) requestFailed() {
	c.resetReply()
	if c.res == nil {
		c.res = &c.noRes
		c.w.Error("ERR respike: malformed store response")
		return
	}
	c.w.Error(codec.RequestErrorText(c.res.Code, c.res.Msg))
}

func (c *Ctx) resetReply() { c.w.Buf = append(c.w.Buf[:0], codec.StatusDone) }

// drive runs steps until the command replies or waits on the host, and
// turns a panic in a step into an error reply: one deferred recover per
// guest call, not one per step.
//
// The deferred function calls recover only when run did not return: a call
// of runtime.gorecover and its checks cost ~120 instructions of wasm per
// command (docs/performance.md), and a step that returns has not panicked.
func (e *engine) drive(c *Ctx) (out []byte) {
	returned := false
	defer func() {
		if !returned {
			if r := recover(); r != nil {
				out = e.panicked(c, r)
			}
		}
	}()
	if out = e.run(c); out[0] != codec.StatusPending {
		e.release(c) // replied, blocked or final: the command is over here
	}
	returned = true
	return out
}

// run runs steps until the command replies (the answer is c's reply, and
// the caller releases c) or waits on the host; the caller recovers panics.
func (e *engine) run(c *Ctx) []byte {
	for {
		// c.next is not cleared: a step that replies leaves it set
		// until the command is released, and one that makes a request
		// sets it (submit).
		step := c.next
		c.req.Kind = 0
		c.req.OtherDB, c.req.DB = false, 0
		c.req.Calls = c.req.Calls[:0]
		c.final = nil
		step(c)
		if !c.pending {
			if c.blocked {
				return c.blockAnswer()
			}
			if len(c.w.Buf) == 1 {
				c.w.Error("ERR respike: command wrote no reply")
			}
			return c.w.Buf
		}
		// execInline, by hand (it is a call of ~240 instructions
		// otherwise): n > 0 is an inline response of n bytes in
		// inlineBuf; the rare rest is takeInline's.
		var res []byte
		ok := true
		if n := execRequest(c); n > 0 {
			res = inlineBuf[:n]
		} else {
			res, ok = takeInline(n)
		}
		if !ok {
			if c.final != nil {
				// The host answers from the store's result by the
				// recipe: the command ends here (the caller releases c;
				// the answer's request stays intact until the host has
				// read it, before its next call).
				return c.finalAnswer()
			}
			c.own()
			return c.pendingAnswer()
		}
		// deliver, by hand: a call costs ~100 instructions of wasm, and
		// this is the path of every command that reads the store
		// (docs/performance.md).
		c.pending = false
		c.vals = c.vals[:0]
		if r := codec.ResponseAt(res); r != nil && r.Code == codec.OK {
			c.res = r
			continue
		}
		return c.failedResponse(res)
	}
}

// blockAnswer is the answer of a command that called Block: the keys, the
// timeout and the reply written before Block (codec.AppendBlock). It is
// built in reqBuf, which the Ctx does not touch again before the host has
// read the answer.
func (c *Ctx) blockAnswer() []byte {
	c.reqBuf = codec.AppendBlock(c.reqBuf[:0], int64(c.blockFor), c.blockOn, c.w.Buf[1:])
	return c.reqBuf
}

// panicked ends a command whose step panicked with an error reply.
func (e *engine) panicked(c *Ctx, r any) []byte {
	c.resetReply()
	c.pending, c.blocked, c.final = false, false, nil
	c.w.Error("ERR module panic: " + panicText(r))
	if debugPanics {
		// runtime.Stack, not runtime/debug: that imports fmt and os.
		buf := make([]byte, 64<<10)
		println(string(buf[:runtime.Stack(buf, false)]))
	}
	return e.finish(c)
}

// finish ends the command and returns its reply. The Ctx's reply buffer is
// not reused before the host has read it: the host reads the answer before
// its next call into this instance.
func (e *engine) finish(c *Ctx) []byte {
	out := c.w.Buf
	e.release(c)
	return out
}

// debugPanics prints a stack trace of recovered panics to stderr.
const debugPanics = false

var errBuf []byte

// doneError returns a done answer holding an error reply.
func doneError(msg string) []byte {
	errBuf = append(errBuf[:0], codec.StatusDone, '-')
	errBuf = append(errBuf, msg...)
	errBuf = append(errBuf, '\r', '\n')
	return errBuf
}

// panicText is a recovered panic value as fmt's %v would print it, for the
// values panics carry: errors (runtime errors among them), strings,
// Stringers, numbers and booleans. The SDK does not import fmt, whose
// reflection and tables were a quarter of every module's size and of its
// load time (docs/RATIONALE.md); a value of another type is named by its
// kind only.
func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case string:
		return v
	case interface{ String() string }:
		return v.String()
	case []byte:
		return string(v)
	case bool:
		return strconv.FormatBool(v)
	case int:
		return strconv.Itoa(v)
	case int8:
		return strconv.FormatInt(int64(v), 10)
	case int16:
		return strconv.FormatInt(int64(v), 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case uint8:
		return strconv.FormatUint(uint64(v), 10)
	case uint16:
		return strconv.FormatUint(uint64(v), 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case uintptr:
		return strconv.FormatUint(uint64(v), 10)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case nil:
		return "<nil>"
	}
	return "a value of a type the SDK does not print"
}

// Command lookup. A map would hash the name in software and a byte loop
// would take a branch per byte; instead a name of up to 16 bytes is read as
// two 64-bit words, lower-cased eight bytes at a time, and found in a small
// hash table by comparing words.

// cmdBuckets is the size of the command table, a power of two.
const cmdBuckets = 64

// cmdEntry is a command in the lookup table: its name and, for a name of up
// to 16 bytes, the name's folded words and length.
type cmdEntry struct {
	w0, w1 uint64
	n      int
	name   string
	run    Step
}

func (e *engine) addCommand(name string, run Step) {
	if uint(len(name)-1) >= 16 {
		e.long = append(e.long, cmdEntry{name: name, run: run})
		return
	}
	w0, w1 := nameWords(name)
	h := cmdHash(w0, w1)
	e.table[h] = append(e.table[h], cmdEntry{w0: w0, w1: w1, n: len(name), name: name, run: run})
}

// lookup finds a command by name, case-insensitively, without allocating;
// it returns nil for an unknown name.
func (e *engine) lookup(name []byte) Step {
	if uint(len(name)-1) >= 16 {
		return e.lookupLong(name)
	}
	// Read the 16 bytes from the name's start (the name is in the laid-out
	// start message, which ends with 16 zero bytes), keep the name's own (a shift by 64
	// or more gives 0, so the masks need no branch) and fold them.
	p := unsafe.Pointer(unsafe.SliceData(name))
	bits := uint(len(name)) * 8
	w0 := lower8(*(*uint64)(p) & (uint64(1)<<bits - 1))
	w1 := lower8(*(*uint64)(unsafe.Add(p, 8)) & (uint64(1)<<(max(bits, 64)-64) - 1))
	b := e.table[cmdHash(w0, w1)]
	for i := range b {
		if ent := &b[i]; ent.w0 == w0 && ent.w1 == w1 && ent.n == len(name) {
			return ent.run
		}
	}
	return nil
}

// lookupLong finds a command whose name is longer than 16 bytes.
func (e *engine) lookupLong(name []byte) Step {
	for _, ent := range e.long {
		if foldEqual(name, ent.name) {
			return ent.run
		}
	}
	return nil
}

// nameWords returns a name of 1 to 16 bytes as lookup reads it: two
// little-endian words, zero-padded, ASCII letters lower-cased.
func nameWords(name string) (w0, w1 uint64) {
	var b [16]byte
	copy(b[:], name)
	return lower8(binary.LittleEndian.Uint64(b[:])), lower8(binary.LittleEndian.Uint64(b[8:]))
}

// lower8 lower-cases the ASCII letters among the eight bytes of w without
// a branch: a byte gets 0x20 added exactly when it is in 'A'..'Z'.
func lower8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	h := w &^ highs                  // each byte's low 7 bits
	geA := h + ones*(0x80-'A')       // high bit set when the byte is >= 'A'
	gtZ := h + ones*(0x80-'Z'-1)     // high bit set when the byte is > 'Z'
	upper := geA &^ gtZ &^ w & highs // ... and below 0x80
	return w | upper>>2              // 0x80>>2 = 0x20
}

func cmdHash(w0, w1 uint64) int {
	return int((w0^w1*7)*0x9E3779B97F4A7C15>>58) & (cmdBuckets - 1)
}

// foldEqual reports whether b equals the lower-case s, ignoring ASCII case.
func foldEqual(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		ch := b[i]
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}
