// Package fleet deploys command modules to every proxy of a fleet through
// the store they share.
//
// MODULE DEPLOY on one proxy loads the module there (the validation of
// MODULE LOAD), then writes it into the store's system area
// (store.SystemDB): the module's bytes in chunk records named by its
// content hash, then, last, its entry in the index record. Every proxy
// polls the index record's generation (one header read); when it changes,
// the proxy reads the index, fetches the chunks of each entry whose hash it
// does not serve, checks size and hash, and swaps the module in through the
// runtime's Load, with the same validation, refusal and drain rules as a
// local swap. A proxy that refuses a module keeps serving what it served,
// logs why, counts it, and writes its state into the status record, which
// MODULE FLEET shows for every proxy. docs/data-model.md lays out the
// records; docs/operations.md the procedure.
//
// Leftovers are collected (gc.go): every proxy writes its last-seen time
// beside its states (a heartbeat); MODULE FLEET marks a proxy not seen for
// a while stale, and a proxy not seen for much longer is forgotten. A
// deploy registers its chunks as pending before it writes them and learns
// atomically which version its index entry replaced, whose chunks it
// deletes; chunks of a deploy that never committed (a failure, a crash)
// are swept once they are old enough.
package fleet

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/module"
	"github.com/respike/respike/host/store"
)

// Record keys and bins in store.SystemDB (docs/data-model.md).
const (
	// IndexKey is the index record: bin BinIndex, a key-ordered map of
	// module name → Entry as JSON. Its generation changes with every
	// deploy and undeploy: it is what every proxy polls.
	IndexKey = "respike:modules"
	// StatusKey is the status record: bin BinStatus, a map of
	// "<proxy> <module>" → Status as JSON, each proxy writing its own, and
	// bin BinSeen, a map of proxy → the Unix ms of its last heartbeat.
	StatusKey = "respike:modules:status"
	// PendingKey is the record of deploys under way: bin BinPending, a map
	// of "<module> <sha256>" → Entry as JSON, written before a deploy's
	// chunks and removed once its index entry is written (gc.go).
	PendingKey = "respike:modules:pending"
	// BinIndex, BinStatus, BinSeen, BinPending and BinData are the bins of
	// the index, status, pending and chunk records.
	BinIndex   = "m"
	BinStatus  = "s"
	BinSeen    = "h"
	BinPending = "p"
	BinData    = "d"
)

// ChunkKey is the key of chunk i of the deploy e: the module's name, its
// content hash and the deploy's own id, so that two deploys of the same
// bytes never share a chunk record (see Entry.Deploy). An entry written
// before deploys had ids names the chunks without one.
func (e Entry) ChunkKey(i int) string {
	k := "respike:module:" + e.Name + ":" + e.SHA256 + ":"
	if e.Deploy != "" {
		k += e.Deploy + ":"
	}
	return k + strconv.Itoa(i)
}

// sameChunks reports whether e and o name the same chunk records.
func (e Entry) sameChunks(o Entry) bool {
	return e.Name == o.Name && e.SHA256 == o.SHA256 && e.Deploy == o.Deploy
}

// newDeployID is a random id for a deploy's chunks.
func newDeployID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// Limits.
const (
	// DefaultChunkBytes keeps a chunk record well inside Aerospike's
	// default 1 MiB record size.
	DefaultChunkBytes = 512 << 10
	// MaxModuleBytes bounds a deployed module.
	MaxModuleBytes = 64 << 20
	// chunksPerRequest bounds the chunks one store request carries, so a
	// request stays a few MiB.
	chunksPerRequest = 4
)

// States a proxy reports for a deployed module.
const (
	StateServing     = "serving"
	StateRefused     = "refused"
	StateFetchFailed = "fetch_failed"
)

// Entry is one deployed module in the index record.
type Entry struct {
	Name       string `json:"name"`
	SHA256     string `json:"sha256"`
	Size       int    `json:"size"`
	Chunks     int    `json:"chunks"`
	Version    string `json:"version"`
	DeployedAt int64  `json:"deployed_at_ms"`
	DeployedBy string `json:"deployed_by"`
	// Deploy is the deploy's random id, part of its chunks' keys. Deploys
	// of the same bytes each write chunks of their own: otherwise a
	// deploy deleting the version it replaced could delete the chunks a
	// racing deploy of those same bytes had just committed.
	Deploy string `json:"deploy,omitempty"`
}

