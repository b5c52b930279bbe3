package module

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// storeModes are the three ways a store request reaches the store.
var storeModes = []struct {
	name     string
	inline   bool // the store says it may run inline
	noInline bool // Config.NoInline
}{
	{"inline", true, false},
	{"remote", false, false},
	{"noinline", true, true},
}

func TestCommands(t *testing.T) {
	for _, m := range storeModes {
		t.Run(m.name, func(t *testing.T) {
			st := newFakeStore(m.inline)
			r := newRuntime(t, Config{NoInline: m.noInline}, st, "kv.wasm")
			if got, want := do(t, r, "echo", "hello"), "$5\r\nhello\r\n"; got != want {
				t.Errorf("echo = %q, want %q", got, want)
			}
			if got, want := do(t, r, "get", "k"), "$-1\r\n"; got != want {
				t.Errorf("get of a missing key = %q, want %q", got, want)
			}
			if got, want := do(t, r, "set", "k", "v1"), "+OK\r\n"; got != want {
				t.Errorf("set = %q, want %q", got, want)
			}
			if got, want := do(t, r, "GET", "k"), "$2\r\nv1\r\n"; got != want {
				t.Errorf("get = %q, want %q", got, want)
			}
			// Two store round trips.
			if got, want := do(t, r, "getset", "k", "v2"), "$2\r\nv1\r\n"; got != want {
				t.Errorf("getset = %q, want %q", got, want)
			}
			if got, want := do(t, r, "get", "k"), "$2\r\nv2\r\n"; got != want {
				t.Errorf("get after getset = %q, want %q", got, want)
			}
			// Larger than the guest's 4 KiB inline buffer: exec parks it
			// and the guest takes it.
			big := strings.Repeat("x", 10000)
			do(t, r, "set", "big", big)
			if got, want := do(t, r, "get", "big"), "$10000\r\n"+big+"\r\n"; got != want {
				t.Errorf("get of a 10000-byte value = %.40q..., want %.40q...", got, want)
			}
			if st.execs.Load() == 0 {
				t.Error("the store was never called")
			}
		})
	}
}

