package aerospike

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/storetest"
)

// fakeRun is a coalescer's run that records the groups it is given and
// blocks each call until the test releases it by its first job's name.
type fakeRun struct {
	mu      sync.Mutex
	groups  [][]string               // job names per call, in the order calls started
	gates   map[string]chan struct{} // by the first job's name
	started chan string              // the first job's name, as each call starts
}

func newFakeRun() *fakeRun {
	return &fakeRun{started: make(chan string, 64), gates: map[string]chan struct{}{}}
}

func (f *fakeRun) gate(name string) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.gates[name]
	if g == nil {
		g = make(chan struct{})
		f.gates[name] = g
	}
	return g
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
	<-f.gate(names[0])
}

// release lets the call led by name finish.
func (f *fakeRun) release(name string) { close(f.gate(name)) }

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

// queueing returns a coalescer on f.run and a channel that receives once
// per job that joins its queue.
func queueing(lanes, max int, f *fakeRun) (*coalescer, chan struct{}) {
	c := newCoalescer(lanes, max, f.run)
	queued := make(chan struct{}, 64)
	c.onQueue = func() { queued <- struct{}{} }
	return c, queued
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
	c, queued := queueing(1, 8, f)
	first := submit(c, namedJob("a", 1))
	if got := <-f.started; got != "a" {
		t.Fatalf("first call started with %q", got)
	}
	// While "a" is in flight, three requests arrive, one at a time so that
	// their order is known; they wait.
	var rest []chan struct{}
	for _, n := range []string{"b", "c", "d"} {
		rest = append(rest, submit(c, namedJob(n, 1)))
		<-queued
	}
	select {
	case <-first:
		t.Fatal("the first request returned before its call finished")
	default:
	}
	f.release("a")
	<-first
	if got := <-f.started; got != "b" {
		t.Fatalf("second call led by %q, want b", got)
	}
	f.release("b")
	for _, d := range rest {
		<-d
	}
	want := [][]string{{"a"}, {"b", "c", "d"}}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v: queued requests go together, in arrival order", got, want)
	}
	if c.running != 0 {
		t.Errorf("%d lanes still in use", c.running)
	}
}

// TestCoalescerFullCallGoesAtOnce: a queue that holds a full call's worth
// does not wait for a lane; a partial one does, also when a full call's
// extra lane frees.
func TestCoalescerFullCallGoesAtOnce(t *testing.T) {
	f := newFakeRun()
	c, queued := queueing(1, 3, f)
	a := submit(c, namedJob("a", 1))
	<-f.started
	b := submit(c, namedJob("b", 1))
	<-queued
	cd := submit(c, namedJob("c", 1))
	<-queued
	d := submit(c, namedJob("d", 1)) // the third record: a full call
	<-queued
	if got := <-f.started; got != "b" {
		t.Fatalf("a full call led by %q, want b, while a is in flight", got)
	}
	e := submit(c, namedJob("e", 1))
	<-queued
	f.release("a")
	<-a
	if got := f.seen(); len(got) != 2 {
		t.Fatalf("calls %v after a finished: e must wait for the lane the full call holds", got)
	}
	f.release("b")
	if got := <-f.started; got != "e" {
		t.Fatalf("third call led by %q, want e", got)
	}
	f.release("e")
	for _, ch := range []chan struct{}{b, cd, d, e} {
		<-ch
	}
	want := [][]string{{"a"}, {"b", "c", "d"}, {"e"}}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	if c.running != 0 || c.queued != 0 {
		t.Errorf("after the load: %d calls counted in flight, %d records queued", c.running, c.queued)
	}
}

