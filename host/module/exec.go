package module

import (
	"context"
	"encoding/binary"
	"errors"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/respike/respike/guest-sdk/codec"
)

// call is the host side of one command in flight: its buffers and decoders,
// pooled so that a steady stream of commands allocates nothing.
type call struct {
	ctx   context.Context
	db    int
	start *codec.Start // the command's start message, until it is written
	lay   []byte       // a message laid out for guest memory, before it is copied there
	req   []byte       // the pending request, read out of guest memory (codec.ReadRequest)
	dec   codec.Decoder
	rq    codec.Request
	resp  codec.Response

	// A final answer's recipe (codec.StatusFinal): its bytes, copied out
	// of guest memory, and parsed against rq.
	recipeBuf []byte
	recipe    codec.ParsedRecipe

	// A batch in the guest call (runBatch): its commands, the output the
	// guest's replies are appended to (hostReply), and how many replied.
	items  []Item
	out    []byte
	nreply int
	// A window's batch (beginBatch, codec.BatchFinals): each command's
	// progress, reply and whether it waits on the store, filled as the
	// guest hands over replies and final answers, in place of out.
	pends   []pend
	replies [][]byte
	waits   []bool
	starts  []codec.Start // scratch for laying the batch out
	name    string        // the single command's name, for guest logs

	// The command's part in the contention gates (gate.go), and the
	// channel its gate is handed over on when it waits alone (gateWait).
	gate  gateState
	grant chan int
}

// maxPooled is the largest buffer a pooled call keeps.
const maxPooled = 64 << 10

func (r *Runtime) getCall() *call {
	c, _ := r.callPol.Get().(*call)
	if c == nil {
		c = new(call)
	}
	return c
}

func (r *Runtime) putCall(c *call) {
	c.ctx = nil
	c.start = nil
	c.gate = gateState{}
	if cap(c.req) > maxPooled || cap(c.lay) > maxPooled {
		// A huge request or response: let its buffers and the decoder's
		// arena go rather than pin them in the pool.
		*c = call{}
	}
	r.callPol.Put(c)
}

// Replies for failures that are not the module's.
var (
	errClosed = []byte("-ERR module runtime closed\r\n")
	errGone   = []byte("-ERR command cancelled: the client went away\r\n")
	// errUnloaded answers a command whose module went between its lookup
	// and its run.
	errUnloaded = []byte("-ERR unknown command, its module was unloaded\r\n")
)

// Exec runs cmd with start (Args[0] is the name as the client sent it) and
// appends the RESP reply to out. It performs the command's store requests on
// the calling goroutine, holding no instance meanwhile, and returns when the
// command has replied or failed; when ctx is done it cancels the command and
// appends an error. It never panics because of a module.
func (r *Runtime) Exec(ctx context.Context, cmd *Command, start *codec.Start, out []byte) []byte {
	out, _ = r.exec(ctx, cmd, start, out, nil)
	return out
}

// ExecBlock is Exec for a client that may block: when the command blocks
// (codec.StatusBlock), it appends nothing and fills blk, for the caller to
// park the client and run the command again when a key is written.
// blk.Blocked is false when the command replied.
func (r *Runtime) ExecBlock(ctx context.Context, cmd *Command, start *codec.Start, out []byte, blk *Block) []byte {
	blk.Blocked = false
	out, _ = r.exec(ctx, cmd, start, out, blk)
	return out
}

// exec runs a command; blk, when not nil, receives a block (see
// ExecBlock). It also returns when the command ended: Clock as read when
// the guest call that replied returned, or 0 when the reply came otherwise
// (Item.Ended).
func (r *Runtime) exec(ctx context.Context, cmd *Command, start *codec.Start, out []byte, blk *Block) ([]byte, int64) {
	var p pend
	out, wait := r.begin(&p, ctx, cmd, start, out, blk)
	p.gateOK = true // the only command in flight on this goroutine
	out = p.finish(out, wait)
	return out, p.ended
}

