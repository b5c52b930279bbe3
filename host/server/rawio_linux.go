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
	return &rawSocket{rc: rc}
}

// Read reads what has arrived, at least one byte, waiting on the poller
// when nothing has.
func (s *rawSocket) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := s.rc.Read(func(fd uintptr) bool {
		for {
			r, e := sysRead(fd, p)
			switch e {
			case 0:
				n = r
				return true
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
	})
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

// Write writes all of p, waiting on the poller while the socket's buffer
// is full.
func (s *rawSocket) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := s.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, e := sysWrite(fd, p[n:])
			switch e {
			case 0:
				n += r
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}
