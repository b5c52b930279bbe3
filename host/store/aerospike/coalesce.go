package aerospike

import (
	"runtime"
	"sync"
	"unsafe"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
)

// A coalescer gathers the record requests that are ready at the same moment
// into shared Aerospike calls: one round trip per Redis command is what
// limits respike on a real cluster, and a batch call costs the client and
// the server a fraction of a single-record call per record.
//
// It is opportunistic, not timed: a request that finds fewer than lanes
// calls in flight goes at once, so a lone client waits for nothing; requests
// that arrive while every lane is busy queue, and when a call returns the
// queue goes as the next call, up to max calls (records) in it. A queue that
// holds a full call's worth goes at once too, lane or not: it cannot grow
// any more, and a burst (pipelines of many clients) would otherwise wait
// for lanes one full call after another. The queued request at the head of
// a call's group runs the call on its own goroutine (the coalescer has none
// of its own); the others wait for it to finish.
//
// Ordering: the store's callers never have two requests on one record in
// flight when their order matters (one connection's commands on a key
// follow each other; host/module holds a pipeline's command back while an
// earlier one on the same key is in flight), so requests of different jobs
// may be answered in any order, and share a batch call on one record (up
// to recordRowsMax rows). A job's own calls on one record go in successive
// batch calls (entriesEnd), which keeps them in order.
type coalescer struct {
	lanes int // calls in flight before requests queue
	max   int // records per gathered call, at most

	// run performs a group of jobs as shared calls and sets each job's err.
	run func(group []*job)

	mu      sync.Mutex
	running int    // calls in flight: up to lanes, more for full calls
	queue   []*job // waiting, in arrival order
	queued  int    // records in queue

	// onQueue, when set (by tests), is called after a job joined the queue.
	onQueue func()
}

// job is one Exec's records request on its way through a coalescer.
type job struct {
	x       *execCtx
	calls   []codec.Call
	plans   []plan
	results []codec.Result
	size    int   // calls the server has to answer (not answered statically)
	err     error // a failure of the whole request (*errFatal), or nil

	// lead, when a waiting job is woken with it, is the group this job's
	// goroutine is to run; nil means the job was run by another.
	lead []*job
	wake chan struct{}
	// self marks a job of the group's own leader (doMany): not woken.
	self bool
	one  [1]*job // do's window of one, without an allocation
}

var jobPool = sync.Pool{New: func() any { return &job{wake: make(chan struct{}, 1)} }}

func getJob() *job { return jobPool.Get().(*job) }

func putJob(j *job) {
	lead := j.lead[:0]
	*j = job{wake: j.wake, lead: lead}
	jobPool.Put(j)
}

func newCoalescer(lanes, max int, run func([]*job)) *coalescer {
	return &coalescer{lanes: max1(lanes), max: max1(max), run: run}
}

func max1(n int) int { return max(n, 1) }

// do runs j, alone or gathered with others, and returns when its results
// are in.
func (c *coalescer) do(j *job) {
	j.one[0] = j
	c.doMany(j.one[:])
	j.one[0] = nil
}

// doMany runs js, requests of one caller ready at the same moment (a
// pipeline window's, or do's one): together in one call when a lane is
// free, with whatever else is queued; else queued in order, each answered
// by the call it lands in. It returns when all are answered.
func (c *coalescer) doMany(js []*job) {
	if len(js) == 0 {
		return
	}
	size, cut := 0, 0
	for i, j := range js {
		if i > 0 && size+j.size > c.max && cut == 0 {
			cut = i
		}
		size += j.size
	}
	if cut > 0 {
		// More than a call's worth (a small batch_size, or requests of
		// many records): the first call's worth goes from here, the rest
		// as calls of their own, at the same time, as do would send them.
		done := make(chan struct{})
		go func() {
			c.doMany(js[cut:])
			close(done)
		}()
		c.doMany(js[:cut])
		<-done
		return
	}
	c.mu.Lock()
	if c.running < c.lanes {
		c.running++
		c.mu.Unlock()
		// Before going, let the goroutines that are ready to run do so:
		// the other commands of a pipeline window, or other clients'
		// commands just read, reach their store requests in a moment and
		// queue behind the lane taken here, and then go in this call. A
		// yield, not a timer: with nothing else runnable (a lone client)
		// it returns at once.
		runtime.Gosched()
		c.mu.Lock()
		group := append(js[0].lead[:0], js...)
		for _, j := range js[1:] {
			j.self = true // answered on this goroutine: nobody waits to be woken
		}
		if len(c.queue) > 0 {
			group = c.takeInto(group, c.max-size)
		}
		c.mu.Unlock()
		c.lead(group)
		return
	}
	c.queue = append(c.queue, js...)
	c.queued += size
	var head *job
	if c.queued >= c.max {
		// A full call: it goes now, on a lane of its own.
		c.running++
		head = c.take()
	}
	c.mu.Unlock()
	if c.onQueue != nil {
		c.onQueue()
	}
	if head != nil {
		head.wake <- struct{}{} // perhaps one of js: taken below, in order
	}
	// Groups form from the queue's head, so each of js is answered by a
	// call no later than the next one's: waiting in order never waits on
	// a call only this goroutine could lead.
	for _, j := range js {
		<-j.wake
		if len(j.lead) > 0 {
			c.lead(j.lead)
		}
	}
}

