package module

import (
	"context"
	"testing"
)

// TestSwapStats follows the counters of one module through a load, a swap
// with a command in flight, a refusal and an unload.
func TestSwapStats(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{}, st, "kv.wasm")
	dir := t.TempDir()
	v2 := writeModule(t, dir, "kv.wasm", kvV2())
	bad := writeModule(t, dir+"/bad", "kv.wasm", []byte("not wasm"))

	info := r.Modules()[0]
	if info.Swaps != 0 || info.LoadDuration <= 0 {
		t.Errorf("after the first load: %+v, want no swap and a load duration", info)
	}
	if s := r.Stats(); s != (Stats{Loads: 1}) {
		t.Errorf("Stats after one load = %+v", s)
	}

	entered, release := hold(st, "held")
	defer release()
	reply := make(chan string)
	go func() { reply <- do(t, r, "get", "held") }()
	<-entered
	got, err := r.Load(context.Background(), v2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Swaps != 1 || got.LoadDuration <= 0 || got.Version != "2" {
		t.Errorf("Load of version 2 = %+v, want one swap and a load duration", got)
	}
	// The old version drains: get still runs on it.
	// (The slow store makes the get wait: one wait.)
	if s := r.Stats(); s != (Stats{Loads: 1, Swaps: 1, Draining: 1, Waits: 1}) {
		t.Errorf("Stats with a command in flight on the old version = %+v", s)
	}
	release()
	if got := <-reply; got != "$-1\r\n" {
		t.Errorf("get in flight across the swap = %q", got)
	}
	if s := r.Stats(); s.Draining != 0 {
		t.Errorf("Draining = %d after the old version's last command ended", s.Draining)
	}

	if _, err := r.Load(context.Background(), bad); err == nil {
		t.Fatal("garbage loaded")
	}
	info = r.Modules()[0]
	if info.Swaps != 1 || info.Version != "2" || info.LastError == "" {
		t.Errorf("after a refusal: %+v, want version 2, one swap and the error", info)
	}
	// Swaps count per module across versions.
	if got, err := r.Load(context.Background(), mod("kv.wasm")); err != nil || got.Swaps != 2 {
		t.Errorf("second swap = %+v, %v", got, err)
	}
	if err := r.Unload("kv"); err != nil {
		t.Fatal(err)
	}
	if s := r.Stats(); s != (Stats{Loads: 1, Swaps: 2, Refusals: 1, Unloads: 1, Waits: 1}) {
		t.Errorf("Stats at the end = %+v", s)
	}
}