// Status is what one proxy serves of one deployed module.
type Status struct {
	Proxy   string `json:"proxy"`
	Module  string `json:"module"`
	SHA256  string `json:"sha256"`  // the deployed version this state is about
	Version string `json:"version"` // the manifest version of what the proxy serves
	State   string `json:"state"`
	Error   string `json:"error,omitempty"`
	At      int64  `json:"at_ms"`

	// Filled by Fleet from the heartbeats, not stored with the state.
	LastSeen int64 `json:"-"` // the proxy's last heartbeat (Unix ms), else At
	Stale    bool  `json:"-"` // not seen for Config.StaleAfter
}

// Config configures a Fleet.
type Config struct {
	// Proxy names this proxy in the status record; unique in the fleet.
	Proxy string
	// Poll is how often the index record's generation is read; 0 never
	// (MODULE DEPLOY still publishes, and Sync still reconciles).
	Poll time.Duration
	// ChunkBytes is the size of a chunk record; DefaultChunkBytes when 0.
	// Keep it below the namespace's record size limit.
	ChunkBytes int
	// Dir is the local commands folder: when a deployed module is
	// undeployed, its file there (if any) serves again.
	Dir string
	// Staging is where fetched modules are written for the runtime to load;
	// "" makes a temporary folder that Close removes.
	Staging string
	// Heartbeat is how often this proxy writes its last-seen time into the
	// status record and collects leftovers (gc.go); DefaultHeartbeat when
	// 0, never when negative.
	Heartbeat time.Duration
	// StaleAfter is how long a proxy may go unseen before Fleet marks its
	// states stale; 3 × Heartbeat when 0.
	StaleAfter time.Duration
	// ForgetAfter is how long a proxy may go unseen before a heartbeat of
	// another proxy removes its states; DefaultForgetAfter when 0, never
	// when negative.
	ForgetAfter time.Duration
	// ChunkGrace is how old a pending deploy must be before a sweep
	// deletes its chunks (it never committed); DefaultChunkGrace when 0.
	// A deploy that takes half of it gives up before its index write.
	ChunkGrace time.Duration
	Logger     *slog.Logger
}

// Counters count what a Fleet did since it started.
type Counters struct {
	Polls, PollErrors           int64 // index generation reads, and those that failed
	Deploys, Undeploys          int64 // MODULE DEPLOY / UNDEPLOY through this proxy
	Swaps, Refusals, FetchFails int64 // deployed versions loaded, refused, not fetched
	Heartbeats                  int64 // last-seen times written
	Forgotten                   int64 // proxies unseen for ForgetAfter whose states this proxy removed
	Swept                       int64 // versions whose chunks were deleted: replaced, or never committed
}

// Fleet keeps a runtime in step with the modules deployed in a store.
type Fleet struct {
	st      store.Store
	rt      *module.Runtime
	cfg     Config
	log     *slog.Logger
	staging string
	ownDir  bool

	mu      sync.Mutex        // one reconcile or deploy at a time
	gen     uint32            // index generation last reconciled
	synced  bool              // gen is meaningful
	served  map[string]string // module → hash served from the fleet
	refused map[string]string // module → hash refused: not retried until it changes
	status  map[string]Status // this proxy's states, by module
	downLog bool              // the store's failure was logged; quiet until it answers

	polls, pollErrors, deploys, undeploys, swaps, refusals, fetchFails atomic.Int64
	heartbeats, forgotten, swept                                       atomic.Int64
}

