package module

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// On a store that waits (Aerospike), a command's time is mostly the store's
// round trip, and a client's pipeline run one command after another pays it
// once per command. ExecBatch therefore lets the commands of a pipeline that
// touch different keys be in flight together: their store requests then
// reach the store at the same moment, where they are gathered into shared
// batch calls (host/store/aerospike, coalesce.go). Replies stay in order;
// a command that touches a key of a command still in flight, or whose keys
// are not known from its manifest entry (FirstKey 0, movablekeys), waits
// until the commands before it are done, so that two commands of one
// connection on one key never run out of order.
//
// The keys a command touches are the ones its manifest declares
// (FirstKey, LastKey, Step over its arguments), as Redis's key specs say: a
// module whose command touches other records must declare none.

// maxOverlap is the most commands of a pipeline in flight at once.
const maxOverlap = 16

// batchFinals says whether a window starts its commands of one module in
// one guest call (beginBatch); a variable for the benchmarks that compare.
var batchFinals = true

// maxOverlapKeys bounds the keys compared to open a window, so that a
// pipeline of commands with many keys each costs no quadratic work.
const maxOverlapKeys = 128

// dbKey is a key of one database.
type dbKey struct {
	db  uint16
	key []byte
}

// declaredKeys appends the keys its manifest entry says the command touches,
// and reports false when they are not known.
func declaredKeys(keys []dbKey, it *Item) ([]dbKey, bool) {
	info := &it.Cmd.Info
	args := it.Start.Args
	if info.FirstKey <= 0 || info.FirstKey >= len(args) || slices.Contains(info.Flags, "movablekeys") {
		return keys, false
	}
	last := info.LastKey
	if last < 0 {
		last += len(args)
	}
	last = min(last, len(args)-1)
	step := max(info.Step, 1)
	for i := info.FirstKey; i <= last; i += step {
		keys = append(keys, dbKey{db: it.Start.DB, key: args[i]})
	}
	return keys, true
}

// overlapEnd returns the end of the window of items from start on that may
// be in flight together: commands with declared keys, no key shared by two.
// The window holds at least the command at start.
func overlapEnd(items []Item, start int, scratch []dbKey) (int, []dbKey) {
	keys, ok := declaredKeys(scratch[:0], &items[start])
	if !ok {
		return start + 1, keys
	}
	end := start + 1
	for ; end < len(items) && end-start < maxOverlap; end++ {
		n := len(keys)
		var ok bool
		if keys, ok = declaredKeys(keys, &items[end]); !ok || len(keys) > maxOverlapKeys {
			break
		}
		clash := false
		for _, k := range keys[n:] {
			for _, o := range keys[:n] {
				if k.db == o.db && string(k.key) == string(o.key) {
					clash = true
				}
			}
		}
		if clash {
			break
		}
	}
	return end, keys
}

// ExecBatch runs items, a client's pipelined commands, appending each reply
// to out in order and setting each item's End. On a store that waits,
// commands on distinct keys are in flight together (see above); otherwise,
// and for commands that must wait for the ones before them, they run one
// after another, consecutive commands of one module in shared guest calls.
//
// A command that blocks ends the run when blk is not nil: ExecBatch
// returns with blk filled (see ExecBlock) and blk.Index the command's
// item, whose End is not set; the items after it have not run. With blk
// nil, a command that blocks answers its timeout reply (inside MULTI). A
// pipeline holding a blocking command runs one command after another, so
// that nothing after it runs before it is served, and so does one run
// under a Guard (WithGuard): a guarded transaction stops at the first
// command whose condition fails, with none after it applied.
func (r *Runtime) ExecBatch(ctx context.Context, items []Item, out []byte, blk *Block) []byte {
	if blk != nil {
		// Whichever path runs, a Block the caller reuses (the server pools
		// them) must not carry an earlier command's block: the overlapped
		// path never blocks, so it never sets Blocked itself.
		blk.Blocked = false
	}
	for i := range items {
		items[i].Ended = 0 // set where it is known (execSerial)
	}
	if !r.inline && len(items) > 1 && (blk == nil || !anyBlocking(items)) && guardOf(ctx) == nil {
		return r.execOverlapped(ctx, items, out)
	}
	return r.execSerial(ctx, items, out, blk)
}