func TestCoalescerSizeLimit(t *testing.T) {
	f := newFakeRun()
	c, queued := queueing(1, 4, f)
	first := submit(c, namedJob("a", 1))
	<-f.started
	// Larger than a call: it goes at once, alone.
	big := submit(c, namedJob("big", 9))
	<-queued
	if got := <-f.started; got != "big" {
		t.Fatalf("call led by %q, want big", got)
	}
	// 3 + 2 records: more than a call holds; c goes at once, d waits.
	cc := submit(c, namedJob("c", 3))
	<-queued
	dd := submit(c, namedJob("d", 2))
	<-queued
	if got := <-f.started; got != "c" {
		t.Fatalf("call led by %q, want c", got)
	}
	f.release("a")
	f.release("big")
	f.release("c")
	if got := <-f.started; got != "d" {
		t.Fatalf("call led by %q, want d", got)
	}
	f.release("d")
	for _, ch := range []chan struct{}{first, big, cc, dd} {
		<-ch
	}
	want := [][]string{{"a"}, {"big"}, {"c"}, {"d"}}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
}

func TestCoalescerLanes(t *testing.T) {
	f := newFakeRun()
	c, queued := queueing(2, 8, f)
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
	f.release("a") // c and d go together on a's lane
	if got := <-f.started; got != "c" {
		t.Fatalf("third call led by %q, want c", got)
	}
	f.release("b")
	f.release("c")
	for _, d := range []chan struct{}{a, b, cd, dd} {
		<-d
	}
	calls := f.seen()
	if len(calls) != 3 || !reflect.DeepEqual(calls[2], []string{"c", "d"}) {
		t.Errorf("calls %v, want a, b alone and then c with d", calls)
	}
}

// TestCoalescerStress runs many requests from many goroutines: each is run
// exactly once, no gathered call exceeds the size limit (a larger request
// goes alone), and with requests of one record, no more calls that are not
// full than lanes are in flight. (With larger requests a call can be short
// of full and still not grow: the next request does not fit; it then goes
// beyond the lanes too.)
// TestCoalescerWindowGoesTogether: the requests of one window, with
// nothing in flight, are one call made on the caller's goroutine, and none
// is left a wake-up meant for a waiting goroutine.
func TestCoalescerWindowGoesTogether(t *testing.T) {
	var calls [][]*job
	c := newCoalescer(2, 16, func(g []*job) { calls = append(calls, append([]*job(nil), g...)) })
	win := []*job{namedJob("a", 1), namedJob("b", 2), namedJob("c", 1)}
	c.doMany(win)
	if len(calls) != 1 || !reflect.DeepEqual(calls[0], win) {
		t.Fatalf("calls %v, want one call of the window's three requests", calls)
	}
	for _, j := range win {
		if len(j.wake) != 0 || j.self {
			t.Errorf("request %s left with a wake-up or its mark", j.x.set)
		}
	}
	if c.running != 0 || len(c.queue) != 0 {
		t.Errorf("after the call: %d lanes in use, %d queued; want none", c.running, len(c.queue))
	}
}

