package module

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// Contention gates.
//
// A read-modify-write command (INCRBYFLOAT, HINCRBYFLOAT, APPEND's and
// SETRANGE's fallbacks, BITFIELD, PFADD's dense path, LMOVE, the *STORE
// commands, ...) reads a record, computes, and writes on condition that the
// record is as it read it (its generation, or an item it expects), starting
// over when the condition fails, within kit.RetryFor. On a store that waits,
// N commands racing for one key each read, and one write in N wins: every
// loser reads and writes again, so the work per success grows with the
// contenders, and under 50 clients pipelining on one key a quarter of the
// commands ran out of time and answered the contention error.
//
// The runtime therefore orders the contenders of one proxy: once a
// command's conditional write on a key has failed its condition
// (lostRace), its later requests that touch that key wait their turn
// behind a FIFO gate of the (database, key), which the command then holds
// until it ends, or until it needs another key's gate (a command holds at
// most one). While a gate is held, a write command that touches it with
// nothing written yet queues too, before it loses (gateNeeded). The
// holder then races only commands of other proxies, so its retry nearly
// always wins. The generation check stays the guarantee, across proxies as
// within one: the gate only decides who tries when.
//
// No deadlock: a command waits for a gate only while it holds none; a
// holder waits for nothing but its own store requests and, at most, for
// what others wrote to go (a RENAME spins on another's pending mark); and
// a command that has written waits only after it lost a race (a RENAME
// has undone its mark by the request that waits), so no waiter holds up a
// holder. Waits never happen on a path that holds a module instance (the
// inline store path declines a gated request, which then takes the
// pending path), nor on a goroutine that has other commands in flight
// while it waits (a pipeline window queues the gated command and runs its
// others; see execWindow). A wait is bounded by gateMaxWait, after which the command
// runs without the gate, as it did before gates, so a holder that never
// releases (a panic on its connection's path) cannot stop a key for good.

// gateMaxWait bounds how long a command waits for a key's gate before it
// goes on without it. Longer than kit.RetryFor (2 s), so that a command
// queued behind a long line is never sent racing again early, and short
// enough that a gate left held by a broken connection costs seconds, not
// the key.
const gateMaxWait = 3 * time.Second

// gateKey is a record: its database and key.
type gateKey struct {
	db  int
	key string
}

// gateWaiter is a command queued for a gate: the gate, once handed over,
// sends id on ch (buffered, never full: see execWindow and pend.gateWait).
type gateWaiter struct {
	ch chan int
	id int
}

// gate is one key's: whether a command holds it and the commands queued for
// it, first come first.
type gate struct {
	waiters []gateWaiter
}

// gates are the runtime's contention gates; a key has one while a command
// holds it.
type gates struct {
	mu sync.Mutex
	m  map[gateKey]*gate
	n  atomic.Int64 // len(m), read without the lock
}

// acquire takes k's gate for a command, or queues it (w) and reports false:
// the gate is then handed over with a send on w.ch.
func (g *gates) acquire(k gateKey, w gateWaiter) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[gateKey]*gate{}
	}
	gt := g.m[k]
	if gt == nil {
		g.m[k] = new(gate)
		g.n.Add(1)
		return true
	}
	gt.waiters = append(gt.waiters, w)
	return false
}

// release lets go of k's gate: the first command queued gets it.
func (g *gates) release(k gateKey) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gt := g.m[k]
	if gt == nil {
		return
	}
	if len(gt.waiters) == 0 {
		delete(g.m, k)
		g.n.Add(-1)
		return
	}
	w := gt.waiters[0]
	gt.waiters = gt.waiters[1:]
	w.ch <- w.id // the gate stays held, by w
}

