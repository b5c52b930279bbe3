package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
	"github.com/respike/respike/host/module"
)

// goneRecheck is how long a connection seen alive is taken to be still
// there before peerGone looks at its socket again (a system call).
const goneRecheck = int64(time.Millisecond)

// flushAt is the reply backlog at which a connection writes out before it
// has run the rest of a pipeline, so a long pipeline cannot pile up replies.
const flushAt = 64 << 10

// keepReplyBuf is the reply buffer capacity kept between batches; a bigger
// one (after a large reply) is dropped.
const keepReplyBuf = 1 << 20

// client is one connection. Fields without a comment saying otherwise
// belong to the connection's goroutine.
type client struct {
	s    *Server
	ctx  context.Context // the server's, with this client's peerGone (module.WithGone)
	id   uint64
	conn net.Conn
	// out writes replies: conn, or its raw socket (rawio_linux.go).
	out io.Writer
	// raw is the raw socket that reads and writes conn, nil if none. Its
	// reads keep a reference to conn between commands: other goroutines
	// end the connection with hangUp, not conn.Close.
	raw rawIO
	// killed: another goroutine ended the connection (hangUp). Read by
	// the connection's goroutine and its overlapped commands (peerGone).
	killed atomic.Bool
	rd     reader
	// hadIdle: a read deadline was set for CONFIG's timeout, to clear
	// when CONFIG SET timeout 0 turns it off.
	hadIdle bool
	// nwritten is the bytes written since the last flushStats.
	nwritten int64
	// monitor is set in MONITOR mode: then its goroutine writes to conn
	// too, and wmu orders the two writers.
	monitor *monitor
	wmu     sync.Mutex
	w       resp.Writer // replies not yet written to conn
	start   codec.Start
	lname   [maxBuiltinName]byte // scratch for lower-casing command names
	// lookupCache answers the module lookup of the same command name
	// again without a map lookup (module.Runtime.LookupCached).
	lookupCache module.LookupCache
	created     time.Time
	addr        string
	laddr       string
	local       bool // loopback peer

	db            int
	proto         int // 2 or 3
	authenticated bool
	// The ACL user the connection runs as: its name, and the user as of
	// Server.aclGen userGen (curUser re-reads it when that changes).
	userName   string
	user       *aclUser
	userGen    uint64
	inMulti    bool
	multiDirty bool // a command failed to queue: EXEC aborts
	queue      []queued
	watches    watches // WATCHed keys (multi.go); nil when none
	replyOff   bool    // CLIENT REPLY OFF
	skipNext   bool    // CLIENT REPLY SKIP: drop the next command's reply
	skipping   bool    // the running command's reply is dropped (CLIENT REPLY SKIP before it)
	replyMark  int     // c.w.Buf[:replyMark] is settled: sent whatever CLIENT REPLY does next (see settle)
	closeAfter bool    // QUIT: close once the reply is written
	noEvict    bool
	noTouch    bool
	statCache  map[*module.Command]*cmdStat
	// The last module command statFor returned a record for, and the
	// record: an unpipelined client mostly repeats one command, and this
	// spares statCache's lookup.
	lastStatCmd *module.Command
	lastStat    *cmdStat
	// blk is the Block module commands run with (block), kept between
	// runs rather than taken from blockPool for each.
	blk *module.Block

	// pipe holds the module commands of the current read not yet run:
	// they run together (module.Runtime.ExecBatch, fewer guest calls) when
	// a command that cannot join them comes or the read's commands end.
	// Their arguments alias the read buffer.
	pipe []module.Item

	// Blocking commands (blocking.go): the state of a client that has
	// blocked (nil before; set under mu), whether a blocking command may
	// block now (not while EXEC runs), and whether the connection failed
	// while it waited.
	bl      *blockState
	noBlock bool
	dead    bool

	// Shown to other connections by CLIENT LIST: written by the owner
	// under mu, read by others under mu.
	mu      sync.Mutex
	info    clientInfo
	lastCmd atomic.Pointer[string] // name of the last command run
	lastAt  atomic.Int64           // unix nanoseconds of the last command

	// clock is when the current command started, in monotonic nanoseconds
	// since the server started: read once per batch read and once after
	// each command ends, which is also when the next one starts. A clock
	// read costs ~50 ns, a noticeable part of a pipelined command.
	clock   int64
	wallOff int64 // Unix nanoseconds at clock 0, as of the batch being run

	// alive is the clock (as clock) when the connection was last seen
	// alive: a read that returned commands, or a look at the socket
	// (peerGone). Read by the goroutines of overlapped commands.
	alive atomic.Int64

	// Command counts not yet added to the server's (see count).
	stats  [4]statBatch
	nstats int
	cmds   int64
}

