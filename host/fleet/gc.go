package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// Leftovers of a fleet, and how they go.
//
// States of proxies that stopped: every proxy writes its last-seen time
// into the status record every Heartbeat (BinSeen). Fleet marks the states
// of a proxy unseen for StaleAfter stale, and each heartbeat removes the
// states of proxies unseen for ForgetAfter (with Kubernetes-style names a
// fleet's proxies come and go, and the record would grow without end). A
// proxy that comes back after being forgotten writes its states again at
// its next heartbeat. A proxy that stops cleanly removes its own (Leave).
//
// Chunks no index entry references: a deploy's chunks are replaced by a
// later deploy (the replacing deploy deletes them: it reads the entry it
// replaces in the same atomic call), or never committed (the deploy failed
// between its chunks and its index entry, or its proxy crashed). For
// those, a deploy first registers itself in the pending record and
// removes itself once committed; each heartbeat (and each deploy) sweeps
// the pending entries older than ChunkGrace that the index does not
// reference, deleting their chunks. A deploy that has not committed
// within ChunkGrace/2 gives up, so a sweep never deletes the chunks of a
// deploy that is about to commit, clocks a few minutes apart included.

// Defaults of Config's collection settings.
const (
	DefaultHeartbeat   = 10 * time.Second
	DefaultForgetAfter = time.Hour
	DefaultChunkGrace  = 10 * time.Minute
)

// defaults fills the zero settings.
func (c *Config) defaults() {
	if c.Heartbeat == 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.StaleAfter <= 0 {
		hb := c.Heartbeat
		if hb < 0 {
			hb = DefaultHeartbeat
		}
		c.StaleAfter = 3 * hb
	}
	if c.ForgetAfter == 0 {
		c.ForgetAfter = DefaultForgetAfter
	}
	if c.ChunkGrace <= 0 {
		c.ChunkGrace = DefaultChunkGrace
	}
}

// statusRecord is the status record as read: states by "<proxy> <module>",
// heartbeats by proxy.
type statusRecord struct {
	states map[string]Status
	seen   map[string]int64
}

// lastSeen is the proxy's last heartbeat, or, for a proxy that never
// wrote one (an older version), its newest state's time.
func (r statusRecord) lastSeen(proxy string) int64 {
	if ms, ok := r.seen[proxy]; ok {
		return ms
	}
	var last int64
	for _, s := range r.states {
		if s.Proxy == proxy && s.At > last {
			last = s.At
		}
	}
	return last
}

// readStatus reads the status record; an absent one is empty.
func (f *Fleet) readStatus(ctx context.Context) (statusRecord, error) {
	rec := statusRecord{states: map[string]Status{}, seen: map[string]int64{}}
	c := codec.Call{Key: []byte(StatusKey)}
	c.Get(BinStatus)
	c.Get(BinSeen)
	res, err := f.exec(ctx, c)
	if errors.Is(err, errNotFound) {
		return rec, nil
	}
	if err != nil {
		return rec, err
	}
	vals := res[0].Values
	if len(vals) > 0 && vals[0].Kind == codec.KindMap {
		items := vals[0].List
		for i := 0; i+1 < len(items); i += 2 {
			var s Status
			if json.Unmarshal(items[i+1].Bytes, &s) == nil {
				rec.states[string(items[i].Bytes)] = s
			}
		}
	}
	if len(vals) > 1 && vals[1].Kind == codec.KindMap {
		items := vals[1].List
		for i := 0; i+1 < len(items); i += 2 {
			if items[i+1].Kind == codec.KindInt {
				rec.seen[string(items[i].Bytes)] = items[i+1].Int
			}
		}
	}
	return rec, nil
}

// Heartbeat writes this proxy's last-seen time, writes its states again
// if they are missing (it was forgotten while away), forgets the proxies
// unseen for ForgetAfter, and sweeps uncommitted deploys. Run calls it
// every Heartbeat; failures are logged and the next one tries again.
func (f *Fleet) Heartbeat(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now().UnixMilli()
	c := codec.Call{Key: []byte(StatusKey)}
	c.MapPut(BinSeen, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte(f.cfg.Proxy)), codec.Int(now)})
	if _, err := f.exec(ctx, c); err != nil {
		if ctx.Err() == nil {
			f.log.Debug("fleet heartbeat not written", "err", err)
		}
		return
	}
	f.heartbeats.Add(1)
	rec, err := f.readStatus(ctx)
	if err != nil {
		f.log.Debug("fleet status not read", "err", err)
		return
	}
	missing := map[string]Status{}
	for name, st := range f.status {
		if _, ok := rec.states[f.cfg.Proxy+" "+name]; !ok {
			missing[name] = st
		}
	}
	f.report(ctx, missing, nil)
	if f.cfg.ForgetAfter > 0 {
		f.forget(ctx, rec, now)
	}
	f.sweep(ctx)
}