// TestCoalescerWindowQueues: a window that finds every lane busy queues in
// order, and goes in the next call with what queued after it.
func TestCoalescerWindowQueues(t *testing.T) {
	f := newFakeRun()
	c, queued := queueing(1, 8, f)
	first := submit(c, namedJob("a", 1))
	if got := <-f.started; got != "a" {
		t.Fatalf("first call started with %q", got)
	}
	win := []*job{namedJob("w1", 1), namedJob("w2", 1), namedJob("w3", 1)}
	winDone := make(chan struct{})
	go func() {
		c.doMany(win)
		close(winDone)
	}()
	<-queued
	later := submit(c, namedJob("z", 1))
	<-queued
	f.release("a")
	<-first
	if got := <-f.started; got != "w1" {
		t.Fatalf("second call led by %q, want w1", got)
	}
	f.release("w1")
	<-winDone
	<-later
	want := [][]string{{"a"}, {"w1", "w2", "w3", "z"}}
	if got := f.seen(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	for _, j := range win {
		if len(j.wake) != 0 {
			t.Errorf("request %s left with a wake-up", j.x.set)
		}
	}
	if c.running != 0 {
		t.Errorf("%d lanes still in use", c.running)
	}
}

// TestCoalescerWindowSizeLimit: a window of more records than a call
// carries goes as several calls at once, none over the limit; with a limit
// of one record (batch_size = 1: no gathering) each request is a call.
func TestCoalescerWindowSizeLimit(t *testing.T) {
	for _, max := range []int{1, 2} {
		var mu sync.Mutex
		var sizes []int
		c := newCoalescer(1, max, func(g []*job) {
			n := 0
			for _, j := range g {
				n += j.size
			}
			mu.Lock()
			sizes = append(sizes, n)
			mu.Unlock()
		})
		win := []*job{namedJob("a", 1), namedJob("b", 1), namedJob("c", 1), namedJob("d", 1), namedJob("e", 1)}
		c.doMany(win)
		total := 0
		for _, n := range sizes {
			if n > max {
				t.Errorf("max %d: a call of %d records", max, n)
			}
			total += n
		}
		if total != 5 || (max == 1 && len(sizes) != 5) {
			t.Errorf("max %d: calls of %v records, want the 5 requests in calls of at most %d", max, sizes, max)
		}
		if c.running != 0 || len(c.queue) != 0 || c.queued != 0 {
			t.Errorf("max %d: after the calls: %d lanes in use, %d queued", max, c.running, len(c.queue))
		}
	}
}

func TestCoalescerStress(t *testing.T) {
	t.Run("one record each", func(t *testing.T) { stress(t, 1) })
	t.Run("up to ten records each", func(t *testing.T) { stress(t, 10) })
}

func stress(t *testing.T, maxSize int) {
	const lanes, max, workers, each = 2, 8, 32, 200
	var partial atomic.Int32 // calls in flight that are not full
	var runs sync.Map        // *job → count
	var bad atomic.Value
	c := newCoalescer(lanes, max, func(g []*job) {
		size := 0
		for _, j := range g {
			size += j.size
			v, _ := runs.LoadOrStore(j, new(atomic.Int32))
			v.(*atomic.Int32).Add(1)
		}
		if len(g) > 1 && size > max {
			bad.Store("a gathered call exceeds the size limit")
		}
		if maxSize == 1 && size < max {
			if n := partial.Add(1); n > lanes {
				bad.Store(fmt.Sprintf("%d calls that are not full in flight, lanes %d", n, lanes))
			}
			defer partial.Add(-1)
		}
	})
	var wg sync.WaitGroup
	jobs := make([][]*job, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				if rand.IntN(2) == 0 {
					j := namedJob("", 1+rand.IntN(maxSize))
					jobs[w] = append(jobs[w], j)
					c.do(j)
					continue
				}
				// A pipeline window's requests, handed over together.
				win := make([]*job, 1+rand.IntN(5))
				for i := range win {
					win[i] = namedJob("", 1+rand.IntN(maxSize))
				}
				jobs[w] = append(jobs[w], win...)
				c.doMany(win)
			}
		}()
	}
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Error(msg)
	}
	for _, js := range jobs {
		for _, j := range js {
			v, ok := runs.Load(j)
			if !ok || v.(*atomic.Int32).Load() != 1 {
				t.Fatal("a request was not run exactly once")
			}
			if len(j.wake) != 0 || j.self {
				t.Fatal("a request was left with a wake-up or marked as its leader's: its next use would not wait")
			}
		}
	}
	if c.running != 0 || len(c.queue) != 0 || c.queued != 0 {
		t.Errorf("after the load: %d calls in flight, %d jobs (%d records) queued", c.running, len(c.queue), c.queued)
	}
}

