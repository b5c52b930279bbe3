package module

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// TestBlockAnswer loads modules that answer codec.StatusBlock: Exec (where
// a client may not block, as inside MULTI) answers the timeout reply,
// ExecBlock reports the keys, the timeout and the reply, ExecBatch stops at
// the command that blocks, and a malformed block answer is an error that
// costs nothing else.
func TestBlockAnswer(t *testing.T) {
	dir := t.TempDir()
	r := newRuntime(t, Config{}, newFakeStore(true), "kv.wasm")
	load := func(name string, reply []byte) {
		t.Helper()
		m := fake{abi: codec.ABIVersion, manifest: manifest("1", name), reply: reply}
		if _, err := r.Load(context.Background(), writeModule(t, dir, name+".wasm", m.wasm())); err != nil {
			t.Fatal(err)
		}
	}
	load("bwait", codec.AppendBlock(nil, int64(1500*time.Millisecond), [][]byte{[]byte("k1"), []byte("key2")}, []byte("*-1\r\n")))
	load("bnokeys", codec.AppendBlock(nil, 0, nil, []byte("*-1\r\n")))
	load("bnoreply", codec.AppendBlock(nil, 0, [][]byte{[]byte("k")}, nil))
	load("bshort", codec.AppendBlock(nil, 0, [][]byte{[]byte("k")}, []byte("_\r\n"))[:15])

	if got := do(t, r, "bwait"); got != "*-1\r\n" {
		t.Errorf("Exec of a command that blocks = %q, want its timeout reply", got)
	}
	for _, name := range []string{"bnokeys", "bnoreply", "bshort"} {
		if got := do(t, r, name); !strings.Contains(got, "malformed block answer") {
			t.Errorf("%s: %q, want a malformed block answer error", name, got)
		}
	}

	var blk Block
	start := &codec.Start{Proto: 2, ClientID: 1, Args: [][]byte{[]byte("bwait")}}
	out := r.ExecBlock(context.Background(), r.Lookup([]byte("bwait")), start, []byte("x"), &blk)
	if string(out) != "x" || !blk.Blocked || blk.Timeout != int64(1500*time.Millisecond) || string(blk.Reply) != "*-1\r\n" ||
		len(blk.Keys) != 2 || string(blk.Keys[0]) != "k1" || string(blk.Keys[1]) != "key2" {
		t.Fatalf("ExecBlock: out %q, block %+v", out, blk)
	}
	out = r.ExecBlock(context.Background(), r.Lookup([]byte("echo")), &codec.Start{Proto: 2, ClientID: 1,
		Args: [][]byte{[]byte("echo"), []byte("hi")}}, nil, &blk)
	if string(out) != "$2\r\nhi\r\n" || blk.Blocked {
		t.Fatalf("ExecBlock of a command that replies: %q, blocked %v", out, blk.Blocked)
	}

	// A pipeline stops at the command that blocks: the ones before it
	// replied, the ones after it have not run.
	its := items(t, r, []string{"echo", "a"}, []string{"echo", "b"}, []string{"bwait"}, []string{"echo", "c"})
	out = r.ExecBatch(context.Background(), its, nil, &blk)
	if string(out) != "$1\r\na\r\n$1\r\nb\r\n" || !blk.Blocked || blk.Index != 2 {
		t.Fatalf("ExecBatch: out %q, blocked %v at %d", out, blk.Blocked, blk.Index)
	}
	// Without a Block, the command answers its timeout reply in its place.
	its = items(t, r, []string{"echo", "a"}, []string{"bwait"}, []string{"echo", "c"})
	if out = r.ExecBatch(context.Background(), its, nil, nil); string(out) != "$1\r\na\r\n*-1\r\n$1\r\nc\r\n" {
		t.Fatalf("ExecBatch without a Block: %q", out)
	}
}
