//go:build linux

package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
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

// rawPair returns a raw socket on the server end of a loopback TCP
// connection, and the client end. The raw socket is released before the
// connection closes, as serveConn does: Close waits for its reads.
func rawPair(t *testing.T) (rs *rawSocket, srv, cli net.Conn) {
	t.Helper()
	srv, cli = tcpPair(t)
	r := newRawSocket(srv)
	if r == nil {
		t.Fatal("no raw socket for a TCP connection")
	}
	t.Cleanup(r.release) // runs before tcpPair's Close
	return r.(*rawSocket), srv, cli
}

// A write larger than the socket's buffers waits on the poller and
// finishes as the peer reads; reads see every byte, then EOF.
func TestRawSocketLargeWriteAndEOF(t *testing.T) {
	rs, _, cli := rawPair(t)
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
	rs, srv, cli := rawPair(t)
	if err := srv.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	var b [16]byte
	if _, err := rs.Read(b[:]); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read error %v, want the deadline's", err)
	}
	// Once the deadline is lifted, reading goes on.
	if err := srv.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := rs.Read(b[:]); err != nil || string(b[:n]) != "PING\r\n" {
		t.Fatalf("read %q, %v after the deadline was lifted; want PING", b[:n], err)
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

// A read and a write through the raw socket allocate nothing (the
// reading coroutine is made once, by the first read): under an
// unpipelined load every command makes a write and a read, and closures
// per call were the largest allocation of a GET.
func TestRawSocketNoAllocations(t *testing.T) {
	if raceBuild {
		t.Skip("under the race detector the system calls are syscall.Read and Write, which allocate")
	}
	rs, _, cli := rawPair(t)
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

// An unpipelined exchange (a command, its reply, the next command only
// after the reply) costs one read system call per command: after a reply
// the raw socket waits for the next command without first reading to
// find that it has not come. A read per command that finds nothing
// doubles them.
func TestRawSocketOneReadPerCommand(t *testing.T) {
	rs, _, cli := rawPair(t)
	const rounds = 200
	cmd, reply := []byte("*1\r\n$4\r\nPING\r\n"), []byte("+PONG\r\n")
	done := make(chan error, 1)
	go func() {
		var b [64]byte
		for range rounds {
			if _, err := cli.Write(cmd); err != nil {
				done <- err
				return
			}
			if _, err := io.ReadFull(cli, b[:len(reply)]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	var b [4096]byte
	for range rounds {
		got := 0
		for got < len(cmd) {
			n, err := rs.Read(b[got:])
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
		if _, err := rs.Write(reply); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A command may arrive in two segments now and then (each read then
	// finds some of it), or a wake-up come early: allow a little.
	if rs.reads > rounds+rounds/10 {
		t.Fatalf("%d read system calls for %d unpipelined commands, want about one each", rs.reads, rounds)
	}
}

// Reads into buffers smaller than what has arrived return all of it, in
// order, without waiting for more to arrive: a read that fills its buffer
// is followed by another read, not by a wait.
func TestRawSocketSmallBuffers(t *testing.T) {
	rs, _, cli := rawPair(t)
	msg := bytes.Repeat([]byte("abcdefghij"), 1000)
	if _, err := cli.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0, len(msg))
	var b [7]byte
	for len(got) < len(msg) {
		n, err := rs.Read(b[:])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b[:n]...)
	}
	if !bytes.Equal(got, msg) {
		t.Fatal("read other bytes than were sent")
	}
}

// hangUp, from another goroutine, ends a Read that waits (it finds the
// end of the stream), shows the peer the connection's end, and does not
// wait for the reading goroutine; released, the reading goroutine ends
// and Close returns.
func TestRawSocketHangUp(t *testing.T) {
	before := runtime.NumGoroutine()
	srv, cli := tcpPair(t)
	rs := newRawSocket(srv).(*rawSocket)
	if _, err := cli.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	var b [64]byte
	if n, err := rs.Read(b[:]); err != nil || string(b[:n]) != "PING\r\n" {
		t.Fatalf("read %q, %v; want PING", b[:n], err)
	}
	// The reading coroutine now holds the connection: hang up from here
	// while a goroutine waits in Read.
	read := make(chan error, 1)
	go func() {
		_, err := rs.Read(b[:])
		read <- err
	}()
	rs.hangUp()
	if err := <-read; err != io.EOF {
		t.Fatalf("Read after hangUp: %v, want EOF", err)
	}
	if _, err := cli.Read(b[:]); err != io.EOF {
		t.Fatalf("the peer read %v after hangUp, want EOF", err)
	}
	if _, err := rs.Write([]byte("+OK\r\n")); err == nil {
		t.Fatal("a write after hangUp succeeded")
	}
	rs.release()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	cli.Close()
	// The coroutine's goroutine is gone: count until the runtime has
	// retired the test's goroutines, with a bound.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after release and Close, %d before", n, before)
	}
}

// A client that sends a command and then closes its sending side (as
// `nc -N` does) has its command read, its reply written, and then its
// end of stream read, on TCP and on Unix sockets: the FIN that came with
// the command is not waited for in vain.
func TestRawSocketHalfCloseAfterCommand(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			addr := "127.0.0.1:0"
			if network == "unix" {
				addr = t.TempDir() + "/s"
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			for round := range 50 {
				cli, err := net.Dial(network, ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				srv, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				rs := newRawSocket(srv)
				if _, err := cli.Write([]byte("PING\r\n")); err != nil {
					t.Fatal(err)
				}
				if err := cli.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
					t.Fatal(err)
				}
				var b [64]byte
				if n, err := rs.Read(b[:]); err != nil || string(b[:n]) != "PING\r\n" {
					t.Fatalf("round %d: read %q, %v; want PING", round, b[:n], err)
				}
				if _, err := rs.Write([]byte("+PONG\r\n")); err != nil {
					t.Fatal(err)
				}
				read := make(chan error, 1)
				go func() {
					_, err := rs.Read(b[:])
					read <- err
				}()
				select {
				case err := <-read:
					if err != io.EOF {
						t.Fatalf("round %d: read %v after the half-close, want EOF", round, err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("round %d: the end of stream was not read", round)
				}
				rs.release()
				srv.Close()
				cli.Close()
			}
		})
	}
}
