package server

import (
	"context"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/module"
)

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//
// MULTI queues commands and EXEC runs them in order on this connection and
// answers their replies as one array, as Redis does; but the commands are
// not isolated: other connections' commands may run between them, because
// the store offers no atomicity across keys.
//
// WATCH reads each key's record generation (0 when the key is absent): the
// store bumps a record's generation on every write, on every proxy. EXEC
// then
//
//  1. reads the watched keys' generations again, in one batch, and answers
//     the null reply, running nothing, when one differs;
//  2. runs the queued commands under a txGuard, which makes every write a
//     queued command sends to a watched key conditional, in the same
//     atomic store call, on the generation the key had at WATCH (create-only
//     when it was absent), and follows the generation the transaction's own
//     writes give the key. A condition that fails, or a read that sees a
//     generation other than the expected one, aborts the transaction: the
//     command that saw it finishes (as after a failed write), the commands
//     after it do not run, and EXEC answers the null reply.
//
// So WATCH k, GET k, MULTI, SET k v, EXEC is exact under concurrent
// writers: the SET applies only if k's generation is still the one WATCH
// read. docs/compatibility.md says what holds for several keys.

// watchTimeout bounds the store reads of WATCH and of EXEC's check.
const watchTimeout = adminTimeout

// neverGeneration is a record generation that no record has: generations
// are 16 bits on Aerospike (and on the memory store, which mimics it), so
// a write conditional on it fails with GenerationError whenever the record
// exists, and with NotFound, as before, when it does not.
const neverGeneration = 1 << 16

// header is a record's generation (0: absent) and expiry, as WATCH and
// EXEC read them; a watched key's header is the one the transaction
// expects it to have. exact tells how void was known: the exact expiry the
// store keeps (codec.BinExpire, Unix milliseconds) or, for a record written
// with whole seconds, the time left in seconds added to the clock (Unix
// milliseconds, a whole number of seconds from the reading); -1 for never.
type header struct {
	gen   uint32
	void  int64
	exact bool
}

// sameRecord reports whether two headers of a key can be the same version
// of its record. Equal generations are not enough: a key deleted and
// created again starts again at generation 1, so a key read at generation
// 1 may be another record at generation 1. Its expiry then tells them
// apart when it differs: one never expires and the other does, or their
// exact expiries differ, or (for expiries in whole seconds, which the
// store reports as the time left, so the same expiry read at two moments
// may differ by one) they lie more than a second apart.
func sameRecord(a, b header) bool {
	if a.gen != b.gen {
		return false
	}
	if a.gen == 0 || a.void == b.void && a.exact == b.exact {
		return true
	}
	if a.void < 0 || b.void < 0 || a.exact || b.exact {
		return false
	}
	return a.void-b.void <= 1000 && b.void-a.void <= 1000
}

// watches maps database → key → the header WATCH read.
type watches map[int]map[string]*header

func cmdMulti(c *client, _ [][]byte) {
	if c.inMulti {
		c.w.Error("ERR MULTI calls can not be nested")
		return
	}
	c.inMulti, c.multiDirty = true, false
	c.queue = c.queue[:0]
	c.setInfo(func(i *clientInfo) { i.multi = 0 })
	c.w.OK()
}

