package aerospike

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/storetest"
)

// fakeRun is a coalescer's run that records the groups it is given and
// blocks each call until the test releases it.
type fakeRun struct {
	mu      sync.Mutex
	groups  [][]string    // job names per call, in the order calls started
	started chan string   // the first job's name, as each call starts
	release chan struct{} // one receive per call lets it finish
}

func newFakeRun() *fakeRun {
	return &fakeRun{started: make(chan string, 64), release: make(chan struct{})}
}

func (f *fakeRun) run(group []*job) {
	names := make([]string, len(group))
	for i, j := range group {
		names[i] = j.x.set // the tests name jobs by their set
	}
	f.mu.Lock()
	f.groups = append(f.groups, names)
	f.mu.Unlock()
	f.started <- names[0]
	<-f.release
}

func (f *fakeRun) seen() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.groups...)
}

func namedJob(name string, size int) *job {
	return &job{x: &execCtx{set: name}, size: size, wake: make(chan struct{}, 1)}
}

// submit runs j through c on a goroutine; done is closed when do returns.
func submit(c *coalescer, j *job) (done chan struct{}) {
	done = make(chan struct{})
	go func() {
		c.do(j)
		close(done)
	}()
	return done
}

func TestCoalescerLoneRequestGoesAtOnce(t *testing.T) {
	var calls [][]*job
	c := newCoalescer(1, 16, func(g []*job) { calls = append(calls, append([]*job(nil), g...)) })
	j := namedJob("a", 1)
	c.do(j) // on this goroutine: nothing in flight, so it must not wait
	if len(calls) != 1 || len(calls[0]) != 1 || calls[0][0] != j {
		t.Fatalf("calls %v, want one call of the lone job", calls)
	}
	if c.running != 0 || len(c.queue) != 0 {
		t.Errorf("after the call: %d lanes in use, %d queued; want none", c.running, len(c.queue))
	}
}

func TestCoalescerGathersWhileInFlight(t *testing.T) {
	f := newFakeRun()
	c := newCoalescer(1, 3, f.run)
	queued := make(chan struct{}, 16)
	c.queued = func() { queued <- struct{}{} }

	first := submit(c, namedJob("a", 1))
	if got := <-f.started; got != "a" {
		t.Fatalf("first call started with %q", got)
	}
	// While "a" is in flight, five requests arrive, one at a time so that
	// their order is known.
	var rest []chan struct{}
	for _, n := range []string{"b", "c", "d", "e", "f"} {
		rest = append(rest, submit(c, namedJob(n, 1)))
		<-queued
	}
	select {
	case <-first:
		t.Fatal("the first request returned before its call finished")
	default:
	}
	f.release <- struct{}{}
	<-first
	if got := <-f.started; got != "b" {
		t.Fatalf("second call led by %q, want b", got)
	}
	f.release <- struct{}{}
	if got := <-f.started; got != "e" {
		t.Fatalf("third call led by %q, want e", got)
	}
	f.release <- struct{}{}
	for _, d := range rest {
		<-d
	}
	want := [][]string{{"a"}, {"b", "c", "d"}, {"e", "f"}}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v: queued requests go in arrival order, at most 3 records per call", got, want)
	}
	if c.running != 0 {
		t.Errorf("%d lanes still in use", c.running)
	}
}

