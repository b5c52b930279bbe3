package module

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// peakStore counts the requests in flight in a fakeStore.
type peakStore struct {
	*fakeStore
	now, peak atomic.Int32
}

func (s *peakStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	n := s.now.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	s.fakeStore.Exec(ctx, db, req, resp)
	s.now.Add(-1)
}

// TestPipelineOverlapsDistinctKeys: on a store that waits, a pipeline's
// commands on distinct keys are in flight together, a command on a key of
// one in flight waits for it, and the replies keep the pipeline's order.
func TestPipelineOverlapsDistinctKeys(t *testing.T) {
	fs := newFakeStore(false)
	st := &peakStore{fakeStore: fs}
	r := newRuntime(t, Config{Instances: 2}, st, "kv.wasm")

	arrived := make(chan string, 16)
	release := make(chan struct{})
	var early atomic.Value
	fs.setHook(func(_ context.Context, req *codec.Request) {
		key := string(req.Calls[0].Key)
		if req.Calls[0].Ops[0].Code == codec.OpGet && key == "a" {
			fs.mu.Lock()
			if string(fs.data["a"]) != "1" {
				early.Store("get a reached the store before set a was done")
			}
			fs.mu.Unlock()
		}
		arrived <- key
		<-release
	})
	its := items(t, r, []string{"set", "a", "1"}, []string{"set", "b", "2"}, []string{"set", "c", "3"},
		[]string{"get", "a"}, []string{"echo", "x"}, []string{"get", "b"})
	got := make(chan []string, 1)
	go func() { got <- replies(t, r, its) }()

	// The three sets are in the store at once: none is released before
	// all three arrived.
	seen := map[string]bool{}
	for range 3 {
		select {
		case k := <-arrived:
			seen[k] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("only %v reached the store: the pipeline's commands on distinct keys were not in flight together", seen)
		}
	}
	if !seen["a"] || !seen["b"] || !seen["c"] {
		t.Fatalf("in flight together: %v, want a, b and c", seen)
	}
	if p := st.peak.Load(); p != 3 {
		t.Errorf("peak of %d requests in flight, want 3", p)
	}
	close(release)
	checkReplies(t, <-got, []string{"+OK\r\n", "+OK\r\n", "+OK\r\n", "$1\r\n1\r\n", "$1\r\nx\r\n", "$1\r\n2\r\n"})
	if msg := early.Load(); msg != nil {
		t.Error(msg)
	}
}

// TestPipelineSameKeyInOrder: commands of a pipeline on one key run one
// after another, each seeing the one before.
func TestPipelineSameKeyInOrder(t *testing.T) {
	st := &peakStore{fakeStore: newFakeStore(false)}
	r := newRuntime(t, Config{Instances: 2}, st, "kv.wasm")
	its := items(t, r, []string{"set", "k", "1"}, []string{"getset", "k", "2"}, []string{"get", "k"},
		[]string{"set", "k", "3"}, []string{"getset", "k", "4"}, []string{"get", "k"})
	checkReplies(t, replies(t, r, its), []string{"+OK\r\n", "$1\r\n1\r\n", "$1\r\n2\r\n", "+OK\r\n", "$1\r\n3\r\n", "$1\r\n4\r\n"})
	if p := st.peak.Load(); p != 1 {
		t.Errorf("peak of %d requests in flight for one key, want 1", p)
	}
}

func TestOverlapEnd(t *testing.T) {
	r := newRuntime(t, Config{}, newFakeStore(false), "kv.wasm")
	its := items(t, r, []string{"set", "a", "1"}, []string{"get", "b"}, []string{"set", "c", "1"},
		[]string{"get", "a"},                        // clashes with the first
		[]string{"get", "b"}, []string{"echo", "x"}, // no declared keys: alone
		[]string{"get", "a"}, []string{"get", "a"})
	its[2].Start.DB = 1
	its[7].Start.DB = 1 // a of another database: no clash
	var ends []int
	for i := 0; i < len(its); {
		e, _ := overlapEnd(its, i, nil)
		ends = append(ends, e)
		i = e
	}
	want := []int{3, 5, 6, 8}
	if len(ends) != len(want) {
		t.Fatalf("windows end at %v, want %v", ends, want)
	}
	for i := range want {
		if ends[i] != want[i] {
			t.Fatalf("windows end at %v, want %v", ends, want)
		}
	}
}

