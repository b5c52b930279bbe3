package module

import (
	"time"
)

// Instances follow load.
//
// A module's slots fill with instances as concurrent commands need them (up
// to Config.Instances), and an instance's linear memory, once grown for
// one large value, never shrinks: wasm memory cannot. Two mechanisms give
// the memory back:
//
//   - Idle release: the reaper (one goroutine per runtime, every quarter of
//     Config.IdleTimeout) closes the serving versions' instances unused for
//     Config.IdleTimeout, down to one per module, which stays warm.
//   - Memory recycling: an instance whose memory grew past
//     Config.RecycleMiB is closed as its call ends; the slot's next command
//     starts a fresh one (a few milliseconds for a Go module).
//
// Neither touches an instance holding a continuation (a command waiting on
// the store): instance.pending counts them.

// reaper runs reap until done is closed.
func (r *Runtime) reaper(every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			r.reap(now)
		}
	}
}

// reap releases the instances of the serving versions last called before
// now minus Config.IdleTimeout, keeping one per module, and returns how
// many it released. Busy slots are skipped.
func (r *Runtime) reap(now time.Time) int {
	if r.cfg.IdleTimeout <= 0 {
		return 0
	}
	r.reapMu.Lock()
	defer r.reapMu.Unlock()
	idle := int64(now.Sub(r.epoch)) // now as Runtime.clock
	n := 0
	for _, v := range r.reg.Load().mods {
		for _, s := range v.slots {
			if v.live.Load() <= 1 {
				break
			}
			if !s.mu.TryLock() {
				continue
			}
			if in := s.inst; in != nil && in.pending == 0 && time.Duration(idle-in.used) >= r.cfg.IdleTimeout {
				r.log.Debug("module instance released", "module", v.name, "generation", in.gen, "reason", "idle")
				v.ctr.idleReleases.Add(1)
				s.drop()
				n++
			}
			s.unlock()
		}
	}
	return n
}

// settle runs as a call ends, before the slot is unlocked: it accounts the
// instance's memory and closes the instance when that memory grew past
// Config.RecycleMiB and no continuation lives in it. Called with s.mu held.
func (s *slot) settle() {
	in := s.inst
	if in == nil {
		return
	}
	if size := in.mem.Size(); size != in.memSeen {
		s.v.memBytes.Add(int64(size) - int64(in.memSeen))
		in.memSeen = size
	}
	if lim := s.v.rt.recycleAt; lim > 0 && in.memSeen > lim && in.pending == 0 {
		s.v.rt.log.Debug("module instance released", "module", s.v.name, "generation", in.gen,
			"reason", "memory", "memory_bytes", in.memSeen)
		s.v.ctr.memRecycles.Add(1)
		s.drop()
	}
}

// drop closes the slot's instance and lets go of its call state, whose
// decoded request may point into the instance's memory and would keep
// that memory (tens of MB after a large value) from the garbage
// collector. Called with s.mu held, by the command that held the slot
// once it no longer needs its call state.
func (s *slot) drop() {
	s.inst.close()
	s.inst = nil
	s.call = nil
}