func TestMembersEnd(t *testing.T) {
	var r1, r2 error // two requests, named by their error slots
	mk := func(req *error, set, key string) member {
		return member{x: &execCtx{set: set}, call: &codec.Call{Key: []byte(key)}, fatal: req}
	}
	es := []member{
		mk(&r1, "s", "a"),
		mk(&r2, "s", "b"),
		mk(&r1, "s_1", "a"), // same key in another database: another record
		mk(&r2, "s", "a"),   // another request on a record in the call: shares it
		mk(&r1, "s", "c"),
		mk(&r1, "s", "a"), // the same request again on its record: cut
		mk(&r2, "s", "d"),
	}
	// hot: one row on one record from each of recordRowsMax+1 requests.
	reqs := make([]error, recordRowsMax+1)
	var hot []member
	for i := range reqs {
		hot = append(hot, mk(&reqs[i], "s", "hot"))
	}
	for _, pad := range []int{0, 40} {
		// pad spreads the group over more than 32 members, the map path.
		for _, tc := range []struct {
			name  string
			group []member
			want  []int
		}{
			{"requests", es, []int{5, 7}},
			{"hot key", hot, []int{recordRowsMax, recordRowsMax + 1}},
		} {
			all := append([]member(nil), tc.group...)
			for i := range pad {
				all = append(all, mk(&r1, "pad", string(rune('A'+i))))
			}
			var ends []int
			for start := 0; start < len(all); {
				end := (&groupScratch{seen: map[recordKey]recordRows{}}).entriesEnd(all, start)
				ends = append(ends, end)
				start = end
			}
			want := append([]int(nil), tc.want...)
			want[len(want)-1] += pad
			if !reflect.DeepEqual(ends, want) {
				t.Errorf("%s, pad %d: calls end at %v, want %v", tc.name, pad, ends, want)
			}
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
	held := make(chan struct{})
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
			close(held)
			<-release
		}
		runJobs(g)
	}
	s.co.lanes = 1
	queued := make(chan struct{}, 16)
	s.co.onQueue = func() { queued <- struct{}{} }

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
	// The first request's call is in flight before the others start (a
	// lane's owner yields once and would otherwise take them along).
	<-held
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

// TestExecManyAnswersEachRequest: the requests of one ExecMany (a pipeline
// window) go to the cluster as one batch call, and each record's outcome
// answers only its own request; a count and a request for a database out
// of range run beside them.
func TestExecManyAnswersEachRequest(t *testing.T) {
	s := openServer(t)
	defer s.Close()
	ctx := context.Background()
	mk := func(calls ...codec.Call) *codec.Request { return &codec.Request{Kind: codec.ReqRecords, Calls: calls} }
	put := func(key, typ string, v codec.Value) codec.Call {
		return codec.Call{Key: []byte(key), Policy: codec.Policy{Exists: codec.ExistsReplace, TTL: codec.TTLNever},
			Ops: []codec.Op{{Code: codec.OpPut, Bin: codec.BinType, Value: codec.Str(typ)}, {Code: codec.OpPut, Bin: codec.BinValue, Value: v}}}
	}
	get := func(key string) codec.Call {
		return codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeString}, Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}
	}
	incr := func(key string, by int64) codec.Call {
		return codec.Call{Key: []byte(key), Policy: codec.Policy{Guard: codec.TypeString},
			Ops: []codec.Op{{Code: codec.OpAdd, Bin: codec.BinValue, Value: codec.Int(by)}, {Code: codec.OpGet, Bin: codec.BinValue}}}
	}
	var resp codec.Response
	s.Exec(ctx, 0, mk(put("m:str", codec.TypeString, codec.Bytes([]byte("x"))), put("m:hash", codec.TypeHash, codec.Map(codec.Bytes([]byte("f")), codec.Int(1))),
		put("m:max", codec.TypeString, codec.Int(math.MaxInt64)), put("m:n", codec.TypeString, codec.Int(10))), &resp)
	if resp.Code != codec.OK {
		t.Fatalf("setup: %d %s", resp.Code, resp.Msg)
	}
	calls := func() uint64 {
		var n uint64
		for _, v := range s.Stats() {
			if v.Name == "batch_calls" || v.Name == "single_calls" {
				n += v.Value
			}
		}
		return n
	}
	reqs := []*codec.Request{
		mk(get("m:str")),                     // a plain read
		mk(get("m:hash")),                    // WRONGTYPE
		mk(incr("m:max", 1)),                 // overflow
		mk(incr("m:n", 1), incr("m:n", 100)), // one request's two calls on one record, in order
		{Kind: codec.ReqCount},
		mk(get("m:str")), // in a database out of range
	}
	resps := make([]codec.Response, len(reqs))
	ops := make([]store.Op, len(reqs))
	for i := range reqs {
		ops[i] = store.Op{Ctx: ctx, Req: reqs[i], Resp: &resps[i]}
	}
	ops[5].DB = -5
	s.ExecMany(ops)
	check := func(i, call int, code codec.Code, val codec.Value) {
		t.Helper()
		r := &resps[i]
		if r.Code != codec.OK || len(r.Results) <= call {
			t.Fatalf("request %d: code %d (%s), %d results", i, r.Code, r.Msg, len(r.Results))
		}
		res := &r.Results[call]
		got := codec.Nil
		if len(res.Values) > 0 {
			got = res.Values[len(res.Values)-1]
		}
		if res.Code != code || (code == codec.OK && !got.Equal(val)) {
			t.Errorf("request %d call %d: code %d (%s) value %v, want %d %v", i, call, res.Code, res.Msg, got, code, val)
		}
	}
	check(0, 0, codec.OK, codec.Bytes([]byte("x")))
	check(1, 0, codec.FilteredOut, codec.Nil)
	check(2, 0, codec.Overflow, codec.Nil)
	check(3, 0, codec.OK, codec.Int(11))
	check(3, 1, codec.OK, codec.Int(111))
	if r := resps[4]; r.Code != codec.OK || r.Count < 4 {
		t.Errorf("count: code %d (%s) count %d, want at least the 4 records written", r.Code, r.Msg, r.Count)
	}
	if r := resps[5]; r.Code != codec.InvalidOperation {
		t.Errorf("database -5: code %d (%s), want %d", r.Code, r.Msg, codec.InvalidOperation)
	}

	// Requests that all succeed (a filtered-out row costs a look of its
	// own): one batch call for the first call on each record, one more for
	// m:n's second.
	plain := []*codec.Request{mk(get("m:str")), mk(incr("m:n", 1), incr("m:n", 1)), mk(get("m:str2"))}
	ops = ops[:0]
	for i, rq := range plain {
		ops = append(ops, store.Op{Ctx: ctx, Req: rq, Resp: &resps[i]})
	}
	before := calls()
	s.ExecMany(ops)
	if n := calls() - before; n != 2 {
		t.Errorf("%d calls to the cluster for 3 requests of 4 calls on 3 records, want 2", n)
	}
	check(1, 1, codec.OK, codec.Int(113))
}