// withdraw takes w out of k's queue after it waited too long. Called with
// g.mu held; it reports false when w is no longer queued (the gate was
// handed to it: its send is in w.ch).
func (g *gates) withdraw(k gateKey, w gateWaiter) bool {
	gt := g.m[k]
	if gt == nil {
		return false
	}
	for i, o := range gt.waiters {
		if o == w {
			gt.waiters = append(gt.waiters[:i], gt.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// gateState is a command's part in the gates, kept in its call state.
type gateState struct {
	hot    gateKey // the key whose conditional write this command lost last
	hasHot bool
	held   gateKey // the gate the command holds
	holds  bool
	queued bool // waiting for hot's gate
}

// lostRace reports whether call failed because the record was not as the
// command read it: its generation changed, it was created or deleted
// meanwhile, or an item it expected is gone (OpExpectListItem,
// OpExpectBlobSize). Other failures (WRONGTYPE, a store error) are no race.
func lostRace(call *codec.Call, code codec.Code) bool {
	switch code {
	case codec.GenerationError:
		return true
	case codec.Exists:
		return call.Policy.Exists == codec.ExistsCreateOnly
	case codec.NotFound:
		return call.Policy.Generation != 0
	case codec.FilteredOut:
		for i := range call.Ops {
			if op := call.Ops[i].Code; op == codec.OpExpectListItem || op == codec.OpExpectBlobSize {
				return true
			}
		}
	}
	return false
}

// noteLost records the key of the first call of rq (run in db) that lost a
// race, if any: the command's later requests on it go through its gate.
func (c *call) noteLost(db int, rq *codec.Request, resp *codec.Response) {
	if rq.Kind != codec.ReqRecords || resp.Code != codec.OK {
		return
	}
	for i := range resp.Results {
		if i >= len(rq.Calls) {
			return
		}
		if code := resp.Results[i].Code; code != codec.OK && lostRace(&rq.Calls[i], code) {
			g := &c.gate
			k := rq.Calls[i].Key
			rdb := requestDB(db, rq)
			if !g.hasHot || g.hot.db != rdb || g.hot.key != string(k) {
				g.hot, g.hasHot = gateKey{db: rdb, key: string(k)}, true
			}
			return
		}
	}
}

// needsGate reports whether c's pending request touches the key it lost a
// race on without holding that key's gate.
func (c *call) needsGate() bool {
	g := &c.gate
	if !g.hasHot || g.holds && g.held == g.hot || c.rq.Kind != codec.ReqRecords {
		return false
	}
	if requestDB(c.db, &c.rq) != g.hot.db {
		return false
	}
	for i := range c.rq.Calls {
		if string(c.rq.Calls[i].Key) == g.hot.key {
			return true
		}
	}
	return false
}

// busy returns a key of rq (run in db) whose gate a command holds.
func (g *gates) busy(db int, rq *codec.Request) (gateKey, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range rq.Calls {
		if k := rq.Calls[i].Key; g.m[gateKey{db: db, key: string(k)}] != nil {
			return gateKey{db: db, key: string(k)}, true
		}
	}
	return gateKey{}, false
}

// gateNeeded is needsGate on the pending path (p's request), where a
// write command that has written nothing yet and holds no gate also waits
// when its request touches a key whose gate another command holds, before
// it has lost a race there: it would most likely lose (the holder is in
// the middle of its read-modify-write), and its read and failed write would
// cost the store and the holder a round trip each (50 clients pipelining
// INCRBYFLOAT on one key on Aerospike: 3.6 records per command without,
// 2.0 with). Reads never wait: a command flagged readonly goes straight to
// the store, gate or not. Nor does a command that has written: a RENAME
// holding a gate spins on another rename's pending mark (kit.Pending), and
// that rename, had it queued after writing its mark, could never take it
// off (crossed RENAMEs answered the contention error once in 2,000 trials
// when every write queued). A command that has written nothing has left
// nothing that a holder could be waiting for.
func (r *Runtime) gateNeeded(p *pend) bool {
	c := p.c
	if c.needsGate() {
		return true
	}
	if !p.cmd.writes || p.wrote || c.gate.holds || c.rq.Kind != codec.ReqRecords || r.gates.n.Load() == 0 {
		return false
	}
	k, ok := r.gates.busy(requestDB(c.db, &c.rq), &c.rq)
	if ok {
		c.gate.hot, c.gate.hasHot = k, true
	}
	return ok
}

// enterGate takes the gate c's pending request needs (needsGate) for it, or
// queues c with w and reports false. A gate of another key that c holds is
// let go first: a command waits holding none.
func (r *Runtime) enterGate(c *call, w gateWaiter) bool {
	r.leaveGate(c)
	g := &c.gate
	if r.gates.acquire(g.hot, w) {
		g.held, g.holds = g.hot, true
		return true
	}
	r.gateWaits.Add(1)
	g.queued = true
	return false
}

// gateGranted records that the gate c was queued for was handed to it.
func (c *call) gateGranted() {
	g := &c.gate
	g.held, g.holds, g.queued = g.hot, true, false
}

// gateGaveUp records that c stopped waiting for its gate (gateMaxWait): it
// runs without it until it loses a race again.
func (c *call) gateGaveUp() {
	g := &c.gate
	g.queued, g.hasHot = false, false
}

// leaveGate lets go of the gate c holds, if any.
func (r *Runtime) leaveGate(c *call) {
	if g := &c.gate; g.holds {
		g.holds = false
		r.gates.release(g.held)
	}
}

// endGate ends c's part in the gates when its command ends.
func (r *Runtime) endGate(c *call) {
	r.leaveGate(c)
	c.gate = gateState{}
}

// gateWait makes p's pending request wait for the gate it needs, if any, on
// this goroutine: p is the only command in flight on it (Exec, or a batch's
// command that waits), and holds no instance. A command that keeps its slot
// or its module's turn through the store I/O, or runs under a Guard, never
// waits (nor needs to: it is alone on its slot or in a transaction).
func (p *pend) gateWait() {
	c := p.c
	if !p.gateOK || p.keep || p.turn != nil || p.g != nil || !p.r.gateNeeded(p) {
		return
	}
	if c.grant == nil {
		c.grant = make(chan int, 1)
	}
	w := gateWaiter{ch: c.grant, id: 0}
	if p.r.enterGate(c, w) {
		return
	}
	t := time.NewTimer(gateMaxWait)
	defer t.Stop()
	select {
	case <-c.grant:
		c.gateGranted()
	case <-t.C:
		gs := &p.r.gates
		gs.mu.Lock()
		if gs.withdraw(c.gate.hot, w) {
			c.gateGaveUp()
		} else {
			<-c.grant // handed over meanwhile
			c.gateGranted()
		}
		gs.mu.Unlock()
	}
}
