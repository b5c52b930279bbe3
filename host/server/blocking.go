package server

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/block"
	"github.com/respike/respike/host/module"
)

// Blocking commands. A module command that blocks (sdk.Ctx.Block) ends on
// the module's side with the keys to wait on, a timeout and the reply for
// when it passes. The connection's goroutine then parks the client in the
// block.Registry and waits in its own connection's Read, so that it holds
// no module instance, no other goroutine and no timer beyond the read
// deadline: a write to one of the keys (through this proxy, or seen by the
// registry's poll) wakes it by moving the read deadline to the past, and
// it runs the command again from the start, with the module version then
// loaded; the timeout is the read deadline itself; a closed connection
// ends the Read. Commands pipelined after the blocking one are read into
// the buffer meanwhile and run after it, so replies stay in order.

// errUnblocked is the reply of a client that CLIENT UNBLOCK ... ERROR
// unblocked, as Redis words it.
const errUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"

// How CLIENT UNBLOCK ends a wait.
const (
	unblockTimeout = 1 // the timeout reply, as if the timeout had passed
	unblockError   = 2 // errUnblocked
)

// aLongTimeAgo is a read deadline in the past: it ends a Read at once.
var aLongTimeAgo = time.Unix(1, 0)

// blockState is what a client that has blocked keeps, allocated on its
// first block: the waiter in the registry and what other goroutines
// signal it with.
type blockState struct {
	waiter block.Waiter

	mu      sync.Mutex
	parked  bool // the client waits in a blocking command (CLIENT UNBLOCK may end it)
	reading bool // its goroutine waits in conn.Read: a signal moves the deadline
	woken   bool // a key was written: run the command again
	unblock int  // CLIENT UNBLOCK: unblockTimeout or unblockError
}

// blockPool holds the Blocks runPipe and call hand the runtime: every
// connection runs module commands, few block, and a client that blocks
// keeps its Block only while it waits.
var blockPool = sync.Pool{New: func() any { return new(module.Block) }}

func getBlock() *module.Block { return blockPool.Get().(*module.Block) }

func putBlock(b *module.Block) {
	if cap(b.Keys) > 64 {
		b.Keys = nil
	}
	b.Reply = nil
	b.Blocked, b.Index = false, 0 // ExecBatch clears them too; a pooled Block starts clean
	blockPool.Put(b)
}

// block returns the Block the connection runs module commands with: its
// own, kept from one run to the next, since taking one from blockPool and
// giving it back cost two pool calls per unpipelined command.
func (c *client) block() *module.Block {
	if c.blk == nil {
		c.blk = getBlock()
	}
	return c.blk
}

// doneBlock ends a run with blk (block's): a Block that held a blocked
// command's keys and reply goes back to the pool, as every Block did
// before, so that a client that blocked once keeps no buffers for it.
func (c *client) doneBlock(blk *module.Block) {
	if len(blk.Keys) == 0 && blk.Reply == nil {
		blk.Blocked, blk.Index = false, 0
		return
	}
	if c.blk == blk {
		c.blk = nil
	}
	putBlock(blk)
}

// blockState returns the client's blocking state, creating it on first use.
func (c *client) blockState() *blockState {
	if c.bl == nil {
		b := &blockState{}
		b.waiter.Wake = func() {
			b.mu.Lock()
			b.woken = true
			if b.reading {
				_ = c.conn.SetReadDeadline(aLongTimeAgo)
			}
			b.mu.Unlock()
		}
		c.mu.Lock() // unblockClient reads it from other goroutines
		c.bl = b
		c.mu.Unlock()
	}
	return c.bl
}