// TestMemoryStore runs the kv module against the embedded store, inline and
// through resume.
func TestMemoryStore(t *testing.T) {
	for _, noInline := range []bool{false, true} {
		st := memory.New(memory.Options{})
		defer st.Close()
		r := newRuntime(t, Config{NoInline: noInline}, st, "kv.wasm")
		big := strings.Repeat("y", 20000)
		for _, tc := range []struct{ args, want string }{
			{"get k", "$-1\r\n"},
			{"set k v1", "+OK\r\n"},
			{"get k", "$2\r\nv1\r\n"},
			{"getset k v2", "$2\r\nv1\r\n"},
			{"get k", "$2\r\nv2\r\n"},
			{"set big " + big, "+OK\r\n"},
			{"get big", "$20000\r\n" + big + "\r\n"},
		} {
			if got := do(t, r, strings.Fields(tc.args)...); got != tc.want {
				t.Errorf("noInline=%v: %.20s = %.40q, want %.40q", noInline, tc.args, got, tc.want)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	r := newRuntime(t, Config{}, newFakeStore(true), "kv.wasm")
	for _, name := range []string{"get", "GET", "gEt"} {
		c := r.Lookup([]byte(name))
		if c == nil || c.Info.Name != "get" || c.Module != "kv" || c.Info.Arity != 2 {
			t.Errorf("Lookup(%q) = %+v", name, c)
		}
	}
	for _, name := range []string{"", "nope", "ge", strings.Repeat("g", 100)} {
		if c := r.Lookup([]byte(name)); c != nil {
			t.Errorf("Lookup(%q) = %+v, want nil", name, c)
		}
	}
	var names []string
	for _, c := range r.Commands() {
		names = append(names, c.Info.Name)
	}
	if want := []string{"casincr", "echo", "get", "getset", "panic", "set", "ver"}; !slices.Equal(names, want) {
		t.Errorf("Commands() = %v, want %v", names, want)
	}
	mods := r.Modules()
	if len(mods) != 1 || mods[0].Name != "kv" || mods[0].Version != "1" || len(mods[0].Commands) != 7 || mods[0].LastError != "" || mods[0].Path != mod("kv.wasm") {
		t.Errorf("Modules() = %+v", mods)
	}
}

func TestPanicIsAnErrorReply(t *testing.T) {
	r := newRuntime(t, Config{Instances: 1}, newFakeStore(true), "kv.wasm")
	gen := r.reg.Load().mods["kv"].slots[0].inst.gen
	if got, want := do(t, r, "panic"), "-ERR module panic: boom\r\n"; got != want {
		t.Errorf("panic = %q, want %q", got, want)
	}
	if got, want := do(t, r, "echo", "after"), "$5\r\nafter\r\n"; got != want {
		t.Errorf("echo after a panic = %q, want %q", got, want)
	}
	// The SDK recovered: the instance lives on.
	if g := r.reg.Load().mods["kv"].slots[0].inst.gen; g != gen {
		t.Errorf("instance replaced after a recovered panic (generation %d → %d)", gen, g)
	}
}

func TestTrapDiscardsInstance(t *testing.T) {
	for _, m := range storeModes[:2] {
		t.Run(m.name, func(t *testing.T) {
			r := newRuntime(t, Config{Instances: 1}, newFakeStore(m.inline), "trap.wasm", "kv.wasm")
			tests := []struct{ cmd, want string }{
				{"oom", "-ERR module trap: fatal error: out of memory (wasm error: unreachable)\r\n"},
				{"exit", "-ERR module trap: module exited with code 3\r\n"},
			}
			for _, tc := range tests {
				if got := do(t, r, tc.cmd); got != tc.want {
					t.Errorf("%s = %q, want %q", tc.cmd, got, tc.want)
				}
				// The next command on the module gets a fresh instance.
				if got, want := do(t, r, "tget", "k"), "$-1\r\n"; got != want {
					t.Errorf("tget after %s = %q, want %q", tc.cmd, got, want)
				}
			}
			// Other modules are untouched.
			if got, want := do(t, r, "echo", "x"), "$1\r\nx\r\n"; got != want {
				t.Errorf("echo = %q, want %q", got, want)
			}
		})
	}
}

// hold makes the store block commands on key until the returned release is
// called; entered receives once per blocked Exec.
func hold(st *fakeStore, key string) (entered chan struct{}, release func()) {
	entered = make(chan struct{}, 100)
	gate := make(chan struct{})
	st.setHook(func(ctx context.Context, req *codec.Request) {
		if req.Kind == codec.ReqRecords && string(req.Calls[0].Key) == key {
			entered <- struct{}{}
			select {
			case <-gate:
			case <-ctx.Done():
			}
		}
	})
	var once sync.Once
	return entered, func() { once.Do(func() { close(gate) }) }
}

func TestStaleContinuationAfterTrap(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{Instances: 1}, st, "trap.wasm")
	entered, release := hold(st, "held")
	defer release()
	reply := make(chan string)
	go func() { reply <- do(t, r, "tget", "held") }()
	<-entered // tget's continuation lives in the only instance, which is free
	if got, want := do(t, r, "exit"), "-ERR module trap: module exited with code 3\r\n"; got != want {
		t.Errorf("exit = %q, want %q", got, want)
	}
	release()
	if got, want := <-reply, "-ERR module trap: the instance running this command failed; its writes so far may have been applied\r\n"; got != want {
		t.Errorf("tget whose instance died = %q, want %q", got, want)
	}
	if got, want := do(t, r, "tget", "k"), "$-1\r\n"; got != want {
		t.Errorf("tget afterwards = %q, want %q", got, want)
	}
}

func TestDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	st := newFakeStore(true)
	r := newRuntime(t, Config{Instances: 2, Deadline: deadline}, st, "loop.wasm", "kv.wasm")
	want := "-ERR module loop: command exceeded the 300ms deadline\r\n"
	for _, args := range [][]string{{"spin"}, {"spinafter", "k"}} {
		t.Run(args[0], func(t *testing.T) {
			var stop atomic.Bool
			var wg sync.WaitGroup
			var answered [2]atomic.Int64 // echoes on the looping module and on another one
			for i, cmd := range []string{"lecho", "echo"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						if got := do(t, r, cmd, "x"); got != "$1\r\nx\r\n" {
							t.Errorf("%s while a command loops = %q", cmd, got)
							return
						}
						answered[i].Add(1)
					}
				}()
			}
			t0 := time.Now()
			got := do(t, r, args...)
			took := time.Since(t0)
			stop.Store(true)
			wg.Wait()
			if got != want {
				t.Errorf("%s = %q, want %q", args[0], got, want)
			}
			if took < deadline || took > deadline+time.Second {
				t.Errorf("%s answered after %v, want between the deadline %v and a second more", args[0], took, deadline)
			}
			if answered[0].Load() == 0 || answered[1].Load() == 0 {
				t.Errorf("while %s looped: %d commands answered on its module, %d on another; want both > 0", args[0], answered[0].Load(), answered[1].Load())
			}
			if got := do(t, r, "lecho", "y"); got != "$1\r\ny\r\n" {
				t.Errorf("lecho after the timeout = %q", got)
			}
		})
	}
}