// pend is a command between its guest calls: what it carries from one store
// request to the next. While its request is at the store it holds no slot
// (unless keep), only its call state c; its continuation lives in the
// instance in, to be resumed on the same slot.
type pend struct {
	r   *Runtime
	ctx context.Context
	g   Guard
	cmd *Command
	v   *version
	s   *slot
	in  *instance
	c   *call
	blk *Block
	// start is the command's start message, for a restart (a final
	// answer's recipe runs the command again: restart).
	start *codec.Start

	turn     func() // gives back a suspect module's turn (Runtime.turn), or nil
	held     bool   // whether this command holds a reference on v
	detached bool   // whether c left the slot with the command
	wrote    bool   // whether a request that writes was sent: finish, whatever the client does
	final    bool   // the request in c ends the command: its reply is c.recipe's (after)
	keep     bool   // the slot stays locked through the store I/O (v is closing)
	gateOK   bool   // it may wait for a contention gate on this goroutine (gateWait)
	handle   uint32 // the continuation
	gen      uint64 // the instance generation it lives in
	// ended is Clock when the guest call that replied returned; 0 when
	// the reply came otherwise (a failure, a final answer's recipe).
	ended int64
}

// begin starts cmd: it takes a slot, runs the command's first guest call and
// returns with the reply appended to out (wait false), or with the
// command's first store request decoded in p.c.rq (wait true), for finish,
// or for the caller to run it and call resumed.
func (r *Runtime) begin(p *pend, ctx context.Context, cmd *Command, start *codec.Start, out []byte, blk *Block) ([]byte, bool) {
	*p = pend{r: r}
	// A command that completes inside one guest call holds no reference on
	// its version, only a slot: a version closing waits for every slot, and
	// a command that finds its version closing after it got a slot runs on
	// the version that replaced it. References (shared atomics, costly on
	// many cores) are for commands that let go of their slot to wait.
	if v, _ := cmd.impl.(*version); v != nil {
		done, ok := r.turn(ctx, v.ctr)
		if !ok {
			return append(out, errGone...), false
		}
		p.turn = done
	}
	cmd, v, s, refused := r.slotFor(ctx, cmd, start)
	if refused != nil {
		return append(out, refused...), false
	}
	// The command's call state is the slot's while it holds the slot; a
	// command that lets go of the slot to wait takes it along (detach).
	// (After the slot is unlocked c is the next command's: not touched.)
	if c := s.call; c == nil || cap(c.req) > maxPooled || cap(c.lay) > maxPooled {
		s.call = new(call) // none yet, or one grown by a huge command
	}
	c := s.call
	c.ctx, c.db = ctx, int(start.DB)
	c.gate = gateState{}
	start.Cmd = cmd.index + 1
	start.Restart = 0 // a first run (the caller may reuse its Start)
	if start.Now == 0 {
		start.Now = time.Now().UnixNano()
	}
	c.start = start
	c.name = cmd.Info.Name

	in, err := s.ready()
	if err != nil {
		s.unlock()
		return append(out, errorReply(v.name, err.Error())...), false
	}
	packed, err := r.step(in, c, false, 0)
	p.ctx, p.g, p.cmd, p.v, p.s, p.in, p.c, p.blk, p.start = ctx, guardOf(ctx), cmd, v, s, in, c, blk, start
	return p.answer(packed, err, out)
}

// slotFor locks a slot of the version serving cmd, or of the version that
// replaced it when that one is closing, and returns the command as that
// version serves it; refused is the reply when there is none.
func (r *Runtime) slotFor(ctx context.Context, cmd *Command, start *codec.Start) (_ *Command, _ *version, _ *slot, refused []byte) {
	for tries := 0; ; tries++ {
		v, _ := cmd.impl.(*version)
		if v == nil || tries == 3 {
			return nil, nil, nil, errClosed
		}
		s, err := v.acquire(ctx, uint32(start.ClientID))
		if err != nil {
			return nil, nil, nil, errGone
		}
		if !v.closing.Load() {
			return cmd, v, s, nil
		}
		s.unlock()
		// cmd was looked up just before its module was swapped or unloaded.
		if cmd = r.Lookup([]byte(cmd.Info.Name)); cmd == nil {
			return nil, nil, nil, errUnloaded
		}
	}
}

// complete takes a command from the answer of its first guest call
// (packed, err) to its end: it performs the store requests the command
// waits on, with no instance held, resumes it (or answers its final
// answer by its recipe), appends its reply to out and unlocks s. start is
// its start message, for a restart. Called with s locked, c its call state. A command that
// blocks fills blk, or answers its timeout reply when blk is nil.
func (r *Runtime) complete(ctx context.Context, cmd *Command, start *codec.Start, v *version, s *slot, in *instance, c *call, packed uint64, err error, out []byte, blk *Block) []byte {
	p := pend{r: r, ctx: ctx, g: guardOf(ctx), cmd: cmd, start: start, v: v, s: s, in: in, c: c, blk: blk, gateOK: true}
	out, wait := p.answer(packed, err, out)
	return p.finish(out, wait)
}

