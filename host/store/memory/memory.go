// Package memory is respike's embedded record store: the operation
// vocabulary of codec.Request with Aerospike's semantics (generation, TTL,
// exists policies, the type guard, map operations, partitioned scans), held
// in process memory. It lets `make run` work with no database and lets every
// command test run in CI.
//
// Where this package says "Aerospike does X", X was read in the Aerospike CE
// 8.1.2 server source (as/src/transaction/write.c, as/src/base/particle_map.c,
// as/src/base/cdt.c, cf/src/msgpack_in.c) unless DESIGN.md lists it as
// observed.
package memory

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Options configures a Store. The zero value is a good default.
type Options struct {
	// Databases is the number of numbered databases; 16 when zero.
	Databases int
	// Now is the clock; time.Now when nil. Tests inject a fake clock.
	Now func() time.Time
	// SweepInterval is how often expired records are reclaimed in the
	// background; 100ms when zero, never when negative (expired records
	// are then still invisible, and reclaimed when next touched).
	SweepInterval time.Duration
	// MaxRecordBytes bounds a record's approximate size (key, bin names and
	// values); a write beyond it fails with RecordTooBig. 8 MiB when zero,
	// Aerospike's default write-block size.
	MaxRecordBytes int
}

const (
	defaultDatabases      = 16
	defaultSweepInterval  = 100 * time.Millisecond
	defaultMaxRecordBytes = 8 << 20

	// Keys hash into 4096 partitions, as Aerospike's do, so that a scan
	// cursor is a partition number. Partition p lives in shard p%nShards.
	nPartitions   = 4096
	nShards       = 64
	slotsPerShard = nPartitions / nShards

	// maxTTL is Aerospike's MAX_ALLOWED_TTL (10 years); a longer TTL is a
	// parameter error there.
	maxTTL = 10 * 365 * 24 * 3600
	// maxBinName is Aerospike's bin name limit.
	maxBinName = 15
)

// Store is the embedded store. It is safe for concurrent use; calls on keys
// in different shards never contend.
type Store struct {
	dbs       []db
	sys       db // store.SystemDB: not a numbered database
	now       func() time.Time
	maxRecord int

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	// afterSweep, when set, runs after every background sweep pass (tests).
	afterSweep func()
}

type db struct {
	shards [nShards]shard
}

// shard is one lock's worth of a database: the records of 64 partitions.
type shard struct {
	mu sync.Mutex
	// parts holds one map per partition, created on first use.
	parts [slotsPerShard]map[string]*record
	// expiring holds the records that have an expiry, for the sweeper and
	// for counting.
	expiring map[string]*record
	// n counts the records in parts, expired or not.
	n int
	// cx is the scratch state of the call being run; guarded by mu.
	cx callCtx
}

// record is one stored record. Its fields change only under its shard's
// lock. Byte slices inside bin values are never written after they are
// stored, so values handed to callers stay valid; map bins are mutated in
// place and are always copied out. Every list value the store returns at
// the top of a result is a fresh array (never a stored one), which is what
// lets a later list read on the same Response reuse it.
type record struct {
	key     string
	slot    int   // index of its partition map in the shard
	bins    []bin // sorted by name
	inline  [2]bin
	gen     uint32
	expires int64 // unix nanoseconds; 0 = never
}

// bin is one named value. A map bin keeps its items in m and has
// val.Kind == KindMap with val.List unused; a list bin keeps its items in l
// and has val.Kind == KindList with val.List unused.
type bin struct {
	name string
	val  codec.Value
	m    *omap
	l    *olist
	// own is set on a blob that OpHLLRaise made and that no read has
	// handed out since (binValue clears it): the next raise may change
	// it in place instead of copying 12 KB (the garbage of one copy per
	// PFADD that raised a register was most of its cost).
	own bool
}

// New returns a store, and starts its expiry sweeper unless
// opts.SweepInterval < 0. Close stops the sweeper.
func New(opts Options) *Store {
	return newStore(opts, nil)
}