// clientInfo is the part of a client's state that CLIENT LIST reports.
type clientInfo struct {
	name, libName, libVer string
	user                  string // the ACL user
	db, proto             int
	multi                 int  // queued commands; -1 outside MULTI
	blocked               bool // waits in a blocking command
}

// queued is a command queued by MULTI.
type queued struct {
	b    *builtin
	m    *module.Command
	args [][]byte
}

func newClient(s *Server, id uint64, nc net.Conn) *client {
	c := &client{
		s:             s,
		id:            id,
		conn:          nc,
		created:       time.Now(),
		addr:          nc.RemoteAddr().String(),
		laddr:         nc.LocalAddr().String(),
		proto:         2,
		authenticated: s.defaultNoPass(),
		userName:      "default",
	}
	c.userGen = s.aclGen.Load()
	c.user = s.user("default")
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.local = a.IP.IsLoopback()
	}
	c.rd = reader{r: nc, c: c}
	c.out = nc
	if rs := newRawSocket(nc); rs != nil {
		c.rd.r, c.out, c.raw = rs, rs, rs
	}
	c.ctx = module.WithGone(s.ctx, c.peerGone)
	c.w.Proto = 2
	c.info = clientInfo{proto: 2, multi: -1, user: "default"}
	c.lastAt.Store(c.created.UnixNano())
	return c
}

