package server

import (
	"bufio"
	"net"
	"testing"
)

// remoteConn is one end of a pipe that says it comes from another host.
type remoteConn struct{ net.Conn }

func (remoteConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000} }

// acceptRemote hands the server a connection from 192.0.2.7 and returns
// the first reply line it gets.
func acceptRemote(t *testing.T, s *Server, send string) string {
	t.Helper()
	ours, theirs := net.Pipe()
	t.Cleanup(func() { ours.Close() })
	go s.accept(remoteConn{theirs})
	go func() { _, _ = ours.Write([]byte(send)) }()
	line, err := bufio.NewReader(ours).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	return line
}

func TestProtectedMode(t *testing.T) {
	s, addr := startServer(t, testConfig(), nil, nil)
	if got := acceptRemote(t, s, encode("ping")); got != errProtected {
		t.Fatalf("a remote client without a password: %q", got)
	}
	// From loopback, CONFIG SET protected-mode no lets it in.
	if got := dial(t, addr).do("config", "set", "protected-mode", "no"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	if got := acceptRemote(t, s, encode("ping")); got != "+PONG\r\n" {
		t.Fatalf("a remote client with protected-mode no: %q", got)
	}
	// With a password, protected mode lets it in too (to AUTH).
	c := dial(t, addr)
	c.do("config", "set", "protected-mode", "yes")
	c.do("config", "set", "requirepass", "pw")
	if got := acceptRemote(t, s, encode("ping")); got != "-NOAUTH Authentication required.\r\n" {
		t.Fatalf("a remote client with a password set: %q", got)
	}
}