// lead runs group on a lane the caller holds, then hands the lane to the
// next queued group (or frees it) before waking the group's other jobs, so
// the next call starts as soon as possible.
func (c *coalescer) lead(group []*job) {
	c.run(group)
	c.next()
	for _, o := range group[1:] {
		o.lead = o.lead[:0]
		if o.self {
			o.self = false
			continue
		}
		o.wake <- struct{}{}
	}
	group[0].lead = group[0].lead[:0]
}

// next passes the lane just freed to the queue's head, or frees it when
// nothing is queued, or when more calls than lanes are in flight (full
// calls took lanes of their own) and the queue is not a full call.
func (c *coalescer) next() {
	c.mu.Lock()
	if len(c.queue) == 0 || (c.running > c.lanes && c.queued < c.max) {
		c.running--
		c.mu.Unlock()
		return
	}
	head := c.take()
	c.mu.Unlock()
	head.wake <- struct{}{}
}

// takeInto appends to group the queued jobs, from the head, that fit in
// room records, and removes them from the queue. Called with mu held.
func (c *coalescer) takeInto(group []*job, room int) []*job {
	n, size := 0, 0
	for n < len(c.queue) && size+c.queue[n].size <= room {
		size += c.queue[n].size
		n++
	}
	group = append(group, c.queue[:n]...)
	k := copy(c.queue, c.queue[n:])
	clear(c.queue[k:])
	c.queue = c.queue[:k]
	c.queued -= size
	return group
}

// take removes the group of the next call from the queue's head: up to max
// records' worth of jobs (at least one), run by the first of them, whose
// lead it sets. Called with mu held and the queue not empty.
func (c *coalescer) take() *job {
	n, size := 1, c.queue[0].size
	for n < len(c.queue) && size+c.queue[n].size <= c.max {
		size += c.queue[n].size
		n++
	}
	head := c.queue[0]
	head.lead = append(head.lead[:0], c.queue[:n]...)
	k := copy(c.queue, c.queue[n:])
	clear(c.queue[k:])
	c.queue = c.queue[:k]
	c.queued -= size
	return head
}

// runJobs is the coalescer's run for the store: one job runs as Exec
// always ran it (one operate for one call); several share batch operates.
func runJobs(group []*job) {
	if len(group) == 1 {
		j := group[0]
		j.err = j.x.own(j.calls, j.plans, j.results, j.size)
		return
	}
	sc := scratchPool.Get().(*groupScratch)
	es := sc.es[:0]
	for _, j := range group {
		for i := range j.calls {
			if j.plans[i].static != codec.OK {
				continue
			}
			es = append(es, member{x: j.x, call: &j.calls[i], p: &j.plans[i], res: &j.results[i], fatal: &j.err})
		}
	}
	for start := 0; start < len(es); {
		end := sc.entriesEnd(es, start)
		runEntries(es[start:end])
		start = end
	}
	clear(es) // no pointers into finished requests kept in the pool
	clear(sc.seen)
	if cap(es) <= 4096 {
		sc.es = es[:0]
		scratchPool.Put(sc)
	}
}

// groupScratch is runJobs' reusable memory: the group's members, and the
// records seen while cutting a large group into calls.
type groupScratch struct {
	es   []member
	seen map[recordKey]recordRows
}

var scratchPool = sync.Pool{New: func() any { return &groupScratch{seen: map[recordKey]recordRows{}} }}