// finish runs p's store requests one after another, resuming the command
// after each (or answering its final answer), until it ends; then it lets go of what the command held.
func (p *pend) finish(out []byte, wait bool) []byte {
	for wait {
		p.gateWait()
		p.r.storeExec(p.ctx, p.g, p.c.db, &p.c.rq, &p.c.resp)
		p.c.noteLost(p.c.db, &p.c.rq, &p.c.resp)
		out, wait = p.after(out)
	}
	p.release()
	return out
}

// release lets go of what an ended command held: its detached call state,
// its reference on the version, a suspect module's turn.
func (p *pend) release() {
	if p.detached {
		// Only a detached command can hold a gate: one that keeps its
		// slot never waits for one (gateWait).
		p.r.endGate(p.c)
		p.r.putCall(p.c)
	}
	if p.held {
		p.v.unref()
	}
	if p.turn != nil {
		p.turn()
	}
	*p = pend{ended: p.ended}
}

// answer takes the answer of a guest call (packed, err), made with p.s
// locked: a reply or a failure is appended to out and the slot unlocked
// (wait false); a store request is read out of guest memory and decoded
// into p.c.rq, the slot let go unless p.keep (wait true).
func (p *pend) answer(packed uint64, err error, out []byte) ([]byte, bool) {
	r, v, s, in, c := p.r, p.v, p.s, p.in, p.c
	p.ended = 0
	if err != nil {
		out = append(out, v.failed(s, in, err)...)
		s.unlock()
		return out, false
	}
	ans, ok := in.answer(packed)
	if !ok || len(ans) == 0 || ans[0] != codec.StatusDone && ans[0] != codec.StatusBlock &&
		(ans[0] != codec.StatusPending || len(ans) < 5) && (ans[0] != codec.StatusFinal || v.abi < 7) {
		s.unlock()
		return append(out, errorReply(v.name, "malformed answer from the module")...), false
	}
	if ans[0] == codec.StatusDone {
		out = append(out, ans[1:]...)
		p.ended = in.ended // before unlock: the next command's call sets it
		s.unlock()
		return out, false
	}
	if ans[0] == codec.StatusBlock {
		// Copied out before the slot is free: ans is guest memory.
		out = v.blocked(ans, out, p.blk)
		s.unlock()
		return out, false
	}
	// Read the request out of guest memory now: once the slot is free
	// another command may run on the instance and change it.
	var rerr error
	p.keep, p.final = false, ans[0] == codec.StatusFinal
	if p.final {
		// The command has ended on the guest's side: nothing of it is
		// left in the instance, and the slot is let go at once. The
		// recipe is copied out with the request.
		r.finals.Add(1)
		rerr = c.readFinal(in, ans)
	} else {
		r.waits.Add(1)
		p.handle = binary.LittleEndian.Uint32(ans[1:5])
		p.gen = in.gen
		in.pending++ // the continuation lives in the instance until resumed or cancelled
		// keep is set when the version started closing: its close waits for
		// this slot, so the command keeps it through the store I/O and
		// finishes on it.
		if !p.held {
			p.held = v.ref()
			p.keep = !p.held
		}
		if len(ans) < 9 {
			rerr = codec.ErrCorrupt
		} else {
			c.req, rerr = codec.ReadRequest(in, uint64(binary.LittleEndian.Uint32(ans[5:9])), c.req[:0])
		}
	}
	if !p.keep {
		if !p.detached {
			// The slot's next command gets a call state of its own.
			s.call, p.detached = r.getCall(), true
		}
		s.unlock()
	}
	return p.taken(rerr, out)
}

// readFinal copies a final answer's request and recipe out of guest
// memory (ans is the answer, status byte first).
func (c *call) readFinal(in *instance, ans []byte) error {
	if len(ans) < 5 {
		return codec.ErrCorrupt
	}
	var err error
	c.req, err = codec.ReadRequest(in, uint64(binary.LittleEndian.Uint32(ans[1:5])), c.req[:0])
	c.recipeBuf = append(c.recipeBuf[:0], ans[5:]...)
	return err
}

