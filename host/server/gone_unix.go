//go:build unix

package server

import (
	"errors"
	"syscall"
)

// peerGone reports whether the client has gone away: the connection was
// closed (CLIENT KILL, shutdown), reset, or the peer sent its FIN with
// nothing left unread. It peeks at the socket without blocking or
// consuming anything, so it costs one system call; the module runtime
// calls it before each store request of a command that has not written
// yet (module.WithGone). As Redis, which frees a client when a read returns
// end of file, a client that half-closes its side counts as gone.
func (c *client) peerGone() bool {
	sc, ok := c.conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	gone := false
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == nil:
			gone = n == 0 // end of file: the peer closed
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
		default:
			gone = true // reset, or another failure: no reply can get through
		}
		return true
	})
	return gone || err != nil
}
