package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/store"
)

// fakeRuntime serves commands implemented in Go, standing in for the
// WebAssembly runtime.
type fakeRuntime struct {
	mu      sync.Mutex
	cmds    map[string]*module.Command
	run     map[*module.Command]func(ctx context.Context, st *codec.Start, w *resp.Writer)
	modules []module.ModuleInfo
	loaded  []string
	writers sync.Pool    // *resp.Writer, so that Exec does not allocate
	writes  atomic.Int64 // fwrite runs (addWrite)
}

func newFakeRuntime() *fakeRuntime {
	f := &fakeRuntime{cmds: map[string]*module.Command{}, run: map[*module.Command]func(context.Context, *codec.Start, *resp.Writer){}}
	// fecho replies with its arguments, the db, proto and client id.
	f.add("test", codec.CommandInfo{Name: "fecho", Arity: -1, Flags: []string{"readonly", "fast"}, Group: "string",
		Summary: "Echo the start message", Since: "1.0.0"},
		func(_ context.Context, st *codec.Start, w *resp.Writer) {
			w.Array(len(st.Args) + 3)
			for _, a := range st.Args {
				w.Bulk(a)
			}
			w.Int(int64(st.DB))
			w.Int(int64(st.Proto))
			w.Int(int64(st.ClientID))
		})
	f.add("test", codec.CommandInfo{Name: "fget", Arity: 2, Flags: []string{"readonly", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string", Summary: "Get a key", Since: "1.0.0"},
		func(_ context.Context, st *codec.Start, w *resp.Writer) { w.Bulk(st.Args[1]) })
	f.add("test", codec.CommandInfo{Name: "fmset", Arity: -3, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: -1, Step: 2, Group: "string", Summary: "Set keys", Since: "1.0.0"},
		func(_ context.Context, _ *codec.Start, w *resp.Writer) { w.OK() })
	f.add("test", codec.CommandInfo{Name: "ffail", Arity: 1, Flags: []string{"fast"}, Group: "generic"},
		func(_ context.Context, _ *codec.Start, w *resp.Writer) {
			w.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
		})
	f.modules = []module.ModuleInfo{{Name: "test", Version: "1.2.3", Path: "/x/test.wasm",
		Commands: []string{"fecho", "ffail", "fget", "fmset"}}}
	return f
}

// addWrite adds fwrite key code gen: a write to key, passed through the
// guard of a transaction (module.GuardOf) as a store request whose result
// has that code and generation.
func (f *fakeRuntime) addWrite() {
	f.add("test", codec.CommandInfo{Name: "fwrite", Arity: 4, Flags: []string{"write"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "string"},
		func(ctx context.Context, st *codec.Start, w *resp.Writer) {
			f.writes.Add(1)
			if g := module.GuardOf(ctx); g != nil {
				rq := &codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{{Key: st.Args[1],
					Ops: []codec.Op{{Code: codec.OpPut, Bin: "v", Value: codec.Int(1)}}}}}
				if !g.Before(int(st.DB), rq) {
					w.Error("ERR refused")
					return
				}
				code, _ := strconv.Atoi(string(st.Args[2]))
				gen, _ := strconv.Atoi(string(st.Args[3]))
				g.After(int(st.DB), rq, &codec.Response{Results: []codec.Result{{Code: codec.Code(code), Generation: uint32(gen)}}})
			}
			w.OK()
		})
}

func (f *fakeRuntime) add(mod string, info codec.CommandInfo, run func(context.Context, *codec.Start, *resp.Writer)) *module.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	cmd := &module.Command{Info: info, Module: mod}
	f.cmds[info.Name] = cmd
	f.run[cmd] = run
	return cmd
}

func (f *fakeRuntime) Lookup(name []byte) *module.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	var buf [64]byte
	if len(name) > len(buf) {
		return nil
	}
	return f.cmds[string(lowerInto(buf[:0], name))]
}

func (f *fakeRuntime) LookupCached(_ *module.LookupCache, name []byte) *module.Command {
	return f.Lookup(name)
}

func (f *fakeRuntime) Commands() []*module.Command {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*module.Command
	for _, c := range f.cmds {
		out = append(out, c)
	}
	return out
}

func (f *fakeRuntime) Modules() []module.ModuleInfo { return f.modules }

func (f *fakeRuntime) Exec(ctx context.Context, cmd *module.Command, st *codec.Start, out []byte) []byte {
	f.mu.Lock()
	run := f.run[cmd]
	f.mu.Unlock()
	w, _ := f.writers.Get().(*resp.Writer)
	if w == nil {
		w = new(resp.Writer)
	}
	w.Buf, w.Proto = out, int(st.Proto)
	run(ctx, st, w)
	out = w.Buf
	w.Buf = nil
	f.writers.Put(w)
	return out
}

// ExecBlock is Exec: fake commands never block.
func (f *fakeRuntime) ExecBlock(ctx context.Context, cmd *module.Command, st *codec.Start, out []byte, blk *module.Block) []byte {
	blk.Blocked = false
	return f.Exec(ctx, cmd, st, out)
}

// ExecBatch runs the items one by one, as a module without respike_batch.
func (f *fakeRuntime) ExecBatch(ctx context.Context, items []module.Item, out []byte, _ *module.Block) []byte {
	for i := range items {
		out = f.Exec(ctx, items[i].Cmd, &items[i].Start, out)
		items[i].End = len(out)
	}
	return out
}