// TestSpinningGuestLetsGCRun checks that a looping guest can be preempted:
// a garbage collection (which stops the world) completes while the guest
// still loops, and Close stops the loop.
func TestSpinningGuestLetsGCRun(t *testing.T) {
	r := newRuntime(t, Config{Instances: 1, Deadline: time.Minute}, newFakeStore(true), "loop.wasm")
	in := r.reg.Load().mods["loop"].slots[0].inst
	spun := make(chan string, 1)
	go func() { spun <- do(t, r, "spin") }()
	for in.state.Load() == 0 {
		runtime.Gosched()
	}
	t0 := time.Now()
	runtime.GC()
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("a garbage collection took %v while a guest looped", took)
	}
	select {
	case got := <-spun:
		t.Fatalf("spin answered %q before it was stopped", got)
	default:
	}
	if err := r.Close(context.Background()); err != nil {
		t.Error(err)
	}
	if got, want := <-spun, "-ERR module loop: module runtime closed\r\n"; got != want {
		t.Errorf("spin stopped by Close = %q, want %q", got, want)
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	r := newRuntime(t, Config{}, newFakeStore(true), "kv.wasm")
	name := []byte("GET")
	if n := testing.AllocsPerRun(100, func() { r.Lookup(name) }); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

func TestCancelWhileWaiting(t *testing.T) {
	t.Run("store", func(t *testing.T) {
		st := newFakeStore(false)
		r := newRuntime(t, Config{Instances: 1}, st, "kv.wasm")
		entered, release := hold(st, "held")
		defer release()
		ctx, cancel := context.WithCancel(context.Background())
		reply := make(chan string)
		go func() { reply <- doCtx(t, ctx, r, "get", "held") }()
		<-entered
		cancel()
		if got := <-reply; got != string(errGone) {
			t.Errorf("get whose client went away = %q, want %q", got, errGone)
		}
		s := r.reg.Load().mods["kv"].slots[0]
		if n := s.ncancel.Load(); n != 0 {
			t.Errorf("%d cancellations still queued on a free instance", n)
		}
		if got, want := do(t, r, "echo", "x"), "$1\r\nx\r\n"; got != want {
			t.Errorf("echo afterwards = %q, want %q", got, want)
		}
	})
	t.Run("instance", func(t *testing.T) {
		st := newFakeStore(true)
		r := newRuntime(t, Config{Instances: 1, Deadline: 5 * time.Second}, st, "loop.wasm")
		in := r.reg.Load().mods["loop"].slots[0].inst
		spun := make(chan string)
		go func() { spun <- do(t, r, "spin") }()
		// Wait until spin runs on the only instance.
		for in.state.Load() == 0 {
			runtime.Gosched()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		if got := doCtx(t, ctx, r, "lecho", "x"); got != string(errGone) {
			t.Errorf("lecho whose client went away = %q, want %q", got, errGone)
		}
		if took := time.Since(t0); took > 2*time.Second {
			t.Errorf("lecho waited %v for a busy instance after its client went away", took)
		}
		_ = r.Close(context.Background()) // stops spin
		if got := <-spun; !strings.HasPrefix(got, "-ERR") {
			t.Errorf("spin after Close = %q, want an error", got)
		}
	})
}

func TestSwap(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{}, st, "kv.wasm")
	v2 := writeModule(t, t.TempDir(), "kv.wasm", kvV2())
	if got := do(t, r, "ver"); got != "$1\r\n1\r\n" {
		t.Fatalf("ver = %q", got)
	}
	entered, release := hold(st, "held")
	defer release()
	const inflight = 5
	replies := make(chan string, inflight)
	for range inflight {
		go func() { replies <- do(t, r, "getset", "held", "new") }()
	}
	for range inflight {
		<-entered
	}
	old := r.reg.Load().mods["kv"]
	info, err := r.Load(context.Background(), v2)
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != "2" || info.Name != "kv" {
		t.Errorf("Load = %+v", info)
	}
	if got := do(t, r, "ver"); got != "$1\r\n2\r\n" {
		t.Errorf("ver after the swap = %q, want version 2", got)
	}
	if old.refs.Load() != inflight {
		t.Errorf("old version holds %d references, want %d (its commands in flight)", old.refs.Load(), inflight)
	}
	st.setHook(nil)
	release()
	for range inflight {
		if got := <-replies; got != "$-1\r\n" && got != "$3\r\nnew\r\n" {
			t.Errorf("getset in flight across the swap = %q", got)
		}
	}
	if n := old.refs.Load(); n != 0 {
		t.Errorf("old version holds %d references after its commands ended", n)
	}
	for _, s := range old.slots {
		if s.inst != nil {
			t.Error("old version still has an instance")
		}
	}
	if mods := r.Modules(); len(mods) != 1 || mods[0].Version != "2" {
		t.Errorf("Modules() = %+v", mods)
	}
}

func TestSwapUnderLoad(t *testing.T) {
	st := newFakeStore(true)
	r := newRuntime(t, Config{}, st, "kv.wasm")
	v2 := writeModule(t, t.TempDir(), "kv.wasm", kvV2())
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				// v1 answers the old value, v2 always "2".
				if got := do(t, r, "getset", "k", "v"); got != "$-1\r\n" && got != "$1\r\nv\r\n" && got != "$1\r\n2\r\n" {
					t.Errorf("getset during swaps = %q", got)
					return
				}
			}
		}()
	}
	for i := range 4 {
		if _, err := r.Load(context.Background(), []string{v2, mod("kv.wasm")}[i%2]); err != nil {
			t.Error(err)
		}
	}
	stop.Store(true)
	wg.Wait()
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, bin []byte) string { return writeModule(t, dir, name, bin) }
	good := func(names ...string) fake {
		return fake{abi: codec.ABIVersion, manifest: manifest("1", names...), reply: doneReply("+OK\r\n")}
	}
	withManifest := func(m codec.Manifest) []byte {
		f := good()
		f.manifest = codec.AppendManifest(nil, &m)
		return f.wasm()
	}
	noExport, initTrap := good("badok"), good("badok")
	noExport.omit, initTrap.initTrap = "respike_start", true
	oldABI, abi2 := good("badok"), good("badok")
	oldABI.abi, abi2.abi = 99, 2
	corrupt := good()
	corrupt.manifest = []byte{0xff, 0xff}
	tests := []struct {
		path, want string
	}{
		{write("arity.wasm", withManifest(codec.Manifest{Commands: []codec.CommandInfo{{Name: "badok", Arity: 1}, {Name: "zeroarity"}}})),
			`command "zeroarity" has arity 0`},
		{write("reserved.wasm", good("badok", "select").wasm()), `command "select" is served by the proxy itself`},
		{write("conflict.wasm", good("badok", "echo").wasm()), `command "echo" is already served by module kv`},
		{write("empty.wasm", good("badok", "").wasm()), "empty name"},
		{write("space.wasm", good("badok", "two words").wasm()), `command name "two words" must be lower-case`},
		{write("upper.wasm", good("badok", "UPPER").wasm()), `command name "UPPER" must be lower-case`},
		{write("twice.wasm", good("badok", "badok").wasm()), `command "badok" declared twice`},
		{write("none.wasm", good().wasm()), "manifest declares no command"},
		{write("corrupt.wasm", corrupt.wasm()), "manifest: codec: corrupt message"},
		{write("initrap.wasm", initTrap.wasm()), "instantiate: wasm error: unreachable"},
		{write("garbage.wasm", []byte("not wasm at all")), "not a WebAssembly 1.0 binary"},
		{write("noexport.wasm", noExport.wasm()), "missing export respike_start"},
		{write("oldabi.wasm", oldABI.wasm()), "ABI version 99, this host speaks 3 to " + strconv.Itoa(int(codec.ABIVersion))},
		{write("abi2.wasm", abi2.wasm()), "ABI version 2, this host speaks 3 to " + strconv.Itoa(int(codec.ABIVersion))},
		{filepath.Join(dir, "absent.wasm"), "no such file"},
		// A refused new version of a loaded module leaves the old one serving.
		{write("v2/kv.wasm", initTrap.wasm()), "instantiate:"},
	}
	r := newRuntime(t, Config{Reserved: func(n string) bool { return n == "select" }}, newFakeStore(true), "kv.wasm")
	for _, tc := range tests {
		name := ModuleName(tc.path)
		_, err := r.Load(context.Background(), tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("Load(%s) = %v, want an error naming the file and containing %q", name, err, tc.want)
			continue
		}
		var info *ModuleInfo
		for _, m := range r.Modules() {
			if m.Name == name {
				info = &m
			}
		}
		if info == nil || info.LastError != err.Error() {
			t.Errorf("Modules() entry of %s = %+v, want LastError %q", name, info, err)
		}
		if got := do(t, r, "echo", "x"); got != "$1\r\nx\r\n" {
			t.Errorf("echo after refusing %s = %q", name, got)
		}
		if r.Lookup([]byte("badok")) != nil {
			t.Errorf("a command of refused %s is served", name)
		}
	}
	if got := do(t, r, "ver"); got != "$1\r\n1\r\n" {
		t.Errorf("ver = %q, want the old version", got)
	}
	for _, m := range r.Modules() {
		if m.Name == "kv" && (m.Version != "1" || m.LastError == "") {
			t.Errorf("kv after a refused new version: %+v, want version 1 with LastError", m)
		}
	}
	// A good file clears the error.
	if _, err := r.Load(context.Background(), mod("kv.wasm")); err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Modules() {
		if m.Name == "kv" && m.LastError != "" {
			t.Errorf("kv's LastError = %q after a successful load", m.LastError)
		}
	}
	// A good handmade module loads and serves.
	if _, err := r.Load(context.Background(), write("fine.wasm", good("badok").wasm())); err != nil {
		t.Fatal(err)
	}
	if got := do(t, r, "BADOK"); got != "+OK\r\n" {
		t.Errorf("badok = %q", got)
	}
}

