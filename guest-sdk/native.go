//go:build !wasip1

package sdk

import (
	"encoding/binary"

	"github.com/respike/respike/guest-sdk/codec"
)

// execRequest runs c's request through the native test host's hook, if
// it set one (sdktest), and answers as wasm.go's: n > 0, the response's
// length in inlineBuf; 0, the host answers through resume; -1, a response
// for takeInline (an empty one). Natively the request travels encoded
// (codec.AppendRequest), as the wasm host reads it (codec.ReadRequest).
func execRequest(c *Ctx) int32 {
	if eng.inline == nil {
		return 0
	}
	c.reqBuf = codec.AppendRequest(c.reqBuf[:0], &c.req)
	res, ok := eng.inline(c.reqBuf)
	if !ok {
		return 0
	}
	inlineBuf = res
	if len(res) == 0 {
		return -1
	}
	return int32(len(res))
}

// inlineBuf is the last inline response of the native test host.
var inlineBuf []byte

// takeInline answers execRequest's answers other than n > 0: 0, the host
// answers through resume; -1, the (empty) response in inlineBuf.
func takeInline(n int32) ([]byte, bool) {
	if n == 0 {
		return nil, false
	}
	return inlineBuf, true
}

// pendingAnswer is the answer of a command that waits on its request:
// natively, the status, the handle and the encoded request.
func (c *Ctx) pendingAnswer() []byte {
	c.reqBuf = append(c.reqBuf[:0], codec.StatusPending, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(c.reqBuf[1:], c.handle)
	return codec.AppendRequest(c.reqBuf, &c.req)
}

// finalAnswer is the answer of a command that ends with a final answer:
// natively, the status, the recipe's length (u32) and the recipe, then the
// encoded request (sdktest reads it so).
func (c *Ctx) finalAnswer() []byte {
	r := c.final.Bytes()
	c.reqBuf = append(c.reqBuf[:0], codec.StatusFinal)
	c.reqBuf = binary.LittleEndian.AppendUint32(c.reqBuf, uint32(len(r)))
	c.reqBuf = append(c.reqBuf, r...)
	return codec.AppendRequest(c.reqBuf, &c.req)
}

// replyHost sends b, the reply of the batch's next command, to the native
// test host's hook (sdktest); wasm.go's calls the real host.
func replyHost(b []byte) {
	if eng.reply != nil {
		eng.reply(b)
	}
}

// logHost sends a log line to the native test host's hook (sdktest), if it
// set one; wasm.go's calls the real host.
func logHost(level LogLevel, msg string) {
	if eng.log != nil {
		eng.log(int32(level), msg)
	}
}