func cmdExec(c *client, _ [][]byte) {
	if !c.inMulti {
		c.w.Error("ERR EXEC without MULTI")
		return
	}
	if c.multiDirty {
		c.discardMulti()
		c.w.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	// EXEC forgets the watches whatever it answers; the guard takes them.
	w := c.watches
	c.watches = nil
	var g *txGuard
	if len(w) > 0 {
		changed, err := c.watchedChanged(w)
		if err != nil {
			c.discardMulti()
			c.w.Error("ERR EXEC could not check the watched keys, transaction discarded: " + err.Error())
			return
		}
		if changed {
			c.discardMulti()
			c.w.NullArray()
			return
		}
		g = &txGuard{keys: w}
	}
	q := c.queue
	c.inMulti = false
	c.setInfo(func(i *clientInfo) { i.multi = -1 })
	mark := len(c.w.Buf)
	c.w.Array(len(q))
	c.settle()
	// Blocking commands answer at once, as their non-blocking forms, as
	// Redis runs them in a transaction.
	c.noBlock = true
	ctx := c.ctx
	if g != nil {
		c.ctx = module.WithGuard(ctx, g)
	}
	defer func() { c.noBlock, c.ctx = false, ctx }()
	restricted := c.s.aclRestricted.Load()
	for i := range q {
		if g != nil && g.aborted {
			// A watched key changed: the commands after the one that
			// saw it do not run.
			break
		}
		if restricted {
			// As Redis: the rules may have changed since the command was
			// queued; a command no longer allowed answers an error in
			// its place.
			if why := c.deniedAtExec(q[i].b, q[i].m, q[i].args); why != "" {
				c.runPipe()
				c.settle()
				c.w.Error("NOPERM ACLs rules changed between the moment the transaction was accumulated " +
					"and the EXEC call. This command is no longer allowed for the following reason: " + why)
				c.settle()
				continue
			}
		}
		if q[i].b == nil && g == nil {
			// Module commands run together, as a pipeline's do. Only
			// builtins change CLIENT REPLY, so their replies settle
			// together too.
			c.hold(q[i].m, q[i].args)
			continue
		}
		c.runPipe()
		c.settle()
		// A command that answers nothing (a queued CLIENT REPLY OFF or
		// SKIP) leaves the array short, as Redis does.
		c.call(q[i].b, q[i].m, q[i].args)
		c.settle()
	}
	c.runPipe()
	clear(q)
	c.queue = q[:0]
	if g != nil && g.aborted {
		// A watched key changed while the transaction ran: its replies
		// give way to the null reply (what ran before is not undone).
		c.w.Buf = c.w.Buf[:mark]
		c.replyMark = mark
		c.w.NullArray()
	}
}

func cmdDiscard(c *client, _ [][]byte) {
	if !c.inMulti {
		c.w.Error("ERR DISCARD without MULTI")
		return
	}
	c.discardMulti()
	c.w.OK()
}

// discardMulti leaves MULTI, forgetting the queued commands and the watched
// keys, as Redis's discardTransaction (DISCARD, EXECABORT, RESET).
func (c *client) discardMulti() {
	c.watches = nil
	if !c.inMulti {
		return
	}
	clear(c.queue)
	c.queue = c.queue[:0]
	c.inMulti, c.multiDirty = false, false
	c.setInfo(func(i *clientInfo) { i.multi = -1 })
}

// cmdWatch records the generation of each key not watched yet; a key
// watched again keeps its first generation, as Redis keeps its first watch.
func cmdWatch(c *client, args [][]byte) {
	if c.inMulti {
		c.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	known := c.watches[c.db]
	var keys [][]byte
	seen := make(map[string]bool, len(args)-1)
	for _, k := range args[1:] {
		if known[string(k)] != nil || seen[string(k)] {
			continue
		}
		seen[string(k)] = true
		keys = append(keys, k)
	}
	gens, err := c.generations(c.db, keys)
	if err != nil {
		c.w.Error("ERR WATCH could not read the keys: " + err.Error())
		return
	}
	if len(keys) > 0 {
		if c.watches == nil {
			c.watches = make(watches)
		}
		if known == nil {
			known = make(map[string]*header, len(keys))
			c.watches[c.db] = known
		}
		for i, k := range keys {
			known[string(k)] = &gens[i]
		}
	}
	c.w.OK()
}

func cmdUnwatch(c *client, _ [][]byte) {
	c.watches = nil
	c.w.OK()
}

// generations reads the record header of each key of database db in one
// batch: generation 0 for a key that is absent (or expired).
func (c *client) generations(db int, keys [][]byte) ([]header, error) {
	gens := make([]header, len(keys))
	if len(keys) == 0 || c.s.st == nil {
		return gens, nil
	}
	req := &codec.Request{Kind: codec.ReqRecords, Calls: make([]codec.Call, len(keys))}
	for i, k := range keys {
		req.Calls[i].Key = k
		req.Calls[i].Ops = []codec.Op{{Code: codec.OpGet, Bin: codec.BinExpire}}
	}
	var resp codec.Response
	now := time.Now().UnixMilli()
	ctx, cancel := context.WithTimeout(c.ctx, watchTimeout)
	defer cancel()
	c.s.st.Exec(ctx, db, req, &resp)
	if resp.Code != codec.OK {
		return nil, &storeError{resp.Code, resp.Msg}
	}
	if len(resp.Results) != len(keys) {
		return nil, &storeError{codec.BackendError, "the store answered the wrong number of results"}
	}
	for i := range resp.Results {
		switch r := &resp.Results[i]; r.Code {
		case codec.OK:
			gens[i] = header{gen: r.Generation, void: -1}
			switch {
			case len(r.Values) == 1 && r.Values[0].Kind == codec.KindInt:
				gens[i].void, gens[i].exact = r.Values[0].Int, true
			case r.TTL >= 0:
				gens[i].void = now + r.TTL*1000
			}
		case codec.NotFound:
		default:
			return nil, &storeError{r.Code, r.Msg}
		}
	}
	return gens, nil
}

// storeError is a store failure seen by WATCH or EXEC.
type storeError struct {
	code codec.Code
	msg  string
}

func (e *storeError) Error() string { return e.msg }

// watchedChanged reports whether a watched key's record is no longer the
// one WATCH read: written, deleted, expired or created since (sameRecord).
func (c *client) watchedChanged(w watches) (bool, error) {
	for db, m := range w {
		keys := make([][]byte, 0, len(m))
		for k := range m {
			keys = append(keys, []byte(k))
		}
		gens, err := c.generations(db, keys)
		if err != nil {
			return false, err
		}
		for i, k := range keys {
			if w := m[string(k)]; !sameRecord(*w, gens[i]) {
				return true, nil
			}
		}
	}
	return false, nil
}

// txGuard is the module.Guard of a transaction with watched keys (see the
// top of this file). It runs on the connection's goroutine: a guarded
// EXEC runs its commands one at a time (and ExecBatch would run a guarded
// pipeline one command after another).
type txGuard struct {
	keys    watches
	aborted bool
	// conds records, per call of the request in flight, whether it is on a
	// watched key (its state, nil otherwise) and whether it writes.
	conds []guardedCall
}

// guardedCall is what Before decided about one call, for After.
type guardedCall struct {
	w      *header
	writes bool
}

// Before makes each write to a watched key conditional on the generation
// the transaction expects the key to have. It refuses nothing: once the
// transaction has aborted, the command that saw the change finishes as it
// would after a failed write (SMOVE puts the member back into its source,
// RENAME restores its destination), and cmdExec runs no further command.
func (g *txGuard) Before(db int, rq *codec.Request) bool {
	g.conds = g.conds[:0]
	if rq.Kind != codec.ReqRecords {
		return true
	}
	m := g.keys[db]
	for i := range rq.Calls {
		call := &rq.Calls[i]
		var w *header
		if m != nil {
			w = m[string(call.Key)]
		}
		writes := false
		for j := range call.Ops {
			writes = writes || call.Ops[j].Code.Writes()
		}
		g.conds = append(g.conds, guardedCall{w: w, writes: writes})
		if w == nil || !writes {
			continue
		}
		p := &call.Policy
		switch {
		case p.Generation != 0:
			// The command conditions the write itself, on a generation
			// it read: one other than the expected one means the key
			// changed, and the write must not apply.
			if p.Generation != w.gen {
				g.aborted = true
				p.Generation = neverGeneration
			}
		case w.gen != 0:
			p.Generation = w.gen
		case p.Exists == codec.ExistsUpdate || p.Exists == codec.ExistsReplace:
			p.Exists = codec.ExistsCreateOnly
		case p.Exists == codec.ExistsUpdateOnly || p.Exists == codec.ExistsReplaceOnly:
			// The key was absent: the write finds it absent (NotFound,
			// as it would have) or fails on the generation if it was
			// created since.
			p.Generation = neverGeneration
		}
	}
	return true
}

// After follows the generations the transaction's own writes give its
// watched keys, and aborts when a call shows that one changed otherwise.
func (g *txGuard) After(_ int, rq *codec.Request, resp *codec.Response) {
	if rq.Kind != codec.ReqRecords || resp.Code != codec.OK || len(resp.Results) != len(g.conds) {
		return
	}
	for i := range g.conds {
		w := g.conds[i].w
		if w == nil {
			continue
		}
		r := &resp.Results[i]
		switch r.Code {
		case codec.OK:
			if g.conds[i].writes {
				// The write passed its condition: the key is now what
				// this transaction made it.
				w.gen = r.Generation
			} else if r.Generation != w.gen {
				g.aborted = true
			}
		case codec.NotFound:
			if w.gen != 0 {
				g.aborted = true
			}
		case codec.GenerationError:
			g.aborted = true
		case codec.Exists, codec.FilteredOut:
			// The record exists (FilteredOut: with another type).
			if w.gen == 0 {
				g.aborted = true
			}
		}
	}
}