// taken decodes the request read out of guest memory into p.c.req (rerr
// the read's error) and checks a final answer's recipe: the request is
// ready to run (wait true), or the command ends with an error.
func (p *pend) taken(rerr error, out []byte) ([]byte, bool) {
	v, c := p.v, p.c
	if rerr != nil || c.dec.DecodeRequest(c.req, &c.rq) != nil {
		return p.gone(errorReply(v.name, "malformed store request"), out), false
	}
	if p.final && codec.ParseRecipe(c.recipeBuf, &c.rq, &c.recipe) != nil {
		// Checked before the request runs: a malformed recipe changes
		// nothing.
		return p.gone(errorReply(v.name, "malformed recipe in a final answer"), out), false
	}
	if !p.wrote {
		// Nothing written yet: a command whose client went away
		// stops here, before its first write (see WithGone).
		if p.ctx.Err() != nil || Gone(p.ctx, p.cmd.writes) {
			return p.gone(errGone, out), false
		}
		if c.rq.Writes() {
			p.wrote = true
			p.ctx = context.WithoutCancel(p.ctx)
		}
	}
	return out, true
}

// gone ends a waiting command early with reply; its continuation is
// cancelled when the slot is next free (or goes with the closing instance).
func (p *pend) gone(reply, out []byte) []byte {
	switch {
	case p.final:
		// Nothing of the command is left in the instance.
	case p.keep:
		p.in.pending-- // abandoned: the closing version takes it along
		p.s.unlock()
	default:
		p.s.cancelLater(p.gen, p.handle)
	}
	return append(out, reply...)
}

// after takes the command on once its request's response is in p.c.resp:
// it resumes the guest (resumed), or answers a final answer by its recipe,
// with no guest call, unless the recipe restarts the command.
func (p *pend) after(out []byte) ([]byte, bool) {
	if !p.final {
		return p.resumed(out)
	}
	if p.ctx.Err() != nil {
		return append(out, errGone...), false // nothing written: p.ctx ignores cancellation after a write
	}
	c := p.c
	out, restart := c.recipe.Apply(out, int(p.start.Proto), &c.resp)
	if !restart {
		return out, false
	}
	return p.restart(out)
}

// maxRestarts bounds how often a final answer's recipe may run one command
// again (codec.Start.Restart is a byte).
const maxRestarts = 255

// restart runs the command again from the start, as its final answer's
// recipe says (codec.ActRestart), on the version serving it now, with
// Start.Restart counting the restarts. Its call state goes on: a
// contention gate it holds or queues for (gate.go) stays its.
func (p *pend) restart(out []byte) ([]byte, bool) {
	r, st, c := p.r, p.start, p.c
	if st.Restart >= maxRestarts {
		return append(out, errorReply(p.v.name, "a final answer restarted the command too often")...), false
	}
	st.Restart++
	r.restarts.Add(1)
	if p.held {
		// Nothing of the command is left in its instance (a final answer
		// ended it there): it needs no reference on its version.
		p.v.unref()
		p.held = false
	}
	cmd, v, s, refused := r.slotFor(p.ctx, p.cmd, st)
	if refused != nil {
		return append(out, refused...), false
	}
	in, err := s.ready()
	if err != nil {
		s.unlock()
		return append(out, errorReply(v.name, err.Error())...), false
	}
	c.start = st
	st.Cmd = cmd.index + 1
	p.cmd, p.v, p.s, p.in = cmd, v, s, in
	packed, err := r.step(in, c, false, 0)
	return p.answer(packed, err, out)
}

// resumed takes the command on once its request's response is in p.c.resp:
// it locks the slot again and resumes the continuation, then goes on as
// answer does.
func (p *pend) resumed(out []byte) ([]byte, bool) {
	if p.ctx.Err() != nil {
		return p.gone(errGone, out), false
	}
	s := p.s
	if !p.keep {
		if err := s.lock(p.ctx); err != nil {
			s.cancelLater(p.gen, p.handle)
			return append(out, errGone...), false
		}
	}
	if s.ncancel.Load() > 0 {
		s.drainCancels()
	}
	if s.inst == nil || s.inst.gen != p.gen {
		// A trap or a timeout of another command discarded the
		// instance, and this command's continuation with it.
		s.unlock()
		return append(out, errorReply(p.v.name, "the instance running this command failed; its writes so far may have been applied")...), false
	}
	p.in.pending--
	packed, err := p.r.step(p.in, p.c, true, p.handle)
	return p.answer(packed, err, out)
}

