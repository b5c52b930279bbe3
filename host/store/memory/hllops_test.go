package memory

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
)

// raiseCall is OpHLLRaise of register i to count on key "h".
func raiseCall(i int, count byte) codec.Call {
	c := codec.Call{Key: []byte("h"), Policy: codec.Policy{Exists: codec.ExistsUpdateOnly}}
	c.HLLRaise(codec.BinValue, []byte{byte(i >> 8), byte(i), count})
	return c
}

func exec1(t *testing.T, s *Store, c codec.Call) codec.Result {
	t.Helper()
	var resp codec.Response
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{c}}, &resp)
	if resp.Code != codec.OK || resp.Results[0].Code != codec.OK {
		t.Errorf("call: %d %d %s", resp.Code, resp.Results[0].Code, resp.Results[0].Msg)
	}
	return resp.Results[0]
}

func getV(t *testing.T, s *Store) []byte {
	t.Helper()
	var c codec.Call
	c.Key = []byte("h")
	c.Get(codec.BinValue)
	return exec1(t, s, c).Values[0].Bytes
}

// storeWithHLL is a store holding an empty dense HLL at "h".
func storeWithHLL(t *testing.T) (*Store, []byte) {
	t.Helper()
	s := New(Options{})
	t.Cleanup(func() { s.Close() })
	h := make([]byte, codec.HLLDenseSize)
	copy(h, "HYLL")
	var put codec.Call
	put.Key = []byte("h")
	put.Put(codec.BinValue, codec.Bytes(h))
	exec1(t, s, put)
	return s, h
}

// A raise changes the blob in place only while no read has handed it out:
// a value read stays as it was read, however many raises follow, and the
// raises in place (no read between them) all land.
func TestHLLRaiseInPlaceNeverChangesAValueRead(t *testing.T) {
	s, h := storeWithHLL(t)
	read := getV(t, s)
	held := append([]byte(nil), read...)
	want := append([]byte(nil), h...)
	for k := range 50 { // the first copies, the others change the copy
		exec1(t, s, raiseCall(k*7, byte(k%40+1)))
		hllSet(want, k*7, byte(k%40+1))
	}
	want[15] |= 0x80
	if !bytes.Equal(read, held) {
		t.Fatal("a value read changed under later raises")
	}
	got := getV(t, s)
	if !bytes.Equal(got, want) {
		t.Fatal("raises in place lost")
	}
	held = append([]byte(nil), got...)
	exec1(t, s, raiseCall(16383, 9))
	if !bytes.Equal(got, held) {
		t.Fatal("the value read after raises in place changed under the next raise")
	}
}

// Reads and raises of one HLL from several goroutines: under -race, a
// raise that changed a blob a read had handed out is a reported race.
func TestHLLRaiseConcurrentReads(t *testing.T) {
	s, _ := storeWithHLL(t)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 300 {
				if g%2 == 0 {
					exec1(t, s, raiseCall((k*131+g)%16384, byte(k%63+1)))
					continue
				}
				sum := 0
				for _, c := range getV(t, s) {
					sum += int(c)
				}
				_ = sum
			}
		}()
	}
	wg.Wait()
}