func TestLoopingInitialisationIsRefused(t *testing.T) {
	r := newRuntime(t, Config{Deadline: 20 * time.Millisecond}, newFakeStore(true))
	path := writeModule(t, t.TempDir(), "forever.wasm", fake{abi: codec.ABIVersion, initLoop: true}.wasm())
	_, err := r.Load(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "initialisation exceeded ten times the deadline") {
		t.Errorf("Load of a module looping in _initialize = %v", err)
	}
}

func TestLoadDirAndUnload(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"kv.wasm", "loop.wasm"} {
		b, err := os.ReadFile(mod(name))
		if err != nil {
			t.Fatal(err)
		}
		writeModule(t, dir, name, b)
	}
	writeModule(t, dir, "badarity.wasm", fake{abi: 99}.wasm())
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a module"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Config{Dir: dir}, newFakeStore(true))
	if err := r.LoadDir(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range r.Modules() {
		got = append(got, m.Name+":"+m.LastError)
	}
	if len(got) != 3 || got[0][:9] != "badarity:" || got[0] == "badarity:" || got[1] != "kv:" || got[2] != "loop:" {
		t.Errorf("Modules() after LoadDir = %q", got)
	}
	if err := r.Unload("kv"); err != nil {
		t.Fatal(err)
	}
	if r.Lookup([]byte("echo")) != nil {
		t.Error("echo served after Unload")
	}
	if got := do(t, r, "lecho", "x"); got != "$1\r\nx\r\n" {
		t.Errorf("lecho after unloading kv = %q", got)
	}
	if err := r.Unload("kv"); err == nil {
		t.Error("Unload of an unloaded module succeeded")
	}
	// An unloaded module's commands, looked up before, finish with an error.
	cmd := r.Lookup([]byte("lecho"))
	if err := r.Unload("loop"); err != nil {
		t.Fatal(err)
	}
	if got := string(r.Exec(context.Background(), cmd, &codec.Start{Args: [][]byte{[]byte("lecho"), []byte("x")}}, nil)); !strings.HasPrefix(got, "-ERR") {
		t.Errorf("Exec of an unloaded command = %q, want an error", got)
	}
}