// blocked takes the answer of a command that blocks (codec.StatusBlock):
// it copies the block into blk, or appends the timeout reply to out when
// blk is nil (the client may not block).
func (v *version) blocked(ans, out []byte, blk *Block) []byte {
	if blk == nil {
		var dec codec.Block
		if codec.DecodeBlock(ans, &dec) != nil {
			return append(out, errorReply(v.name, "malformed block answer from the module")...)
		}
		return append(out, dec.Reply...)
	}
	// Decoded in place, the keys and reply alias guest memory: copied into
	// one buffer, which the client keeps while it waits and reuses the
	// next time it blocks.
	if codec.DecodeBlock(ans, &blk.Block) != nil {
		blk.Keys, blk.Reply = blk.Keys[:0], nil
		return append(out, errorReply(v.name, "malformed block answer from the module")...)
	}
	n := len(blk.Reply)
	for _, k := range blk.Keys {
		n += len(k)
	}
	if cap(blk.buf) < n || cap(blk.buf) > 4*n+1024 {
		blk.buf = make([]byte, 0, n)
	}
	buf := blk.buf[:0]
	for i, k := range blk.Keys {
		buf = append(buf, k...)
		blk.Keys[i] = buf[len(buf)-len(k) : len(buf) : len(buf)]
	}
	buf = append(buf, blk.Reply...)
	blk.buf, blk.Reply = buf, buf[len(buf)-len(blk.Reply):]
	blk.Blocked = true
	return out
}

// execSerial runs items, a client's pipelined commands, one after another
// (ExecBatch), appending each reply to out and setting each item's End.
// Consecutive commands of one module and database run in one guest call
// where the module supports it: a call into a guest costs about as much as
// a short command.
//
// A command that blocks ends the run when blk is not nil: execSerial
// returns with blk filled (see ExecBlock) and blk.Index the command's
// item, whose End is not set; the items after it have not run. With blk
// nil, a command that blocks answers its timeout reply (inside MULTI).
func (r *Runtime) execSerial(ctx context.Context, items []Item, out []byte, blk *Block) []byte {
	if blk != nil {
		blk.Blocked = false
	}
	// limit adapts the batch size to how far batches get: a batch that
	// stops at a command waiting on the store (every store command, on
	// Aerospike) leaves the rest to be laid out again, so after one the
	// next batch is no longer than what that one ran, and it doubles back
	// as commands run without waiting.
	limit := codec.MaxBatch
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && j-i < limit && items[j].Cmd.impl == items[i].Cmd.impl && items[j].Start.DB == items[i].Start.DB {
			j++
		}
		n, waited := 0, false
		if v, _ := items[i].Cmd.impl.(*version); v != nil && v.batch && j-i > 1 {
			n, waited, out = r.runBatch(ctx, v, items[i:j], out, blk)
		}
		if n == 0 {
			it := &items[i]
			out, it.Ended = r.exec(ctx, it.Cmd, &it.Start, out, blk)
			it.End = len(out)
			n = 1
		}
		if blk != nil && blk.Blocked {
			// The command that blocked is always the last one that ran.
			blk.Index = i + n - 1
			return out
		}
		if waited {
			limit = n
		} else {
			limit = min(2*limit, codec.MaxBatch)
		}
		i += n
	}
	return out
}

// runBatch runs items, commands of v, in one call of the guest's
// respike_batch, which hands over each reply as it is done (hostReply). The
// call ends when every command replied, or at a command that waits on the
// store, which then completes as Exec's do; a trap or the deadline ends it
// at the command that caused it, which answers the error. It returns how
// many commands replied, 0 when none could start (the caller runs the
// first through Exec, which knows the way around a closing version), and
// whether the batch stopped at a command that waited.
func (r *Runtime) runBatch(ctx context.Context, v *version, items []Item, out []byte, blk *Block) (int, bool, []byte) {
	if r.suspect(v.ctr) {
		return 0, false, out // its commands take turns, through exec
	}
	s, err := v.acquire(ctx, uint32(items[0].Start.ClientID))
	if err != nil {
		return 0, false, out
	}
	if v.closing.Load() {
		s.unlock()
		return 0, false, out
	}
	c := s.startCall(ctx, items)
	in, err := s.ready()
	if err != nil {
		s.unlock()
		out = append(out, errorReply(v.name, err.Error())...)
		items[0].End = len(out)
		return 1, false, out
	}
	c.items, c.out, c.nreply = items, out, 0
	packed, k, err := r.callBatch(in, c, 0)
	out = c.out
	c.items, c.out = nil, nil
	switch {
	case err != nil:
		// The command running when the call failed answers the failure;
		// the ones after it have not started.
		reply := v.failed(s, in, err)
		s.unlock()
		if k < len(items) {
			out = append(out, reply...)
			items[k].End = len(out)
			k++
		}
		return k, false, out
	case k >= len(items):
		// Every command replied (an answer asking to wait for a command
		// beyond the batch is the module's error, and ignored).
		s.unlock()
		return k, false, out
	case packed == 0:
		// The guest ended the batch without replying to every command.
		s.unlock()
		out = append(out, errorReply(v.name, "malformed answer from the module")...)
		items[k].End = len(out)
		return k + 1, false, out
	}
	// items[k] waits on the store, or blocks: it completes on its own, then
	// the rest of the batch goes in a new call.
	out = r.complete(ctx, items[k].Cmd, &items[k].Start, v, s, in, c, packed, nil, out, blk)
	items[k].End = len(out)
	return k + 1, true, out
}

