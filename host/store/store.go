// Package store defines the record store that command modules reach through
// the host: one operation vocabulary (codec.Request) that the embedded memory
// backend and the Aerospike backend implement with the same semantics.
package store

import (
	"context"

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
