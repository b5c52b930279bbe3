package main

import (
	"context"
	"slices"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// faultStore fails (or panics on) the first request that pops, as if the
// proxy died after LMOVE pushed to the destination and before it popped
// the source.
type faultStore struct {
	cmdtest.InterceptStore
	panics bool
	hit    bool
}

func (s *faultStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	if !s.hit && hasListWrite(req, codec.OpListRemoveByIndex) {
		s.hit = true
		if s.panics {
			panic("proxy dies between the push and the pop")
		}
		*resp = codec.Response{Code: codec.BackendUnavail, Msg: "injected fault"}
		return
	}
	s.InterceptStore.Exec(ctx, db, req, resp)
}

// A move interrupted between its two writes leaves the element in both
// lists, never in neither.
func TestMoveFaultBetweenSteps(t *testing.T) {
	for _, panics := range []bool{false, true} {
		cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
			h.Do("rpush", "src", "a", "b", "c")
			h.Do("rpush", "dst", "x")
			fs := &faultStore{InterceptStore: cmdtest.InterceptStore{Store: h.Store}, panics: panics}
			base := h.Store
			h.Store = fs
			func() {
				defer func() {
					if r := recover(); r != nil && !panics {
						t.Fatalf("unexpected panic: %v", r)
					}
				}()
				got := h.Do("lmove", "src", "dst", "right", "left")
				if !panics && got == `"c"` {
					t.Fatalf("the move succeeded despite the fault")
				}
			}()
			if !fs.hit {
				t.Fatal("no pop was attempted")
			}
			h.Store = base
			if got := items(t, h, "src"); !slices.Equal(got, []string{"a", "b", "c"}) {
				t.Errorf("source after the fault: %q", got)
			}
			if got := items(t, h, "dst"); !slices.Equal(got, []string{"c", "x"}) {
				t.Errorf("destination after the fault: %q", got)
			}
		})
	}
}

// When another client pops the source between LMOVE's read and its pop,
// LMOVE takes its push back and moves the next element: every element
// ends in exactly one list.
func TestMoveRaceUndoesPush(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "src", "a", "b", "c")
		// Before LMOVE's first pop of the source, another client
		// takes its last element.
		base := interfereOnce(h, codec.OpListRemoveByIndex, "src", func(base store.Store) {
			var call codec.Call
			call.Key = []byte("src")
			call.ListRemoveByIndex(codec.BinValue, codec.ReturnValue, -1, 1)
			cmdtest.Exec(t, base, call)
		})
		if got := h.Do("lmove", "src", "dst", "right", "left"); got != `"b"` {
			t.Fatalf("lmove = %s, want \"b\"", got)
		}
		h.Store = base
		if got := items(t, h, "src"); !slices.Equal(got, []string{"a"}) {
			t.Errorf("source: %q", got)
		}
		if got := items(t, h, "dst"); !slices.Equal(got, []string{"b"}) {
			t.Errorf("destination: %q", got)
		}
	})
}

// When the source changed but still ends with an equal element, LMOVE pops
// that one.
func TestMoveRaceEqualElement(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "src", "a", "c")
		base := interfereOnce(h, codec.OpListRemoveByIndex, "src", func(base store.Store) {
			var call codec.Call
			call.Key = []byte("src")
			call.ListInsert(codec.BinValue, 0, []codec.Value{codec.Bytes([]byte("z"))})
			cmdtest.Exec(t, base, call)
		})
		if got := h.Do("rpoplpush", "src", "dst"); got != `"c"` {
			t.Fatalf("rpoplpush = %s", got)
		}
		h.Store = base
		if got := items(t, h, "src"); !slices.Equal(got, []string{"z", "a"}) {
			t.Errorf("source: %q", got)
		}
		if got := items(t, h, "dst"); !slices.Equal(got, []string{"c"}) {
			t.Errorf("destination: %q", got)
		}
	})
}

// When another client empties the source (deleting it) and pushes to it
// again between LMOVE's read and its pop, the new list starts again at
// generation 1, the generation LMOVE read: the pop must still not take the
// new list's element in place of the one LMOVE pushed. (A pop guarded by
// generation lost "y" here.)
func TestMoveRaceRecreatedSource(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "src", "a", "b", "c")
		if got := recreateBefore(t, h, "src", codec.OpListRemoveByIndex, []string{"lmove", "src", "dst", "right", "left"}, "x", "y"); got != `"y"` {
			t.Fatalf("lmove = %s, want \"y\"", got)
		}
		if got := items(t, h, "src"); !slices.Equal(got, []string{"x"}) {
			t.Errorf("source: %q", got)
		}
		if got := items(t, h, "dst"); !slices.Equal(got, []string{"y"}) {
			t.Errorf("destination: %q", got)
		}
	})
}