// waitBlocked parks the client whose command st blocked with blk, until
// it replies: after a write, a timeout, CLIENT UNBLOCK, or
// never when the connection closes or the server stops (c.dead is then
// set). The replies before it are written out first, as Redis writes them
// before it blocks. It returns where its reply starts in c.w.Buf.
func (c *client) waitBlocked(st *codec.Start, blk *module.Block) int {
	if len(c.w.Buf) > 0 {
		// What is written out is settled (see settle).
		c.replyMark = max(0, c.replyMark-len(c.w.Buf))
		if !c.flush() {
			c.dead = true
			return len(c.w.Buf)
		}
	}
	b := c.blockState()
	var deadline time.Time
	if blk.Timeout > 0 {
		// From the command's start, as Redis counts it; a re-run's own
		// timeout is ignored.
		deadline = time.Unix(0, st.Now).Add(time.Duration(blk.Timeout))
	}
	db := int(st.DB)
	b.mu.Lock()
	b.parked, b.woken, b.unblock = true, false, 0
	b.mu.Unlock()
	c.s.reg.Park(&b.waiter, db, blk.Keys)
	c.s.blocked.Add(1)
	c.setInfo(func(i *clientInfo) { i.blocked = true })
	defer func() {
		b.mu.Lock()
		b.parked, b.reading, b.woken, b.unblock = false, false, false, 0
		b.mu.Unlock()
		c.s.blocked.Add(-1)
		c.setInfo(func(i *clientInfo) { i.blocked = false })
		_ = c.conn.SetReadDeadline(time.Time{}) // serveConn sets the idle one
	}()
	for {
		ev := c.waitEvent(b, deadline)
		// The command's statistics count its runs, not its waits.
		c.clock = c.s.nanos()
		mark := len(c.w.Buf)
		switch ev {
		case evWoken:
			cmd := c.s.rt.Lookup(st.Args[0]) // the version loaded now
			if cmd == nil {
				c.s.reg.Done(&b.waiter)
				c.w.Error("ERR unknown command, its module was unloaded")
				return mark
			}
			c.lastCmd.Store(&cmd.Info.Name)
			st.Now = time.Now().UnixNano()
			c.w.Buf = c.s.rt.ExecBlock(c.ctx, cmd, st, c.w.Buf, blk)
			if !blk.Blocked {
				c.s.reg.Done(&b.waiter)
				return mark
			}
			c.s.reg.Rearm(&b.waiter, db, blk.Keys)
		case evTimeout:
			c.s.reg.Done(&b.waiter)
			c.w.Buf = append(c.w.Buf, blk.Reply...)
			return mark
		case evUnblockError:
			c.s.reg.Done(&b.waiter)
			c.w.Error(errUnblocked)
			return mark
		case evGone:
			c.s.reg.Done(&b.waiter)
			c.dead = true
			return mark
		}
	}
}

// What ends a wait.
const (
	evWoken = iota
	evTimeout
	evUnblockError
	evGone
)

// waitEvent waits in the connection's Read until a key is written, the
// deadline passes (a zero deadline never does), CLIENT UNBLOCK comes, or
// the connection closes or the server stops.
func (c *client) waitEvent(b *blockState, deadline time.Time) int {
	for {
		b.mu.Lock()
		b.reading = true
		b.mu.Unlock()
		// The deadline is set before the signals are looked at, and a
		// signal is raised before the deadline is moved: none is lost.
		_ = c.conn.SetReadDeadline(deadline)
		b.mu.Lock()
		ev := -1
		switch {
		case b.unblock == unblockError:
			ev = evUnblockError
		case b.unblock == unblockTimeout:
			ev = evTimeout
		case b.woken:
			ev = evWoken
		}
		if ev >= 0 {
			b.reading, b.woken, b.unblock = false, false, 0
		}
		b.mu.Unlock()
		switch {
		case ev >= 0:
			return ev
		case c.s.closing.Load() || c.s.ctx.Err() != nil || c.killed.Load():
			return evGone
		case !deadline.IsZero() && !time.Now().Before(deadline):
			return evTimeout
		}
		if err := c.rd.readMore(); err != nil && !isDeadline(err) {
			return evGone
		}
	}
}

// unblockClient is CLIENT UNBLOCK's: it ends the wait of client id, if it
// waits in a blocking command, with the timeout reply or errUnblocked.
func (s *Server) unblockClient(id uint64, how int) bool {
	s.mu.Lock()
	o := s.clients[id]
	s.mu.Unlock()
	if o == nil {
		return false
	}
	o.mu.Lock()
	b := o.bl // set by its goroutine before it first parks, under o.mu
	o.mu.Unlock()
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.parked {
		return false
	}
	b.unblock = how
	if b.reading {
		_ = o.conn.SetReadDeadline(aLongTimeAgo)
	}
	return true
}

func isDeadline(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