// own runs one request's live calls: one operate for one call, batch
// operates for several.
func (x *execCtx) own(calls []codec.Call, plans []plan, results []codec.Result, live int) error {
	if live > 1 {
		return x.batch(calls, plans, results)
	}
	for i := range calls {
		if p := &plans[i]; p.static == codec.OK {
			if err := x.single(&calls[i], p, &results[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordRowsMax bounds the rows of different requests one batch call
// carries for one record. Concurrent commands of different clients on one
// key (a hot key: redis-benchmark's SADD, HSET, LPUSH and the rest use one
// key each) may run in any order, so they can share a call; one call per
// command on such a key made it the slowest thing respike did on
// Aerospike (one call per command at -P 16). The bound stays under the
// server's transaction-pending-limit (20 by default), beyond which a
// node answers KEY_BUSY to transactions queued on one record: a batch the
// node dispatches to its service threads, or a replicated write that
// holds the record until its replica answers, queues the rows on the
// record's lock.
const recordRowsMax = 8

// entriesEnd returns the end of the batch call that starts at es[start]:
// it stops before a second call of one request on a record already in it,
// and before a record's (recordRowsMax+1)th row. A request's own calls
// stay in successive batch calls, which keeps their order (Aerospike runs
// a batch's rows for one record in order only when it processes the batch
// inline); different requests' calls on a record share a call, up to
// recordRowsMax of them (their order is not the store's to keep: the
// store's callers never have two requests on one record in flight when
// their order matters).
// For large groups it uses sc's map, reused: its keys alias the calls' key
// bytes (no copy per member), which hold still until runJobs clears it.
func (sc *groupScratch) entriesEnd(es []member, start int) int {
	large := len(es)-start > 32 // a map for large groups
	if large {
		clear(sc.seen)
	}
	for end := start; end < len(es); end++ {
		e := &es[end]
		if large {
			k := recordKey{set: e.x.set, key: unsafe.String(unsafe.SliceData(e.call.Key), len(e.call.Key))}
			rows := sc.seen[k]
			if !rows.add(e.fatal) {
				return end
			}
			sc.seen[k] = rows
			continue
		}
		var rows recordRows
		for k := start; k < end; k++ {
			if sameRecord(&es[k], e) {
				rows.add(es[k].fatal)
			}
		}
		if !rows.add(e.fatal) {
			return end
		}
	}
	return len(es)
}

// recordRows are the requests (named by their failure slots) with a row
// on one record in a batch call being cut.
type recordRows struct {
	n    int
	reqs [recordRowsMax]*error
}

// add adds a row of request req, or reports false when the call cannot
// take it: req has a row on the record already, or the record has
// recordRowsMax.
func (r *recordRows) add(req *error) bool {
	if r.n == recordRowsMax {
		return false
	}
	for _, q := range r.reqs[:r.n] {
		if q == req {
			return false
		}
	}
	r.reqs[r.n] = req
	r.n++
	return true
}

// recordKey names a record: its set (database) and key.
type recordKey struct{ set, key string }

// sameRecord reports whether two entries address one record.
func sameRecord(a, b *member) bool {
	return a.x.set == b.x.set && string(a.call.Key) == string(b.call.Key)
}

// batchPolicy is the policy of a batch call that carries entries of
// several requests, x being the one whose deadline comes first: the call
// ends by every request's deadline. A request queued for a lane waits for
// calls of requests queued before it, whose deadlines come before its own
// (the budget is the same total_timeout, or less), so it answers by its
// deadline too. With the latest deadline instead, a request that waited
// while later ones joined its call could wait for those: up to one more
// total_timeout when the cluster does not answer. runEntries answers
// requests whose deadline passed before the call without sending them.
func batchPolicy(x *execCtx) *as.BatchPolicy {
	bp := as.NewBatchPolicy()
	bp.BasePolicy = x.base(false)
	bp.MaxRetries = 0 // a batch may hold writes
	bp.ConcurrentNodes = 0
	bp.RespondAllKeys = true
	// Inline: the node runs the call's records one after another in the
	// thread that received it, rather than handing each to a service
	// thread (which costs the server a thread wake-up or two per record:
	// RATIONALE.md, "Batch calls run inline on the server").
	bp.AllowInlineSSD = !x.s.cfg.BatchDispatch
	return bp
}