// anyBlocking reports whether a command of items may block (its manifest
// flags it "blocking").
func anyBlocking(items []Item) bool {
	for i := range items {
		if slices.Contains(items[i].Cmd.Info.Flags, "blocking") {
			return true
		}
	}
	return false
}

// window is the state of execWindow, pooled: each command's progress and
// reply, the commands waiting on the store, and their requests.
type window struct {
	pends   []pend
	replies [][]byte
	waiting []int
	run     []int
	ops     []store.Op
	waits   [maxOverlap]bool
	// grant receives the index of a command queued for a contention
	// gate (gate.go) when the gate is handed to it. Each of the window's
	// commands (at most maxOverlap) is queued at most once at a time, so
	// a send never blocks.
	grant chan int
}

var windowPool = sync.Pool{New: func() any { return &window{grant: make(chan int, maxOverlap)} }}

// execOverlapped runs a pipeline on a store that waits: each window of
// commands on distinct keys runs together (execWindow), and their replies
// are appended in order.
func (r *Runtime) execOverlapped(ctx context.Context, items []Item, out []byte) []byte {
	var scratch []dbKey
	for i := 0; i < len(items); {
		var j int
		j, scratch = overlapEnd(items, i, scratch)
		if j-i == 1 {
			// Nothing to overlap with: the usual path, which runs
			// consecutive commands that need no store in shared guest calls.
			k := i + 1
			for k < len(items) {
				if e, _ := overlapEnd(items, k, scratch); e-k > 1 {
					break
				}
				k++
			}
			out = r.execSerial(ctx, items[i:k], out, nil)
			i = k
			continue
		}
		out = r.execWindow(ctx, items[i:j], out)
		i = j
	}
	clear(scratch)
	return out
}