// step writes c's start message into the instance and calls start, or
// writes c's response and calls resume with handle.
func (r *Runtime) step(in *instance, c *call, resume bool, handle uint32) (uint64, error) {
	var n uint32
	var err error
	if resume {
		n, err = in.writeResponse(c)
	} else {
		n, err = in.writeStart(c)
	}
	if err != nil {
		return 0, err
	}
	in.cur = c
	var packed uint64
	if resume {
		packed, err = in.invoke(in.fResume, uint64(handle), uint64(n))
	} else {
		packed, err = in.invoke(in.fStart, uint64(n), 0)
	}
	in.cur = nil
	return packed, err
}

// reasonDeadline is discard's reason for a call that overran the deadline.
const reasonDeadline = "command exceeded the deadline"

// failed discards the instance after a failed call and returns the reply of
// the command that made it fail. Called with s.mu held.
func (v *version) failed(s *slot, in *instance, err error) []byte {
	var reply []byte
	if errors.Is(err, errDeadline) {
		reply = v.deadlineErr
		s.discard(reasonDeadline)
	} else {
		reason := in.reason(err)
		reply = errorReply(v.name, reason)
		s.discard(reason)
	}
	return reply
}

// hostExec is the guest's respike.exec(req, reqLen, out, outCap) i32: it runs
// a request inline when the store never waits, and writes the response at
// out, or parks it for take when it needs more than outCap bytes (and returns
// minus its length). 0 tells the guest to return the request and be resumed.
func (r *Runtime) hostExec(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if !r.inline || in == nil || in.cur == nil {
		stack[0] = 0
		return
	}
	c := in.cur
	// The request is decoded where the guest built it: the guest waits in
	// this call, so its memory holds still until the store has run, and the
	// store copies what it keeps. The upper half of an i32 argument on the
	// stack is not defined. The reads go through one view of the whole
	// memory (memView).
	mv := &in.view
	mv.b, _ = in.mem.Read(0, in.mem.Size())
	defer mv.clear()
	if c.dec.DecodeRequestAt(mv, uint64(uint32(stack[0])), &c.rq) != nil {
		stack[0] = 0 // the pending path reports the malformed request
		return
	}
	if c.gate.hasHot && c.needsGate() {
		// A request on a key this command lost a race on waits for its
		// gate, which must not happen while the instance is held: it
		// takes the pending path (gateWait, execWindow).
		stack[0] = 0
		return
	}
	out, outCap := uint32(stack[2]), uint32(stack[3])
	r.storeExec(c.ctx, guardOf(c.ctx), c.db, &c.rq, &c.resp)
	c.noteLost(c.db, &c.rq, &c.resp)
	// The response is laid out in the guest's buffer, as the guest's own
	// values (codec.AppendResponse).
	n := 0
	if view, ok := mv.Read(uint64(out), uint64(outCap)); ok && out%8 == 0 {
		view = view[:0:len(view)]
		lay := codec.AppendResponse(view, uint64(out), c.rq.Kind, &c.resp)
		if inPlace(lay, view) {
			stack[0] = uint64(uint32(int32(len(lay))))
			return
		}
		n = len(lay)
	} else {
		n = len(codec.AppendResponse(c.lay[:0], uint64(out), c.rq.Kind, &c.resp))
	}
	// It does not fit. Never answer 0 here: the request ran, and the
	// pending path would run it again. Parked, it reaches the guest
	// through take or not at all.
	in.parked = c
	stack[0] = uint64(uint32(int32(-n)))
}