// New returns a Fleet over st and rt. It reads nothing: call Sync, then
// Run.
func New(st store.Store, rt *module.Runtime, cfg Config) (*Fleet, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ChunkBytes <= 0 {
		cfg.ChunkBytes = DefaultChunkBytes
	}
	if cfg.Proxy == "" {
		cfg.Proxy = DefaultProxyName("")
	}
	cfg.defaults()
	f := &Fleet{st: st, rt: rt, cfg: cfg, log: cfg.Logger.With("component", "fleet"),
		served: map[string]string{}, refused: map[string]string{}, status: map[string]Status{}}
	f.staging = cfg.Staging
	if f.staging == "" {
		dir, err := os.MkdirTemp("", "respike-deployed-")
		if err != nil {
			return nil, fmt.Errorf("fleet: staging folder: %w", err)
		}
		f.staging, f.ownDir = dir, true
	} else if err := os.MkdirAll(f.staging, 0o755); err != nil {
		return nil, fmt.Errorf("fleet: staging folder: %w", err)
	}
	return f, nil
}

// DefaultProxyName is the host name and listen address: unique per proxy
// in a fleet of hosts.
func DefaultProxyName(listen string) string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "proxy-" + rand.Text()[:8]
	}
	if listen == "" {
		return h
	}
	return h + "/" + listen
}

// Proxy is this proxy's name in the status record.
func (f *Fleet) Proxy() string { return f.cfg.Proxy }

// Close removes the staging folder when the Fleet made it.
func (f *Fleet) Close() error {
	if f.ownDir {
		return os.RemoveAll(f.staging)
	}
	return nil
}

// Counters returns the Fleet's counts.
func (f *Fleet) Counters() Counters {
	return Counters{Polls: f.polls.Load(), PollErrors: f.pollErrors.Load(), Deploys: f.deploys.Load(),
		Undeploys: f.undeploys.Load(), Swaps: f.swaps.Load(), Refusals: f.refusals.Load(), FetchFails: f.fetchFails.Load(),
		Heartbeats: f.heartbeats.Load(), Forgotten: f.forgotten.Load(), Swept: f.swept.Load()}
}

// Local returns this proxy's state of every deployed module, by name.
func (f *Fleet) Local() []Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Status, 0, len(f.status))
	for _, s := range f.status {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Module < out[j].Module })
	return out
}

// Run polls every cfg.Poll and beats every cfg.Heartbeat until ctx ends.
func (f *Fleet) Run(ctx context.Context) {
	var poll, beat <-chan time.Time
	if f.cfg.Poll > 0 {
		t := time.NewTicker(f.cfg.Poll)
		defer t.Stop()
		poll = t.C
	}
	if f.cfg.Heartbeat > 0 {
		f.Heartbeat(ctx)
		t := time.NewTicker(f.cfg.Heartbeat)
		defer t.Stop()
		beat = t.C
	}
	if poll == nil && beat == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-poll:
			f.Sync(ctx)
		case <-beat:
			f.Heartbeat(ctx)
		}
	}
}

// Sync reads the index record's generation and, when it changed (or a
// deployed module no longer serves here), reconciles: fetches and loads
// what changed, unloads what was undeployed. Failures are logged and
// counted; the next Sync tries again.
func (f *Fleet) Sync(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.polls.Add(1)
	gen, err := f.indexGeneration(ctx)
	if ctx.Err() != nil {
		return // shutting down
	}
	if err != nil {
		f.pollErrors.Add(1)
		if !f.downLog {
			f.log.Warn("cannot read the deployed modules; retrying at every poll", "err", err)
			f.downLog = true
		}
		return
	}
	if f.downLog {
		f.log.Info("deployed modules readable again")
		f.downLog = false
	}
	if f.synced && gen == f.gen && f.inStep() {
		return
	}
	entries, gen, err := f.readIndex(ctx)
	if err != nil {
		f.pollErrors.Add(1)
		f.log.Warn("cannot read the deployed modules' index", "err", err)
		return
	}
	if f.reconcile(ctx, entries) {
		f.gen, f.synced = gen, true
	}
}

