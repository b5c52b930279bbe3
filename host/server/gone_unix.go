//go:build unix

package server

import (
	"crypto/tls"
	"errors"
	"syscall"
)

// peerGone reports whether the client has gone away (see module.WithGone):
// with dead, whether the connection can no longer carry a reply (closed by
// the server, as CLIENT KILL and shutdown do, or reset by the peer);
// without, also whether the peer sent its FIN with nothing left unread (it
// closed, or half-closed its sending side). It peeks at the socket without
// blocking or consuming anything: one system call, made only before a store
// request of a command that has not written yet.
//
// The answer "still there" holds for goneRecheck: a pipeline's commands and
// a command's several store requests share one look at the socket, and so
// does a command read from the socket within that time (ReadCommands
// returning sets alive). A client that goes away in that window has its
// commands run as if it had gone a moment later.
func (c *client) peerGone(dead bool) bool {
	if c.killed.Load() {
		return true // hung up (CLIENT KILL, shutdown): the socket is only shut down
	}
	now := c.s.nanos()
	if now-c.alive.Load() < goneRecheck {
		return false
	}
	conn := c.conn
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn() // EOF shows on the socket under TLS too
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	eof, failed := false, false
	var b [1]byte
	// Control, not Read: the connection's reading coroutine holds the read
	// lock between commands (rawio_linux.go), and the peek cannot block.
	err = rc.Control(func(fd uintptr) {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == nil:
			eof = n == 0
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
		default:
			failed = true // reset, or another failure: no reply can get through
		}
	})
	if err == nil && !failed && !eof {
		c.alive.Store(now)
	}
	return err != nil || failed || eof && !dead
}
