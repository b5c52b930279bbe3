//go:build linux

package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// A write larger than the socket's buffers waits on the poller and
// finishes as the peer reads; reads see every byte, then EOF.
func TestRawSocketLargeWriteAndEOF(t *testing.T) {
	srv, cli := tcpPair(t)
	rs := newRawSocket(srv)
	if rs == nil {
		t.Fatal("no raw socket for a TCP connection")
	}
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<19) // 8 MiB
	done := make(chan error, 1)
	go func() {
		n, err := rs.Write(big)
		if err == nil && n != len(big) {
			err = errors.New("short write")
		}
		done <- err
	}()
	got, err := io.ReadAll(io.LimitReader(cli, int64(len(big))))
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the peer read other bytes than were written")
	}

	if _, err := cli.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	cli.Close()
	all, err := io.ReadAll(rs)
	if err != nil || string(all) != "PING\r\n" {
		t.Fatalf("read %q, %v; want PING and EOF", all, err)
	}
}

// A read deadline set on the connection ends a raw read that waits.
func TestRawSocketReadDeadline(t *testing.T) {
	srv, _ := tcpPair(t)
	rs := newRawSocket(srv)
	if err := srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	if _, err := rs.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read error %v, want the deadline's", err)
	}
}

// A pipe (as tests use) or any other connection keeps its own Read and
// Write.
func TestRawSocketOnlyForSockets(t *testing.T) {
	x, y := net.Pipe()
	defer x.Close()
	defer y.Close()
	if newRawSocket(x) != nil {
		t.Fatal("a raw socket for a pipe")
	}
}

// A read and a write through the raw socket allocate nothing: under an
// unpipelined load every command makes a write and two reads (one finds
// nothing and waits), and closures per call were the largest allocation
// of a GET.
func TestRawSocketNoAllocations(t *testing.T) {
	if raceBuild {
		t.Skip("under the race detector the system calls are syscall.Read and Write, which allocate")
	}
	srv, cli := tcpPair(t)
	rs := newRawSocket(srv)
	msg := []byte("+OK\r\n")
	var b [64]byte
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := rs.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(cli, b[:len(msg)]); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rs, b[:len(msg)]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per write and read, want 0", allocs)
	}
}