// execWindow runs items, commands on distinct keys, together on this
// goroutine: each runs up to its first store request, the requests go to
// the store at once (store.ExecMany: on Aerospike, shared batch calls), and
// each resumes in turn, until every command has replied. A window costs
// its commands no goroutines, and their requests one hand-over to the
// store. Replies are appended in order.
func (r *Runtime) execWindow(ctx context.Context, items []Item, out []byte) []byte {
	w := windowPool.Get().(*window)
	n := len(items)
	if cap(w.pends) < n {
		w.pends = make([]pend, n)
	}
	// Grown apart from pends: append may leave replies more capacity than
	// n, and a later, larger window then needs pends grown but not
	// replies (a negative length here panicked in
	// TestExecBatchMatchesSequential). The reply buffers are kept.
	if cap(w.replies) < n {
		w.replies = append(w.replies[:cap(w.replies)], make([][]byte, n-cap(w.replies))...)
	}
	pends, replies := w.pends[:n], w.replies[:n]
	waiting := w.waiting[:0]
	// settle takes command k on after a step that returned wait: a
	// command that must keep its slot or its module's turn through the
	// store I/O finishes on its own, now (another command of the window
	// could wait for that slot or turn; it never waits for a gate, as
	// the window's others may hold one); one that ended lets go.
	settle := func(k int, wait bool) {
		p := &pends[k]
		switch {
		case wait && (p.keep || p.turn != nil || p.g != nil):
			replies[k] = p.finish(replies[k], true)
		case wait:
			waiting = append(waiting, k)
		default:
			p.release()
		}
	}
	waits := w.waits[:n]
	for k := 0; k < n; {
		replies[k] = replies[k][:0]
		// Consecutive commands of a module of ABI 8 start in one guest
		// call, handing over their final answers as they go (beginBatch).
		if v, _ := items[k].Cmd.impl.(*version); v != nil && v.batch && v.abi >= 8 && batchFinals {
			j := k + 1
			for j < n && items[j].Cmd.impl == items[k].Cmd.impl && items[j].Start.DB == items[k].Start.DB {
				replies[j] = replies[j][:0]
				j++
			}
			if j-k > 1 {
				if m := r.beginBatch(ctx, v, items[k:j], pends[k:j], replies[k:j], waits[k:j]); m > 0 {
					for i := k; i < k+m; i++ {
						settle(i, waits[i])
					}
					k += m
					continue
				}
			}
		}
		it := &items[k]
		var wait bool
		replies[k], wait = r.begin(&pends[k], ctx, it.Cmd, &it.Start, replies[k], nil)
		settle(k, wait)
		k++
	}
	// A command whose request needs a contention gate held elsewhere is
	// queued for it (gated counts them) while the others go on; this
	// goroutine waits for a gate only when nothing else of the window can
	// run, and then holds none (a command waits holding none).
	gated := 0
	for len(waiting) > 0 || gated > 0 {
		ops, run := w.ops[:0], w.run[:0]
		for _, k := range waiting {
			p := &pends[k]
			c := p.c
			if !c.gate.queued && r.gateNeeded(p) && !r.enterGate(c, gateWaiter{ch: w.grant, id: k}) {
				gated++
				continue
			}
			run = append(run, k)
			if op, ok := r.storeOp(p.ctx, c.db, &c.rq, &c.resp); ok {
				ops = append(ops, op)
			}
		}
		waiting = waiting[:0] // run holds what it had
		if len(run) == 0 {
			waiting = w.awaitGates(&r.gates, pends, waiting, &gated)
			continue
		}
		store.ExecMany(r.st, ops)
		clear(ops)
		w.ops, w.run = ops[:0], run[:0]
		for _, k := range run {
			c := pends[k].c
			c.noteLost(c.db, &c.rq, &c.resp)
			var wait bool
			replies[k], wait = pends[k].after(replies[k])
			settle(k, wait)
		}
		// Gates handed over meanwhile: those commands go in the next round.
		waiting = w.takeGrants(pends, waiting, &gated)
	}
	for k := range items {
		out = append(out, replies[k]...)
		items[k].End = len(out)
		if cap(replies[k]) > maxPooled {
			replies[k] = nil
		}
	}
	w.waiting = waiting[:0]
	windowPool.Put(w)
	return out
}

// awaitGates waits until a gate is handed to one of the window's commands
// queued for one (gated of them, every command the window has left), and
// appends it to waiting. After gateMaxWait it stops waiting for them all:
// the ones not handed their gate meanwhile run without it.
func (w *window) awaitGates(gs *gates, pends []pend, waiting []int, gated *int) []int {
	t := time.NewTimer(gateMaxWait)
	defer t.Stop()
	select {
	case k := <-w.grant:
		return w.granted(pends, waiting, gated, k)
	case <-t.C:
	}
	gs.mu.Lock()
	defer gs.mu.Unlock()
	// Sends happen under gs.mu: what was handed over is in w.grant now.
	waiting = w.takeGrants(pends, waiting, gated)
	for k := range pends {
		if c := pends[k].c; c != nil && c.gate.queued && gs.withdraw(c.gate.hot, gateWaiter{ch: w.grant, id: k}) {
			*gated--
			c.gateGaveUp()
			waiting = append(waiting, k)
		}
	}
	return waiting
}

// takeGrants appends to waiting the window's commands whose gates have
// been handed over (their sends are in w.grant), without waiting.
func (w *window) takeGrants(pends []pend, waiting []int, gated *int) []int {
	for *gated > 0 {
		select {
		case k := <-w.grant:
			waiting = w.granted(pends, waiting, gated, k)
		default:
			return waiting
		}
	}
	return waiting
}

