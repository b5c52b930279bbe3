//go:build linux

package server

import (
	"io"
	"iter"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawSocket reads and writes a plain TCP or Unix connection with raw
// system calls (syscall.RawSyscall) through the runtime poller
// (syscall.RawConn), instead of net.Conn's Read and Write.
//
// Why raw: the socket is non-blocking, so a read or write returns at once
// (EAGAIN parks the goroutine on the poller as net.Conn would). But
// net.Conn enters every one through the scheduler's system-call path, and
// sysmon, seeing a processor "in a system call" on two of its ticks,
// retakes it and drops back to polling every 20 µs. Under an unpipelined
// load that cost respike's daemon an eighth of its CPU in sysmon alone,
// and the handoffs more (RATIONALE.md, "Client sockets are read and
// written with raw system calls").
//
// Why reading stays inside one poller call (TCP): each RawConn.Read
// begins by resetting the descriptor's readiness (internal/poll's
// prepareRead), so a new call must read before it may wait, or it could
// sleep through data that arrived before the reset. An unpipelined
// client's next command never has arrived when its reply has just been
// written, so every command cost two reads, the second one finding
// nothing (EAGAIN): 28% of an embedded GET's CPU was reads
// (docs/performance.md). Inside one call there is no reset: readiness
// that arrives while the function runs is kept, and the poller's wait
// returns at once for it or sleeps until the next. So on TCP all reads
// happen in one RawConn.Read that lasts as long as the connection reads,
// run by a coroutine (iter.Pull: a direct switch, not a trip through the
// scheduler): it reads, hands over what it read, and when asked for more
// waits for readiness without a read when nothing can be queued (read
// says when that is known: TCP_INQ). One read per unpipelined command
// (RATIONALE.md, "One read per unpipelined command"). Unix sockets, which
// have no TCP_INQ, keep a RawConn.Read per Read.
//
// The price: the coroutine holds the descriptor's read lock and a
// reference to it between reads, so net.Conn.Close, which waits for every
// reference to go, waits for the connection's goroutine to release it
// (release); another goroutine ends the connection with hangUp instead,
// and peerGone peeks through RawConn.Control, which takes no read lock.
// Deadlines work as before: the poller's wait returns the deadline's error.
// Under the race detector the calls are syscall.Read and Write, whose
// annotations order a reply's writes before the client's read of it
// (rawio_race.go); the code around them is the same.
type rawSocket struct {
	rc syscall.RawConn

	// The state of the call in progress, for the functions the poller
	// calls, which are made once (newRawSocket) rather than as closures
	// per call: a closure handed to RawConn escapes, with what it
	// captures, and cost two allocations per read and per write, the
	// most of any part of an unpipelined GET on the embedded store
	// (docs/performance.md, "Unpipelined CPU per command"). Only the
	// connection's goroutine reads (through the coroutine, which runs only
	// while Read waits for it) and writes through the rawSocket (a
	// MONITOR's goroutine writes to the net.Conn), so one set of fields
	// each for reading and writing is enough.
	rp, wp         []byte
	rn, wn         int
	rerrno, werrno syscall.Errno
	rerr           error // the poller's: a deadline, or the connection closed
	readFn         func(fd uintptr) bool
	readOnceFn     func(fd uintptr) bool
	writeFn        func(fd uintptr) bool

	// The reading coroutine, started by the first Read: next runs it
	// until it has read, stop ends it (release). yield is its side of the
	// switch, for readFn; stopped tells pump that release ended it.
	next    func() (struct{}, bool)
	stop    func()
	yield   func(struct{}) bool
	stopped bool

	// On TCP, reads are recvmsg calls that also return, in msg's control
	// data (oob), how many bytes remain queued, or 1 once the peer's FIN
	// has come (TCP_INQ, Linux 4.18): the one thing a short read cannot
	// tell, and a wait would miss (read says why). inq: the option is on.
	inq bool
	msg syscall.Msghdr
	iov syscall.Iovec
	oob [32]byte

	// wrote: a write succeeded since the last read (read says why it
	// matters). Set by Write, cleared and read by the coroutine, which
	// runs only while Read waits for it.
	wrote bool

	// reads counts read system calls, for tests.
	reads int

	// fd is the descriptor, for Write's first attempt outside the poller;
	// -1 if Control did not give it.
	fd int
}

// Linux's TCP_INQ socket option, and the control message type it adds
// to recvmsg (the same number).
const (
	tcpInq   = 36
	tcpCmInq = 36
)

// newRawSocket returns a raw reader/writer for nc, or nil when nc is not a
// plain socket (TLS, a pipe in tests).
func newRawSocket(nc net.Conn) rawIO {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nil
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSocket{rc: rc, fd: -1}
	s.readFn, s.readOnceFn, s.writeFn = s.read, s.readOnce, s.write
	_ = rc.Control(func(fd uintptr) { s.fd = int(fd) })
	if _, ok := nc.(*net.TCPConn); ok {
		_ = rc.Control(func(fd uintptr) {
			s.inq = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpInq, 1) == nil
		})
		s.msg.Iov, s.msg.Iovlen = &s.iov, 1
		s.msg.Control = &s.oob[0]
	}
	return s
}