func TestCloseWithCommandsInFlight(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{}, st, "kv.wasm")
	entered, release := hold(st, "held")
	reply := make(chan string)
	go func() { reply <- do(t, r, "get", "held") }()
	<-entered
	if err := r.Close(context.Background()); err != nil {
		t.Error(err)
	}
	release()
	if got := <-reply; !strings.HasPrefix(got, "-ERR") {
		t.Errorf("get in flight across Close = %q, want an error", got)
	}
}

// TestHostileRequestAddresses loads modules that answer Pending with a
// request address outside their memory, or with no address at all: the
// host must read nothing, answer an error, and keep serving.
func TestHostileRequestAddresses(t *testing.T) {
	pending := func(addr []byte) []byte {
		return append([]byte{codec.StatusPending, 0, 0, 0, 0}, addr...)
	}
	dir := t.TempDir()
	r := newRuntime(t, Config{NoInline: true}, newFakeStore(false), "kv.wasm")
	for name, reply := range map[string][]byte{
		"outside":   pending([]byte{0xf0, 0xff, 0xff, 0xff}),
		"truncated": pending([]byte{0x10}),
		"zero":      pending([]byte{0, 0, 0, 0}),
	} {
		m := fake{abi: codec.ABIVersion, manifest: manifest("1", "bad"+name), reply: reply}
		if _, err := r.Load(context.Background(), writeModule(t, dir, name+".wasm", m.wasm())); err != nil {
			t.Fatal(err)
		}
		if got := do(t, r, "bad"+name); !strings.Contains(got, "malformed store request") {
			t.Errorf("%s: reply %q", name, got)
		}
	}
	if got := do(t, r, "echo", "still"); got != "$5\r\nstill\r\n" {
		t.Fatalf("echo after hostile modules: %q", got)
	}
}

