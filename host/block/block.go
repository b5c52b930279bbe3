// Package block keeps the clients that wait in a blocking command (BLPOP,
// BZPOPMIN, ... any module command that answers codec.StatusBlock) and
// wakes them when one of their keys is written.
//
// A Registry wraps the store: every successful write call that goes
// through it names its key, and the first client waiting on that key (in
// that database) is woken to run its command again. Writes made through
// other proxies on the same store are seen by polling: at an interval, one
// batched header read of every key a client waits on, waking the waiters
// of keys whose generation changed. Nothing is polled while no client
// waits, and a poll that takes long (many keys on a remote store) waits
// longer for the next (up to a second), so that polling takes no more than
// 2% of the time.
//
// Clients blocked on one key run again one at a time, in the order they
// blocked, as Redis serves them: the first is woken; while it runs, more
// writes to the key only mark it. When it blocks again, it (the first
// still) is woken again if the key was written meanwhile; when it leaves
// (it replied, timed out, was unblocked or went away), the next client is
// woken: no write is lost, and one push serves blocked clients in turn.
//
// The Registry holds no goroutine and no timer per client: the caller
// decides how a client waits (the server parks it in its connection's
// read) and is called back to wake it.
package block

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// DefaultPollInterval is how often a Registry reads the keys clients wait
// on, to see writes made through other proxies, unless configured.
const DefaultPollInterval = 20 * time.Millisecond

// maxPollBatch bounds the keys of one poll request: Aerospike's batch
// requests are limited (5000 keys by default in older servers).
const maxPollBatch = 5000

// pollDuty bounds the share of time spent polling: the next poll waits at
// least pollDuty times as long as the last one took.
const pollDuty = 50

// maxPollDelay bounds how long a slow poll delays the next (a configured
// interval longer than it is kept).
const maxPollDelay = time.Second

// pollTimeout bounds one poll request.
const pollTimeout = 10 * time.Second

// Options configures a Registry.
type Options struct {
	// PollInterval is how often the keys clients wait on are read, to wake
	// them on writes made through other proxies; 0 never polls (one proxy
	// per store: its own writes wake its clients).
	PollInterval time.Duration
	// Logger receives poll failures; nil discards them.
	Logger *slog.Logger
}

// Registry is a store that wakes the clients blocked on the keys written
// through it. Its methods are safe for concurrent use.
type Registry struct {
	st   store.Store
	poll time.Duration
	log  *slog.Logger

	// waiting counts the parked Waiters: Exec looks at nothing else while
	// nobody waits.
	waiting atomic.Int64

	mu      sync.Mutex
	dbs     []map[string]*queue // by database, then key; a key with no waiter has no queue
	polling bool                // a poll is scheduled or running
	timer   *time.Timer
	closed  bool

	// Scratch of the poll (one runs at a time).
	pq   []*queue
	req  codec.Request
	resp codec.Response

	polls, pollNanos atomic.Int64
}

// queue is the clients waiting on one key, in the order they blocked.
type queue struct {
	db         int
	key        string
	head, tail *node
	// busy is the Waiter woken through this key whose run has not ended;
	// dirty records a write while it runs.
	busy  *Waiter
	dirty bool
	// gen is the key's generation as last seen by a read or a write
	// through this Registry; 0: absent, or not seen yet.
	gen uint32
}

// node is a Waiter's place in the queue of one of its keys.
type node struct {
	w          *Waiter
	q          *queue
	prev, next *node
}

// Waiter is one blocked client. Its owner sets Wake once and reuses the
// Waiter for each of the client's blocks.
type Waiter struct {
	// Wake is called, with the Registry's lock held, when the client
	// should run its command again: it must only signal the client (it
	// may not call the Registry).
	Wake func()

	db     int
	nodes  []node
	parked bool
}