// inStep reports whether every module served from the fleet is still
// served from its staged file (a MODULE UNLOAD, or a file of the same name
// in the commands folder, may have replaced it). Called with f.mu held.
func (f *Fleet) inStep() bool {
	if len(f.served) == 0 {
		return true
	}
	byName := map[string]module.ModuleInfo{}
	for _, m := range f.rt.Modules() {
		byName[m.Name] = m
	}
	for name := range f.served {
		m, ok := byName[name]
		if !ok || m.Path != f.stagedPath(name, f.served[name]) || len(m.Commands) == 0 {
			return false
		}
	}
	return true
}

// reconcile brings the runtime in step with entries and reports whether
// every entry was dealt with (loaded, or refused for good). Called with
// f.mu held.
func (f *Fleet) reconcile(ctx context.Context, entries map[string]Entry) bool {
	complete := true
	changed := map[string]Status{}
	for _, name := range sortedNames(entries) {
		e := entries[name]
		if prev := f.served[name]; prev != "" && !f.servesStaged(name) && (prev == e.SHA256 || f.refused[name] == e.SHA256) {
			// MODULE UNLOAD, or a file of the commands folder, replaced
			// the version served here: it serves again from its staged
			// file, with no fetch.
			if _, err := f.rt.Load(ctx, f.stagedPath(name, prev)); err == nil {
				f.log.Info("deployed module serving again", "module", name, "sha256", prev)
				continue
			}
			delete(f.served, name) // the staged file is gone: fetch it again
		}
		if f.served[name] == e.SHA256 || f.refused[name] == e.SHA256 {
			continue
		}
		st := Status{Proxy: f.cfg.Proxy, Module: name, SHA256: e.SHA256, At: time.Now().UnixMilli()}
		bin, err := f.fetch(ctx, e)
		if err != nil {
			f.fetchFails.Add(1)
			complete = false
			st.State, st.Error = StateFetchFailed, err.Error()
			f.log.Warn("deployed module not fetched; retrying at the next poll", "module", name, "sha256", e.SHA256, "err", err)
			changed[name] = st
			continue
		}
		info, err := f.stageAndLoad(ctx, name, e.SHA256, bin)
		if err != nil {
			f.refusals.Add(1)
			f.refused[name] = e.SHA256
			st.State, st.Error = StateRefused, err.Error()
			st.Version = f.servingVersion(name)
			f.log.Error("deployed module refused; the previous version keeps serving", "module", name,
				"sha256", e.SHA256, "version", e.Version, "deployed_by", e.DeployedBy, "err", err)
			changed[name] = st
			continue
		}
		f.swaps.Add(1)
		f.unstage(name, f.served[name])
		f.served[name] = e.SHA256
		delete(f.refused, name)
		st.State, st.Version = StateServing, info.Version
		f.log.Info("deployed module serving", "module", name, "sha256", e.SHA256, "version", info.Version,
			"deployed_by", e.DeployedBy)
		changed[name] = st
	}
	var gone []string
	for name := range f.served {
		if _, ok := entries[name]; !ok {
			f.undeployLocal(ctx, name)
			gone = append(gone, name)
		}
	}
	for name := range f.refused {
		if _, ok := entries[name]; !ok {
			delete(f.refused, name)
			gone = append(gone, name)
		}
	}
	f.report(ctx, changed, gone)
	return complete
}

// servesStaged reports whether the runtime serves name from its staged
// file. Called with f.mu held.
func (f *Fleet) servesStaged(name string) bool {
	for _, m := range f.rt.Modules() {
		if m.Name == name {
			return m.Path == f.stagedPath(name, f.served[name]) && len(m.Commands) > 0
		}
	}
	return false
}

// servingVersion is the manifest version the runtime serves for name, "".
func (f *Fleet) servingVersion(name string) string {
	for _, m := range f.rt.Modules() {
		if m.Name == name && len(m.Commands) > 0 {
			return m.Version
		}
	}
	return ""
}

