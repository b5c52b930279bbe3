// Package module runs command modules: it compiles and instantiates .wasm
// files with wazero, validates their ABI version and manifest, keeps a small
// set of instances per module, and drives the continuation ABI: it starts a
// command on an instance, performs the store requests the guest returns with
// no instance held, and resumes the guest with the results.
package module

import (
	"context"
	"log/slog"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Config configures a Runtime.
type Config struct {
	// Dir is the folder of command modules (*.wasm).
	Dir string
	// CacheDir holds wazero's compilation cache; "" disables it.
	CacheDir string
	// Instances is the number of instances per module; 0 means two per
	// GOMAXPROCS.
	Instances int
	// Deadline bounds the guest CPU time of one call into a module; a guest
	// that exceeds it is stopped, its instance replaced, and its command
	// answers an error.
	Deadline time.Duration
	// MemoryLimitMiB caps each instance's linear memory.
	MemoryLimitMiB int
	// IdleTimeout releases the instances of a module unused this long,
	// down to one per module (reap.go); 0 keeps them all.
	IdleTimeout time.Duration
	// RecycleMiB replaces an instance whose linear memory grew past it
	// once its call ends (wasm memory never shrinks); 0 never does.
	RecycleMiB int
	// Reserved reports names the host serves itself; a module claiming one
	// is refused.
	Reserved func(name string) bool
	// Databases is the number of databases (0..Databases-1) a command
	// may address in a request of its own (codec.Request.OtherDB); 0 does
	// not check.
	Databases int
	// NoInline disables running store requests inside the guest call even
	// when the store allows it (tests use it to exercise the resume path).
	NoInline bool
	// Logger receives load, swap and trap events.
	Logger *slog.Logger
}

// Command is a command served by a loaded module.
type Command struct {
	// Info is the command's manifest entry.
	Info codec.CommandInfo
	// Module is the name of the module serving it.
	Module string

	impl   any    // the module version serving it (set by runtime.go)
	index  uint32 // its position in the module's manifest
	writes bool   // flagged "write": it may change the store
}

// Item is one command of a pipeline run by ExecBatch.
type Item struct {
	// Cmd is the command, Start its start message (Args[0] is the name as
	// the client sent it).
	Cmd   *Command
	Start codec.Start
	// End is set by ExecBatch: the length of its output once this
	// command's reply was appended.
	End int
	// Ended is set by ExecBatch: Clock as read when the guest call that
	// replied to this command returned, for a command that ran alone
	// and replied in its guest call; 0 otherwise. A caller timing the
	// command can take it for its end instead of reading the clock
	// again: on a virtual machine a clock read costs 100–200 ns, ~1% of
	// an unpipelined command (docs/performance.md, "The fixed cost of a
	// command").
	Ended int64
}

// Block receives what a blocking command waits for: a command that answers
// codec.StatusBlock (sdk.Ctx.Block) has ended on the module's side without
// a reply, and the caller parks the client, then runs the command again
// (ExecBlock) once one of Keys is written, or answers Reply when Timeout
// passes. A Block is reused: its slices are valid until its next use.
type Block struct {
	// Blocked reports that the command blocked; the fields below are set
	// only then.
	Blocked bool
	// Index is the position in ExecBatch's items of the command that
	// blocked; the items after it have not run.
	Index int
	// Block holds the Timeout (how long the command may wait, counted from
	// its first block; 0 means no limit), the Keys to wait on (in the
	// command's database) and the Reply the client gets when the timeout
	// passes.
	codec.Block

	buf []byte // holds Keys and Reply
}

// ModuleInfo describes a loaded module for MODULE LIST and INFO modules.
type ModuleInfo struct {
	Name     string // file name without .wasm
	Version  string // from the manifest
	Path     string
	Commands []string
	LoadedAt time.Time
	// LoadDuration is how long loading the serving version took, from
	// reading its file to serving it: compile, instantiate, validate.
	LoadDuration time.Duration
	// Swaps counts the new file versions that replaced a serving one.
	Swaps int64
	// LastError is the reason the newest file version was refused, if it was.
	LastError string
	// Traps counts the instances discarded because a call trapped or
	// failed; DeadlineKills those discarded for exceeding the deadline;
	// GuestTime is the wall-clock time of calls into the module's
	// instances: the guest's code, the host functions it calls meanwhile
	// (store requests run inline, their responses laid out in guest
	// memory), and any time the thread was descheduled during a call, so
	// on a busy CPU it exceeds the CPU time (docs/performance.md,
	// "GEOSEARCH, fifth pass"). All three add up every version of the
	// module since the runtime started.
	Traps, DeadlineKills int64
	GuestTime            time.Duration
	// LogLines counts the guest log lines written, LogDropped those the
	// rate limit dropped.
	LogLines, LogDropped int64
	// Instances is the number of instances of the serving version and
	// MemoryBytes their linear memory, as of their last calls' ends.
	Instances   int
	MemoryBytes int64
	// IdleReleases counts instances released for being idle
	// (Config.IdleTimeout), MemoryRecycles those replaced for their
	// memory (Config.RecycleMiB), over every version of the module.
	IdleReleases, MemoryRecycles int64
}

// Stats counts what happened to modules since the runtime started.
type Stats struct {
	Loads    int64 // a module started serving where none of its name did
	Swaps    int64 // a new version replaced a serving one
	Refusals int64 // a file was refused; the previous state kept serving
	Unloads  int64 // a serving module was removed
	// Draining is the number of replaced or unloaded versions that still
	// run commands; each closes its instances when its last command ends.
	Draining int64
	// Waits counts store requests a module returned to wait on, to be
	// resumed once the store answered: every request on a store that can
	// block (Aerospike); on the embedded store, none (they run inline).
	Waits int64
	// Batches counts guest calls that ran several commands of a pipeline
	// (ExecBatch); Batched counts the commands they ran.
	Batches, Batched int64
	// GateWaits counts store requests that queued behind a key's
	// contention gate (gate.go): requests of commands that had lost a
	// race for the key, while another such command held it.
	GateWaits int64
	// Finals counts commands that ended with a final answer
	// (codec.StatusFinal): the host answered them from the store's result
	// by their recipe, with no second entry into the module. Restarts
	// counts those whose recipe ran them again from the start.
	Finals, Restarts int64
}

// Runtime holds the loaded modules. Its methods are safe for concurrent use.
// The method set (implemented in runtime.go):
//
//	New(ctx, cfg, st) (*Runtime, error)
//	(*Runtime).LoadDir(ctx) error                     // load every *.wasm in cfg.Dir; bad files are logged and skipped
//	(*Runtime).Load(ctx, path string) (ModuleInfo, error) // load or replace one module (MODULE LOAD, hot swap)
//	(*Runtime).Unload(name string) error              // remove a module and its commands
//	(*Runtime).Lookup(name []byte) *Command            // case-insensitive; nil when unknown; lock-free
//	(*Runtime).Commands() []*Command                  // every served command, sorted by name
//	(*Runtime).Modules() []ModuleInfo                 // sorted by name
//	(*Runtime).Stats() Stats                          // load, swap and refusal counts
//	(*Runtime).Exec(ctx, cmd *Command, start *codec.Start, out []byte) []byte
//	(*Runtime).ExecBlock(ctx, cmd, start, out, blk *Block) []byte // a command that may block
//	(*Runtime).ExecBatch(ctx, items []Item, out []byte, blk *Block) []byte // a pipeline: fewer guest calls
//	(*Runtime).Close(ctx) error
//
// Exec runs cmd with start (Args[0] is the name as the client sent it) and
// appends the RESP reply to out. It performs the command's store requests on
// the calling goroutine and returns when the command has replied or failed;
// when ctx is done it cancels the command and appends an error. It never
// panics because of a module. The caller has checked arity. A command that
// blocks answers the reply it gives when its timeout passes, as a blocking
// command does inside MULTI; ExecBlock reports the block instead.
//
// A command stops early (answering "-ERR command cancelled: the client went
// away") only before its first store request that writes: when ctx is done,
// or when the check attached with WithGone reports its client gone. From
// its first write on it runs to its end, so a multi-step write (RENAME,
// SMOVE, MSETNX) is finished or never started, whatever its client does.

// goneKey keys the client check in a context (WithGone).
type goneKey struct{}

// WithGone returns ctx carrying gone, which reports whether the client of
// the commands run under it has gone away. With dead set it asks whether
// the connection can no longer carry a reply (reset, or closed by the
// server); without, a client that closed its sending side (end of file)
// counts as gone too. Exec and ExecBatch call it before each store request
// of a command that has not written yet, with dead set for commands that
// may write: a client that sends a write and then closes its side (`nc -N`)
// still has it applied, as Redis applies every command it has read, while
// its pending reads are dropped. The server attaches one per connection.
func WithGone(ctx context.Context, gone func(dead bool) bool) context.Context {
	return context.WithValue(ctx, goneKey{}, gone)
}

// Gone reports what the client check attached to ctx (WithGone) says, for
// dead as there; false without one.
func Gone(ctx context.Context, dead bool) bool {
	g, _ := ctx.Value(goneKey{}).(func(bool) bool)
	return g != nil && g(dead)
}

// Guard sees, and may add conditions to, every store request of the
// commands run under a context made by WithGuard: the server's EXEC uses
// one to make the writes of a transaction conditional on its watched keys'
// generations. Its methods run on the goroutine that runs the command.
type Guard interface {
	// Before is called before rq runs against database db; it may change
	// the calls' policies. When it returns false the request does not run
	// and the command gets a request failure (codec.BackendError).
	Before(db int, rq *codec.Request) bool
	// After sees the response of a request that Before let run.
	After(db int, rq *codec.Request, resp *codec.Response)
}

// guardCtx is a context carrying a Guard. It is found by a type assertion,
// not ctx.Value: the check runs on every store request of every command.
type guardCtx struct {
	context.Context
	g Guard
}

// WithGuard returns ctx carrying g: Exec, ExecBlock and ExecBatch called
// with it pass each store request of their commands through g. The context
// must be passed as returned (not wrapped further) for g to be found.
func WithGuard(ctx context.Context, g Guard) context.Context {
	return &guardCtx{Context: ctx, g: g}
}

// GuardOf returns the Guard ctx carries (WithGuard), nil when none; for
// stand-ins of the Runtime, which must honour it as Exec does.
func GuardOf(ctx context.Context) Guard { return guardOf(ctx) }

// guardOf returns the Guard ctx carries, nil when none.
func guardOf(ctx context.Context) Guard {
	if gc, ok := ctx.(*guardCtx); ok {
		return gc.g
	}
	return nil
}

// errGuardRefused is the request failure a Guard's refusal answers.
const errGuardRefused = "transaction aborted: a watched key changed"

// storeExec runs rq on the store, through g when there is one.
func (r *Runtime) storeExec(ctx context.Context, g Guard, db int, rq *codec.Request, resp *codec.Response) {
	op, ok := r.storeOp(ctx, db, rq, resp)
	if !ok {
		return
	}
	if g == nil {
		r.st.Exec(op.Ctx, op.DB, rq, resp)
		return
	}
	if !g.Before(op.DB, rq) {
		failResponse(resp, codec.BackendError, errGuardRefused)
		return
	}
	r.st.Exec(op.Ctx, op.DB, rq, resp)
	g.After(op.DB, rq, resp)
}

// storeOp is rq as the store runs it, on database db unless the request
// addresses another (MOVE, COPY ... DB); false when it is answered here,
// in resp (a database out of range).
func (r *Runtime) storeOp(ctx context.Context, db int, rq *codec.Request, resp *codec.Response) (store.Op, bool) {
	if rq.Kind == codec.ReqRecords && rq.OtherDB {
		db = requestDB(db, rq)
		if r.cfg.Databases > 0 && db >= r.cfg.Databases {
			failResponse(resp, codec.ParameterError, codec.ErrDBRange)
			return store.Op{}, false
		}
	}
	return store.Op{Ctx: ctx, DB: db, Req: rq, Resp: resp}, true
}

// requestDB is the database a records request rq runs in for a command in
// db: its own when it addresses another (MOVE, COPY ... DB).
func requestDB(db int, rq *codec.Request) int {
	if rq.OtherDB {
		return int(rq.DB)
	}
	return db
}

// failResponse answers a request that did not run with code and msg.
func failResponse(resp *codec.Response, code codec.Code, msg string) {
	resp.Code, resp.Msg = code, msg
	resp.Results = resp.Results[:0]
	resp.Scan = codec.ScanPage{Keys: resp.Scan.Keys[:0], Types: resp.Scan.Types[:0]}
	resp.Count = 0
}
