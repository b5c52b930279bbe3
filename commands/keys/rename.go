package main

import (
	"github.com/respike/respike/commands/internal/kit"
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "rename", Arity: 3, Flags: []string{"write"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Renames a key and overwrites the destination.",
		Run:     func(c *sdk.Ctx) { renameStart(c, &renameOp{}) },
	}, sdk.Command{
		Name: "renamenx", Arity: 3, Flags: []string{"write", "fast"},
		FirstKey: 1, LastKey: 2, Step: 1, Group: "generic", Since: "1.0.0",
		Summary: "Renames a key only when the target key name doesn't exist.",
		Run:     func(c *sdk.Ctx) { renameStart(c, &renameOp{nx: true}) },
	})
}

// renameOp is one RENAME or RENAMENX in flight. It lives in the closures of
// the command's steps: it keeps the destination's previous bins, which a
// later step may have to put back, beyond the response they came in.
type renameOp struct {
	nx     bool
	srcGen uint32 // the source's generation as read
	// The destination before this command's write: whether it existed,
	// its bins (all-bins read, cloned) and TTL.
	dstHad bool
	dstOld codec.Value
	dstTTL int64
	dstGen uint32 // the destination's generation after this command's write
}

// renameStart: RENAME/RENAMENX key newkey. Two records cannot change
// atomically together, so the command moves the value in steps, each
// atomic on one record, arranged so that the final state and the reply are
// always those of some serial order of the commands involved:
//
//  1. read every bin of key and of newkey, with their generations and TTLs;
//  2. write key's bins to newkey with key's TTL, guarded by newkey's
//     generation as read (create-only when it was absent, and for
//     RENAMENX), so the command knows exactly what it overwrote; a
//     destination that changed in between restarts the command (RENAMENX:
//     a destination created in between answers 0);
//  3. delete key guarded by the generation read in (1). This is the
//     rename's commit point: key is unchanged since the read, so newkey got
//     its current value. The write of (2) carries a pending mark
//     (kit.PendingBin) that a last write takes off after (3); a rename
//     that reads a marked key, as its source or destination, waits for
//     the mark to go (within kit.RetryFor) rather than build on a value
//     that (4) may take back.
//  4. If key changed or vanished before (3), another command came first:
//     newkey is put back as it was before (2) — guarded by the generation
//     (2) produced, so a later write by someone else is kept — and the
//     command starts over; it then answers "no such key" if key is gone.
//
// Between (2) and (3) or (4) other clients can see the value under both
// keys, and a command failing in between (store error, shutdown) can leave
// it there; see docs/compatibility.md.
func renameStart(c *sdk.Ctx, op *renameOp) {
	c.Record(c.Arg(1)).Get("")
	switch {
	case string(c.Arg(1)) == string(c.Arg(2)):
	case op.nx:
		c.Record(c.Arg(2)).Get(kit.PendingBin) // whether it exists, and its mark
	default:
		c.Record(c.Arg(2)).Get("")
	}
	c.Exec(func(c *sdk.Ctx) { renameRead(c, op) })
}

func renameRead(c *sdk.Ctx, op *renameOp) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.NotFound:
		c.Error("ERR no such key")
		return
	default:
		kit.StoreError(c, r)
		return
	}
	if string(c.Arg(1)) == string(c.Arg(2)) {
		renameReply(c, op, false) // RENAME: OK; RENAMENX: 0
		return
	}
	d := c.Result(1)
	if (r.OK() && kit.Pending(r.Value(0))) || (d.OK() && kit.Pending(d.Value(0))) {
		// Another rename wrote one of the keys and may still take it
		// back: wait for it to commit or undo.
		renameRetry(c, op)
		return
	}
	switch d.Code {
	case codec.OK:
		if op.nx {
			c.Reply().Int(0)
			return
		}
		op.dstHad, op.dstOld, op.dstTTL = true, kit.Clone(d.Value(0)), d.TTL
	case codec.NotFound:
		op.dstHad = false
	default:
		kit.StoreError(c, d)
		return
	}
	op.srcGen = r.Generation
	call := c.Record(c.Arg(2))
	if op.dstHad {
		call.Exists(codec.ExistsReplaceOnly).Generation(d.Generation)
	} else {
		call.Exists(codec.ExistsCreateOnly)
	}
	kit.CopyBins(call, r.TTL, r.Value(0))
	kit.MarkPending(call)
	c.Exec(func(c *sdk.Ctx) { renameWritten(c, op) })
}

func renameWritten(c *sdk.Ctx, op *renameOp) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.Exists, codec.GenerationError, codec.NotFound:
		// newkey changed since it was read.
		if r.Code == codec.Exists && op.nx {
			c.Reply().Int(0) // created meanwhile: RENAMENX comes after
			return
		}
		renameRetry(c, op)
		return
	default:
		kit.StoreError(c, r)
		return
	}
	op.dstGen = r.Generation
	c.Record(c.Arg(1)).Generation(op.srcGen).Delete()
	c.Exec(func(c *sdk.Ctx) { renameDeleted(c, op) })
}

func renameDeleted(c *sdk.Ctx, op *renameOp) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		// Committed: take the pending mark off newkey, unless someone
		// wrote it since (then the mark went with the write, or stays
		// until PendingFor). Whatever this answers, the rename is done.
		c.Record(c.Arg(2)).Exists(codec.ExistsUpdateOnly).Generation(op.dstGen).Put(kit.PendingBin, codec.Nil)
		c.Exec(func(c *sdk.Ctx) { renameReply(c, op, true) })
		return
	case codec.GenerationError, codec.NotFound:
	default:
		kit.StoreError(c, r)
		return
	}
	// key changed or went away after it was read: the command that did it
	// came first. Put newkey back as this command found it, unless someone
	// wrote it since, and start over.
	call := c.Record(c.Arg(2)).Generation(op.dstGen)
	if op.dstHad {
		kit.CopyBins(call.Exists(codec.ExistsReplaceOnly), op.dstTTL, op.dstOld)
	} else {
		call.Delete()
	}
	// Of two renames crossing each other (RENAME a b, RENAME b a), exactly
	// one has its source after its destination in byte order: that one
	// yields a round before starting over, so the two do not meet again in
	// step (kit.Yield).
	restart := op.restart
	if string(c.Arg(1)) > string(c.Arg(2)) {
		restart = func(c *sdk.Ctx) { kit.Yield(c, c.Arg(1), op.restart) }
	}
	c.Exec(func(c *sdk.Ctx) { kit.RetryAfterUndo(c, restart) })
}

// renameRetry starts the command over after it lost a race, within
// kit.RetryFor.
func renameRetry(c *sdk.Ctx, op *renameOp) {
	if kit.Retry(c) {
		op.restart(c)
	}
}

// restart forgets what the lost attempt read and runs the command again.
func (op *renameOp) restart(c *sdk.Ctx) {
	*op = renameOp{nx: op.nx}
	renameStart(c, op)
}

func renameReply(c *sdk.Ctx, op *renameOp, renamed bool) {
	switch {
	case !op.nx:
		c.Reply().OK()
	case renamed:
		c.Reply().Int(1)
	default:
		c.Reply().Int(0)
	}
}