func newStore(opts Options, afterSweep func()) *Store {
	if opts.Databases <= 0 {
		opts.Databases = defaultDatabases
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SweepInterval == 0 {
		opts.SweepInterval = defaultSweepInterval
	}
	if opts.MaxRecordBytes <= 0 {
		opts.MaxRecordBytes = defaultMaxRecordBytes
	}
	s := &Store{
		dbs:        make([]db, opts.Databases),
		now:        opts.Now,
		maxRecord:  opts.MaxRecordBytes,
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
		afterSweep: afterSweep,
	}
	if opts.SweepInterval > 0 {
		go s.sweeper(opts.SweepInterval)
	} else {
		close(s.done)
	}
	return s
}

// Inline reports true: Exec never waits on I/O.
func (s *Store) Inline() bool { return true }

// Close stops the expiry sweeper. The store stays usable; expired records
// are then reclaimed only when touched.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

// Exec runs req against database dbIndex and fills resp, reusing its slices.
func (s *Store) Exec(ctx context.Context, dbIndex int, req *codec.Request, resp *codec.Response) {
	resp.Code, resp.Msg = codec.OK, ""
	resp.Results = resp.Results[:0]
	resp.Scan.Cursor = 0
	resp.Scan.Keys = resp.Scan.Keys[:0]
	resp.Scan.Types = resp.Scan.Types[:0]
	resp.Count = 0
	if err := ctx.Err(); err != nil {
		resp.Code, resp.Msg = codec.Timeout, "memory: "+err.Error()
		return
	}
	if req.Kind == codec.ReqTruncate && req.AllDBs {
		for i := range s.dbs {
			s.dbs[i].truncate()
		}
		return
	}
	var d *db
	switch {
	case dbIndex == store.SystemDB:
		d = &s.sys
	case dbIndex < 0 || dbIndex >= len(s.dbs):
		resp.Code, resp.Msg = codec.InvalidOperation, "memory: database index out of range"
		return
	default:
		d = &s.dbs[dbIndex]
	}
	now := &instant{now: s.now}
	switch req.Kind {
	case codec.ReqRecords:
		s.execRecords(d, req.Calls, resp, now)
	case codec.ReqScan:
		d.scan(&req.Scan, &resp.Scan, now)
	case codec.ReqCount:
		resp.Count = d.count(now)
	case codec.ReqTruncate:
		d.truncate()
	default:
		resp.Code, resp.Msg = codec.InvalidOperation, "memory: unknown request kind"
	}
}

func (s *Store) execRecords(d *db, calls []codec.Call, resp *codec.Response, now *instant) {
	n := len(calls)
	if cap(resp.Results) < n {
		// Keep the old Results so their Values slices are reused.
		grown := make([]codec.Result, n)
		copy(grown, resp.Results[:cap(resp.Results)])
		resp.Results = grown
	}
	resp.Results = resp.Results[:n]
	for i := range calls {
		s.execCall(d, &calls[i], &resp.Results[i], now)
	}
}

// partition returns the partition of a key: a 64-bit FNV-1a hash with a
// final avalanche, so that the low 12 bits are well mixed. It must never
// change within a process: scan cursors are partition numbers.
func partition(key []byte) int {
	h := uint64(14695981039346656037)
	for _, c := range key {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return int(h & (nPartitions - 1))
}

func (d *db) locate(key []byte) (*shard, int) {
	p := partition(key)
	return &d.shards[p%nShards], p / nShards
}

// lookup returns the live record under key, reclaiming it if it expired.
// The shard must be locked.
func (sh *shard) lookup(slot int, key []byte, now *instant) *record {
	m := sh.parts[slot]
	if m == nil {
		return nil
	}
	r := m[string(key)]
	if r != nil && r.expires != 0 && r.expires <= now.get() {
		sh.remove(r)
		return nil
	}
	return r
}

// remove deletes a record. The shard must be locked.
func (sh *shard) remove(r *record) {
	delete(sh.parts[r.slot], r.key)
	if r.expires != 0 {
		delete(sh.expiring, r.key)
	}
	sh.n--
}

// insert adds a new record. The shard must be locked.
func (sh *shard) insert(r *record) {
	m := sh.parts[r.slot]
	if m == nil {
		m = make(map[string]*record)
		sh.parts[r.slot] = m
	}
	m[r.key] = r
	if r.expires != 0 {
		sh.setExpiring(r)
	}
	sh.n++
}

func (sh *shard) setExpiring(r *record) {
	if sh.expiring == nil {
		sh.expiring = make(map[string]*record)
	}
	sh.expiring[r.key] = r
}

// instant is the time of one request. It reads the clock at most once,
// and only when an expiry is involved: most records never expire, and on
// some machines reading the clock costs as much as the rest of a GET.
type instant struct {
	now func() time.Time
	ns  int64
	ok  bool
}

func (t *instant) get() int64 {
	if !t.ok {
		t.ns, t.ok = t.now().UnixNano(), true
	}
	return t.ns
}

// ttl is what Result.TTL reports for an expiry: whole seconds left, rounded
// up, or -1 for never. An exact expiry (TTLAt) more than ten years ahead
// reports -1, as on Aerospike, whose own TTL cannot reach it: the exact
// time is in codec.BinExpire.
func ttl(expires int64, now *instant) int64 {
	if expires == 0 {
		return -1
	}
	left := expires - now.get()
	if left <= 0 {
		return 0
	}
	secs := (left + int64(time.Second) - 1) / int64(time.Second)
	if secs > maxTTL {
		return -1
	}
	return secs
}

// msToNanos turns an exact expiry in Unix milliseconds into the record's
// expires (Unix nanoseconds), saturating past the year 2262.
func msToNanos(ms int64) int64 {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	return ms * int64(time.Millisecond)
}