func TestCoalescerSizeLimit(t *testing.T) {
	f := newFakeRun()
	c := newCoalescer(1, 4, f.run)
	queued := make(chan struct{}, 16)
	c.queued = func() { queued <- struct{}{} }

	first := submit(c, namedJob("a", 1))
	<-f.started
	var rest []chan struct{}
	for _, j := range []*job{namedJob("big", 9), namedJob("c", 3), namedJob("d", 2)} {
		rest = append(rest, submit(c, j))
		<-queued
	}
	f.release <- struct{}{}
	<-first
	for range 3 {
		<-f.started
		f.release <- struct{}{}
	}
	for _, d := range rest {
		<-d
	}
	// A request larger than the limit goes in a call of its own; the next
	// two do not fit together (3+2 > 4).
	want := [][]string{{"a"}, {"big"}, {"c"}, {"d"}}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func TestCoalescerLanes(t *testing.T) {
	f := newFakeRun()
	c := newCoalescer(2, 8, f.run)
	queued := make(chan struct{}, 16)
	c.queued = func() { queued <- struct{}{} }

	a := submit(c, namedJob("a", 1))
	b := submit(c, namedJob("b", 1))
	// Both go at once, each on its own lane.
	got := map[string]bool{<-f.started: true, <-f.started: true}
	if !got["a"] || !got["b"] {
		t.Fatalf("calls started %v, want a and b at once", got)
	}
	cd := submit(c, namedJob("c", 1))
	<-queued
	dd := submit(c, namedJob("d", 1))
	<-queued
	f.release <- struct{}{} // one of a, b finishes; c and d go together
	if got := <-f.started; got != "c" {
		t.Fatalf("third call led by %q, want c", got)
	}
	f.release <- struct{}{}
	f.release <- struct{}{}
	for _, d := range []chan struct{}{a, b, cd, dd} {
		<-d
	}
	calls := f.seen()
	if len(calls) != 3 || !reflect.DeepEqual(calls[2], []string{"c", "d"}) {
		t.Errorf("calls %v, want a, b alone and then c with d", calls)
	}
}

// TestCoalescerStress runs many requests from many goroutines: each is run
// exactly once, no call exceeds the size limit (a larger request goes
// alone), and no more calls than lanes are in flight at any moment.
func TestCoalescerStress(t *testing.T) {
	const lanes, max, workers, each = 2, 8, 32, 200
	var inFlight, peak atomic.Int32
	var runs sync.Map // *job → count
	var bad atomic.Value
	c := newCoalescer(lanes, max, func(g []*job) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		size := 0
		for _, j := range g {
			size += j.size
			v, _ := runs.LoadOrStore(j, new(atomic.Int32))
			v.(*atomic.Int32).Add(1)
		}
		if len(g) > 1 && size > max {
			bad.Store("a gathered call exceeds the size limit")
		}
		inFlight.Add(-1)
	})
	var wg sync.WaitGroup
	jobs := make([][]*job, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				j := namedJob("", 1+rand.IntN(10))
				jobs[w] = append(jobs[w], j)
				c.do(j)
			}
		}()
	}
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Error(msg)
	}
	if p := peak.Load(); p > lanes {
		t.Errorf("%d calls in flight at once, lanes %d", p, lanes)
	}
	for _, js := range jobs {
		for _, j := range js {
			v, ok := runs.Load(j)
			if !ok || v.(*atomic.Int32).Load() != 1 {
				t.Fatal("a request was not run exactly once")
			}
		}
	}
	if c.running != 0 || len(c.queue) != 0 {
		t.Errorf("after the load: %d lanes in use, %d queued", c.running, len(c.queue))
	}
}

func TestMembersEnd(t *testing.T) {
	var r1, r2 error // two requests, named by their error slots
	mk := func(req *error, set, key string) member {
		return member{x: &execCtx{set: set}, call: &codec.Call{Key: []byte(key)}, fatal: req}
	}
	es := []member{
		mk(&r1, "s", "a"),
		mk(&r2, "s", "a"),   // another request on the same record: same call
		mk(&r1, "s_1", "a"), // same key in another database: another record
		mk(&r1, "s", "b"),
		mk(&r1, "s", "a"), // the first request again on its record: cut here
		mk(&r2, "s", "b"),
		mk(&r2, "s", "b"), // cut
	}
	for _, pad := range []int{0, 40} {
		// pad spreads the group over more than 32 members, the map path.
		all := append([]member(nil), es...)
		for i := range pad {
			all = append(all, mk(&r1, "pad", string(rune('A'+i))))
		}
		var ends []int
		for start := 0; start < len(all); {
			end := entriesEnd(all, start)
			ends = append(ends, end)
			start = end
		}
		want := []int{4, 6, len(all)}
		if !reflect.DeepEqual(ends, want) {
			t.Errorf("pad %d: calls end at %v, want %v", pad, ends, want)
		}
	}
}

// gatheredServer opens the test server with a coalescer whose every call
// runs as a gathered one (several requests' calls in batch operates), even
// for a lone request: the path concurrent clients take.
func gatheredServer(t *testing.T) *Store {
	s := openServer(t)
	if s.co == nil {
		t.Fatal("no coalescer with the default configuration")
	}
	s.co.run = func(g []*job) {
		if len(g) == 1 {
			g = append(g, &job{}) // an empty second request: the gathered path
		}
		runJobs(g)
	}
	return s
}

// TestConformanceGathered runs the conformance suite with every request
// answered through the gathered path: one record's calls in a batch
// operate must answer exactly as an operate does.
func TestConformanceGathered(t *testing.T) {
	s := gatheredServer(t)
	defer s.Close()
	storetest.Run(t, func(t *testing.T) store.Store { return s })
}

