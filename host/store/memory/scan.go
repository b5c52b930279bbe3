package memory

import (
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// scan fills one page: the keys of whole partitions, from the partition the
// cursor names, until at least Count keys (10 when Count <= 0) or the last
// partition. The returned cursor is the next partition, 0 when done; as it
// is never 0 mid-scan, cursor 0 can also mean "start". A key that lives
// through the whole scan is returned exactly once.
func (d *db) scan(args *codec.ScanArgs, page *codec.ScanPage, now *instant) {
	want := int(args.Count)
	if args.Count <= 0 {
		want = 10
	}
	if args.Cursor >= nPartitions {
		return // a stale or foreign cursor: nothing left
	}
	// One buffer holds the page's keys: one allocation per page.
	var buf []byte
	p := int(args.Cursor)
	for ; p < nPartitions && len(page.Keys) < want; p++ {
		sh := &d.shards[p%nShards]
		slot := p / nShards
		sh.mu.Lock()
		for k, r := range sh.parts[slot] {
			if r.expires != 0 && r.expires <= now.get() {
				sh.remove(r)
				continue
			}
			if cap(buf)-len(buf) < len(k) {
				buf = make([]byte, 0, max(4096, 2*len(k)))
			}
			start := len(buf)
			buf = append(buf, k...)
			page.Keys = append(page.Keys, buf[start:len(buf):len(buf)])
			if args.WithType {
				var t []byte
				if b := findBin(r.bins, codec.BinType); b != nil && b.m == nil {
					t = b.val.Bytes // never written once stored
				}
				page.Types = append(page.Types, t)
			}
		}
		sh.mu.Unlock()
	}
	if p < nPartitions {
		page.Cursor = uint64(p)
	}
}

// count returns the number of live records, reclaiming expired ones.
func (d *db) count(now *instant) int64 {
	var n int64
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		if len(sh.expiring) != 0 {
			sh.sweep(now.get(), -1)
		}
		n += int64(sh.n)
		sh.mu.Unlock()
	}
	return n
}

// truncate deletes every record.
func (d *db) truncate() {
	for i := range d.shards {
		sh := &d.shards[i]
		sh.mu.Lock()
		clear(sh.parts[:])
		sh.expiring = nil
		sh.n = 0
		sh.mu.Unlock()
	}
}

// sweep removes expired records, looking at no more than budget records
// with an expiry (all of them when budget < 0). It reports how many it
// looked at and removed. The shard must be locked.
func (sh *shard) sweep(now int64, budget int) (looked, removed int) {
	for _, r := range sh.expiring {
		if budget >= 0 && looked == budget {
			break
		}
		looked++
		if r.expires <= now {
			sh.remove(r)
			removed++
		}
	}
	return looked, removed
}

// sweepSlice is how many records with an expiry one lock hold looks at.
const sweepSlice = 256

// sweepOnce makes one active-expiry pass over every shard of every
// database, in slices of sweepSlice records per lock hold, in the manner of
// Redis's active expiry: a shard is revisited while a slice finds mostly
// expired records, and left as soon as one does not.
func (s *Store) sweepOnce() {
	now := s.now().UnixNano()
	for i := range s.dbs {
		for j := range s.dbs[i].shards {
			sh := &s.dbs[i].shards[j]
			for {
				sh.mu.Lock()
				total := len(sh.expiring)
				looked, removed := sh.sweep(now, sweepSlice)
				sh.mu.Unlock()
				if looked == total || removed < looked/4 {
					break
				}
			}
		}
	}
}

func (s *Store) sweeper(every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sweepOnce()
			if s.afterSweep != nil {
				s.afterSweep()
			}
		}
	}
}
