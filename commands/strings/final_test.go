package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store/memory"
)

// TestFinalAnswersMatchSteps runs the commands that end with a final
// answer (GET, SET, the INCR family) on both paths — the host applying
// their recipe (a store that waits), and their own next step (requests run
// inline) — with every outcome a store can give forced onto their calls,
// per call and for the whole request, in RESP2 and RESP3: the replies must
// be byte for byte the same. So a recipe cannot drift from its step, and
// the host's store error text from kit.StoreError's.
func TestFinalAnswersMatchSteps(t *testing.T) {
	cmds := [][]string{
		{"GET", "s"}, {"GET", "n"}, {"GET", "bytes10"}, {"GET", "missing"}, {"GET", "h"},
		{"SET", "s", "x"}, {"SET", "s", "x", "EX", "100"}, {"SET", "missing", "x", "XX"}, {"SET", "s", "x", "NX"},
		{"SET", "h", "x", "PX", "5000", "XX"},
		{"INCR", "n"}, {"INCR", "bytes10"}, {"INCR", "s"}, {"INCR", "missing"}, {"INCR", "h"}, {"INCR", "max"},
		{"DECR", "n"}, {"INCRBY", "n", "5"}, {"DECRBY", "bytes10", "3"}, {"INCRBY", "max", "1"},
	}
	type fault struct {
		call, whole codec.Code
		msg         string
	}
	faults := []fault{{}} // none: the store's own outcomes
	for _, c := range []codec.Code{codec.NotFound, codec.GenerationError, codec.Exists, codec.BinTypeError,
		codec.FilteredOut, codec.Overflow, codec.Timeout, codec.RecordTooBig, codec.ServerError,
		codec.BackendError, codec.BackendUnavail, codec.ParameterError, codec.InvalidOperation, 14, 18} {
		faults = append(faults, fault{call: c, msg: "forced"})
	}
	for _, c := range []codec.Code{codec.BackendUnavail, codec.Timeout, codec.BackendError} {
		faults = append(faults, fault{whole: c, msg: "forced whole"})
	}
	faults = append(faults, fault{whole: codec.ParameterError, msg: codec.ErrDBRange})
	// One store, emptied and seeded again before each command: a store
	// per command made the test take minutes under the race detector.
	inner := memory.New(memory.Options{})
	t.Cleanup(func() { inner.Close() })
	run := func(inline bool, proto int, f fault, args []string) string {
		var flushed codec.Response
		inner.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqTruncate}, &flushed)
		h := &sdktest.Host{}
		h.Store, h.Inline, h.Proto = inner, inline, proto
		cmdtest.PutString(t, inner, "s", codec.Bytes([]byte("abc")))
		cmdtest.PutString(t, inner, "n", codec.Int(10))
		cmdtest.PutString(t, inner, "bytes10", codec.Bytes([]byte("10")))
		cmdtest.PutString(t, inner, "max", codec.Int(1<<63-1))
		hash := codec.Call{Key: []byte("h")}
		hash.Put(codec.BinType, codec.Str(codec.TypeHash)).MapPut(codec.BinValue, 0, []codec.Value{codec.Bytes([]byte("f")), codec.Bytes([]byte("v"))})
		cmdtest.Exec(t, inner, hash)
		h.Store = &cmdtest.InterceptStore{Store: inner, After: func(resp *codec.Response) {
			switch {
			case f.whole != codec.OK:
				resp.Code, resp.Msg, resp.Results = f.whole, f.msg, resp.Results[:0]
			case f.call != codec.OK && len(resp.Results) > 0:
				resp.Results[0].Code, resp.Results[0].Msg = f.call, f.msg
			}
		}}
		return fmt.Sprintf("%q", h.DoRaw(bytesArgs(args)...))
	}
	for _, f := range faults {
		for _, proto := range []int{2, 3} {
			for _, args := range cmds {
				if a, b := run(true, proto, f, args), run(false, proto, f, args); a != b {
					t.Errorf("RESP%d %v with %+v: step %s, recipe %s", proto, args, f, a, b)
				}
			}
		}
	}
}

func bytesArgs(args []string) [][]byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return b
}