// undeployLocal stops serving the deployed version of name: the commands
// folder's file of that name serves again if there is one, else the
// module is unloaded. Called with f.mu held.
func (f *Fleet) undeployLocal(ctx context.Context, name string) {
	defer f.unstage(name, f.served[name])
	delete(f.served, name)
	if f.cfg.Dir != "" {
		path := filepath.Join(f.cfg.Dir, name+".wasm")
		if _, err := os.Stat(path); err == nil {
			if _, err := f.rt.Load(ctx, path); err == nil {
				f.log.Info("module undeployed; the commands folder's file serves again", "module", name, "path", path)
				return
			}
		}
	}
	if err := f.rt.Unload(name); err != nil {
		f.log.Warn("undeployed module not unloaded", "module", name, "err", err)
	} else {
		f.log.Info("module undeployed", "module", name)
	}
}

// stagedPath is where the version sum of module name is staged: a folder
// per version, so that the file a proxy serves is always the version it
// serves (the runtime names a module after its file).
func (f *Fleet) stagedPath(name, sum string) string {
	return filepath.Join(f.staging, name+"-"+sum[:min(16, len(sum))], name+".wasm")
}

// unstage removes a version's staged file once it no longer serves.
func (f *Fleet) unstage(name, sum string) {
	if sum != "" {
		_ = os.RemoveAll(filepath.Dir(f.stagedPath(name, sum)))
	}
}

// stageAndLoad writes bin as the staged file of name's version sum and
// loads it; a refused version's file is removed.
func (f *Fleet) stageAndLoad(ctx context.Context, name, sum string, bin []byte) (module.ModuleInfo, error) {
	path := f.stagedPath(name, sum)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return module.ModuleInfo{}, fmt.Errorf("stage: %w", err)
	}
	if err := os.WriteFile(path, bin, 0o644); err != nil {
		return module.ModuleInfo{}, fmt.Errorf("stage: %w", err)
	}
	info, err := f.rt.Load(ctx, path)
	if err != nil && f.served[name] != sum {
		f.unstage(name, sum)
	}
	return info, err
}

// Deploy loads the module in path on this proxy (refusing it as MODULE
// LOAD would), then publishes it to the fleet: chunks first, then its
// index entry, then the previous version's chunks are deleted. A module
// refused here is not published.
func (f *Fleet) Deploy(ctx context.Context, path string) (Entry, error) {
	bin, err := os.ReadFile(path)
	if err != nil {
		return Entry{}, err
	}
	return f.DeployBytes(ctx, module.ModuleName(path), bin)
}

