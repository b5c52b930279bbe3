package main

import (
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
)

// isMapPut reports whether a request is the write of a read-modify-write:
// a map put checked against a generation or create-only.
func isMapPut(req *codec.Request) bool {
	for _, c := range req.Calls {
		if c.Policy.Generation == 0 && c.Policy.Exists != codec.ExistsCreateOnly {
			continue
		}
		for _, o := range c.Ops {
			if o.Code == codec.OpMapPut {
				return true
			}
		}
	}
	return false
}

// Another client writing between HINCRBYFLOAT's read and write makes it
// read again, and the result accounts for that write.
func TestHIncrByFloatRetries(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		base := h.Store
		interfere := 2
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if isMapPut(req) && interfere > 0 {
				interfere--
				putField(t, base, "h", "f", codec.Bytes([]byte("10")))
			}
		}}
		cmdtest.Script(t, h, `
			hset h f 1 => (integer) 1
			hincrbyfloat h f 0.5 => "10.5"
		`)
		if interfere != 0 {
			t.Fatalf("the write was not intercepted")
		}
		// A key that keeps changing ends in an error, never a lost update.
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if isMapPut(req) {
				putField(t, base, "h", "f", codec.Bytes([]byte("1")))
			}
		}}
		cmdtest.Script(t, h, `hincrbyfloat h f 0.5 => (error) ERR respike: the key kept changing during a read-modify-write; try again`)
	})
}

// A missing key created by another client between the read and the
// create-only write is read again.
func TestHIncrByFloatCreateRace(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		base := h.Store
		once := true
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if isMapPut(req) && once {
				once = false
				putField(t, base, "h", "f", codec.Bytes([]byte("2")))
			}
		}}
		cmdtest.Script(t, h, `hincrbyfloat h f 0.25 => "2.25"`)
	})
}

// HRANDFIELD draws again when the hash changed between reading its size
// and reading the items at the drawn indexes.
func TestHRandFieldRedrawsOnChange(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		args := []string{"hset", "h"}
		for i := range 40 {
			args = append(args, "f"+string(rune('A'+i)), "v")
		}
		h.Do(args...)
		base := h.Store
		changes := 0
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			// The index read has more than two ops: size and one per draw.
			if len(req.Calls) == 1 && len(req.Calls[0].Ops) > 2 && changes < 3 {
				changes++
				putField(t, base, "h", "zz"+string(rune('a'+changes)), codec.Bytes([]byte("new")))
			}
		}}
		got := h.Do("hrandfield", "h", "5")
		if changes != 3 {
			t.Fatalf("changes = %d, want the index read intercepted 3 times", changes)
		}
		if n := len(cmdtest.SplitReply(got)); n != 5 {
			t.Errorf("HRANDFIELD h 5 = %s, want 5 fields", got)
		}
		// Always changing: an error after the retries.
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if len(req.Calls) == 1 && len(req.Calls[0].Ops) > 2 {
				changes++
				putField(t, base, "h", "zz"+string(rune('a'+changes%26)), codec.Bytes([]byte("new")))
			}
		}}
		cmdtest.Script(t, h, `hrandfield h 5 => (error) ERR respike: the key kept changing during a read-modify-write; try again`)
	})
}

// A record without a type tag whose value bin is not a map (written by
// something other than respike) passes the type guard; map operations on
// it fail with BIN_TYPE_ERROR, answered as WRONGTYPE.
func TestForeignRecord(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		var call codec.Call
		call.Key = []byte("raw")
		call.Put(codec.BinValue, codec.Bytes([]byte("blob")))
		cmdtest.Exec(t, h.Store, call)
		cmdtest.Script(t, h, `
			hget raw f => `+wrongType+`
			hset raw f v => `+wrongType+`
			hdel raw f => `+wrongType+`
			hincrby raw f 1 => `+wrongType+`
			hincrbyfloat raw f 1 => `+wrongType+`
			hrandfield raw => `+wrongType+`
			hscan raw 0 => `+wrongType+`
			hgetall raw => `+wrongType+`
		`)
	})
}

// HINCRBY on a canonical integer stored as bytes retries its
// read-modify-write when another client writes in between.
func TestHIncrBySlowPathRace(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		base := h.Store
		putField(t, base, "h", "f", codec.Bytes([]byte("5")))
		once := true
		h.Store = &cmdtest.InterceptStore{Store: base, Before: func(req *codec.Request) {
			if isMapPut(req) && once {
				once = false
				putField(t, base, "h", "f", codec.Bytes([]byte("100")))
			}
		}}
		cmdtest.Script(t, h, `
			hincrby h f 1 => (integer) 101
			hget h f => "101"
		`)
		if once {
			t.Fatal("the write was not intercepted")
		}
	})
}