// The same for a rotation: the list recreated between the read and the
// rotation is rotated as it now is.
func TestRotateRaceRecreated(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "l", "a", "b", "c")
		if got := recreateBefore(t, h, "l", codec.OpListRemoveByIndex, []string{"lmove", "l", "l", "right", "left"}, "x", "y"); got != `"y"` {
			t.Fatalf("lmove = %s, want \"y\"", got)
		}
		if got := items(t, h, "l"); !slices.Equal(got, []string{"y", "x"}) {
			t.Errorf("list: %q", got)
		}
	})
}

// A rotation retries when another client wrote between its read and its
// write.
func TestRotateRace(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "l", "a", "b", "c")
		base := interfereOnce(h, codec.OpListRemoveByIndex, "", func(base store.Store) {
			var call codec.Call
			call.Key = []byte("l")
			call.ListAppend(codec.BinValue, []codec.Value{codec.Bytes([]byte("d"))})
			cmdtest.Exec(t, base, call)
		})
		if got := h.Do("lmove", "l", "l", "right", "left"); got != `"d"` {
			t.Fatalf("lmove = %s", got)
		}
		h.Store = base
		if got := items(t, h, "l"); !slices.Equal(got, []string{"d", "a", "b", "c"}) {
			t.Errorf("list: %q", got)
		}
	})
}

// A push over the store's record size changes nothing and names the limit.
func TestPushTooBig(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "l", "a")
		big := string(make([]byte, 9<<20))
		got := h.Do("rpush", "l", big)
		want := "(error) ERR respike: the value is too large for the store's record size limit (code 13): memory: record of "
		if len(got) < len(want) || got[:len(want)] != want {
			t.Errorf("rpush over the limit: %.200s", got)
		}
		if got := items(t, h, "l"); !slices.Equal(got, []string{"a"}) {
			t.Errorf("list after a refused push: %q", got)
		}
		if got := h.Do("lmove", "l", "big", "left", "left"); got != `"a"` {
			t.Errorf("lmove = %s", got)
		}
	})
}

// When another client takes the source's element and pushes to the
// destination after LMOVE's push, LMOVE cannot take its push back: it
// answers an error, and the element stays in the destination.
func TestMoveRaceCannotUndo(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "src", "a", "b", "c")
		base := interfereOnce(h, codec.OpListRemoveByIndex, "src", func(base store.Store) {
			var pop, push codec.Call
			pop.Key = []byte("src")
			pop.ListRemoveByIndex(codec.BinValue, codec.ReturnValue, -1, 1)
			cmdtest.Exec(t, base, pop)
			push.Key = []byte("dst")
			push.ListInsert(codec.BinValue, 0, []codec.Value{codec.Bytes([]byte("other"))})
			cmdtest.Exec(t, base, push)
		})
		got := h.Do("lmove", "src", "dst", "right", "left")
		if got != "(error) "+errMoveUndo {
			t.Fatalf("lmove = %s", got)
		}
		h.Store = base
		if got := items(t, h, "src"); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("source: %q", got)
		}
		if got := items(t, h, "dst"); !slices.Equal(got, []string{"other", "c"}) {
			t.Errorf("destination: %q", got)
		}
	})
}

// recreateBefore runs the command with the list key deleted and created
// again as items just before the command's first write with op: the new
// list is back at generation 1, the generation the command read.
func recreateBefore(t *testing.T, h *sdktest.Host, key string, op codec.OpCode, cmd []string, items ...string) string {
	t.Helper()
	base := interfereOnce(h, op, "", func(base store.Store) {
		var del, push codec.Call
		del.Key = []byte(key)
		del.Delete()
		cmdtest.Exec(t, base, del)
		vs := make([]codec.Value, len(items))
		for i, s := range items {
			vs[i] = codec.Bytes([]byte(s))
		}
		push.Key = []byte(key)
		push.Put(codec.BinType, codec.Str(codec.TypeList)).ListAppend(codec.BinValue, vs)
		cmdtest.Exec(t, base, push)
	})
	defer func() { h.Store = base }()
	return h.Do(cmd...)
}

// LREM with a count and LINSERT act on the list as it is when they write,
// even when it was deleted and created again after their read (a removal
// by the indexes read, under the generation read, took "z" here).
func TestEditsRaceRecreatedList(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		h.Do("rpush", "l", "a", "x", "b", "x")
		if got := recreateBefore(t, h, "l", codec.OpListRemoveByIndex, []string{"lrem", "l", "1", "x"}, "y", "z", "x"); got != "(integer) 1" {
			t.Fatalf("lrem = %s", got)
		}
		if got := items(t, h, "l"); !slices.Equal(got, []string{"y", "z"}) {
			t.Errorf("after lrem: %q", got)
		}
		h.Do("del", "l")
		h.Do("rpush", "l", "a", "p", "b")
		if got := recreateBefore(t, h, "l", codec.OpListInsert, []string{"linsert", "l", "after", "p", "new"}, "y", "z", "p"); got != "(integer) 4" {
			t.Fatalf("linsert = %s", got)
		}
		if got := items(t, h, "l"); !slices.Equal(got, []string{"y", "z", "p", "new"}) {
			t.Errorf("after linsert: %q", got)
		}
	})
}
