//go:build !linux

package server

import "net"

// newRawSocket is nil off Linux: the connection's own Read and Write serve
// (rawio_linux.go says why Linux differs).
func newRawSocket(net.Conn) rawIO { return nil }