// DeployBytes is Deploy of a module's bytes under name.
func (f *Fleet) DeployBytes(ctx context.Context, name string, bin []byte) (Entry, error) {
	if err := checkName(name); err != nil {
		return Entry{}, err
	}
	if len(bin) > MaxModuleBytes {
		return Entry{}, fmt.Errorf("module is %d bytes, more than the %d a deploy takes", len(bin), MaxModuleBytes)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	sum := sha256.Sum256(bin)
	hexSum := hex.EncodeToString(sum[:])
	info, err := f.stageAndLoad(ctx, name, hexSum, bin)
	if err != nil {
		return Entry{}, fmt.Errorf("refused here, not deployed: %w", err)
	}
	if prev := f.served[name]; prev != hexSum {
		f.unstage(name, prev)
	}
	f.served[name] = hexSum // serving here, whatever the store says
	e, err := f.publish(ctx, name, bin, info.Version)
	if err != nil {
		return Entry{}, fmt.Errorf("loaded here but not deployed to the fleet: %w", err)
	}
	f.deploys.Add(1)
	delete(f.refused, name)
	f.sweep(ctx)
	f.report(ctx, map[string]Status{name: {Proxy: f.cfg.Proxy, Module: name, SHA256: e.SHA256, Version: info.Version,
		State: StateServing, At: time.Now().UnixMilli()}}, nil)
	f.log.Info("module deployed to the fleet", "module", name, "sha256", e.SHA256, "version", e.Version,
		"bytes", e.Size, "chunks", e.Chunks)
	return e, nil
}

// Publish writes bin as the deployed module name without loading it
// anywhere first: what DeployBytes does after its local load. Every
// proxy's next poll then validates it on its own. Tests use it to deploy a
// module no proxy accepts; an operator uses MODULE DEPLOY.
func Publish(ctx context.Context, st store.Store, name string, bin []byte, chunkBytes int, version, by string) (Entry, error) {
	f := &Fleet{st: st, cfg: Config{ChunkBytes: chunkBytes, Proxy: by}, log: slog.New(slog.DiscardHandler)}
	if f.cfg.ChunkBytes <= 0 {
		f.cfg.ChunkBytes = DefaultChunkBytes
	}
	f.cfg.defaults()
	return f.publish(ctx, name, bin, version)
}

func (f *Fleet) publish(ctx context.Context, name string, bin []byte, version string) (Entry, error) {
	start := time.Now()
	sum := sha256.Sum256(bin)
	e := Entry{Name: name, SHA256: hex.EncodeToString(sum[:]), Size: len(bin),
		Chunks: (len(bin) + f.cfg.ChunkBytes - 1) / f.cfg.ChunkBytes, Version: version,
		DeployedAt: start.UnixMilli(), DeployedBy: f.cfg.Proxy, Deploy: newDeployID()}
	// Pending first: chunks a failure or a crash leaves behind are swept.
	if err := f.setPending(ctx, e); err != nil {
		return Entry{}, fmt.Errorf("register the deploy: %w", err)
	}
	for i := 0; i < e.Chunks; i += chunksPerRequest {
		var calls []codec.Call
		for j := i; j < min(i+chunksPerRequest, e.Chunks); j++ {
			part := bin[j*f.cfg.ChunkBytes : min((j+1)*f.cfg.ChunkBytes, len(bin))]
			c := codec.Call{Key: []byte(e.ChunkKey(j))}
			c.Policy.Exists = codec.ExistsReplace
			c.Put(BinData, codec.Bytes(part))
			calls = append(calls, c)
		}
		if _, err := f.exec(ctx, calls...); err != nil {
			return Entry{}, fmt.Errorf("write chunk %d: %w", i, err)
		}
	}
	// A sweep deletes a pending deploy's chunks once it is ChunkGrace old
	// and not in the index: a deploy must commit well before.
	if took := time.Since(start); took > f.cfg.ChunkGrace/2 {
		return Entry{}, fmt.Errorf("writing the chunks took %v, more than half the %v after which unreferenced chunks are swept: not committed, deploy again", took.Round(time.Millisecond), f.cfg.ChunkGrace)
	}
	// The index entry is replaced and the one it replaces read in one
	// atomic call: of two deploys at once, each learns what it replaced,
	// so every replaced version's chunks are deleted by exactly the
	// deploy that replaced it.
	js, _ := json.Marshal(e)
	idx := codec.Call{Key: []byte(IndexKey)}
	key := []codec.Value{codec.Bytes([]byte(name))}
	idx.MapGetByKeys(BinIndex, codec.ReturnValue, key)
	idx.MapPut(BinIndex, codec.MapOrderKey, []codec.Value{key[0], codec.Bytes(js)})
	res, err := f.exec(ctx, idx)
	if err != nil && !errors.Is(err, errNotFound) {
		return Entry{}, fmt.Errorf("write the index: %w", err)
	}
	f.clearPending(ctx, e)
	if old, ok := replacedEntry(res); ok && !old.sameChunks(e) {
		f.deleteChunks(ctx, old)
	}
	return e, nil
}

// replacedEntry is the entry a call's first op (a MapGetByKeys of one key,
// ReturnValue) read, if any.
func replacedEntry(res []codec.Result) (Entry, bool) {
	if len(res) != 1 || len(res[0].Values) == 0 {
		return Entry{}, false
	}
	v := res[0].Values[0]
	if v.Kind != codec.KindList || len(v.List) != 1 || v.List[0].Kind != codec.KindBytes {
		return Entry{}, false
	}
	var e Entry
	if json.Unmarshal(v.List[0].Bytes, &e) != nil || e.SHA256 == "" {
		return Entry{}, false
	}
	return e, true
}

// Undeploy removes name from the fleet: every proxy stops serving its
// deployed version at its next poll (this one at once) and serves its
// commands folder's file of that name again, if it has one.
func (f *Fleet) Undeploy(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Removed and read in one call: the version removed is the one whose
	// chunks go, even if a deploy replaced the entry a moment before.
	idx := codec.Call{Key: []byte(IndexKey)}
	idx.MapRemoveByKeys(BinIndex, codec.ReturnValue, []codec.Value{codec.Bytes([]byte(name))})
	res, err := f.exec(ctx, idx)
	if err != nil && !errors.Is(err, errNotFound) {
		return fmt.Errorf("write the index: %w", err)
	}
	old, ok := replacedEntry(res)
	if !ok {
		return fmt.Errorf("no deployed module %q", name)
	}
	f.deleteChunks(ctx, old)
	f.undeploys.Add(1)
	f.sweep(ctx)
	if _, ok := f.served[name]; ok {
		f.undeployLocal(ctx, name)
	}
	delete(f.refused, name)
	f.report(ctx, nil, []string{name})
	f.log.Info("module undeployed from the fleet", "module", name, "sha256", old.SHA256)
	return nil
}

// deleteChunks removes a replaced version's chunks; a failure leaves
// garbage, not harm (logged).
func (f *Fleet) deleteChunks(ctx context.Context, e Entry) {
	f.swept.Add(1)
	for i := 0; i < e.Chunks; i += chunksPerRequest {
		var calls []codec.Call
		for j := i; j < min(i+chunksPerRequest, e.Chunks); j++ {
			c := codec.Call{Key: []byte(e.ChunkKey(j))}
			c.Delete()
			calls = append(calls, c)
		}
		if _, err := f.exec(ctx, calls...); err != nil && !errors.Is(err, errNotFound) {
			f.log.Warn("chunks of a replaced module version not deleted", "module", e.Name, "sha256", e.SHA256, "err", err)
			return
		}
	}
}

// fetch reads e's chunks and checks their size and hash.
func (f *Fleet) fetch(ctx context.Context, e Entry) ([]byte, error) {
	if e.Size < 0 || e.Size > MaxModuleBytes || e.Chunks <= 0 || e.Chunks > e.Size+1 {
		return nil, fmt.Errorf("index entry of %d bytes in %d chunks is not valid", e.Size, e.Chunks)
	}
	bin := make([]byte, 0, e.Size)
	for i := 0; i < e.Chunks; i += chunksPerRequest {
		var calls []codec.Call
		for j := i; j < min(i+chunksPerRequest, e.Chunks); j++ {
			c := codec.Call{Key: []byte(e.ChunkKey(j))}
			c.Get(BinData)
			calls = append(calls, c)
		}
		res, err := f.exec(ctx, calls...)
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w (a newer deploy may have replaced it)", i, err)
		}
		for _, r := range res {
			if len(r.Values) == 0 || r.Values[0].Kind != codec.KindBytes {
				return nil, errors.New("a chunk record has no data bin")
			}
			bin = append(bin, r.Values[0].Bytes...)
			if len(bin) > e.Size {
				return nil, fmt.Errorf("chunks hold more than the %d bytes of the index entry", e.Size)
			}
		}
	}
	sum := sha256.Sum256(bin)
	if len(bin) != e.Size || hex.EncodeToString(sum[:]) != e.SHA256 {
		return nil, fmt.Errorf("chunks hold %d bytes of hash %x, the index entry %d bytes of hash %s", len(bin), sum, e.Size, e.SHA256)
	}
	return bin, nil
}