// TestInlineStoreNeverWaits checks that on a store that runs requests
// inline no command takes the slower return-and-resume path, with several
// goroutines on several instances (an argument's undefined upper half once
// sent half of all requests down it), and that on the other stores every
// request does.
func TestInlineStoreNeverWaits(t *testing.T) {
	for _, m := range storeModes {
		t.Run(m.name, func(t *testing.T) {
			r := newRuntime(t, Config{Instances: 2, NoInline: m.noInline}, newFakeStore(m.inline), "kv.wasm")
			do(t, r, "set", "k", "v")
			before := r.Stats().Waits
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 250 {
						if got := do(t, r, "get", "k"); got != "$1\r\nv\r\n" {
							t.Errorf("get = %q", got)
							return
						}
					}
				})
			}
			wg.Wait()
			want := int64(1000)
			if m.inline && !m.noInline {
				want = 0
			}
			if waits := r.Stats().Waits - before; waits != want {
				t.Fatalf("%d of 1000 GETs waited, want %d", waits, want)
			}
		})
	}
}

// A command whose client goes away stops before its first write, never
// after it: getset (a read, then a write) is dropped when the client is
// gone before the write is sent, and finishes when the client goes while
// the write is in flight.
func TestClientGoneCancelsOnlyBeforeWrites(t *testing.T) {
	st := newFakeStore(false)
	r := newRuntime(t, Config{Instances: 1}, st, "kv.wasm")
	var gone atomic.Bool
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	var askedDead atomic.Bool // what the last check asked: getset writes, so whether the connection is dead
	ctx := WithGone(base, func(dead bool) bool { askedDead.Store(dead); return gone.Load() })

	// Gone before the command starts: nothing reaches the store.
	gone.Store(true)
	before := st.execs.Load()
	if got := doCtx(t, ctx, r, "getset", "k", "v"); got != string(errGone) {
		t.Errorf("getset of a gone client = %q, want %q", got, errGone)
	}
	if n := st.execs.Load() - before; n != 0 {
		t.Errorf("%d store requests sent for a gone client", n)
	}
	if !askedDead.Load() {
		t.Error("a write command was checked as a read (a half-closed client would lose its write)")
	}

	// Gone after the read: the write is not sent.
	gone.Store(false)
	st.setHook(func(_ context.Context, req *codec.Request) {
		if !req.Writes() {
			gone.Store(true)
		}
	})
	if got := doCtx(t, ctx, r, "getset", "k", "v"); got != string(errGone) {
		t.Errorf("getset whose client went after the read = %q, want %q", got, errGone)
	}
	if _, ok := st.data["k"]; ok {
		t.Error("the write was sent after the client went away")
	}

	// Gone (and the context cancelled) while the write runs: it finishes.
	gone.Store(false)
	st.setHook(func(_ context.Context, req *codec.Request) {
		if req.Writes() {
			gone.Store(true)
			cancel()
		}
	})
	if got := doCtx(t, ctx, r, "getset", "k", "v2"); got != "$-1\r\n" {
		t.Errorf("getset whose client went during the write = %q, want the old value (nil)", got)
	}
	if string(st.data["k"]) != "v2" {
		t.Errorf("k = %q after the write, want v2", st.data["k"])
	}
}

