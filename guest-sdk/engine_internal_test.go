package sdk

import (
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestReleaseDropsBigBuffers checks that a Ctx does not keep the buffers a
// large command grew: here the encoded ops of a call that wrote a 100 KiB
// value, which the host reads in place, so no other buffer grows with them.
func TestReleaseDropsBigBuffers(t *testing.T) {
	var e engine
	c := e.acquire()
	c.Record([]byte("k")).Put(codec.BinValue, codec.Bytes(make([]byte, 100<<10)))
	e.release(c)
	if c.req.Calls != nil {
		t.Fatalf("a call holding %d bytes of ops was kept", c.req.Calls[:1][0].EncodedCap())
	}
	c = e.acquire()
	c.Record([]byte("k")).Put(codec.BinValue, codec.Bytes([]byte("small")))
	e.release(c)
	if cap(c.req.Calls) == 0 {
		t.Fatal("a small call was not kept for reuse")
	}
}
