package e2e

import (
	"bufio"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/host/block"
)

// heapProfile writes a heap profile to $BLOCK_HEAP_PROFILE+suffix when
// that is set: with -memprofilerate=1, `go tool pprof -base <p>.0 <p>.1`
// shows where a blocked client's bytes go.
func heapProfile(t *testing.T, suffix string) {
	p := os.Getenv("BLOCK_HEAP_PROFILE")
	if p == "" {
		return
	}
	f, err := os.Create(p + suffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}

// TestBlockedClientCost blocks 1,000 clients, each on a key of its own (the
// poll's worst case: 1,000 keys read per poll), and measures what they
// cost the proxy: the heap each blocked client adds beyond its connection,
// and the CPU the idle proxy spends while they wait (the registry's poll,
// every 20ms by default). Targets: under 1 KiB of heap per blocked client,
// under 5% of one core. It logs the figures (go test -v -run
// TestBlockedClientCost ./test/e2e); with RESPIKE_TEST_AEROSPIKE set, the
// store is that Aerospike.
func TestBlockedClientCost(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections and measures for seconds")
	}
	const n = 1000
	addr, b := newQueueProxy(t)
	reg := b.Store.(*block.Registry)
	admin := client(t, addr)

	// Warm the proxy up first: the module's instances are created as
	// commands need them, a one-time cost of megabytes that is no blocked
	// client's. Concurrent blocks with a short timeout need them all.
	warm := make([]<-chan result, 64)
	for i := range warm {
		warm[i] = goDo(client(t, addr), "BQPOP", "warm", "0.05")
	}
	for _, ch := range warm {
		if r := recv(t, ch); r.err != redis.Nil {
			t.Fatalf("warm-up BQPOP: %v, %v", r.val, r.err)
		}
	}

	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	// Every connection has run a command of three arguments, as BQPOP's,
	// and a module command on the store, all at once as they will block:
	// its state on the proxy is that of a connection in use, and the
	// store's connection pool has grown to serve them all.
	for i, c := range conns {
		if _, err := c.Write(append(Encode("CLIENT", "SETNAME", "c"), Encode("QPOP", "cost:"+strconv.Itoa(i))...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		br := bufio.NewReader(c)
		for _, want := range []string{"+OK\r\n", "$-1\r\n"} {
			if got, err := ReadReply(br); err != nil || got != want {
				t.Fatalf("reply %q, %v, want %q", got, err, want)
			}
		}
	}
	// More bursts of n blocking commands (timing out at once), while they make the
	// runtime start instances (up to two per thread per module): an
	// instance the measured burst would start is the module's cost, not a
	// blocked client's. Bounded: a machine fast enough never to overlap
	// them needs no more instances for the measured burst either.
	max := 2 * runtime.GOMAXPROCS(0) * len(b.Runtime.Modules())
	for range 20 {
		if got, _ := instances(b); got >= max {
			break
		}
		for i, c := range conns {
			if _, err := c.Write(Encode("BQPOP", "cost:"+strconv.Itoa(i), "0.01")); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range conns {
			if got, err := ReadReply(bufio.NewReader(c)); err != nil || strings.HasPrefix(got, "-") {
				t.Fatalf("BQPOP burst: %q, %v", got, err)
			}
		}
	}

	// The process's own idle CPU, with the connections open and nobody
	// blocked (other tests' daemons and stores are idle in it too).
	base := idleCPU(t, 2*time.Second)
	heap0, stack0 := memNow()
	inst0, wasm0 := instances(b)
	heapProfile(t, ".0")
	for i, c := range conns {
		if _, err := c.Write(Encode("BQPOP", "cost:"+strconv.Itoa(i), "0")); err != nil {
			t.Fatal(err)
		}
	}
	awaitBlocked(t, admin, n)
	heap1, stack1 := memNow()
	inst1, wasm1 := instances(b)
	heapProfile(t, ".1")
	// A module instance the burst of n commands started (when it found the
	// warm ones busy) is the module's, not a blocked client's: its linear
	// memory, on the Go heap, is left out.
	perHeap := (int64(heap1) - int64(heap0) - (wasm1 - wasm0)) / n
	t.Logf("module instances %d -> %d, their memory %d -> %d B", inst0, inst1, wasm0, wasm1)
	perStack := (int64(stack1) - int64(stack0)) / n
	t.Logf("heap per blocked client beyond its connection: %d B; goroutine stack growth: %d B", perHeap, perStack)

	// CPU of the idle proxy with the clients blocked.
	polls0, took0 := reg.Polls()
	began := time.Now()
	share := idleCPU(t, 3*time.Second)
	polls1, took1 := reg.Polls()
	pollRate := float64(polls1-polls0) / time.Since(began).Seconds()
	var pollTook time.Duration
	if polls1 > polls0 {
		pollTook = (took1 - took0) / time.Duration(polls1-polls0)
	}
	cost := share - base
	store := "memory"
	if os.Getenv("RESPIKE_TEST_AEROSPIKE") != "" {
		store = "aerospike"
	}
	t.Logf("%d idle blocked clients (%s store): %.2f%% of one core (process %.2f%%, idle without them %.2f%%; %.0f polls/s of %d keys, %v each)",
		n, store, cost, share, base, pollRate, n, pollTook.Round(10*time.Microsecond))

	// On Aerospike the client library's buffer pools grow and shrink by
	// megabytes between the two readings: the heap figure is noise there.
	if perHeap >= 1024 && store == "memory" {
		t.Errorf("a blocked client costs %d B of heap, target < 1 KiB", perHeap)
	}
	// The race detector makes every memory access several times dearer:
	// its CPU figure measures the detector.
	if cost >= 5 && !raceEnabled {
		t.Errorf("1,000 idle blocked clients cost %.2f%% of a core, target < 5%%", cost)
	}

	for _, c := range conns {
		c.Close()
	}
	awaitBlocked(t, admin, 0)
	if w := reg.Waiting(); w != 0 {
		t.Fatalf("the registry still holds %d waiters after the clients left", w)
	}
}

// raceEnabled is set by race_test.go.
var raceEnabled bool

// memNow returns the live heap and the goroutine stacks in use, after a
// collection.
func memNow() (heap, stack uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// idleCPU returns the share of one core the process uses over span, once
// the collector and the scavenger are done with what came before.
func idleCPU(t *testing.T, span time.Duration) float64 {
	time.Sleep(time.Second) // no event says they are done
	cpu0, wall0 := cpuTime(t), time.Now()
	time.Sleep(span) // measuring idle CPU over a span: nothing to wait for
	return float64(cpuTime(t)-cpu0) / float64(time.Since(wall0)) * 100
}

// cpuTime is the CPU time this process has used.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// instances sums the module instances of b's runtime and their linear
// memory.
func instances(b *Backend) (n int, mem int64) {
	for _, m := range b.Runtime.Modules() {
		n += m.Instances
		mem += m.MemoryBytes
	}
	return n, mem
}
