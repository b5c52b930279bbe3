package kit

import (
	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

// DestStore writes the destination of a *STORE command (SUNIONSTORE,
// ZINTERSTORE, ZRANGESTORE, ...) computed from sources read earlier, so
// that the command behaves as if it ran at one instant. The write replaces
// whatever the destination held, of any type, and clears its TTL (as
// Redis's does), or deletes it when the result is empty:
//
//  1. the destination is read (every bin, its generation and TTL), in the
//     sources' batch (Write) or after it (Start);
//  2. its write is guarded by that generation (create-only when it was
//     absent), so it replaces exactly what was read; a destination that is
//     also a source must have been read at the same generation both times;
//  3. the other sources' generations are read again: when all are as the
//     sources were read, every source held what was read at the moment of
//     the write, and the command answers Size. Otherwise another client
//     changed a source in between (crossed ZDIFFSTOREs, an SMOVE between
//     two sources): the destination is put back as read in (1), guarded by
//     the generation (2) produced, and Restart reads everything again,
//     within RetryFor.
//
// Crossed SDIFFSTOREs (each one's destination the other's source) both
// applied, 25 times in 200 trials, before (2) and (3).
type DestStore struct {
	Dst  []byte   // the destination key
	Srcs [][]byte // the source keys, in the order they were read
	Gens []uint32 // their generations as read (0: missing)
	Size int64    // the reply: the stored size
	// Fill adds the new value's bins to the destination's write; nil
	// when the result is empty (the destination is deleted).
	Fill func(call *codec.Call)
	// Restart reads the sources again and computes anew.
	Restart func(c *sdk.Ctx)

	dstHad  bool
	dstOld  codec.Value
	dstTTL  int64
	deleted bool   // the write deleted the destination
	dstGen  uint32 // the destination's generation after the write
}

// Start reads the destination, then writes it (Write).
func (s *DestStore) Start(c *sdk.Ctx) {
	c.Record(s.Dst).Get("")
	c.Exec(func(c *sdk.Ctx) { s.Write(c, c.Result(0)) })
}

// Write writes the destination, given d, its all-bins read (step 1).
func (s *DestStore) Write(c *sdk.Ctx, d *codec.Result) {
	switch d.Code {
	case codec.OK:
		s.dstHad, s.dstOld, s.dstTTL = true, Clone(d.Value(0)), d.TTL
	case codec.NotFound:
	default:
		StoreError(c, d)
		return
	}
	for i, k := range s.Srcs {
		if string(k) == string(s.Dst) && s.Gens[i] != d.Generation {
			s.retry(c) // the two reads of the destination saw different states
			return
		}
	}
	call := c.Record(s.Dst)
	if s.dstHad {
		call.Exists(codec.ExistsReplaceOnly).Generation(d.Generation)
	} else {
		call.Exists(codec.ExistsCreateOnly)
	}
	if s.Fill == nil {
		if !s.dstHad {
			c.Reply().Int(0) // nothing to write
			return
		}
		s.deleted = true
		call.Delete()
	} else {
		s.Fill(call.TTLNever())
	}
	c.Exec(s.written)
}

func (s *DestStore) written(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
	case codec.GenerationError, codec.NotFound, codec.Exists:
		s.retry(c) // the destination changed since it was read
		return
	default:
		GuardFailed(c, r)
		return
	}
	s.dstGen = r.Generation
	checks := 0
	for _, k := range s.Srcs {
		if string(k) != string(s.Dst) {
			c.Record(k).Header()
			checks++
		}
	}
	if checks == 0 {
		c.Reply().Int(s.Size)
		return
	}
	c.Exec(s.checked)
}

// checked answers when every other source is as it was read, or puts the
// destination back and starts over.
func (s *DestStore) checked(c *sdk.Ctx) {
	k := 0
	var changed []byte // the first source that changed, if any
	for i, key := range s.Srcs {
		if string(key) == string(s.Dst) {
			continue
		}
		r := c.Result(k)
		k++
		var same bool
		switch r.Code {
		case codec.OK:
			same = r.Generation == s.Gens[i]
		case codec.NotFound:
			same = s.Gens[i] == 0
		default:
			StoreError(c, r)
			return
		}
		if !same && changed == nil {
			changed = key
		}
	}
	if changed == nil {
		c.Reply().Int(s.Size)
		return
	}
	call := c.Record(s.Dst)
	switch {
	case s.deleted:
		CopyBins(call.Exists(codec.ExistsCreateOnly), s.dstTTL, s.dstOld)
	case s.dstHad:
		CopyBins(call.Exists(codec.ExistsReplaceOnly).Generation(s.dstGen), s.dstTTL, s.dstOld)
	default:
		call.Generation(s.dstGen).Delete()
	}
	// Whatever the undo found (someone may have written the destination
	// since: theirs stays), start over. Two stores crossing each other
	// (each one's destination the other's source) both lose here in the
	// same round; the one whose destination comes after the source it
	// found changed, in byte order, yields a round first, so they do not
	// meet again in step (Yield).
	if string(s.Dst) > string(changed) {
		c.Exec(func(c *sdk.Ctx) { Yield(c, s.Dst, s.retry) })
		return
	}
	c.Exec(s.retry)
}

// retry starts the command over, within RetryFor.
func (s *DestStore) retry(c *sdk.Ctx) {
	if !Again(c) {
		c.Error(Contention)
		return
	}
	s.Restart(c)
}