// report writes this proxy's changed states into the status record and
// removes those of modules gone. Called with f.mu held.
func (f *Fleet) report(ctx context.Context, changed map[string]Status, gone []string) {
	if len(changed) == 0 && len(gone) == 0 {
		return
	}
	var calls []codec.Call
	if len(changed) > 0 {
		kv := make([]codec.Value, 0, 2*len(changed))
		for _, name := range sortedNames(changed) {
			st := changed[name]
			f.status[name] = st
			js, _ := json.Marshal(st)
			kv = append(kv, codec.Bytes([]byte(f.cfg.Proxy+" "+name)), codec.Bytes(js))
		}
		c := codec.Call{Key: []byte(StatusKey)}
		c.MapPut(BinStatus, codec.MapOrderKey, kv)
		calls = append(calls, c)
	}
	if len(gone) > 0 {
		keys := make([]codec.Value, len(gone))
		for i, name := range gone {
			delete(f.status, name)
			keys[i] = codec.Bytes([]byte(f.cfg.Proxy + " " + name))
		}
		c := codec.Call{Key: []byte(StatusKey)}
		c.MapRemoveByKeys(BinStatus, codec.ReturnNone, keys)
		calls = append(calls, c)
	}
	for _, c := range calls {
		if _, err := f.exec(ctx, c); err != nil && !errors.Is(err, errNotFound) {
			f.log.Warn("fleet status not written", "err", err)
		}
	}
}

