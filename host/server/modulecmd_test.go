package server

import (
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
	"github.com/respike/respike/host/module"
)

func TestVersionNumber(t *testing.T) {
	for v, want := range map[string]int64{
		"1.2.3": 10203, "v2.8.4": 20804, "2": 20000, "1.2": 10200, "0.1.0": 100,
		"1.2.3-rc1": 10203, "1.100.7": 19907, "3.4.250": 30499,
		"": 0, "dev": 0, "x.1.2": 0, "99999999999999999999": 0,
	} {
		if got := versionNumber(v); got != want {
			t.Errorf("versionNumber(%q) = %d, want %d", v, got, want)
		}
	}
}

// statsRuntime adds the runtime's totals to the fake.
type statsRuntime struct {
	*fakeRuntime
	st module.Stats
}

func (r statsRuntime) Stats() module.Stats { return r.st }

func TestModuleListAndInfoShowSwaps(t *testing.T) {
	rt := newFakeRuntime()
	loaded := time.UnixMilli(1_700_000_000_123)
	rt.modules = []module.ModuleInfo{
		{Name: "kv", Version: "2.0.1", Path: "/m/kv.wasm", Commands: []string{"get"}, LoadedAt: loaded,
			LoadDuration: 1500 * time.Microsecond, Swaps: 7, LastError: "module /m/kv.wasm: compile: bad,\r\nfile"},
		{Name: "twin", Path: "/m/twin.wasm", LastError: `command "get" is already served by module kv`},
	}
	_, addr := startServer(t, testConfig(), statsRuntime{rt, module.Stats{Loads: 2, Swaps: 7, Refusals: 3, Unloads: 1, Draining: 1}}, nil)
	c := dial(t, addr)
	want := "*2\r\n" +
		"*20\r\n$4\r\nname\r\n$2\r\nkv\r\n$3\r\nver\r\n:20001\r\n$4\r\npath\r\n$10\r\n/m/kv.wasm\r\n$4\r\nargs\r\n*0\r\n" +
		"$7\r\nversion\r\n$5\r\n2.0.1\r\n$8\r\ncommands\r\n*1\r\n$3\r\nget\r\n" +
		"$9\r\nloaded_at\r\n:1700000000123\r\n$9\r\nload_usec\r\n:1500\r\n$5\r\nswaps\r\n:7\r\n" +
		"$10\r\nlast_error\r\n$38\r\nmodule /m/kv.wasm: compile: bad,\r\nfile\r\n" +
		"*20\r\n$4\r\nname\r\n$4\r\ntwin\r\n$3\r\nver\r\n:0\r\n$4\r\npath\r\n$12\r\n/m/twin.wasm\r\n$4\r\nargs\r\n*0\r\n" +
		"$7\r\nversion\r\n$0\r\n\r\n$8\r\ncommands\r\n*0\r\n" +
		"$9\r\nloaded_at\r\n:0\r\n$9\r\nload_usec\r\n:0\r\n$5\r\nswaps\r\n:0\r\n" +
		"$10\r\nlast_error\r\n$44\r\ncommand \"get\" is already served by module kv\r\n"
	if got := c.do("module", "list"); got != want {
		t.Fatalf("MODULE LIST:\n got %q\nwant %q", got, want)
	}
	info := c.do("info", "modules")
	for _, line := range []string{
		"# Modules\r\nmodule_loads:2\r\nmodule_swaps:7\r\nmodule_refusals:3\r\nmodule_unloads:1\r\nmodule_versions_draining:1\r\n",
		"module:name=kv,ver=20001,version=2.0.1,path=/m/kv.wasm,commands=1,swaps=7,load_usec=1500,traps=0,deadline_kills=0,guest_usec=0,last_error=module /m/kv.wasm: compile: bad   file\r\n",
		"module:name=twin,ver=0,version=,path=/m/twin.wasm,commands=0,swaps=0,load_usec=0,traps=0,deadline_kills=0,guest_usec=0,last_error=command \"get\" is already served by module kv\r\n",
	} {
		if !strings.Contains(info, line) {
			t.Errorf("INFO modules %q lacks %q", info, line)
		}
	}
}

// A module command sees its client go away through the context the server
// runs it under (module.Gone), so the runtime can cancel what it has not
// sent to the store yet.
func TestModuleCommandSeesClientGone(t *testing.T) {
	rt := newFakeRuntime()
	started := make(chan bool)
	saw := make(chan bool, 1)
	rt.add("test", codec.CommandInfo{Name: "fwait", Arity: 1, Flags: []string{"readonly"}},
		func(ctx context.Context, _ *codec.Start, w *resp.Writer) {
			started <- module.Gone(ctx, false)
			// The FIN reaches the socket shortly after the client closes;
			// no event says when, so poll with a bound.
			deadline := time.Now().Add(5 * time.Second)
			for !module.Gone(ctx, false) && time.Now().Before(deadline) {
				runtime.Gosched()
			}
			saw <- module.Gone(ctx, false)
			w.OK()
		})
	_, addr := startServer(t, testConfig(), rt, nil)
	c := dial(t, addr)
	c.send(encode("fwait"))
	if <-started {
		t.Fatal("a connected client reads as gone")
	}
	c.nc.Close()
	if !<-saw {
		t.Fatal("the command never saw its client go away")
	}
}

// A client that only closed its sending side is gone for reads, not for
// writes (a write it sent is applied, as Redis applies what it has read),
// and still gets its reply.
func TestPeerGoneLevels(t *testing.T) {
	rt := newFakeRuntime()
	type levels struct{ eof, dead bool }
	seen := make(chan levels)
	next := make(chan struct{})
	rt.add("test", codec.CommandInfo{Name: "fprobe", Arity: 1, Flags: []string{"write"}},
		func(ctx context.Context, _ *codec.Start, w *resp.Writer) {
			deadline := time.Now().Add(5 * time.Second)
			for !module.Gone(ctx, false) && time.Now().Before(deadline) {
				runtime.Gosched() // the FIN arrives shortly after; no event says when
			}
			seen <- levels{module.Gone(ctx, false), module.Gone(ctx, true)}
			<-next
			w.OK()
		})
	_, addr := startServer(t, testConfig(), rt, nil)
	c := dial(t, addr)
	c.send(encode("fprobe"))
	if err := c.nc.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; !got.eof || got.dead {
		t.Errorf("half-closed client: gone for reads %v, for writes %v; want true, false", got.eof, got.dead)
	}
	next <- struct{}{}
	if got := c.reply(); got != "+OK\r\n" {
		t.Errorf("reply to a half-closed client = %q", got)
	}
}
