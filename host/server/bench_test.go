package server

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// BenchmarkDispatch measures the host's own cost per command: lookup,
// checks, statistics and the reply, with a Go stand-in for the module.
func BenchmarkDispatch(b *testing.B) {
	s := newServer(testConfig(), newFakeRuntime(), &fakeStore{}, nil)
	x, y := net.Pipe()
	defer x.Close()
	defer y.Close()
	c := newClient(s, 1, x)
	for _, args := range [][][]byte{{[]byte("PING")}, {[]byte("FGET"), []byte("key")}} {
		b.Run(string(args[0]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.w.Buf = c.w.Buf[:0]
				c.process(args)
			}
		})
	}
	// The same with ACL users that limit commands and keys: the client's
	// user runs through the whole check (cached per command).
	if err := s.initACL("", []ConfigUser{{Name: "app", Rules: "on nopass ~key* +@all -flushall"}}); err != nil {
		b.Fatal(err)
	}
	c.setUser(s.user("app"))
	for _, args := range [][][]byte{{[]byte("PING")}, {[]byte("FGET"), []byte("key")}} {
		b.Run("acl-"+string(args[0]), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.w.Buf = c.w.Buf[:0]
				c.process(args)
			}
		})
	}
}

// BenchmarkPipelinedPing measures pipelined round trips over loopback TCP,
// 100 commands per pipeline.
func BenchmarkPipelinedPing(b *testing.B) {
	s := newServer(testConfig(), newFakeRuntime(), &fakeStore{}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Close()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	br := bufio.NewReader(nc)
	req := []byte(strings.Repeat(encode("FGET", "key"), 100))
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		for range 100 {
			if _, err := readReply(br); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/cmd")
}
