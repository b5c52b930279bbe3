package cmdtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store/memory"
)

// A forced store outcome: the first call's code, or the whole request's.
type fault struct {
	call, whole codec.Code
	msg         string
}

// faults are the outcomes FinalMatchesSteps forces: none (the store's
// own), every per-call code a command may meet, and whole-request
// failures.
func faults() []fault {
	fs := []fault{{}}
	for _, c := range []codec.Code{codec.NotFound, codec.GenerationError, codec.Exists, codec.BinTypeError,
		codec.FilteredOut, codec.Overflow, codec.Timeout, codec.RecordTooBig, codec.ServerError,
		codec.BackendError, codec.BackendUnavail, codec.ParameterError, codec.InvalidOperation, 14, 18} {
		fs = append(fs, fault{call: c, msg: "forced"})
	}
	for _, c := range []codec.Code{codec.BackendUnavail, codec.Timeout, codec.BackendError} {
		fs = append(fs, fault{whole: c, msg: "forced whole"})
	}
	return append(fs, fault{whole: codec.ParameterError, msg: codec.ErrDBRange})
}

// FinalMatchesSteps runs each of cmds on both store paths — its final
// answer's recipe applied as the daemon applies it where the store waits,
// and its own next step where requests run inline — after seed (commands
// run inline on an empty store; then "str" holds the string "abc" and "zs"
// is a sorted set, for WRONGTYPE), with every outcome of faults forced onto
// its calls, in RESP2 and RESP3, and fails on any reply that is not byte
// for byte the same. So a command's recipe cannot drift from its step,
// nor the host's error texts from the SDK's and kit's.
func FinalMatchesSteps(t *testing.T, seed [][]string, cmds [][]string) {
	t.Helper()
	// One store, emptied and seeded again before each command: a store
	// per command made the test take minutes under the race detector.
	inner := memory.New(memory.Options{})
	t.Cleanup(func() { inner.Close() })
	run := func(inline bool, proto int, f fault, args []string) string {
		var flushed codec.Response
		inner.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqTruncate}, &flushed)
		h := &sdktest.Host{Store: inner, Inline: true, Proto: 2}
		for _, s := range seed {
			h.Do(s...)
		}
		PutString(t, inner, "str", codec.Bytes([]byte("abc")))
		zs := codec.Call{Key: []byte("zs")}
		zs.Put(codec.BinType, codec.Str(codec.TypeZSet)).MapPut(codec.BinValue, codec.MapOrderKeyValue, []codec.Value{codec.Bytes([]byte("m")), codec.Float(1)})
		Exec(t, inner, zs)
		h.Inline, h.Proto = inline, proto
		h.Store = &InterceptStore{Store: inner, After: func(resp *codec.Response) {
			switch {
			case f.whole != codec.OK:
				resp.Code, resp.Msg, resp.Results = f.whole, f.msg, resp.Results[:0]
			case f.call != codec.OK && len(resp.Results) > 0:
				resp.Results[0].Code, resp.Results[0].Msg = f.call, f.msg
			}
		}}
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		return fmt.Sprintf("%q", h.DoRaw(b...))
	}
	for _, f := range faults() {
		for _, proto := range []int{2, 3} {
			for _, args := range cmds {
				if a, b := run(true, proto, f, args), run(false, proto, f, args); a != b {
					t.Errorf("RESP%d %v with %+v: step %s, recipe %s", proto, args, f, a, b)
				}
			}
		}
	}
}
