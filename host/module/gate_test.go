package module

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/memory"
)

// TestGatesHandOverInOrder: a key's gate goes to the commands queued for
// it in the order they came, one at a time; a withdrawn command is skipped;
// a gate nobody holds or waits for is forgotten.
func TestGatesHandOverInOrder(t *testing.T) {
	var g gates
	k := gateKey{db: 0, key: "k"}
	ch := make(chan int, 4)
	if !g.acquire(k, gateWaiter{ch: ch, id: 0}) {
		t.Fatal("a free gate was not taken at once")
	}
	for id := 1; id <= 3; id++ {
		if g.acquire(k, gateWaiter{ch: ch, id: id}) {
			t.Fatalf("command %d took a held gate", id)
		}
	}
	if other := (gateKey{db: 1, key: "k"}); !g.acquire(other, gateWaiter{ch: ch, id: 9}) {
		t.Fatal("the same key in another database shares its gate")
	} else {
		g.release(other)
	}
	g.mu.Lock()
	if !g.withdraw(k, gateWaiter{ch: ch, id: 2}) {
		t.Error("a queued command could not be withdrawn")
	}
	g.mu.Unlock()
	for _, want := range []int{1, 3} {
		if len(ch) != 0 {
			t.Fatalf("%d hand-overs before the holder let go", len(ch))
		}
		g.release(k)
		if got := <-ch; got != want {
			t.Fatalf("the gate went to %d, want %d", got, want)
		}
	}
	g.release(k)
	if len(g.m) != 0 || len(ch) != 0 {
		t.Errorf("after the last release: %d gates, %d hand-overs", len(g.m), len(ch))
	}
}

// TestLostRace: only a condition on the record's state that failed is a
// lost race; a type guard's refusal or a store failure is not.
func TestLostRace(t *testing.T) {
	gen := codec.Call{Policy: codec.Policy{Generation: 7, Exists: codec.ExistsUpdateOnly}}
	create := codec.Call{Policy: codec.Policy{Exists: codec.ExistsCreateOnly}}
	plain := codec.Call{}
	expect := codec.Call{Ops: []codec.Op{{Code: codec.OpExpectListItem}, {Code: codec.OpListRemoveByIndex}}}
	for _, tc := range []struct {
		name string
		call *codec.Call
		code codec.Code
		want bool
	}{
		{"generation changed", &plain, codec.GenerationError, true},
		{"created meanwhile", &create, codec.Exists, true},
		{"deleted meanwhile", &gen, codec.NotFound, true},
		{"expected item gone", &expect, codec.FilteredOut, true},
		{"missing, no condition", &plain, codec.NotFound, false},
		{"wrong type", &plain, codec.FilteredOut, false},
		{"timeout", &gen, codec.Timeout, false},
	} {
		if got := lostRace(tc.call, tc.code); got != tc.want {
			t.Errorf("%s: lostRace = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// slowStore is the embedded store answering after a delay, as a remote
// one does: commands racing for a key then interleave between their read
// and their write as on Aerospike.
type slowStore struct {
	store.Store
	delay time.Duration
}

func (s *slowStore) Inline() bool { return false }

func (s *slowStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	time.Sleep(s.delay) // the round trip, not a synchronisation
	s.Store.Exec(ctx, db, req, resp)
}

// TestHotKeyGate runs a read-modify-write command (casincr: read, then
// write under the generation read, again from the start when another
// client wrote in between) from 16 clients on one key, each pipelining it
// between commands on keys of its own (so that it shares pipeline windows
// with them), or unpipelined; on a store that answers after a round trip
// and on the inline path. No increment may be lost, and the losers,
// queued behind the key's gate, must not retry against every other
// contender: tries per command stay near one instead of growing with the
// clients (6 to 8 of them without the gate).
func TestHotKeyGate(t *testing.T) {
	const clients, pipes, depth = 16, 6, 8
	for _, tc := range []struct {
		name      string
		st        func() store.Store
		pipelined bool
	}{
		{"remote/pipelined", func() store.Store {
			return &slowStore{Store: memory.New(memory.Options{}), delay: 200 * time.Microsecond}
		}, true},
		{"remote/unpipelined", func() store.Store {
			return &slowStore{Store: memory.New(memory.Options{}), delay: 200 * time.Microsecond}
		}, false},
		{"inline/pipelined", func() store.Store { return memory.New(memory.Options{}) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st()
			defer st.Close()
			r := newRuntime(t, Config{}, st, "kv.wasm")
			var wg sync.WaitGroup
			var mu sync.Mutex
			hot, tries := 0, 0
			var bad []string
			for i := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for p := range pipes {
						var cmds [][]string
						for j := range depth {
							if j%2 == 0 {
								cmds = append(cmds, []string{"casincr", "hot"})
							} else {
								cmds = append(cmds, []string{"casincr", fmt.Sprintf("own:%d:%d:%d", i, p, j)})
							}
						}
						var got []string
						if tc.pipelined {
							got = replies(t, r, items(t, r, cmds...))
						} else {
							for _, cmd := range cmds {
								got = append(got, do(t, r, cmd...))
							}
						}
						mu.Lock()
						for j, reply := range got {
							n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(reply, ":"), "\r\n"))
							if !strings.HasPrefix(reply, ":") || err != nil {
								bad = append(bad, reply)
								continue
							}
							if j%2 == 0 {
								hot++
								tries += n
							}
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if len(bad) > 0 {
				t.Fatalf("%d commands failed, first %q", len(bad), bad[0])
			}
			if got := do(t, r, "get", "hot"); got != fmt.Sprintf("$%d\r\n%d\r\n", len(strconv.Itoa(hot)), hot) {
				t.Errorf("hot = %q after %d increments", got, hot)
			}
			per := float64(tries) / float64(hot)
			t.Logf("%d increments of one key from %d clients: %.2f tries each, %d requests queued behind the gate",
				hot, clients, per, r.Stats().GateWaits)
			if per > 3.5 {
				t.Errorf("%.2f tries per increment: the losers keep racing each other", per)
			}
		})
	}
}