// hostReply is the guest's respike.reply(ptr, len): the reply of the next
// command of the batch in the current call, appended to the batch's output
// at once, so that a trap or a deadline later in the batch loses nothing
// before it. Each reply also restarts the deadline: it bounds each command,
// not the batch.
func (r *Runtime) hostReply(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in == nil || in.cur == nil || in.cur.items == nil {
		panic(errors.New("respike.reply called outside a batch"))
	}
	c := in.cur
	if c.nreply >= len(c.items) {
		panic(errors.New("respike.reply called more often than the batch has commands"))
	}
	b, ok := in.mem.Read(uint32(stack[0]), uint32(stack[1]))
	if !ok {
		panic(errors.New("respike.reply of bytes outside guest memory"))
	}
	// A command the watchdog claimed as it replied answers the deadline
	// error, as a single command's call would.
	mark := r.dog.epoch.Load() + 1
	if !in.state.CompareAndSwap(in.mark, mark) {
		panic(errDeadline)
	}
	in.mark = mark
	if c.pends != nil {
		r.windowReply(in, c, b)
		return
	}
	if len(b) == 0 {
		b = errorReply(in.v.name, "command wrote no reply")
	}
	c.out = append(c.out, b...)
	c.items[c.nreply].End = len(c.out)
	c.nreply++
	// The batch's next command starts with no race lost. (A command that
	// replies inside the batch never waited, so it holds no gate.)
	c.gate = gateState{}
}

// hostTick is respike.tick, which instrument adds to every module and loops
// call every loopFuel iterations: it stops a call the watchdog has claimed
// (the panic unwinds the guest; the instance is then discarded), and being
// Go, it lets the scheduler preempt a spinning guest.
func (r *Runtime) hostTick(ctx context.Context, _ api.Module, _ []uint64) {
	if in := instanceOf(ctx); in != nil && in.state.Load() == timedOut {
		panic(errDeadline)
	}
	if r.stopping.Load() {
		panic(errStopped)
	}
}

// hostTake is the guest's respike.take(out, outCap) i32: it copies the
// response exec parked and returns its length, or 0 if there is none or it
// does not fit.
func (r *Runtime) hostTake(ctx context.Context, mod api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in == nil || in.parked == nil {
		stack[0] = 0
		return
	}
	c := in.parked
	out := uint32(stack[0])
	c.lay = codec.AppendResponse(c.lay[:0], uint64(out), c.rq.Kind, &c.resp)
	n := len(c.lay)
	if n > int(uint32(stack[1])) || out%8 != 0 || !mod.Memory().Write(out, c.lay) {
		stack[0] = 0
		return
	}
	stack[0] = uint64(uint32(int32(n)))
	in.parked = nil
}

// startCall readies s's call state for a guest call that starts items, a
// batch of commands (runBatch, beginBatch), and stamps each item's start:
// its command, no restart, and the clock read once for those without one.
// Commands of one batch share the connection's database: SELECT, a
// builtin, ends a batch.
func (s *slot) startCall(ctx context.Context, items []Item) *call {
	if c := s.call; c == nil || cap(c.req) > maxPooled || cap(c.lay) > maxPooled {
		s.call = new(call)
	}
	c := s.call
	c.ctx, c.db = ctx, int(items[0].Start.DB)
	c.gate = gateState{}
	now := int64(0)
	for i := range items {
		st := &items[i].Start
		st.Cmd = items[i].Cmd.index + 1
		st.Restart = 0
		if st.Now == 0 {
			if now == 0 {
				now = time.Now().UnixNano()
			}
			st.Now = now
		}
	}
	return c
}

// callBatch runs the guest's respike_batch on c's items with the batch
// header's flags, and counts the batch. It returns the call's packed
// answer, how many commands replied, and the call's failure.
func (r *Runtime) callBatch(in *instance, c *call, flags uint32) (uint64, int, error) {
	var packed uint64
	n, err := in.writeBatchFlags(c, flags)
	if err == nil {
		in.cur = c
		packed, err = in.invoke(in.fBatch, uint64(n), 0)
		in.cur = nil
	}
	k := c.nreply
	if k > 1 {
		r.batches.Add(1)
		r.batched.Add(int64(k))
	}
	return packed, k, err
}
