//go:build linux

package server

import (
	"io"
	"net"
	"os"
	"syscall"
)

// rawSocket reads and writes a plain TCP or Unix connection with raw
// system calls (syscall.RawSyscall) through the runtime poller
// (syscall.RawConn), instead of net.Conn's Read and Write.
//
// Why: the socket is non-blocking, so a read or write returns at once
// (EAGAIN parks the goroutine on the poller as net.Conn would). But
// net.Conn enters every one through the scheduler's system-call path, and
// sysmon, seeing a processor "in a system call" on two of its ticks,
// retakes it and drops back to polling every 20 µs. Under an unpipelined
// load (one read and one write per command) that cost respike's daemon an
// eighth of its CPU in sysmon alone, and the handoffs more (RATIONALE.md,
// "Client sockets are read and written with raw system calls").
// Deadlines, closing and the poller's wake-ups are the net.Conn's own.
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
	// connection's goroutine reads and writes through the rawSocket (a
	// MONITOR's goroutine writes to the net.Conn), so one set of fields
	// each for reading and writing is enough.
	rp, wp         []byte
	rn, wn         int
	rerrno, werrno syscall.Errno
	readFn         func(fd uintptr) bool
	writeFn        func(fd uintptr) bool
}

// newRawSocket returns a raw reader/writer for nc, or nil when nc is not a
// plain socket (TLS, a pipe in tests).
func newRawSocket(nc net.Conn) io.ReadWriter {
	switch nc.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nil
	}
	rc, err := nc.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	s := &rawSocket{rc: rc}
	s.readFn, s.writeFn = s.read, s.write
	return s
}

// Read reads what has arrived, at least one byte, waiting on the poller
// when nothing has.
func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	s.rp, s.rn, s.rerrno = p, 0, 0
	err := s.rc.Read(s.readFn)
	n, errno := s.rn, s.rerrno
	s.rp = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is Read's function for the poller: true when it is done (data, end
// of stream or an error), false to wait for the socket to be readable.
func (s *rawSocket) read(fd uintptr) bool {
	for {
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

// Write writes all of p, waiting on the poller while the socket's buffer
// is full.
func (s *rawSocket) Write(p []byte) (int, error) {
	s.wp, s.wn, s.werrno = p, 0, 0
	err := s.rc.Write(s.writeFn)
	n, errno := s.wn, s.werrno
	s.wp = nil
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
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