// New returns a Registry over st.
func New(st store.Store, opts Options) *Registry {
	r := &Registry{st: st, poll: opts.PollInterval, log: opts.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// Store is the store the Registry wraps.
func (r *Registry) Store() store.Store { return r.st }

// Inline reports whether the wrapped store never waits.
func (r *Registry) Inline() bool { return r.st.Inline() }

// Stats are the wrapped store's (store.Statser), if it counts any.
func (r *Registry) Stats() []store.Stat {
	if s, ok := r.st.(store.Statser); ok {
		return s.Stats()
	}
	return nil
}

// Close stops polling and closes the wrapped store.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.mu.Unlock()
	return r.st.Close()
}

// Exec runs req on the wrapped store, then wakes the clients waiting on
// the keys of its successful write calls.
func (r *Registry) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	r.st.Exec(ctx, db, req, resp)
	if r.waiting.Load() == 0 || req.Kind != codec.ReqRecords || resp.Code != codec.OK {
		return
	}
	r.written(db, req, resp)
}

var _ store.Batcher = (*Registry)(nil)

// ExecMany runs ops on the wrapped store together (store.ExecMany), then
// wakes the waiters of the keys they wrote, as Exec does.
func (r *Registry) ExecMany(ops []store.Op) {
	store.ExecMany(r.st, ops)
	if r.waiting.Load() == 0 {
		return
	}
	for i := range ops {
		if o := &ops[i]; o.Req.Kind == codec.ReqRecords && o.Resp.Code == codec.OK {
			r.written(o.DB, o.Req, o.Resp)
		}
	}
}

// written wakes the waiters of the keys req wrote.
func (r *Registry) written(db int, req *codec.Request, resp *codec.Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if db < 0 || db >= len(r.dbs) || len(r.dbs[db]) == 0 {
		return
	}
	keys := r.dbs[db]
	for i := range req.Calls {
		if i >= len(resp.Results) {
			break
		}
		c, res := &req.Calls[i], &resp.Results[i]
		if res.Code != codec.OK || readOnly(c) {
			continue
		}
		if q := keys[string(c.Key)]; q != nil {
			// The write's result carries the generation it left: a poll
			// that reads it again need not wake anyone.
			q.gen = res.Generation
			r.notify(q)
		}
	}
}

// headerOps are the ops of a poll's calls: the record's generation only.
var headerOps = []codec.Op{{Code: codec.OpGetHeader}}

// readOnly reports whether a call only reads.
func readOnly(c *codec.Call) bool {
	for i := range c.Ops {
		if !c.Ops[i].Code.ReadOnly() {
			return false
		}
	}
	return true
}

// notify wakes the first waiter of q, unless one woken through q still
// runs: that one then wakes the next when it ends. Called with r.mu held.
func (r *Registry) notify(q *queue) {
	if q.busy != nil {
		q.dirty = true
		return
	}
	if q.head == nil {
		return
	}
	q.busy, q.dirty = q.head.w, false
	q.busy.Wake()
}

// Park registers w as waiting on keys of database db, after the clients
// already waiting on them. keys are copied.
//
// Then it reads the keys' generations once: a write between the
// command's attempt and Park named no waiter, so a key that exists now (or
// changed since this Registry last saw it) wakes its first waiter. Without
// that read such a write would be seen only by the next poll, or never
// when polling is off.
func (r *Registry) Park(w *Waiter, db int, keys [][]byte) {
	r.mu.Lock()
	r.park(w, db, keys)
	if r.poll > 0 && !r.polling && !r.closed {
		r.polling = true
		if r.timer == nil {
			r.timer = time.AfterFunc(r.poll, r.pollOnce)
		} else {
			r.timer.Reset(r.poll)
		}
	}
	r.mu.Unlock()
	r.check(db, keys)
}

// checkScratch is a request and response for check, pooled: blocks are
// frequent enough to reuse them, too rare to keep one per client.
type checkScratch struct {
	req  codec.Request
	resp codec.Response
}

var checkPool = sync.Pool{New: func() any { return new(checkScratch) }}