// BenchmarkMemoryPerInflightPipelined is BenchmarkMemoryPerInflight for
// pipelines on a store that waits: conns connections each hold 16 GETs on
// distinct keys in the store at once (a window of the overlapped path,
// handed to a store that batches, as Aerospike's does). Per command: heap,
// and goroutine stack (the connections' own goroutines, one per 16
// commands).
func BenchmarkMemoryPerInflightPipelined(b *testing.B) {
	const conns, depth = 100, 16
	for b.Loop() {
		var inStore sync.WaitGroup
		gate := make(chan struct{})
		st := &gatedBatcher{fakeStore: newFakeStore(false), arrived: &inStore, gate: gate}
		r := newRuntime(b, Config{}, st, "kv.wasm")
		for range 100 {
			do(b, r, "get", "warm")
		}
		inStore.Add(conns * depth)
		pipes := make([][]Item, conns)
		for c := range pipes {
			cmds := make([][]string, depth)
			for i := range cmds {
				cmds[i] = []string{"get", fmt.Sprintf("key:%d:%d", c, i)}
			}
			pipes[c] = items(b, r, cmds...)
		}
		outs := make([][]byte, conns)
		var done sync.WaitGroup
		// A first round with nothing held starts the instances the
		// connections will use, and fills the pools, so that the measured
		// round counts what a command holds, not an instance's memory.
		done.Add(conns)
		for c := range conns {
			go func() {
				defer done.Done()
				r.ExecBatch(context.Background(), pipes[c], nil, nil)
			}()
		}
		done.Wait()
		st.on.Store(true)
		done.Add(conns)
		before := memStats()
		for c := range conns {
			go func() {
				defer done.Done()
				outs[c] = r.ExecBatch(context.Background(), pipes[c], make([]byte, 0, 16*depth), nil)
			}()
		}
		inStore.Wait()
		after := memStats()
		close(gate)
		done.Wait()
		for c, out := range outs {
			if want := strings.Repeat("$-1\r\n", depth); string(out) != want {
				b.Fatalf("connection %d: %q", c, out)
			}
		}
		n := float64(conns * depth)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heapB/inflight")
		b.ReportMetric(float64(after.StackInuse-before.StackInuse)/n, "stackB/inflight")
	}
}

// gatedBatcher is a fakeStore that batches and, once on, holds every
// request until gate closes, counting each arrival in arrived.
type gatedBatcher struct {
	*fakeStore
	on      atomic.Bool
	arrived *sync.WaitGroup
	gate    chan struct{}
}

func (s *gatedBatcher) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	s.ExecMany([]store.Op{{Ctx: ctx, DB: db, Req: req, Resp: resp}})
}

func (s *gatedBatcher) ExecMany(ops []store.Op) {
	if s.on.Load() {
		for range ops {
			s.arrived.Done()
		}
		<-s.gate
	}
	for _, o := range ops {
		s.fakeStore.Exec(o.Ctx, o.DB, o.Req, o.Resp)
	}
}

// batcherStore is a fakeStore that is a store.Batcher: it records the
// size of each ExecMany.
type batcherStore struct {
	*fakeStore
	mu    sync.Mutex
	sizes []int
}

func (s *batcherStore) ExecMany(ops []store.Op) {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(ops))
	s.mu.Unlock()
	for _, o := range ops {
		s.Exec(o.Ctx, o.DB, o.Req, o.Resp)
	}
}

// TestPipelineWindowOneHandover: on a store that batches, a window's
// commands hand their requests to the store together, one ExecMany per
// step of the window (a command of two steps makes a second, smaller one),
// and the replies keep the pipeline's order.
func TestPipelineWindowOneHandover(t *testing.T) {
	st := &batcherStore{fakeStore: newFakeStore(false)}
	r := newRuntime(t, Config{Instances: 2}, st, "kv.wasm")
	its := items(t, r, []string{"set", "a", "1"}, []string{"set", "b", "2"}, []string{"set", "c", "3"},
		[]string{"getset", "c", "4"}, []string{"getset", "b", "5"}, []string{"get", "a"},
		[]string{"echo", "x"}, []string{"get", "c"})
	checkReplies(t, replies(t, r, its), []string{"+OK\r\n", "+OK\r\n", "+OK\r\n",
		"$1\r\n3\r\n", "$1\r\n2\r\n", "$1\r\n1\r\n", "$1\r\nx\r\n", "$1\r\n4\r\n"})
	// Windows: the three sets; the two getsets and get a (two steps, the
	// second for the getsets only); echo and get c run alone, through Exec.
	want := []int{3, 3, 2}
	if fmt.Sprint(st.sizes) != fmt.Sprint(want) {
		t.Errorf("ExecMany sizes %v, want %v", st.sizes, want)
	}
	if n := st.execs.Load(); n != 9 {
		t.Errorf("%d store requests, want 9", n)
	}
}
