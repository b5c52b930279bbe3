package sdk

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/internal/hook"
)

// engine is the module's side of the ABI: the registry filled by init
// functions and the commands in flight. A wasm module is a process of its
// own, so the engine is package state, as a main package's would be.
type engine struct {
	commands map[string]Step
	manifest codec.Manifest
	manBuf   []byte

	ctxs []*Ctx   // by handle
	free []uint32 // handles of idle Ctxs

	in  []byte // host→guest message buffer (respike_buf)
	dec codec.Decoder
	st  codec.Start

	// inline runs a request on the host without leaving the guest call when
	// the store can answer at once; it reports false when the host will
	// answer through resume instead.
	inline func(req []byte) ([]byte, bool)
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
	c := &Ctx{handle: uint32(len(e.ctxs))}
	e.ctxs = append(e.ctxs, c)
	return c
}

func (e *engine) release(c *Ctx) {
	c.next = nil
	c.pending = false
	if cap(c.argBuf) > maxKeep {
		c.argBuf = nil
	}
	if cap(c.B) > maxKeep {
		c.B = nil
	}
	if cap(c.req.Calls) > 64 {
		c.req.Calls = nil
	}
	c.vals = c.vals[:0]
	if cap(c.vals) > 1024 {
		c.vals = nil
	}
	e.free = append(e.free, c.handle)
}

// start runs a new command from a Start message and returns the guest's
// answer (status byte first). The answer stays valid until the next call.
func (e *engine) start(msg []byte) []byte {
	if err := e.dec.DecodeStart(msg, &e.st); err != nil || len(e.st.Args) == 0 {
		return doneError("ERR respike: malformed start message")
	}
	c := e.acquire()
	c.proto = int(e.st.Proto)
	c.db = int(e.st.DB)
	c.clientID = e.st.ClientID
	c.N = [8]int64{}
	c.B = c.B[:0]
	// Copy the arguments: they must outlive the host's buffer.
	total := 0
	for _, a := range e.st.Args {
		total += len(a)
	}
	if cap(c.argBuf) < total {
		c.argBuf = make([]byte, 0, total)
	}
	c.argBuf = c.argBuf[:0]
	c.args = c.args[:0]
	for _, a := range e.st.Args {
		off := len(c.argBuf)
		c.argBuf = append(c.argBuf, a...)
		c.args = append(c.args, c.argBuf[off:len(c.argBuf):len(c.argBuf)])
	}
	c.w.Proto = c.proto
	c.w.Buf = append(c.w.Buf[:0], codec.StatusDone)
	run, ok := e.lookup(c.args[0])
	if !ok {
		e.release(c)
		return doneError(fmt.Sprintf("ERR unknown command '%s', with args beginning with: ", c.args[0]))
	}
	c.next = run
	return e.drive(c)
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
func (e *engine) deliver(c *Ctx, msg []byte) bool {
	kind := c.req.Kind
	c.pending = false
	c.vals = c.vals[:0]
	if err := c.dec().DecodeResponse(msg, kind, &c.res); err != nil {
		c.resetReply()
		c.w.Error("ERR respike: malformed store response")
		return false
	}
	if c.res.Code != codec.OK {
		c.resetReply()
		c.w.Error(backendError(c.res.Code, c.res.Msg))
		return false
	}
	return true
}

func (c *Ctx) dec() *codec.Decoder { return &eng.dec }

func (c *Ctx) resetReply() { c.w.Buf = append(c.w.Buf[:0], codec.StatusDone) }

// drive runs steps until the command replies or waits on the host.
func (e *engine) drive(c *Ctx) []byte {
	for {
		step := c.next
		c.next = nil
		c.req.Kind = 0
		c.req.Calls = c.req.Calls[:0]
		if !e.runStep(c, step) {
			return e.finish(c)
		}
		if !c.pending {
			if len(c.w.Buf) == 1 {
				c.w.Error("ERR respike: command wrote no reply")
			}
			return e.finish(c)
		}
		// Encode the request after a 5-byte header (status, handle) so the
		// pending answer needs no copy.
		c.reqBuf = append(c.reqBuf[:0], codec.StatusPending, 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(c.reqBuf[1:], c.handle)
		c.reqBuf = codec.AppendRequest(c.reqBuf, &c.req)
		if e.inline != nil {
			if res, ok := e.inline(c.reqBuf[5:]); ok {
				if !e.deliver(c, res) {
					return e.finish(c)
				}
				continue
			}
		}
		return c.reqBuf
	}
}

// runStep runs one step, turning a panic into an error reply.
func (e *engine) runStep(c *Ctx, step Step) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			c.resetReply()
			c.pending = false
			c.w.Error(fmt.Sprintf("ERR module panic: %v", r))
			if debugPanics {
				debug.PrintStack()
			}
			ok = false
		}
	}()
	step(c)
	return true
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

// backendError is the reply for a request the store could not run.
func backendError(code codec.Code, msg string) string {
	switch code {
	case codec.BackendUnavail:
		return "ERR backend unavailable: " + msg
	case codec.Timeout:
		return "ERR backend timeout: " + msg
	}
	return fmt.Sprintf("ERR backend error (code %d): %s", code, msg)
}

// lookup finds a command by name, case-insensitively, without allocating.
func (e *engine) lookup(name []byte) (Step, bool) {
	var tmp [32]byte
	s := tmp[:0]
	if len(name) > len(tmp) {
		s = make([]byte, 0, len(name))
	}
	for _, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		s = append(s, ch)
	}
	run, ok := e.commands[string(s)]
	return run, ok
}
