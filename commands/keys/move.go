package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "move", Arity: 3, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Moves a key to another database.",
		Run:     runMove,
	})
}

// moveOp is one MOVE in flight; it lives in the closures of its steps.
type moveOp struct {
	db     int
	srcGen uint32 // the source's generation as read
	dstGen uint32 // the destination's generation after this command's write
}

// runMove: MOVE key db. A database is an Aerospike set: the key is two
// records, and the move is done in steps as RENAME's (rename.go), each
// atomic on one record:
//
//  1. the destination is looked up in the target database (a database
//     the server does not have fails here, as Redis checks it first); an
//     existing one answers 0;
//  2. every bin of the source is read, with its generation and TTL;
//  3. the bins are written to the target database create-only, with the
//     source's exact expiry (kit.CopyBins) and a pending mark
//     (kit.PendingBin); a destination created since (1) answers 0;
//  4. the source is deleted guarded by the generation read in (2): the
//     commit point; then the mark is taken off. If the source changed or
//     went away, the destination written in (3) is deleted (guarded by the
//     generation (3) produced) and the command starts over.
func runMove(c *sdk.Ctx) {
	db, ok := parseDB(c, c.Arg(2))
	if !ok {
		return
	}
	if db == c.DB() {
		c.Error("ERR source and destination objects are the same")
		return
	}
	moveStart(c, &moveOp{db: db})
}

// parseDB parses the database of MOVE and COPY ... DB as Redis does
// (getIntFromObjectOrReply, then selectDb), or replies the error. A
// database the SDK can address but the server does not have is refused
// by the host at the first request (sdk.Ctx.ExecDB).
func parseDB(c *sdk.Ctx, arg []byte) (int, bool) {
	db, ok := kit.ParseInt(arg)
	switch {
	case !ok:
		c.Error(kit.NotInt)
	case db < -1<<31 || db >= 1<<31:
		c.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
	case db < 0 || db >= 1<<16:
		c.Error(codec.ErrDBRange)
	default:
		return int(db), true
	}
	return 0, false
}

func moveStart(c *sdk.Ctx, op *moveOp) {
	c.Record(c.Arg(1)).Get(kit.PendingBin)
	c.ExecDB(op.db, func(c *sdk.Ctx) {
		switch r := c.Result(0); r.Code {
		case codec.OK:
			if kit.Pending(r.Value(0)) {
				moveRetry(c, op) // another MOVE may still take it back
				return
			}
			c.Reply().Int(0)
		case codec.NotFound:
			c.Record(c.Arg(1)).Get("")
			c.Exec(func(c *sdk.Ctx) { moveRead(c, op) })
		default:
			kit.StoreError(c, r)
		}
	})
}

func moveRead(c *sdk.Ctx, op *moveOp) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Reply().Int(0)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	if kit.Pending(r.Value(0)) {
		moveRetry(c, op) // a RENAME or MOVE may still take it back
		return
	}
	op.srcGen = r.Generation
	call := c.Record(c.Arg(1)).Exists(codec.ExistsCreateOnly)
	kit.CopyBins(call, r.TTL, r.Value(0))
	kit.MarkPending(call)
	c.ExecDB(op.db, func(c *sdk.Ctx) { moveWritten(c, op) })
}

func moveWritten(c *sdk.Ctx, op *moveOp) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.Exists:
		c.Reply().Int(0) // created meanwhile: this MOVE comes after
		return
	default:
		kit.StoreError(c, r)
		return
	}
	op.dstGen = r.Generation
	c.Record(c.Arg(1)).Generation(op.srcGen).Delete()
	c.Exec(func(c *sdk.Ctx) { moveDeleted(c, op) })
}

func moveDeleted(c *sdk.Ctx, op *moveOp) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		// Committed: take the mark off, unless someone wrote the key
		// since. Whatever this answers, the move is done.
		c.Record(c.Arg(1)).Exists(codec.ExistsUpdateOnly).Generation(op.dstGen).Put(kit.PendingBin, codec.Nil)
		c.ExecDB(op.db, func(c *sdk.Ctx) { c.Reply().Int(1) })
		return
	case codec.GenerationError, codec.NotFound:
	default:
		kit.StoreError(c, r)
		return
	}
	// The source changed or went away after it was read: the command
	// that did it came first. Take the copy back, unless someone wrote
	// it since, and start over.
	c.Record(c.Arg(1)).Generation(op.dstGen).Delete()
	c.ExecDB(op.db, func(c *sdk.Ctx) { kit.RetryAfterUndo(c, op.restart) })
}

// moveRetry starts the command over after it lost a race, within
// kit.RetryFor.
func moveRetry(c *sdk.Ctx, op *moveOp) {
	if kit.Retry(c) {
		op.restart(c)
	}
}

// restart forgets what the lost attempt read and runs the command again.
func (op *moveOp) restart(c *sdk.Ctx) {
	*op = moveOp{db: op.db}
	moveStart(c, op)
}