func (f *fakeRuntime) Load(_ context.Context, path string) (module.ModuleInfo, error) {
	if strings.Contains(path, "bad") {
		return module.ModuleInfo{}, errors.New("not a module")
	}
	f.mu.Lock()
	f.loaded = append(f.loaded, path)
	f.mu.Unlock()
	return module.ModuleInfo{Name: "loaded", Path: path}, nil
}

func (f *fakeRuntime) Unload(name string) error {
	if name != "test" {
		return errors.New("no such module with that name")
	}
	return nil
}

// fakeStore counts records per database and answers header reads from
// gens (database → key → generation; absent keys are not found); down
// makes every request fail as an unreachable backend does.
type fakeStore struct {
	mu        sync.Mutex
	counts    map[int]int64
	gens      map[int]map[string]uint32
	down      bool
	truncated []string
}

// setGen sets a key's generation; 0 makes it absent.
func (s *fakeStore) setGen(db int, key string, gen uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gens == nil {
		s.gens = map[int]map[string]uint32{}
	}
	if s.gens[db] == nil {
		s.gens[db] = map[string]uint32{}
	}
	if gen == 0 {
		delete(s.gens[db], key)
	} else {
		s.gens[db][key] = gen
	}
}

func (s *fakeStore) Exec(_ context.Context, db int, req *codec.Request, r *codec.Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*r = codec.Response{}
	if s.down {
		r.Code, r.Msg = codec.BackendUnavail, "no nodes reachable"
		return
	}
	switch req.Kind {
	case codec.ReqCount:
		r.Count = s.counts[db]
	case codec.ReqTruncate:
		if req.AllDBs {
			clear(s.counts)
			s.truncated = append(s.truncated, "all")
		} else {
			delete(s.counts, db)
			s.truncated = append(s.truncated, strconv.Itoa(db))
		}
	case codec.ReqRecords:
		for _, c := range req.Calls {
			if len(c.Ops) != 1 || c.Ops[0].Code != codec.OpGet || c.Ops[0].Bin != codec.BinExpire {
				r.Code, r.Msg, r.Results = codec.InvalidOperation, "unexpected request", nil
				return
			}
			gen, ok := s.gens[db][string(c.Key)]
			res := codec.Result{Generation: gen, TTL: -1, Values: []codec.Value{codec.Nil}}
			if !ok {
				res.Code = codec.NotFound
			}
			r.Results = append(r.Results, res)
		}
	default:
		r.Code, r.Msg = codec.InvalidOperation, "unexpected request"
	}
}

func (s *fakeStore) Inline() bool { return true }

// Stats reports one counter, so INFO stats shows a store's (store.Statser).
func (s *fakeStore) Stats() []store.Stat { return []store.Stat{{Name: "fake_calls", Value: 42}} }
func (s *fakeStore) Close() error        { return nil }

// testConfig returns defaults suitable for tests.
func testConfig() config.Config {
	cfg := config.Defaults()
	cfg.Server.Listen = "127.0.0.1:0"
	return cfg
}

// startServer serves on a free loopback port until the test ends.
func startServer(t *testing.T, cfg config.Config, rt commandRuntime, st *fakeStore) (*Server, string) {
	t.Helper()
	if rt == nil {
		rt = newFakeRuntime()
	}
	if st == nil {
		st = &fakeStore{counts: map[int]int64{}}
	}
	s := newServer(cfg, rt, st, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// rawConn is a RESP client that shows replies as the raw bytes received.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

// encode returns args as a RESP command.
func encode(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.nc, s); err != nil {
		r.t.Fatal(err)
	}
}

// do sends one command and returns its raw reply.
func (r *rawConn) do(args ...string) string {
	r.t.Helper()
	r.send(encode(args...))
	return r.reply()
}

// reply reads one complete raw reply.
func (r *rawConn) reply() string {
	r.t.Helper()
	s, err := readReply(r.br)
	if err != nil {
		r.t.Fatalf("reading reply: %v (got %q)", err, s)
	}
	return s
}

// closed asserts that the server closed the connection (after any
// replies already read).
func (r *rawConn) closed() {
	r.t.Helper()
	b, err := r.br.ReadByte()
	if err == nil {
		rest, _ := r.br.Peek(r.br.Buffered())
		r.t.Fatalf("connection still open, got %q", append([]byte{b}, rest...))
	}
	if !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "reset") {
		r.t.Fatalf("want EOF, got %v", err)
	}
}

// readReply reads one RESP2/RESP3 reply and returns its bytes.
func readReply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return line, err
	}
	if len(line) < 3 || !strings.HasSuffix(line, "\r\n") {
		return line, fmt.Errorf("bad line %q", line)
	}
	n, _ := strconv.Atoi(line[1 : len(line)-2])
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return line, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return line, err
		}
		return line + string(buf), nil
	case '*', '~', '>', '%', '|':
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		out := line
		for i := 0; i < n; i++ {
			s, err := readReply(br)
			out += s
			if err != nil {
				return out, err
			}
		}
		if line[0] == '|' { // an attribute precedes the actual reply
			s, err := readReply(br)
			return out + s, err
		}
		return out, nil
	}
	return line, nil
}