// Read reads what has arrived, at least one byte, waiting on the poller
// when nothing has.
func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rp, s.rn, s.rerrno, s.rerr = p, 0, 0, nil
	ok := true
	if !s.inq {
		// Without TCP_INQ every wait needs a read before it (read says
		// why): a RawConn.Read per Read costs the same, without the
		// coroutine.
		s.rerr = s.rc.Read(s.readOnceFn)
	} else {
		if s.next == nil {
			s.next, s.stop = iter.Pull(s.pump)
		}
		_, ok = s.next()
	}
	n, errno, err := s.rn, s.rerrno, s.rerr
	s.rp, s.rerr = nil, nil
	switch {
	case !ok:
		return 0, net.ErrClosed // read after release
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// pump is the reading coroutine: one RawConn.Read for as long as it
// reads, another only after the poller ended one with an error (a
// deadline passed, or the connection closed), which it hands over.
func (s *rawSocket) pump(yield func(struct{}) bool) {
	s.yield = yield
	for {
		err := s.rc.Read(s.readFn)
		if s.stopped {
			return
		}
		s.rerr = err
		if !yield(struct{}{}) {
			return
		}
	}
}

// read is the poller's function, entered at the start of the RawConn.Read
// and each time the socket became readable: it reads, hands the result to
// Read, and when Read wants more returns false, to wait for readiness,
// unless something may be queued already. True ends the RawConn.Read:
// release.
//
// Waiting without a read is safe only when nothing arrived before the
// last read that it left unread: readiness is edge-triggered, and what
// arrives before a read may have been reported in the edge that woke it.
// Bytes the read left: it filled the buffer, or TCP_INQ counts them. The
// peer's FIN, which a read that returns bytes does not report: TCP_INQ
// counts it. A reset that came with the bytes, which nothing reports: a
// write since the read would have failed (the kernel refuses writes on a
// reset connection), so a wait without a read needs a write since, as an
// unpipelined command's reply is. Without TCP_INQ (Unix sockets, old
// kernels) there is no coroutine: Read is one RawConn.Read (readOnce),
// which reads before it waits, as net.Conn's does.
func (s *rawSocket) read(fd uintptr) bool {
	for {
		s.reads++
		var r int
		var e syscall.Errno
		s.iov.Base = &s.rp[0]
		s.iov.SetLen(len(s.rp))
		s.msg.SetControllen(len(s.oob))
		s.msg.Flags = 0
		r, e = sysRecvmsg(fd, &s.msg)
		s.iov.Base = nil // the buffer is the reader's
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case 0:
			s.rn = r
		default:
			s.rerrno = e
		}
		again := e != 0 || r == 0 || r == len(s.rp) || s.queued()
		s.wrote = false
		if !s.yield(struct{}{}) {
			s.stopped = true
			return true
		}
		if !again && s.wrote {
			return false
		}
	}
}

// readOnce is the poller's function for a RawConn.Read per Read (no
// TCP_INQ): true when it is done (data, end of stream or an error), false
// to wait for the socket to be readable.
func (s *rawSocket) readOnce(fd uintptr) bool {
	for {
		s.reads++
		r, e := sysRead(fd, s.rp)
		switch e {
		case 0:
			s.rn = r
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		default:
			s.rerrno = e
			return true
		}
	}
}

// queued reports whether the last recvmsg left bytes or the peer's FIN
// to read (TCP_INQ's count); true when it did not say.
func (s *rawSocket) queued() bool {
	h := (*syscall.Cmsghdr)(unsafe.Pointer(&s.oob[0]))
	if int(s.msg.Controllen) < syscall.CmsgLen(4) || h.Level != syscall.IPPROTO_TCP || h.Type != tcpCmInq {
		return true
	}
	return *(*int32)(unsafe.Pointer(&s.oob[syscall.CmsgLen(0)])) != 0
}

// release ends the reading coroutine and its RawConn.Read, letting
// net.Conn.Close proceed; Read must not be called after it.
func (s *rawSocket) release() {
	if s.stop != nil {
		s.stop()
	}
}

// hangUp shuts the socket down both ways, from any goroutine and without
// waiting: the peer sees the connection end at once, the reading
// coroutine and a write that waits wake, a read finds the end of the
// stream, and a write fails. The descriptor stays open until the
// connection's goroutine closes it. A closed connection is left as it is.
func (s *rawSocket) hangUp() {
	_ = s.rc.Control(func(fd uintptr) {
		_ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR)
	})
}

// Write writes all of p, waiting on the poller while the socket's buffer
// is full.
//
// The first attempt is made on the descriptor directly, not through
// RawConn.Write: a reply almost always fits in the socket's buffer, and
// RawConn.Write's lock, reference and readiness checks around the same
// system call were ~230 of the ~350 instructions of a reply's write in
// user space (callgrind; docs/performance.md, "Host CPU per unpipelined
// command"). Only a write that finds the buffer full goes on through
// RawConn.Write, which waits. What RawConn.Write adds is not needed here:
// its lock and reference keep the descriptor from being closed and
// reused during the call, and the descriptor is closed only by the
// connection's goroutine, the one writing here, after its last write
// (other goroutines shut the socket down instead: hangUp); its deadline
// check would fail a write after a write deadline passed, and client
// connections have none (only reads have deadlines).
func (s *rawSocket) Write(p []byte) (int, error) {
	s.wp, s.wn, s.werrno = p, 0, 0
	var err error
	if s.fd < 0 || !s.write(uintptr(s.fd)) {
		err = s.rc.Write(s.writeFn)
	}
	n, errno := s.wn, s.werrno
	s.wp = nil
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	s.wrote = true
	return n, nil
}

// write is Write's function for the poller: true when all of s.wp is
// written or the write failed, false to wait for room in the socket.
func (s *rawSocket) write(fd uintptr) bool {
	for s.wn < len(s.wp) {
		r, e := sysWrite(fd, s.wp[s.wn:])
		switch e {
		case 0:
			s.wn += r
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			s.werrno = e
			return true
		}
	}
	return true
}