// serveConn runs the connection until it closes, the client quits, or the
// server shuts down.
func (s *Server) serveConn(c *client) {
	defer func() {
		// A bug in the proxy's own code (a panic while running this
		// client's commands) ends this connection, not the process and
		// every other client with it, as net/http treats a handler's
		// panic. The reply being written may be half done, so nothing
		// more is sent: the client sees its connection close. State the
		// panic left behind (a module instance not returned) is lost
		// with the connection; the log has the stack to fix the bug.
		if p := recover(); p != nil {
			s.log.Error("a connection ended on an internal error", "client", c.id, "addr", c.addr,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			s.stats.internalErrors.Add(1)
		}
		c.endMonitor()
		c.flushStats()
		if c.raw != nil {
			c.raw.release() // before Close, which waits for it
		}
		c.conn.Close()
		s.removeClient(c)
	}()
	if !c.handshake() {
		return
	}
	for {
		if idle := time.Duration(s.idle.Load()); idle > 0 {
			_ = c.conn.SetReadDeadline(time.Now().Add(idle))
		} else if c.hadIdle {
			_ = c.conn.SetReadDeadline(time.Time{})
		}
		c.hadIdle = s.idle.Load() > 0
		if s.closing.Load() || c.killed.Load() {
			return
		}
		cmds, err := c.rd.ReadCommands()
		if err != nil {
			c.readFailed(err)
			return
		}
		// One monotonic clock read per batch: commands take their start
		// time (codec.Start.Now) from it and the wall clock's offset,
		// read at most once a millisecond (wallOffset).
		c.clock = s.nanos()
		c.wallOff = s.wallOffset(c.clock)
		c.alive.Store(c.clock)
		for i := range cmds {
			c.process(cmds[i])
			if c.closeAfter || c.dead || s.ctx.Err() != nil || c.killed.Load() {
				break
			}
			if len(c.w.Buf) >= flushAt && !c.flush() {
				return
			}
		}
		c.runPipe()
		c.flushStats()
		if c.dead || !c.flush() || c.closeAfter {
			return
		}
	}
}

// hangUp ends the connection from another goroutine (CLIENT KILL,
// shutdown, a MONITOR too slow), at once and without waiting for the
// connection's goroutine, which may be running a command for as long as
// the store's timeout: the client sees the connection end, the command's
// store requests not yet sent are cancelled (peerGone), its reply cannot
// be written, and the connection's goroutine runs nothing more and closes
// the connection. A raw socket is shut down rather than closed (rawIO's
// hangUp says why); another connection (TLS) is closed, as before.
func (c *client) hangUp() {
	c.killed.Store(true)
	if c.raw != nil {
		c.raw.hangUp()
		return
	}
	_ = c.conn.Close()
}

// readFailed answers a protocol error as Redis does, then the caller
// closes the connection; other read errors (EOF, idle timeout, shutdown)
// close it silently.
func (c *client) readFailed(err error) {
	msg := ""
	var pe *protoError
	if !errors.As(err, &pe) {
		return
	}
	msg = pe.Error()
	c.w.Error("ERR " + msg)
	c.flush()
	c.s.log.Debug("protocol error; closing", "client", c.id, "addr", c.addr, "err", msg)
}

// nanos is the monotonic time since the server started.
func (s *Server) nanos() int64 { return int64(time.Since(s.started)) }

// wallRefresh is how long a reading of the wall clock's offset from
// nanos's clock serves (wallOffset).
const wallRefresh = int64(time.Millisecond)

// wallReading is the wall clock's offset from nanos's clock, read at nanos
// at.
type wallReading struct{ at, off int64 }

// wallOffset returns the wall clock in Unix nanoseconds minus nanos, at
// now (a nanos reading), as read with time.Now within the last
// wallRefresh. time.Now reads two clocks, and on a virtual machine each
// read costs 80-250 ns (rdtsc alone 80-100 ns here): reading it once
// per batch was ~1.5% of an unpipelined command's CPU (docs/performance.md,
// "The fixed cost of a command"). The two clocks advance alike (NTP's
// slewing adjusts both); only a step of the wall clock changes the
// offset, and a command sees it at most wallRefresh late.
func (s *Server) wallOffset(now int64) int64 {
	if w := s.wall.Load(); w != nil && uint64(now-w.at) < uint64(wallRefresh) {
		return w.off
	}
	t := time.Now()
	mono := int64(t.Sub(s.started))
	off := t.UnixNano() - mono
	s.wall.Store(&wallReading{at: mono, off: off})
	return off
}

// ranUntil is when the module commands items[:ran], which ExecBatch has
// just run, ended, on nanos's clock: the runtime's own reading at the end
// of the last one's guest call when every item ran and that call replied
// to it (module.Item.Ended), else the clock now. An unpipelined command
// so costs one clock read less (~150 ns on a virtual machine,
// docs/performance.md, "The fixed cost of a command"); what it leaves
// out is the reply's copy and the slot's release after that call.
func (s *Server) ranUntil(items []module.Item, ran int) int64 {
	if ran == len(items) && ran > 0 {
		if e := items[ran-1].Ended; e != 0 {
			return e - s.clockOff
		}
	}
	return s.nanos()
}

// flush writes the pending replies; false when the connection failed.
func (c *client) flush() bool {
	if len(c.w.Buf) == 0 {
		return true
	}
	if c.monitor != nil {
		c.wmu.Lock()
	}
	n, err := c.out.Write(c.w.Buf)
	if c.monitor != nil {
		c.wmu.Unlock()
	}
	c.nwritten += int64(n)
	if cap(c.w.Buf) > keepReplyBuf {
		c.w.Buf = nil
	} else {
		c.w.Buf = c.w.Buf[:0]
	}
	return err == nil
}

// process runs one command and appends its reply.
func (c *client) process(args [][]byte) {
	if len(args) == 0 {
		return
	}
	c.lastAt.Store(c.s.startedUnix + c.clock)
	b, m := c.lookup(args)
	if m != nil && c.authenticated && !c.inMulti && !c.replyOff && !c.skipNext && arityOK(m.Info.Arity, len(args)) &&
		(!c.s.aclRestricted.Load() || c.mayRun(nil, m, args)) {
		c.hold(m, args)
		return
	}
	c.runPipe() // replies stay in order
	if c.dead {
		return
	}
	c.replyMark = len(c.w.Buf)
	c.skipping, c.skipNext = c.skipNext, false

	c.dispatch(args, b, m)

	c.settle()
	c.skipping = false
}

// settle drops the replies written since the last settle if CLIENT REPLY
// says so now. Redis decides at each reply it adds, from the flags of that
// moment: CLIENT REPLY ON clears OFF and SKIP before it answers, so its +OK
// is sent even right after SKIP; inside EXEC, the array header and each
// queued command's reply are decided one by one (cmdExec settles after
// each), so a queued CLIENT REPLY OFF leaves the array short, as in Redis.
func (c *client) settle() {
	if c.replyOff || c.skipping {
		c.w.Buf = c.w.Buf[:c.replyMark]
	}
	c.replyMark = len(c.w.Buf)
}

// maxPipe is the most module commands a connection holds back to run
// together. Their replies are written out together too, so it also bounds
// how many large replies pile up before a write; 16 already spreads a
// guest call's fixed cost thin (docs/performance.md).
const maxPipe = 16

// hold holds a module command back to run with the next ones (runPipe).
func (c *client) hold(m *module.Command, args [][]byte) {
	c.pipe = append(c.pipe, module.Item{Cmd: m, Start: codec.Start{Proto: uint8(c.proto), DB: uint16(c.db),
		ClientID: c.id, Now: c.wallOff + c.clock, Args: args}})
	if len(c.pipe) == maxPipe {
		c.runPipe()
	}
}

// runPipe runs the held-back module commands and records their statistics.
// A batch's time is shared evenly among its commands. A command that
// blocks stops the batch: the client waits in it (waitBlocked), then the
// commands after it run.
func (c *client) runPipe() {
	n := len(c.pipe)
	if n == 0 {
		return
	}
	var blk *module.Block
	if !c.noBlock {
		blk = c.block()
	}
	items := c.pipe
	for len(items) > 0 {
		mark, began := len(c.w.Buf), c.clock
		c.w.Buf = c.s.rt.ExecBatch(c.ctx, items, c.w.Buf, blk)
		ran := len(items)
		if blk != nil && blk.Blocked {
			ran = blk.Index
		}
		end := c.s.ranUntil(items, ran)
		c.countPipe(items[:ran], mark, began, end)
		c.clock = end
		if ran == len(items) {
			break
		}
		it := &items[ran]
		mark = c.waitBlocked(&it.Start, blk)
		end = c.s.nanos()
		failed := len(c.w.Buf) > mark && c.w.Buf[mark] == '-'
		st := c.statFor(nil, it.Cmd)
		c.count(st, end-c.clock, failed)
		c.observe(st, nil, it.Cmd, it.Start.Args, end-c.clock)
		if c.s.monitoring.Load() > 0 {
			c.feedMonitors(nil, it.Cmd, it.Start.Args, it.Start.Now)
		}
		if failed {
			c.s.stats.countError(c.w.Buf[mark+1:])
		}
		c.clock = end
		if c.dead {
			break
		}
		items = items[ran+1:]
		// The commands after it start now, not when they were read.
		now := c.wallOff + c.clock
		for i := range items {
			items[i].Start.Now = now
		}
	}
	if blk != nil {
		c.doneBlock(blk)
	}
	c.lastCmd.Store(&c.pipe[n-1].Cmd.Info.Name)
	clear(c.pipe) // the arguments alias the read buffer
	c.pipe = c.pipe[:0]
}

// countPipe records the statistics of items, which ExecBatch ran from
// mark in c.w.Buf between began and end.
func (c *client) countPipe(items []module.Item, mark int, began, end int64) {
	if len(items) == 0 {
		return
	}
	each := (end - began) / int64(len(items))
	var last *module.Command
	var st *cmdStat
	for i := range items {
		it := &items[i]
		if it.Cmd != last { // a pipeline mostly repeats one command
			last, st = it.Cmd, c.statFor(nil, it.Cmd)
		}
		failed := it.End > mark && c.w.Buf[mark] == '-'
		c.count(st, each, failed)
		c.observe(st, nil, it.Cmd, it.Start.Args, each)
		if c.s.monitoring.Load() > 0 {
			c.feedMonitors(nil, it.Cmd, it.Start.Args, it.Start.Now)
		}
		if failed {
			c.s.stats.countError(c.w.Buf[mark+1 : it.End])
		}
		mark = it.End
	}
}

// lookup finds a command: a module's (m) or a builtin (b); neither when
// unknown.
func (c *client) lookup(args [][]byte) (b *builtin, m *module.Command) {
	// Modules and builtins never share a name: lower-case once, and try
	// the modules first, where the data commands are.
	if len(args[0]) <= len(c.lname) {
		lower := lowerInto(c.lname[:0], args[0])
		if m = c.s.rt.LookupCached(&c.lookupCache, lower); m == nil {
			b = builtins.lookup(lower)
		}
	} else {
		m = c.s.rt.Lookup(args[0])
	}
	return b, m
}

// dispatch checks that the command b or m (looked up from args) may run,
// and runs or queues it. The order of checks is Redis's: unknown command,
// arity, authentication.
func (c *client) dispatch(args [][]byte, b *builtin, m *module.Command) {
	if b == nil && m == nil {
		c.reject(nil, unknownCommand(args))
		return
	}
	if b != nil && b.subs != nil && len(args) >= 2 {
		sub := b.sub(args[1], c.lname[:0])
		if sub == nil {
			c.reject(nil, unknownSubcommand(args))
			return
		}
		b = sub
	}
	var arity int
	var name string
	if b != nil {
		arity, name = b.arity, b.name
	} else {
		arity, name = m.Info.Arity, m.Info.Name
	}
	if !arityOK(arity, len(args)) {
		c.refuse(b, m, "ERR wrong number of arguments for '"+name+"' command")
		return
	}
	if !c.authenticated && (b == nil || !b.noAuth) {
		c.refuse(b, m, "NOAUTH Authentication required.")
		return
	}
	if c.s.aclRestricted.Load() && (b == nil || !b.noAuth) {
		// Redis checks permissions when it queues a command too.
		if msg := c.permitted(b, m, args); msg != "" {
			c.refuse(b, m, msg)
			return
		}
	}
	if c.inMulti && (b == nil || !b.multiControl) {
		// The arguments alias the read buffer: a queued command keeps a copy.
		c.queue = append(c.queue, queued{b: b, m: m, args: cloneArgs(args)})
		c.setInfo(func(i *clientInfo) { i.multi = len(c.queue) })
		c.w.Simple("QUEUED")
		return
	}
	c.call(b, m, args)
}

// call runs a command that passed the checks and records its statistics.
func (c *client) call(b *builtin, m *module.Command, args [][]byte) {
	mark, began := len(c.w.Buf), c.clock
	st := c.statFor(b, m)
	if b != nil {
		c.flushStats()
		c.lastCmd.Store(&b.name)
		b.run(c, args)
	} else {
		c.lastCmd.Store(&m.Info.Name)
		c.start.Proto = uint8(c.proto)
		c.start.DB = uint16(c.db)
		c.start.ClientID = c.id
		c.start.Now = c.wallOff + c.clock
		c.start.Args = args
		if c.noBlock {
			c.w.Buf = c.s.rt.Exec(c.ctx, m, &c.start, c.w.Buf)
		} else {
			blk := c.block()
			c.w.Buf = c.s.rt.ExecBlock(c.ctx, m, &c.start, c.w.Buf, blk)
			if blk.Blocked {
				mark = c.waitBlocked(&c.start, blk)
				began = c.clock // the last run's start: waits are not counted
			}
			c.doneBlock(blk)
		}
		c.start.Args = nil
	}
	end := c.s.nanos()
	failed := len(c.w.Buf) > mark && c.w.Buf[mark] == '-'
	c.count(st, end-began, failed)
	c.observe(st, b, m, args, end-began)
	if c.s.monitoring.Load() > 0 {
		c.feedMonitors(b, m, args, c.wallOff+began)
	}
	c.clock = end
	if failed {
		c.s.stats.countError(c.w.Buf[mark+1:])
	}
}

// reject answers an error for a command that may not run; inside MULTI it
// also dooms the transaction, as Redis does.
func (c *client) reject(st *cmdStat, msg string) {
	if st != nil {
		st.rejected.Add(1)
	}
	if c.inMulti {
		c.multiDirty = true
	}
	c.w.Error(msg)
	c.s.stats.countError([]byte(msg))
}

// refuse rejects a known command that may not run. A refused EXEC is
// answered as Redis does: the transaction is discarded and the error says
// why, without its code.
func (c *client) refuse(b *builtin, m *module.Command, msg string) {
	st := c.statFor(b, m)
	if b != nil && b.name == "exec" {
		c.discardMulti()
		_, why, _ := strings.Cut(msg, " ")
		msg = "EXECABORT Transaction discarded because of: " + why
	}
	c.reject(st, msg)
}

// statFor returns the statistics record of a command.
func (c *client) statFor(b *builtin, m *module.Command) *cmdStat {
	if b != nil {
		return &c.s.stats.builtin[b.idx]
	}
	if m == c.lastStatCmd {
		return c.lastStat
	}
	if st, ok := c.statCache[m]; ok {
		c.lastStatCmd, c.lastStat = m, st
		return st
	}
	if c.statCache == nil || len(c.statCache) > 4096 {
		// Hot swaps replace Command values: forget stale ones now and then.
		c.statCache = make(map[*module.Command]*cmdStat)
	}
	st := c.s.stats.module(m.Info.Name)
	c.statCache[m] = st
	c.lastStatCmd, c.lastStat = m, st
	return st
}

// setInfo changes the state other connections can see.
func (c *client) setInfo(f func(*clientInfo)) {
	c.mu.Lock()
	f(&c.info)
	c.mu.Unlock()
}

// snapshot returns the state other connections can see.
func (c *client) snapshot() clientInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// selectDB switches the connection's database.
func (c *client) selectDB(db int) {
	c.db = db
	c.setInfo(func(i *clientInfo) { i.db = db })
}

// setProto switches the connection's RESP version.
func (c *client) setProto(p int) {
	c.proto = p
	c.w.Proto = p
	c.setInfo(func(i *clientInfo) { i.proto = p })
}

func arityOK(arity, n int) bool {
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// cloneArgs copies args into one allocation.
func cloneArgs(args [][]byte) [][]byte {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		out[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	return out
}

// lowerInto appends name lower-cased to dst.
func lowerInto(dst, name []byte) []byte {
	for _, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		dst = append(dst, ch)
	}
	return dst
}

// cstr is b as Redis's %s prints it: up to the first NUL, at most n bytes.
func cstr(b []byte, n int) []byte {
	for i, ch := range b {
		if ch == 0 {
			b = b[:i]
			break
		}
	}
	if len(b) > n {
		b = b[:n]
	}
	return b
}

// unknownCommand is Redis's reply to an unknown command, quoting up to 128
// bytes of its arguments.
func unknownCommand(args [][]byte) string {
	var rest []byte
	for i := 1; i < len(args) && len(rest) < 128; i++ {
		prec := 128 - len(rest)
		rest = append(rest, '\'')
		rest = append(rest, cstr(args[i], prec)...)
		rest = append(rest, '\'', ' ')
	}
	return "ERR unknown command '" + string(cstr(args[0], 128)) + "', with args beginning with: " + string(rest)
}

// unknownSubcommand is Redis's reply to an unknown subcommand of a
// container command such as CLIENT.
func unknownSubcommand(args [][]byte) string {
	return "ERR unknown subcommand '" + string(cstr(args[1], 128)) + "'. Try " +
		strings.ToUpper(string(cstr(args[0], len(args[0])))) + " HELP."
}