// TestStatsCountCalls: INFO's store counters say how requests reached the
// cluster: a lone call as one operate, several calls as one batch call
// carrying each of their records.
func TestStatsCountCalls(t *testing.T) {
	s := openServer(t)
	defer s.Close()
	stat := func() map[string]uint64 {
		m := map[string]uint64{}
		for _, v := range s.Stats() {
			m[v.Name] = v.Value
		}
		return m
	}
	get := func(key string) codec.Call {
		return codec.Call{Key: []byte(key), Ops: []codec.Op{{Code: codec.OpGet, Bin: codec.BinValue}}}
	}
	var resp codec.Response
	before := stat()
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{get("st:a")}}, &resp)
	after := stat()
	if d := after["single_calls"] - before["single_calls"]; d != 1 || after["batch_calls"] != before["batch_calls"] {
		t.Errorf("one call: %d single calls, %d batch calls; want 1, 0", d, after["batch_calls"]-before["batch_calls"])
	}
	before = after
	s.Exec(context.Background(), 0, &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{get("st:a"), get("st:b"), get("st:c")}}, &resp)
	after = stat()
	if calls, recs := after["batch_calls"]-before["batch_calls"], after["batch_records"]-before["batch_records"]; calls != 1 || recs != 3 {
		t.Errorf("three calls: %d batch calls of %d records, want 1 of 3", calls, recs)
	}
}

// TestBatchPolicyInline checks that batch calls let the server run them
// inline on a namespace on a device unless the configuration says to
// dispatch their records (RATIONALE.md, "Batch calls run inline on the
// server").
func TestBatchPolicyInline(t *testing.T) {
	for _, dispatch := range []bool{false, true} {
		x := &execCtx{s: &Store{cfg: Config{SocketTimeout: time.Second, TotalTimeout: time.Second, BatchDispatch: dispatch}},
			deadline: time.Now().Add(time.Second)}
		bp := batchPolicy(x)
		if bp.AllowInlineSSD == dispatch || !bp.AllowInline {
			t.Errorf("BatchDispatch %v: AllowInlineSSD %v, AllowInline %v", dispatch, bp.AllowInlineSSD, bp.AllowInline)
		}
	}
}