// TestLookupCachedFollowsTheRegistry checks that a cached lookup answers
// as Lookup does across loads and unloads: never a command of a module
// that is gone, never "unknown" for one that came.
func TestLookupCachedFollowsTheRegistry(t *testing.T) {
	r := newRuntime(t, Config{}, newFakeStore(true), "kv.wasm")
	var lc LookupCache
	get := r.LookupCached(&lc, []byte("GET"))
	if get == nil || get != r.Lookup([]byte("get")) {
		t.Fatalf("LookupCached(GET) = %v, want Lookup's %v", get, r.Lookup([]byte("get")))
	}
	if again := r.LookupCached(&lc, []byte("get")); again != get {
		t.Fatalf("LookupCached(get) again = %v, want %v", again, get)
	}
	if r.LookupCached(&lc, []byte("nosuch")) != nil || r.LookupCached(&lc, []byte("nosuch")) != nil {
		t.Fatal("an unknown command was found")
	}
	if r.LookupCached(&lc, []byte("get")) != get {
		t.Fatal("get after another name was not found again")
	}
	if err := r.Unload("kv"); err != nil {
		t.Fatal(err)
	}
	if cmd := r.LookupCached(&lc, []byte("get")); cmd != nil {
		t.Fatalf("LookupCached(get) after the module's unload = %v, want nil", cmd)
	}
	if _, err := r.Load(context.Background(), mod("kv.wasm")); err != nil {
		t.Fatal(err)
	}
	if cmd := r.LookupCached(&lc, []byte("get")); cmd == nil || cmd != r.Lookup([]byte("get")) {
		t.Fatalf("LookupCached(get) after the module's load = %v, want %v", cmd, r.Lookup([]byte("get")))
	}
	long := []byte("a-command-name-longer-than-the-cache-holds")
	if r.LookupCached(&lc, long) != nil {
		t.Fatal("a long unknown name was found")
	}
}