// TestGatheredCallsAnswerEachRequest holds one call in flight while
// requests with different outcomes queue, then checks that they went
// together and that each record's outcome answered only its own request:
// the type guard (WRONGTYPE), a generation conflict, an overflow, a plain
// write, and one request's two calls on one record, in order.
func TestGatheredCallsAnswerEachRequest(t *testing.T) {
	s := openServer(t)
	defer s.Close()
	ctx := context.Background()
	put := func(key string, typ string, v codec.Value) {
		var resp codec.Response
		s.Exec(ctx, 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: []byte(key),
			Policy: codec.Policy{Exists: codec.ExistsReplace, TTL: codec.TTLNever},
			Ops:    []codec.Op{{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(typ)}, {Code: codec.OpPut, Bin: codec.BinValue, Value: v}}}}}, &resp)
		if resp.Code != codec.OK || resp.Results[0].Code != codec.OK {
			t.Fatalf("put %s: %d/%d", key, resp.Code, resp.Results[0].Code)
		}
	}
	put("g:str", codec.TypeString, codec.Bytes([]byte("x")))
	put("g:hash", codec.TypeHash, codec.Map(codec.Bytes([]byte("f")), codec.Int(1)))
	put("g:max", codec.TypeString, codec.Int(math.MaxInt64))
	put("g:n", codec.TypeString, codec.Int(10))

	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	first := true
	s.co.run = func(g []*job) {
		mu.Lock()
		sizes = append(sizes, len(g))
		hold := first
		first = false
		mu.Unlock()
		if hold {
			<-release
		}
		runJobs(g)
	}
	s.co.lanes = 1
	queued := make(chan struct{}, 16)
	s.co.queued = func() { queued <- struct{}{} }

	get := func(key, guard string) codec.Call {
		return codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: guard}, Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}
	}
	incr := func(key string, by int64) codec.Call {
		return codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeString},
			Ops: []codec.Op{{Code: codec.OpAdd, Bin: codec.BinValue, Value: codec.Int(by)}, {Code: codec.OpGet, Bin: codec.BinValue}}}
	}
	stale := get("g:str", codec.TypeString)
	stale.Policy.Generation = 1 << 30
	stale.Ops = []codec.Op{{Code: codec.OpPut, Bin: codec.BinValue, Value: codec.Bytes([]byte("y"))}}
	reqs := [][]codec.Call{
		{get("g:str", codec.TypeString)},   // held in flight
		{get("g:hash", codec.TypeString)},  // WRONGTYPE
		{stale},                            // generation conflict
		{incr("g:max", 1)},                 // overflow
		{get("g:str", codec.TypeString)},   // the same record as another request
		{incr("g:n", 1), incr("g:n", 100)}, // one request's two calls on one record
	}
	resps := make([]codec.Response, len(reqs))
	var wg sync.WaitGroup
	run := func(i int) {
		defer wg.Done()
		s.Exec(ctx, 0, &codec.Request{Kind: codec.ReqRecords, Calls: reqs[i]}, &resps[i])
	}
	wg.Add(len(reqs))
	go run(0)
	for i := 1; i < len(reqs); i++ {
		go run(i)
		<-queued
	}
	close(release)
	wg.Wait()

	if len(sizes) != 2 || sizes[1] != len(reqs)-1 {
		t.Errorf("calls of %v requests, want the held one and then the other %d together", sizes, len(reqs)-1)
	}
	want := []struct {
		code codec.Code
		val  codec.Value
	}{
		{codec.OK, codec.Bytes([]byte("x"))},
		{codec.FilteredOut, codec.Nil},
		{codec.GenerationError, codec.Nil},
		{codec.Overflow, codec.Nil},
		{codec.OK, codec.Bytes([]byte("x"))},
		{codec.OK, codec.Int(11)},
	}
	for i, w := range want {
		r := &resps[i]
		if r.Code != codec.OK || len(r.Results) != len(reqs[i]) {
			t.Fatalf("request %d: code %d (%s), %d results", i, r.Code, r.Msg, len(r.Results))
		}
		res := &r.Results[0]
		got := codec.Nil
		if len(res.Values) > 0 {
			got = res.Values[len(res.Values)-1]
		}
		if res.Code != w.code || (w.code == codec.OK && !got.Equal(w.val)) {
			t.Errorf("request %d: code %d (%s) value %v, want %d %v", i, res.Code, res.Msg, got, w.code, w.val)
		}
	}
	if r := resps[5].Results[1]; r.Code != codec.OK || !r.Values[1].Equal(codec.Int(111)) {
		t.Errorf("second call on one record: code %d value %v, want 111 after the first call's 11", r.Code, r.Values)
	}
}