// granted takes command k, queued for a gate, on as the gate's holder.
func (w *window) granted(pends []pend, waiting []int, gated *int, k int) []int {
	*gated--
	pends[k].c.gateGranted()
	return append(waiting, k)
}

// beginBatch is begin for items, commands of v (a module of ABI 8 with
// respike_batch) on distinct keys in a window: one guest call starts them
// in turn, and each that ends with a final answer hands it over
// mid-batch (codec.BatchFinals, windowReply), so that the window's
// commands cost one guest entry between them, not one each. Each started
// command's state, reply and whether it waits on the store go to pends,
// replies and waits, as begin's would. It returns how many commands
// started (the batch stops at one that waits in its instance or blocks);
// 0 when none could start, for the caller to begin them one by one.
func (r *Runtime) beginBatch(ctx context.Context, v *version, items []Item, pends []pend, replies [][]byte, waits []bool) int {
	if r.suspect(v.ctr) {
		return 0 // its commands take turns, through begin
	}
	s, err := v.acquire(ctx, uint32(items[0].Start.ClientID))
	if err != nil {
		return 0
	}
	if v.closing.Load() {
		s.unlock()
		return 0
	}
	c := s.startCall(ctx, items)
	clear(pends[:len(items)])
	clear(waits[:len(items)])
	in, err := s.ready()
	if err != nil {
		s.unlock()
		replies[0] = append(replies[0], errorReply(v.name, err.Error())...)
		return 1
	}
	c.items, c.out, c.nreply = items, nil, 0
	c.pends, c.replies, c.waits = pends, replies, waits
	packed, k, err := r.callBatch(in, c, codec.BatchFinals)
	c.items, c.pends, c.replies, c.waits = nil, nil, nil, nil
	switch {
	case err != nil:
		// The command running when the call failed answers the failure;
		// the ones after it have not started. Those that handed over a
		// final answer hold nothing of the instance.
		reply := v.failed(s, in, err)
		s.unlock()
		if k < len(items) {
			replies[k] = append(replies[k], reply...)
			k++
		}
		return k
	case k >= len(items):
		s.unlock()
		return k
	case packed == 0:
		s.unlock()
		replies[k] = append(replies[k], errorReply(v.name, "malformed answer from the module")...)
		return k + 1
	}
	// items[k] waits in its instance, blocks or ends with a final answer
	// as its call's answer: it goes on as begin's command would, on the
	// slot's call state.
	it := &items[k]
	c.start, c.name = &it.Start, it.Cmd.Info.Name
	p := &pends[k]
	*p = pend{r: r, ctx: ctx, g: guardOf(ctx), cmd: it.Cmd, v: v, s: s, in: in, c: c, start: &it.Start}
	replies[k], waits[k] = p.answer(packed, nil, replies[k])
	return k + 1
}

// windowReply is hostReply in a window's batch (beginBatch): b is the
// next command's RESP reply, or its final answer (codec.StatusFinal, as
// respike_start would answer it), whose request and recipe are read out
// of guest memory now, into a call state of the command's own, before
// the guest goes on.
func (r *Runtime) windowReply(in *instance, c *call, b []byte) {
	k := c.nreply
	c.nreply++
	c.gate = gateState{}
	if len(b) == 0 || b[0] != codec.StatusFinal {
		if len(b) == 0 {
			b = errorReply(in.v.name, "command wrote no reply")
		}
		c.replies[k] = append(c.replies[k], b...)
		return
	}
	it := &c.items[k]
	p := &c.pends[k]
	pc := r.getCall()
	pc.ctx, pc.db, pc.gate = c.ctx, c.db, gateState{}
	pc.start, pc.name = &it.Start, it.Cmd.Info.Name
	*p = pend{r: r, ctx: c.ctx, g: guardOf(c.ctx), cmd: it.Cmd, v: in.v, in: in, c: pc, start: &it.Start, detached: true, final: true}
	r.finals.Add(1)
	c.replies[k], c.waits[k] = p.taken(pc.readFinal(in, b), c.replies[k])
}
