//go:build wasip1

package sdk

import (
	"encoding/binary"
	"unsafe"

	"github.com/respike/respike/guest-sdk/codec"
)

// The ABI exports. The host writes a message into the buffer respike_buf
// returns, then calls respike_start or respike_resume with its length; the
// answer comes back as ptr<<32 | len of bytes in guest memory, valid until
// the next call.

//go:wasmexport respike_abi
func wasmABI() uint32 { return codec.ABIVersion }

//go:wasmexport respike_manifest
func wasmManifest() uint64 { return pack(eng.manifestBytes()) }

//go:wasmexport respike_buf
func wasmBuf(n uint32) uint32 {
	b := eng.buffer(int(n))
	if len(b) == 0 {
		b = eng.buffer(1)
	}
	return uint32(uintptr(unsafe.Pointer(&b[:1][0])))
}

//go:wasmexport respike_start
func wasmStart(n uint32) uint64 { return pack(eng.start(eng.in[:n])) }

//go:wasmexport respike_resume
func wasmResume(handle, n uint32) uint64 { return pack(eng.resume(handle, eng.in[:n])) }

// wasmBatch runs a batch of commands laid out in the buffer
// (codec.AppendBatch): it answers 0 when every command replied through
// respike.reply, or the Pending answer of the command that waits.
//
//go:wasmexport respike_batch
func wasmBatch(n uint32) uint64 { return pack(eng.batch(eng.in[:n])) }

//go:wasmexport respike_cancel
func wasmCancel(handle uint32) { eng.cancel(handle) }

// hostExec asks the host to run the request (a codec.Request at req; reqLen
// is 0) now. It returns the response length written at out, 0 when the host will answer through resume
// instead, or -n when the response needs n bytes: then respike_take copies
// it once the guest has room.
//
//go:wasmimport respike exec
func hostExec(req, reqLen, out, outCap uint32) int32

//go:wasmimport respike take
func hostTake(out, outCap uint32) int32

// hostReply hands the host the reply of a batch's next command.
//
//go:wasmimport respike reply
func hostReply(p, n uint32)

// hostLog hands the host a log line of the current command.
//
//go:wasmimport respike log
func hostLog(level, p, n uint32)

// logHost sends msg to the daemon's log at level.
func logHost(level LogLevel, msg string) {
	if msg == "" {
		hostLog(uint32(level), 0, 0)
		return
	}
	hostLog(uint32(level), uint32(uintptr(unsafe.Pointer(unsafe.StringData(msg)))), uint32(len(msg)))
}

// replyHost sends b, the RESP reply of the batch's next command, to the host.
func replyHost(b []byte) {
	if len(b) == 0 {
		hostReply(0, 0)
		return
	}
	hostReply(ptr(b), uint32(len(b)))
}

func pack(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))<<32 | uint64(len(b))
}

func ptr(b []byte) uint32 { return uint32(uintptr(unsafe.Pointer(&b[:1][0]))) }

// inlineBuf receives inline responses; it is separate from eng.in, which may
// still hold the start message the current step's arguments were copied from.
// inlineAt and inlineCap are its address and length, kept with it so that
// execRequest is small enough to be inlined.
var (
	inlineBuf = make([]byte, 4096)
	inlineAt  = ptr(inlineBuf)
	inlineCap = uint32(len(inlineBuf))
)

// execRequest asks the host to run c's request at once and returns
// hostExec's answer: n > 0, the response's length in inlineBuf; otherwise
// takeInline's to handle. It is a direct call, not through a func value,
// and small enough to be inlined: on the path of every command. The host
// reads the request where it is, as this module's Go values
// (codec.ReadRequest): nothing is encoded here.
func execRequest(c *Ctx) int32 {
	return hostExec(uint32(uintptr(unsafe.Pointer(&c.req))), 0, inlineAt, inlineCap)
}

// pendingAnswer is the answer of a command that waits on its request: the
// status, the handle and the request's address, all little-endian; the
// host reads the request before it calls into the instance again.
func (c *Ctx) pendingAnswer() []byte {
	c.reqBuf = append(c.reqBuf[:0], codec.StatusPending, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(c.reqBuf[1:], c.handle)
	binary.LittleEndian.PutUint32(c.reqBuf[5:], uint32(uintptr(unsafe.Pointer(&c.req))))
	return c.reqBuf
}

// finalAnswer is the answer of a command that ends with a final answer
// (ExecFinal): the status, the request's address and the recipe; the host
// reads both before it calls into the instance again.
func (c *Ctx) finalAnswer() []byte {
	c.reqBuf = append(c.reqBuf[:0], codec.StatusFinal, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(c.reqBuf[1:], uint32(uintptr(unsafe.Pointer(&c.req))))
	c.reqBuf = append(c.reqBuf, c.final.Bytes()...)
	return c.reqBuf
}

// takeInline handles the rarer answers of hostExec: 0, the host answers
// through resume; -n, the response needs n bytes.
func takeInline(n int32) ([]byte, bool) {
	if n == 0 {
		return nil, false
	}
	inlineBuf = make([]byte, int(-n)+int(-n)/4)
	inlineAt, inlineCap = ptr(inlineBuf), uint32(len(inlineBuf))
	n = hostTake(inlineAt, inlineCap)
	if n <= 0 {
		// The request ran; running it again would repeat its writes.
		panic("sdk: the host lost an inline response")
	}
	return inlineBuf[:n], true
}
