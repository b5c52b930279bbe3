package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/fleet"
	"github.com/respike/respike/host/metrics"
	"github.com/respike/respike/host/store"
)

// The fleet tests run two proxies on one store, each with a runtime of its
// own and a fleet watcher polling the store, as two respike processes on
// one Aerospike cluster (RESPIKE_TEST_AEROSPIKE runs them on one).

// fleetPoll is the proxies' poll interval in these tests.
const fleetPoll = 20 * time.Millisecond

// fleetProxy is one proxy of the fleet: its backend, daemon and watcher.
type fleetProxy struct {
	name    string
	backend *Backend
	daemon  *Daemon
	fleet   *fleet.Fleet
	admin   *redis.Client
	// stop stops the fleet's polls and heartbeats, as a crash would (it
	// does not Leave); start runs them again.
	stop, start func()
}

// newFleet starts two proxies on one fresh store, polling every fleetPoll;
// opts adjust their fleet configuration.
func newFleet(t *testing.T, opts ...func(*fleet.Config)) []*fleetProxy {
	t.Helper()
	ctx := context.Background()
	cache := warmCacheDir(t)
	first, err := NewBackend(ctx, t.TempDir(), cache, env.logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(first.Close)
	clearFleetRecords(t, first.Store)
	t.Cleanup(func() { clearFleetRecords(t, first.Store) })
	var out []*fleetProxy
	for i, name := range []string{"proxy-a", "proxy-b"} {
		b := first
		if i > 0 {
			if b, err = first.NewProxy(ctx, t.TempDir(), cache, env.logger, fleetPoll); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(b.Close)
		}
		fcfg := fleet.Config{Proxy: name, Poll: fleetPoll, ChunkBytes: 256 << 10, Logger: env.logger}
		for _, o := range opts {
			o(&fcfg)
		}
		f, err := fleet.New(b.Store, b.Runtime, fcfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		p := &fleetProxy{name: name, backend: b, fleet: f}
		var stopRun context.CancelFunc
		var done chan struct{}
		p.start = func() {
			var runCtx context.Context
			runCtx, stopRun = context.WithCancel(ctx)
			done = make(chan struct{})
			go func() { defer close(done); f.Run(runCtx) }()
		}
		p.stop = func() {
			if stopRun != nil {
				stopRun()
				<-done
				stopRun = nil
			}
		}
		p.start()
		t.Cleanup(p.stop)
		cfg := testConfig()
		cfg.Server.EnableModuleCommand = "yes"
		p.daemon = serve(t, cfg, b)
		p.daemon.Server.SetFleet(f)
		// MODULE DEPLOY compiles the module before it answers: a first
		// compile under -race on a loaded machine takes tens of seconds.
		p.admin = client(t, p.daemon.Addr, func(o *redis.Options) { o.PoolSize, o.ReadTimeout = 1, 90*time.Second })
		out = append(out, p)
	}
	return out
}

// clearFleetRecords deletes the deployed modules' records from st's
// system area (on Aerospike they would outlive the test).
func clearFleetRecords(t *testing.T, st store.Store) {
	t.Helper()
	ctx := context.Background()
	f := &fleetReader{st: st}
	entries := f.index(t)
	calls := []codec.Call{{Key: []byte(fleet.IndexKey)}, {Key: []byte(fleet.StatusKey)}, {Key: []byte(fleet.PendingKey)}}
	for _, e := range entries {
		for i := range e.Chunks {
			calls = append(calls, codec.Call{Key: []byte(e.ChunkKey(i))})
		}
	}
	for i := range calls {
		calls[i].Delete()
	}
	var resp codec.Response
	st.Exec(ctx, store.SystemDB, &codec.Request{Kind: codec.ReqRecords, Calls: calls}, &resp)
	if resp.Code != codec.OK {
		t.Fatalf("deleting the fleet records: %d %s", resp.Code, resp.Msg)
	}
}

// fleetReader reads the fleet's records as any proxy would.
type fleetReader struct{ st store.Store }

func (r *fleetReader) index(t *testing.T) []fleet.Entry {
	t.Helper()
	f, err := fleet.New(r.st, nil, fleet.Config{Proxy: "reader", Staging: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := f.Deployed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// eventually polls cond until it holds or limit passes: the proxies swap
// at their own poll, there is no event to wait on.
func eventually(t *testing.T, what string, limit time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// hsver is what the proxy's hsver answers, or its error's text.
func (p *fleetProxy) hsver(t *testing.T) string {
	t.Helper()
	v, err := p.admin.Do(context.Background(), "hsver").Text()
	if err != nil {
		return err.Error()
	}
	return v
}

// fleetStates is MODULE FLEET's answer: proxy → module → fields.
func fleetStates(t *testing.T, c *redis.Client) map[string]map[string]map[string]any {
	t.Helper()
	v, err := c.Do(context.Background(), "MODULE", "FLEET").Slice()
	if err != nil {
		t.Fatalf("MODULE FLEET: %v", err)
	}
	out := map[string]map[string]map[string]any{}
	for _, e := range v {
		list, ok := e.([]any)
		if !ok || len(list) != 20 {
			t.Fatalf("MODULE FLEET entry %v: want 10 fields", e)
		}
		m := map[string]any{}
		for i := 0; i < len(list); i += 2 {
			m[list[i].(string)] = list[i+1]
		}
		proxy, mod := m["proxy"].(string), m["module"].(string)
		if out[proxy] == nil {
			out[proxy] = map[string]map[string]any{}
		}
		out[proxy][mod] = m
	}
	return out
}

// writeModule writes bin as dir/hotswap.wasm and returns the path.
func writeModule(t *testing.T, dir string, bin []byte) string {
	t.Helper()
	path := filepath.Join(dir, "hotswap.wasm")
	if err := os.WriteFile(path, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFleetDeploy(t *testing.T) {
	bins := hotswapBins(t)
	proxies := newFleet(t)
	a, b := proxies[0], proxies[1]
	ctx := context.Background()
	limit := 60 * time.Second // a first compile of a module under -race takes tens of seconds

	// Deployed on a, served by both.
	if err := a.admin.Do(ctx, "MODULE", "DEPLOY", writeModule(t, t.TempDir(), bins["A"])).Err(); err != nil {
		t.Fatalf("MODULE DEPLOY A: %v", err)
	}
	if v := a.hsver(t); v != "A" {
		t.Fatalf("hsver on the deploying proxy right after MODULE DEPLOY = %q, want A", v)
	}
	took := eventually(t, "proxy b serves A", limit, func() bool { return b.hsver(t) == "A" })
	t.Logf("A deployed on a: served on b after %v", took)

	// Under load on both proxies, B is deployed through b: every command
	// answers, from A or B, and both end on B.
	addrs := make([]string, len(proxies))
	for i, p := range proxies {
		addrs[i] = p.daemon.Addr
	}
	load := startSwapLoadOn(t, addrs, 4, true)
	if err := b.admin.Do(ctx, "MODULE", "DEPLOY", writeModule(t, t.TempDir(), bins["B"])).Err(); err != nil {
		t.Fatalf("MODULE DEPLOY B: %v", err)
	}
	took = eventually(t, "proxy a serves B", limit, func() bool { return a.hsver(t) == "B" })
	t.Logf("B deployed on b: served on a after %v", took)

	// A module refused here is not deployed: the reply says why, nothing
	// changes anywhere.
	err := a.admin.Do(ctx, "MODULE", "DEPLOY", writeModule(t, t.TempDir(), bins["badmanifest"])).Err()
	if err == nil || !strings.Contains(err.Error(), "refused here, not deployed") {
		t.Errorf("MODULE DEPLOY of a module with a bad manifest: %v, want a refusal", err)
	}

	// A broken module written to the store directly (as a proxy of
	// another host version might accept and publish it) is refused by
	// every proxy, which keep serving B, and each says so.
	bad, err := fleet.Publish(ctx, a.backend.Store, "hotswap", bins["inittrap"], 256<<10, "", "test")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "both proxies report the broken module refused", limit, func() bool {
		st := fleetStates(t, a.admin)
		for _, p := range proxies {
			m := st[p.name]["hotswap"]
			if m == nil || m["sha256"] != bad.SHA256 || m["state"] != fleet.StateRefused {
				return false
			}
		}
		return true
	})
	replies := load.end(t)
	if replies["A"] == 0 || replies["B"] == 0 {
		t.Errorf("replies by build %v: the load did not run across the swap", replies)
	}
	for _, p := range proxies {
		if v := p.hsver(t); v != "B" {
			t.Errorf("%s serves %q after the broken deploy, want B", p.name, v)
		}
		m := fleetStates(t, b.admin)[p.name]["hotswap"]
		if m["version"] != "2.0.0" || m["current"] != int64(1) || !strings.Contains(m["error"].(string), "module") {
			t.Errorf("%s in MODULE FLEET: %v, want version 2.0.0 still serving, current, with the reason", p.name, m)
		}
		if c := p.fleet.Counters(); c.Refusals < 1 || c.Swaps < 1 {
			t.Errorf("%s counters %+v: want a refusal and a swap", p.name, c)
		}
	}
	t.Logf("replies by build under load: %v", replies)

	// The refusal in the metrics, parsed with Prometheus's own parser.
	web := httptest.NewServer(metrics.Handler(metrics.Sources{Server: a.daemon.Server, Runtime: a.backend.Runtime, Fleet: a.fleet}))
	defer web.Close()
	fams := scrape(t, web.URL)
	if v := sample(t, fams, "respike_fleet_module_updates_total", map[string]string{"result": "refused"}).GetCounter().GetValue(); v < 1 {
		t.Errorf("respike_fleet_module_updates_total{result=refused} = %v", v)
	}
	if v := sample(t, fams, "respike_fleet_deploys_total", map[string]string{"op": "deploy"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("respike_fleet_deploys_total{op=deploy} on proxy a = %v, want 1 (A)", v)
	}
	sample(t, fams, "respike_fleet_module_state", map[string]string{"module": "hotswap", "sha256": bad.SHA256, "state": fleet.StateRefused})
	if v := sample(t, fams, "respike_fleet_polls_total", nil).GetCounter().GetValue(); v < 2 {
		t.Errorf("respike_fleet_polls_total = %v", v)
	}

	// A MODULE UNLOAD on one proxy does not undeploy: the deployed
	// version serves there again at the next poll.
	if err := a.admin.Do(ctx, "MODULE", "UNLOAD", "hotswap").Err(); err != nil {
		t.Fatalf("MODULE UNLOAD: %v", err)
	}
	eventually(t, "proxy a serves the deployed B again after MODULE UNLOAD", limit, func() bool { return a.hsver(t) == "B" })

	// Undeployed through b: both stop serving the module (their commands
	// folders have no hotswap.wasm).
	if err := b.admin.Do(ctx, "MODULE", "UNDEPLOY", "hotswap").Err(); err != nil {
		t.Fatalf("MODULE UNDEPLOY: %v", err)
	}
	eventually(t, "proxy a stops serving hotswap and MODULE FLEET shows nothing", limit, func() bool {
		return strings.HasPrefix(a.hsver(t), "ERR unknown command") && len(fleetStates(t, a.admin)) == 0
	})
	if err := b.admin.Do(ctx, "MODULE", "UNDEPLOY", "hotswap").Err(); err == nil || !strings.Contains(err.Error(), "no deployed module") {
		t.Errorf("second MODULE UNDEPLOY: %v", err)
	}
	// The chunk records of every version are gone.
	if entries := (&fleetReader{st: a.backend.Store}).index(t); len(entries) != 0 {
		t.Errorf("index after UNDEPLOY: %v", entries)
	}
}

// Without a fleet, or without enable_module_command, the fleet subcommands
// say so; MODULE HELP lists them.
func TestFleetCommandsRefused(t *testing.T) {
	ctx := context.Background()
	c := client(t, env.daemon.Addr)
	for _, args := range [][]any{{"MODULE", "FLEET"}, {"MODULE", "DEPLOY", "/nonexistent.wasm"}, {"MODULE", "UNDEPLOY", "x"}} {
		if err := c.Do(ctx, args...).Err(); err == nil || err.Error() != "ERR module deploys are off on this proxy" {
			t.Errorf("%v without a fleet: %v", args, err)
		}
	}
	d := newDaemon(t, func(cfg *config.Config) { cfg.Server.EnableModuleCommand = "no" })
	if err := client(t, d.Addr).Do(ctx, "MODULE", "DEPLOY", "/nonexistent.wasm").Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR MODULE command not allowed") {
		t.Errorf("MODULE DEPLOY with enable_module_command no: %v", err)
	}
	help, err := c.Do(ctx, "MODULE", "HELP").StringSlice()
	if err != nil || !strings.Contains(strings.Join(help, "\n"), "DEPLOY <path>") {
		t.Errorf("MODULE HELP: %v, %v", help, err)
	}
}

// chunkKeys lists the chunk records of module name in st's system area,
// sorted, by scanning it.
func chunkKeys(t *testing.T, st store.Store, name string) []string {
	t.Helper()
	prefix := "respike:module:" + name + ":"
	var keys []string
	var cursor uint64
	for {
		var resp codec.Response
		st.Exec(context.Background(), store.SystemDB, &codec.Request{Kind: codec.ReqScan, Scan: codec.ScanArgs{Cursor: cursor, Count: 1000}}, &resp)
		if resp.Code != codec.OK {
			t.Fatalf("scan of the system area: %d %s", resp.Code, resp.Msg)
		}
		for _, k := range resp.Scan.Keys {
			if strings.HasPrefix(string(k), prefix) {
				keys = append(keys, string(k))
			}
		}
		if cursor = resp.Scan.Cursor; cursor == 0 {
			break
		}
	}
	slices.Sort(keys)
	return keys
}

// TestFleetLeftovers checks what a fleet leaves behind: deploys of one
// module through both proxies at once leave the chunk records of the
// deploy the index names and of no other, and a proxy that stops without leaving
// (a crash) is marked stale in MODULE FLEET, then forgotten, and comes
// back when it runs again.
func TestFleetLeftovers(t *testing.T) {
	bins := hotswapBins(t)
	const (
		staleAfter  = 300 * time.Millisecond
		forgetAfter = 1500 * time.Millisecond
	)
	proxies := newFleet(t, func(c *fleet.Config) {
		c.Heartbeat, c.StaleAfter, c.ForgetAfter = 50*time.Millisecond, staleAfter, forgetAfter
	})
	a, b := proxies[0], proxies[1]
	ctx := context.Background()
	limit := 60 * time.Second
	st := a.backend.Store

	// Deploys racing each other: A through a while B through b, rounds
	// in turn. Each answers +OK; afterwards one version's chunks remain.
	paths := map[string]string{"A": writeModule(t, t.TempDir(), bins["A"]), "B": writeModule(t, t.TempDir(), bins["B"])}
	sums := map[string]string{}
	for tag, bin := range map[string][]byte{"A": bins["A"], "B": bins["B"]} {
		sum := sha256.Sum256(bin)
		sums[tag] = hex.EncodeToString(sum[:])
	}
	for round := range 4 {
		var wg sync.WaitGroup
		for i, p := range proxies {
			tag := []string{"A", "B"}[(i+round)%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := p.admin.Do(ctx, "MODULE", "DEPLOY", paths[tag]).Err(); err != nil {
					t.Errorf("round %d: MODULE DEPLOY %s through %s: %v", round, tag, p.name, err)
				}
			}()
		}
		wg.Wait()
	}
	entries := (&fleetReader{st: st}).index(t)
	if len(entries) != 1 {
		t.Fatalf("index after the racing deploys: %+v", entries)
	}
	won := entries[0].SHA256
	var want []string
	for i := range entries[0].Chunks {
		want = append(want, entries[0].ChunkKey(i))
	}
	slices.Sort(want)
	if got := chunkKeys(t, st, "hotswap"); !slices.Equal(got, want) {
		t.Errorf("chunk records after the racing deploys: %q, want those of the deploy the index names, %q", got, want)
	}
	tagWon := "A"
	if won == sums["B"] {
		tagWon = "B"
	}
	for _, p := range proxies {
		eventually(t, p.name+" serves the version the index names", limit, func() bool { return p.hsver(t) == tagWon })
	}

	// Both proxies beat: neither is stale.
	eventually(t, "both proxies in MODULE FLEET, current and not stale", limit, func() bool {
		s := fleetStates(t, a.admin)
		for _, p := range proxies {
			m := s[p.name]["hotswap"]
			if m == nil || m["stale"] != int64(0) || m["current"] != int64(1) {
				return false
			}
		}
		return true
	})
	// b stops beating (a crash: nothing removes its states): stale, then
	// forgotten, while a stays.
	b.stop()
	stopped := time.Now()
	eventually(t, "b stale in MODULE FLEET", limit, func() bool {
		return fleetStates(t, a.admin)[b.name]["hotswap"]["stale"] == int64(1)
	})
	if took := time.Since(stopped); took < staleAfter-100*time.Millisecond {
		t.Errorf("b stale %v after its last heartbeat, want about %v", took, staleAfter)
	}
	eventually(t, "b forgotten", limit, func() bool {
		s := fleetStates(t, a.admin)
		return s[b.name] == nil && s[a.name]["hotswap"]["stale"] == int64(0)
	})
	if took := time.Since(stopped); took < forgetAfter-100*time.Millisecond {
		t.Errorf("b forgotten %v after it stopped, want after %v", took, forgetAfter)
	}
	// b runs again: its heartbeat writes its states back.
	b.start()
	eventually(t, "b back in MODULE FLEET", limit, func() bool {
		m := fleetStates(t, a.admin)[b.name]["hotswap"]
		return m != nil && m["stale"] == int64(0) && m["state"] == fleet.StateServing
	})
	if c := a.fleet.Counters(); c.Forgotten < 1 || c.Heartbeats < 2 {
		t.Errorf("a's counters %+v: want b forgotten and heartbeats", c)
	}
}
