package sdk

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestReleaseDropsBigBuffers checks that a Ctx does not keep the buffers a
// large command grew: here the encoded ops of a call that wrote a 100 KiB
// value, which the host reads in place, so no other buffer grows with them.
//
// Buffers are checked every trimEvery releases, and at the release of a Ctx
// whose command waited (own copied its arguments): the big call is dropped
// within trimEvery commands, whatever the commands after it.
func TestReleaseDropsBigBuffers(t *testing.T) {
	for first := range trimEvery {
		var e engine
		for range first {
			e.release(e.acquire())
		}
		c := e.acquire()
		c.Record([]byte("k")).Put(codec.BinValue, codec.Bytes(make([]byte, 100<<10)))
		e.release(c)
		for i := 0; c.req.Calls != nil; i++ {
			if i == trimEvery {
				t.Fatalf("after %d commands, a call holding %d bytes of ops was kept %d releases on",
					first, c.req.Calls[:1][0].EncodedCap(), i)
			}
			if e.acquire() != c {
				t.Fatal("the Ctx released last was not acquired next")
			}
			e.release(c)
		}
	}
	var e engine
	c := e.acquire()
	c.st = &codec.Start{Args: [][]byte{[]byte("set")}}
	c.Record([]byte("k")).Put(codec.BinValue, codec.Bytes(make([]byte, 100<<10)))
	c.own() // the command waited
	e.release(c)
	if c.req.Calls != nil {
		t.Fatal("the big call of a command that waited was kept")
	}
	for range 2 * trimEvery {
		c = e.acquire()
		c.Record([]byte("k")).Put(codec.BinValue, codec.Bytes([]byte("small")))
		e.release(c)
		if cap(c.req.Calls) == 0 {
			t.Fatal("a small call was not kept for reuse")
		}
	}
}

type stringer struct{}

func (stringer) String() string { return "from String" }

// TestPanicText checks that a panic's error reply reads as fmt's %v of the
// value for what panics carry, without fmt.
func TestPanicText(t *testing.T) {
	var nilMap map[string]int
	runtimeErr := func() (r any) {
		defer func() { r = recover() }()
		nilMap["x"] = 1
		return nil
	}()
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"boom", "boom"},
		{errors.New("an error"), "an error"},
		{runtimeErr, "assignment to entry in nil map"},
		{stringer{}, "from String"},
		{42, "42"},
		{int8(-8), "-8"},
		{uint64(1 << 63), "9223372036854775808"},
		{1.5, "1.5"},
		{float32(0.1), "0.1"},
		{true, "true"},
		{[]byte("bytes"), "bytes"},
		{nil, "<nil>"},
		{struct{ A int }{1}, "a value of a type the SDK does not print"},
	} {
		if got := panicText(tc.v); got != tc.want {
			t.Errorf("panicText(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestNoFmtNoTime checks that a module built with the SDK links neither fmt
// (and the os and reflection it brings) nor time (and syscall): they were a
// quarter of a module that needs nothing else, and of its load time
// (docs/RATIONALE.md, "Guest modules without fmt and time").
func TestNoFmtNoTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "fmt", "os", "runtime/debug", "time", "syscall":
			t.Errorf("the guest SDK imports %s", pkg)
		}
	}
}
