// Package store defines the record store that command modules reach through
// the host: one operation vocabulary (codec.Request) that the embedded memory
// backend and the Aerospike backend implement with the same semantics.
package store

import (
	"context"
	"sync"

	"github.com/respike/respike/guest-sdk/codec"
)

// Store executes module requests against one keyspace of numbered databases.
// Implementations are safe for concurrent use.
type Store interface {
	// Exec runs req against database db and fills resp, reusing its slices.
	// A failure of the whole request (backend unreachable, timeout) is
	// reported in resp.Code and resp.Msg; per-record outcomes in
	// resp.Results[i].Code. Each Call is atomic on its record; Calls of one
	// request are not atomic together.
	Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response)
	// Inline reports whether Exec never waits on I/O, so that the host may
	// run it while it holds a module instance and save a guest round trip.
	Inline() bool
	// Close releases the store's resources.
	Close() error
}

// SystemDB is the database index of the store's system area: records that
// respike keeps for itself (the modules deployed to a fleet of proxies,
// host/fleet) beside the numbered databases and out of their reach. No
// client command can address it (database indexes are never negative), and
// no database's scan, count or truncate, FLUSHALL included, sees its
// records. On Aerospike it is the set "<set>_sys" (docs/data-model.md).
// It is far from -1 so that an index computed wrongly stays an error
// rather than reaching it.
const SystemDB = -1 << 20

// Stat is one counter a store reports in INFO stats, as store_<Name>.
type Stat struct {
	Name  string
	Value uint64
}

// Statser is implemented by stores that count their own work (calls to a
// remote cluster, records per call), so that INFO shows how commands
// reach the backend.
type Statser interface {
	Stats() []Stat
}

// Op is one request of ExecMany: Exec's arguments.
type Op struct {
	Ctx  context.Context
	DB   int
	Req  *codec.Request
	Resp *codec.Response
}

// Batcher is implemented by stores that run several requests ready at the
// same moment together (Aerospike: in shared batch calls), cheaper than
// as many Execs on as many goroutines.
type Batcher interface {
	// ExecMany runs every op as Exec would and returns when all have
	// answered. The ops may run in any order or together: the caller
	// never passes two whose order matters.
	ExecMany(ops []Op)
}

// ExecMany runs ops on st together: through st's own ExecMany when it is a
// Batcher, else each on a goroutine of its own (the first on the caller's),
// so that a store that waits answers them in the time of one.
func ExecMany(st Store, ops []Op) {
	switch {
	case len(ops) == 0:
		return
	case len(ops) == 1:
		o := &ops[0]
		st.Exec(o.Ctx, o.DB, o.Req, o.Resp)
		return
	}
	if b, ok := st.(Batcher); ok {
		b.ExecMany(ops)
		return
	}
	ExecEach(st, ops)
}

// ExecEach runs ops on st each on a goroutine of its own (the first on the
// caller's), and returns when all have answered: ExecMany for a store that
// is no Batcher.
func ExecEach(st Store, ops []Op) {
	if len(ops) == 0 {
		return
	}
	var wg sync.WaitGroup
	for i := 1; i < len(ops); i++ {
		wg.Add(1)
		go func(o *Op) {
			defer wg.Done()
			st.Exec(o.Ctx, o.DB, o.Req, o.Resp)
		}(&ops[i])
	}
	o := &ops[0]
	st.Exec(o.Ctx, o.DB, o.Req, o.Resp)
	wg.Wait()
}
