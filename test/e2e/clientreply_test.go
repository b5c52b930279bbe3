package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestClientReplyPipelinesMatchRedis sends random pipelines of CLIENT REPLY
// ON|OFF|SKIP mixed with builtin and module commands to respike and to
// redis-server and compares the bytes that come back. Each pipeline ends
// with DISCARD (out of any MULTI), CLIENT REPLY ON and an ECHO of a
// marker, which are always answered, so the reader knows where the replies
// end.
func TestClientReplyPipelinesMatchRedis(t *testing.T) {
	needModules(t, "strings")
	rs := redisServer(t)
	flushAll(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	pool := [][]string{
		{"CLIENT", "REPLY", "ON"}, {"CLIENT", "REPLY", "OFF"}, {"CLIENT", "REPLY", "SKIP"},
		{"CLIENT", "REPLY", "on"}, {"CLIENT", "REPLY", "Skip"}, {"CLIENT", "REPLY", "bogus"},
		{"CLIENT", "REPLY"}, {"PING"}, {"ECHO", "x"}, {"SET", "crk", "1"}, {"INCR", "crk"},
		{"GET", "crk"}, {"NOSUCHCOMMAND"}, {"GET"}, {"RESET"}, {"MULTI"}, {"EXEC"}, {"DISCARD"},
	}
	ra, rb := dialPlain(t, env.daemon.Addr), dialPlain(t, rs.Addr)
	for round := range 300 {
		var req []byte
		var desc []string
		for range 1 + rng.IntN(8) {
			cmd := pool[rng.IntN(len(pool))]
			req = append(req, Encode(cmd...)...)
			desc = append(desc, fmt.Sprint(cmd))
		}
		marker := "end-" + strconv.Itoa(round)
		req = append(req, Encode("DISCARD")...) // leave any MULTI, where ON would be queued
		req = append(req, Encode("CLIENT", "REPLY", "ON")...)
		req = append(req, Encode("ECHO", marker)...)
		want := rb.exchange(t, req, marker, desc)
		got := ra.exchange(t, req, marker, desc)
		if !bytes.Equal(got, want) {
			t.Fatalf("pipeline %v:\nrespike %q\nredis   %q", desc, got, want)
		}
	}
}

// plainConn is a raw connection that reads whatever arrives.
type plainConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialPlain(t *testing.T, addr string) *plainConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &plainConn{nc: nc, br: bufio.NewReader(nc)}
}

// exchange writes req and reads replies until the bulk reply marker.
func (p *plainConn) exchange(t *testing.T, req []byte, marker string, desc []string) []byte {
	t.Helper()
	_ = p.nc.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := p.nc.Write(req); err != nil {
		t.Fatal(err)
	}
	end := []byte("$" + strconv.Itoa(len(marker)) + "\r\n" + marker + "\r\n")
	// Raw reads, not reply parsing: a queued CLIENT REPLY OFF leaves an
	// EXEC array short in Redis, which a reply parser would wait on.
	var out []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(out, end) {
		n, err := p.br.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			t.Fatalf("%v: reading replies: %v (so far %q)", desc, err, out)
		}
	}
	return out
}

// The reader's leniencies match redis-server's: the two bytes after a bulk
// payload are skipped unchecked, and a command may have more than 1,048,576
// arguments (Redis 7.0 allows up to INT_MAX).
func TestProtocolLeniencyMatchesRedis(t *testing.T) {
	rs := redisServer(t)
	// A builtin, so that the reply shows the reader took every argument
	// (the arity error names the command) without a module's memory limit
	// coming into it.
	many := []byte("*1048580\r\n$4\r\nECHO\r\n")
	for range 1048579 {
		many = append(many, "$1\r\nk\r\n"...)
	}
	for _, in := range [][]byte{
		[]byte("*1\r\n$4\r\nPINGxx*2\r\n$4\r\nECHO\r\n$2\r\nhi\n\n"),
		many,
	} {
		req := append(append([]byte{}, in...), Encode("ECHO", "end")...)
		want := dialPlain(t, rs.Addr).exchange(t, req, "end", nil)
		got := dialPlain(t, env.daemon.Addr).exchange(t, req, "end", nil)
		if !bytes.Equal(got, want) {
			t.Errorf("%.40q...: respike %q, redis %q", in, got, want)
		}
	}
}