// forget removes the states and heartbeats of the proxies unseen for
// ForgetAfter. Called with f.mu held.
func (f *Fleet) forget(ctx context.Context, rec statusRecord, now int64) {
	limit := f.cfg.ForgetAfter.Milliseconds()
	gone := map[string]bool{}
	for _, st := range rec.states {
		if st.Proxy != f.cfg.Proxy && now-rec.lastSeen(st.Proxy) > limit {
			gone[st.Proxy] = true
		}
	}
	for proxy, ms := range rec.seen {
		if proxy != f.cfg.Proxy && now-ms > limit {
			gone[proxy] = true
		}
	}
	if len(gone) == 0 {
		return
	}
	var states, seen []codec.Value
	for key, st := range rec.states {
		if gone[st.Proxy] {
			states = append(states, codec.Bytes([]byte(key)))
		}
	}
	for proxy := range gone {
		seen = append(seen, codec.Bytes([]byte(proxy)))
	}
	c := codec.Call{Key: []byte(StatusKey)}
	if len(states) > 0 {
		c.MapRemoveByKeys(BinStatus, codec.ReturnNone, states)
	}
	c.MapRemoveByKeys(BinSeen, codec.ReturnNone, seen)
	if _, err := f.exec(ctx, c); err != nil && !errors.Is(err, errNotFound) {
		f.log.Warn("states of proxies gone not removed", "err", err)
		return
	}
	f.forgotten.Add(int64(len(gone)))
	for proxy := range gone {
		f.log.Info("proxy unseen for too long: its fleet states removed", "proxy", proxy,
			"unseen_for", time.Duration(now-rec.lastSeen(proxy))*time.Millisecond, "forget_after", f.cfg.ForgetAfter)
	}
}

// Leave removes this proxy's states and heartbeat from the status record:
// a proxy that stops cleanly is no longer part of the fleet.
func (f *Fleet) Leave(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	keys := make([]codec.Value, 0, len(f.status))
	for name := range f.status {
		keys = append(keys, codec.Bytes([]byte(f.cfg.Proxy+" "+name)))
	}
	c := codec.Call{Key: []byte(StatusKey)}
	if len(keys) > 0 {
		c.MapRemoveByKeys(BinStatus, codec.ReturnNone, keys)
	}
	c.MapRemoveByKeys(BinSeen, codec.ReturnNone, []codec.Value{codec.Bytes([]byte(f.cfg.Proxy))})
	if _, err := f.exec(ctx, c); err != nil && !errors.Is(err, errNotFound) {
		return fmt.Errorf("fleet: leave: %w", err)
	}
	clear(f.status)
	return nil
}

// pendingKey names a deploy in the pending record.
func pendingKey(e Entry) codec.Value {
	return codec.Bytes([]byte(e.Name + " " + e.SHA256 + " " + e.Deploy))
}

// setPending registers a deploy about to write its chunks.
func (f *Fleet) setPending(ctx context.Context, e Entry) error {
	js, _ := json.Marshal(e)
	c := codec.Call{Key: []byte(PendingKey)}
	c.MapPut(BinPending, codec.MapOrderKey, []codec.Value{pendingKey(e), codec.Bytes(js)})
	_, err := f.exec(ctx, c)
	return err
}

// clearPending removes a deploy from the pending record; a failure leaves
// it to a sweep, which finds it committed.
func (f *Fleet) clearPending(ctx context.Context, e Entry) {
	c := codec.Call{Key: []byte(PendingKey)}
	c.MapRemoveByKeys(BinPending, codec.ReturnNone, []codec.Value{pendingKey(e)})
	if _, err := f.exec(ctx, c); err != nil && !errors.Is(err, errNotFound) {
		f.log.Debug("pending deploy not cleared", "module", e.Name, "sha256", e.SHA256, "err", err)
	}
}

// sweep deletes the chunks of the pending deploys older than ChunkGrace
// that the index does not reference, and forgets those it does.
func (f *Fleet) sweep(ctx context.Context) {
	c := codec.Call{Key: []byte(PendingKey)}
	c.Get(BinPending)
	res, err := f.exec(ctx, c)
	if err != nil {
		if !errors.Is(err, errNotFound) {
			f.log.Debug("pending deploys not read", "err", err)
		}
		return
	}
	var old []Entry
	before := time.Now().Add(-f.cfg.ChunkGrace).UnixMilli()
	if v := res[0].Values; len(v) == 1 && v[0].Kind == codec.KindMap {
		items := v[0].List
		for i := 0; i+1 < len(items); i += 2 {
			var e Entry
			if json.Unmarshal(items[i+1].Bytes, &e) != nil || e.SHA256 == "" {
				continue
			}
			if e.DeployedAt < before {
				old = append(old, e)
			}
		}
	}
	if len(old) == 0 {
		return
	}
	// Read after the pending record: an entry older than ChunkGrace that
	// committed did so at most ChunkGrace/2 after it began, before this.
	index, _, err := f.readIndex(ctx)
	if err != nil {
		return
	}
	for _, e := range old {
		if cur, ok := index[e.Name]; !ok || !cur.sameChunks(e) {
			f.deleteChunks(ctx, e)
			f.log.Info("chunks of a deploy that never committed deleted", "module", e.Name, "sha256", e.SHA256,
				"deployed_by", e.DeployedBy, "began", time.UnixMilli(e.DeployedAt))
		}
		f.clearPending(ctx, e)
	}
}