// Fleet returns every proxy's state of every deployed module, as the
// status record holds them, sorted by proxy and module, each with its
// proxy's last heartbeat and whether that is older than StaleAfter.
func (f *Fleet) Fleet(ctx context.Context) ([]Status, error) {
	rec, err := f.readStatus(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixMilli()
	out := make([]Status, 0, len(rec.states))
	for _, s := range rec.states {
		s.LastSeen = rec.lastSeen(s.Proxy)
		s.Stale = now-s.LastSeen > f.cfg.StaleAfter.Milliseconds()
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Proxy != out[j].Proxy {
			return out[i].Proxy < out[j].Proxy
		}
		return out[i].Module < out[j].Module
	})
	return out, nil
}

// Deployed returns the index record's entries.
func (f *Fleet) Deployed(ctx context.Context) ([]Entry, error) {
	m, _, err := f.readIndex(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(m))
	for _, name := range sortedNames(m) {
		out = append(out, m[name])
	}
	return out, nil
}

// indexGeneration reads the index record's header: its generation, 0 when
// nothing was ever deployed.
func (f *Fleet) indexGeneration(ctx context.Context) (uint32, error) {
	c := codec.Call{Key: []byte(IndexKey)}
	c.Header()
	res, err := f.exec(ctx, c)
	if errors.Is(err, errNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return res[0].Generation, nil
}

// readIndex reads the index record: its entries and generation.
func (f *Fleet) readIndex(ctx context.Context) (map[string]Entry, uint32, error) {
	c := codec.Call{Key: []byte(IndexKey)}
	c.Get(BinIndex)
	res, err := f.exec(ctx, c)
	out := map[string]Entry{}
	if errors.Is(err, errNotFound) {
		return out, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if len(res[0].Values) == 1 && res[0].Values[0].Kind == codec.KindMap {
		items := res[0].Values[0].List
		for i := 0; i+1 < len(items); i += 2 {
			var e Entry
			if err := json.Unmarshal(items[i+1].Bytes, &e); err != nil {
				f.log.Warn("unreadable entry in the deployed modules' index", "module", string(items[i].Bytes), "err", err)
				continue
			}
			out[string(items[i].Bytes)] = e
		}
	}
	return out, res[0].Generation, nil
}

// errNotFound is a call's NotFound: an absent record.
var errNotFound = errors.New("record not found")

// exec runs calls in the system area and returns their results, or the
// first failure.
func (f *Fleet) exec(ctx context.Context, calls ...codec.Call) ([]codec.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := &codec.Request{Kind: codec.ReqRecords, Calls: calls}
	var resp codec.Response
	f.st.Exec(ctx, store.SystemDB, req, &resp)
	if resp.Code != codec.OK {
		return nil, fmt.Errorf("store: code %d: %s", resp.Code, resp.Msg)
	}
	if len(resp.Results) != len(calls) {
		return nil, fmt.Errorf("store: %d results for %d calls", len(resp.Results), len(calls))
	}
	for _, r := range resp.Results {
		switch r.Code {
		case codec.OK:
		case codec.NotFound:
			return resp.Results, errNotFound
		default:
			return nil, fmt.Errorf("store: code %d: %s", r.Code, r.Msg)
		}
	}
	return resp.Results, nil
}

// checkName refuses names that cannot be a module file's.
func checkName(name string) error {
	if name == "" || strings.ContainsAny(name, "/\\ \x00") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("module name %q is not valid", name)
	}
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