// check reads the generations of keys in database db and wakes the
// waiters of those that exist and that the Registry had not seen so.
func (r *Registry) check(db int, keys [][]byte) {
	sc := checkPool.Get().(*checkScratch)
	defer checkPool.Put(sc)
	req := &sc.req
	req.Kind, req.Calls = codec.ReqRecords, req.Calls[:0]
	for _, k := range keys {
		req.Calls = append(req.Calls, codec.Call{Key: k, Ops: headerOps})
	}
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	r.st.Exec(ctx, db, req, &sc.resp)
	cancel()
	clear(req.Calls) // the caller's keys
	if sc.resp.Code != codec.OK {
		r.log.Warn("block: reading the keys a client blocks on failed", "db", db, "code", sc.resp.Code, "err", sc.resp.Msg)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range keys {
		if i >= len(sc.resp.Results) || db >= len(r.dbs) {
			break
		}
		if q := r.dbs[db][string(k)]; q != nil {
			r.seen(q, &sc.resp.Results[i])
		}
	}
}

// seen records the generation a read of q's key found, and wakes q's first
// waiter if it changed. A key not seen before counts as absent (0): the
// client that blocked on it found nothing, so if it exists now it may have
// been written since. Called with r.mu held.
func (r *Registry) seen(q *queue, res *codec.Result) {
	var gen uint32
	switch res.Code {
	case codec.OK:
		gen = res.Generation
	case codec.NotFound:
	default:
		return // unknown: the next poll tells
	}
	if gen != q.gen {
		q.gen = gen
		r.notify(q)
	}
}

func (r *Registry) park(w *Waiter, db int, keys [][]byte) {
	if w.parked {
		panic("block: Park of a parked Waiter")
	}
	for len(r.dbs) <= db {
		r.dbs = append(r.dbs, nil)
	}
	if r.dbs[db] == nil {
		r.dbs[db] = make(map[string]*queue)
	}
	m := r.dbs[db]
	if cap(w.nodes) < len(keys) {
		w.nodes = make([]node, 0, len(keys))
	}
	w.nodes = w.nodes[:0]
	w.db, w.parked = db, true
	for _, k := range keys {
		q := m[string(k)]
		if q == nil {
			q = &queue{db: db, key: string(k)}
			m[q.key] = q
		} else if w.on(q) {
			continue // BLPOP k k: one place is enough
		}
		w.nodes = append(w.nodes, node{w: w, q: q})
	}
	// Link once the slice no longer moves.
	for i := range w.nodes {
		n := &w.nodes[i]
		n.prev = n.q.tail
		if n.q.tail != nil {
			n.q.tail.next = n
		} else {
			n.q.head = n
		}
		n.q.tail = n
	}
	r.waiting.Add(1)
}

// on reports whether w already waits on q.
func (w *Waiter) on(q *queue) bool {
	for i := range w.nodes {
		if w.nodes[i].q == q {
			return true
		}
	}
	return false
}

// Rearm keeps w waiting after its command, run again, blocked again. On
// the same keys it keeps its places in their queues; on others it goes to
// the end of theirs. A key written while it ran wakes it (or the client
// before it) again.
func (r *Registry) Rearm(w *Waiter, db int, keys [][]byte) {
	r.mu.Lock()
	if !w.parked {
		r.mu.Unlock()
		return
	}
	if !w.same(db, keys) {
		r.leave(w)
		r.park(w, db, keys)
		r.mu.Unlock()
		r.check(db, keys) // as Park does
		return
	}
	defer r.mu.Unlock()
	for i := range w.nodes {
		if q := w.nodes[i].q; q.busy == w {
			q.busy = nil
			if q.dirty {
				r.notify(q)
			}
		}
	}
}

// same reports whether w waits on exactly keys (as Park would place them).
func (w *Waiter) same(db int, keys [][]byte) bool {
	if db != w.db {
		return false
	}
	i := 0
	for _, k := range keys {
		if i < len(w.nodes) && w.nodes[i].q.key == string(k) {
			i++
			continue
		}
		dup := false
		for j := 0; j < i; j++ {
			dup = dup || w.nodes[j].q.key == string(k)
		}
		if !dup {
			return false
		}
	}
	return i == len(w.nodes)
}

// Done forgets w: its command replied, timed out, was unblocked or its
// client went away. A key whose write woke w wakes the next waiter: w may
// have taken what the write left (its own write then marked the key), or
// taken from another of its keys, or nothing; the next waiter runs again
// and finds out.
func (r *Registry) Done(w *Waiter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.parked {
		r.leave(w)
	}
}

func (r *Registry) leave(w *Waiter) {
	for i := range w.nodes {
		n := &w.nodes[i]
		q := n.q
		if n.prev != nil {
			n.prev.next = n.next
		} else {
			q.head = n.next
		}
		if n.next != nil {
			n.next.prev = n.prev
		} else {
			q.tail = n.prev
		}
		*n = node{}
		if q.busy == w {
			q.busy = nil
			r.notify(q)
		}
		if q.head == nil {
			delete(r.dbs[q.db], q.key)
		}
	}
	w.nodes = w.nodes[:0]
	w.parked = false
	r.waiting.Add(-1)
}

// Waiting returns the number of parked Waiters.
func (r *Registry) Waiting() int { return int(r.waiting.Load()) }

// Polls returns the number of polls run and the time they took.
func (r *Registry) Polls() (int64, time.Duration) {
	return r.polls.Load(), time.Duration(r.pollNanos.Load())
}

// pollOnce reads the generation of every key a client waits on, one batch
// request per database (of up to maxPollBatch keys), and wakes the waiters
// of the keys that changed since they were last seen. It runs on the
// timer's goroutine and schedules the next poll while anyone waits.
func (r *Registry) pollOnce() {
	began := time.Now()
	r.mu.Lock()
	if r.closed {
		r.polling = false
		r.mu.Unlock()
		return
	}
	for db := range r.dbs {
		if len(r.dbs[db]) == 0 {
			continue
		}
		r.pq = r.pq[:0]
		for _, q := range r.dbs[db] {
			r.pq = append(r.pq, q)
		}
		for i := 0; i < len(r.pq); i += maxPollBatch {
			r.pollBatch(db, r.pq[i:min(len(r.pq), i+maxPollBatch)])
		}
		clear(r.pq) // let go of queues that empty meanwhile
	}
	r.polls.Add(1)
	if r.waiting.Load() > 0 && !r.closed {
		// A poll that took long (many keys, a remote store) waits longer
		// for the next: polling takes at most 1/pollDuty of the time, and
		// a write through another proxy is seen within a second at worst.
		took := time.Since(began)
		r.pollNanos.Add(int64(took))
		r.timer.Reset(min(max(r.poll, pollDuty*took), max(r.poll, maxPollDelay)))
	} else {
		r.polling = false
	}
	r.mu.Unlock()
}

// pollBatch reads the headers of qs's keys in database db and wakes the
// waiters of those that changed. Called with r.mu held; it lets go of it
// while the store works.
func (r *Registry) pollBatch(db int, qs []*queue) {
	req := &r.req
	req.Kind = codec.ReqRecords
	if cap(req.Calls) < len(qs) {
		req.Calls = make([]codec.Call, len(qs))
	}
	req.Calls = req.Calls[:len(qs)]
	for i, q := range qs {
		// The stores neither keep nor change a request's keys and ops: the
		// calls share one op and alias the queues' keys, rather than cost
		// each blocked key a copy of both.
		req.Calls[i] = codec.Call{Key: unsafe.Slice(unsafe.StringData(q.key), len(q.key)), Ops: headerOps}
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), pollTimeout)
	r.st.Exec(ctx, db, req, &r.resp)
	cancel()
	r.mu.Lock()
	clear(req.Calls) // the keys of queues that may go
	if r.resp.Code != codec.OK {
		r.log.Warn("block: polling the keys clients wait on failed", "db", db, "code", r.resp.Code, "err", r.resp.Msg)
		return
	}
	for i, q := range qs {
		if i >= len(r.resp.Results) || r.dbs[db][q.key] != q {
			continue // left while the store worked
		}
		r.seen(q, &r.resp.Results[i])
	}
}
