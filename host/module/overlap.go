package module

import (
	"context"
	"slices"
	"sync"
)

// On a store that waits (Aerospike), a command's time is mostly the store's
// round trip, and a client's pipeline run one command after another pays it
// once per command. ExecBatch therefore lets the commands of a pipeline that
// touch different keys be in flight together: their store requests then
// reach the store at the same moment, where they are gathered into shared
// batch calls (host/store/aerospike, coalesce.go). Replies stay in order;
// a command that touches a key of a command still in flight, or whose keys
// are not known from its manifest entry (FirstKey 0, movablekeys), waits
// until the commands before it are done, so that two commands of one
// connection on one key never run out of order.
//
// The keys a command touches are the ones its manifest declares
// (FirstKey, LastKey, Step over its arguments), as Redis's key specs say: a
// module whose command touches other records must declare none.

// maxOverlap is the most commands of a pipeline in flight at once.
const maxOverlap = 16

// maxOverlapKeys bounds the keys compared to open a window, so that a
// pipeline of commands with many keys each costs no quadratic work.
const maxOverlapKeys = 128

// overlapGoroutines bounds the goroutines running overlapped commands in the
// process: each holds a stack (8 KiB once it has called into a guest) while
// its command waits on the store, so their number bounds that memory. A
// window that finds none free ends where it is; its other commands run in
// later windows.
var overlapGoroutines = make(chan struct{}, 2048)

// dbKey is a key of one database.
type dbKey struct {
	db  uint16
	key []byte
}

// declaredKeys appends the keys its manifest entry says the command touches,
// and reports false when they are not known.
func declaredKeys(keys []dbKey, it *Item) ([]dbKey, bool) {
	info := &it.Cmd.Info
	args := it.Start.Args
	if info.FirstKey <= 0 || info.FirstKey >= len(args) || slices.Contains(info.Flags, "movablekeys") {
		return keys, false
	}
	last := info.LastKey
	if last < 0 {
		last += len(args)
	}
	last = min(last, len(args)-1)
	step := max(info.Step, 1)
	for i := info.FirstKey; i <= last; i += step {
		keys = append(keys, dbKey{db: it.Start.DB, key: args[i]})
	}
	return keys, true
}

// overlapEnd returns the end of the window of items from start on that may
// be in flight together: commands with declared keys, no key shared by two.
// The window holds at least the command at start.
func overlapEnd(items []Item, start int, scratch []dbKey) (int, []dbKey) {
	keys, ok := declaredKeys(scratch[:0], &items[start])
	if !ok {
		return start + 1, keys
	}
	end := start + 1
	for ; end < len(items) && end-start < maxOverlap; end++ {
		n := len(keys)
		var ok bool
		if keys, ok = declaredKeys(keys, &items[end]); !ok || len(keys) > maxOverlapKeys {
			break
		}
		clash := false
		for _, k := range keys[n:] {
			for _, o := range keys[:n] {
				if k.db == o.db && string(k.key) == string(o.key) {
					clash = true
				}
			}
		}
		if clash {
			break
		}
	}
	return end, keys
}

// ExecBatch runs items, a client's pipelined commands, appending each reply
// to out in order and setting each item's End. On a store that waits,
// commands on distinct keys are in flight together (see above); otherwise,
// and for commands that must wait for the ones before them, they run one
// after another, consecutive commands of one module in shared guest calls.
//
// A command that blocks ends the run when blk is not nil: ExecBatch
// returns with blk filled (see ExecBlock) and blk.Index the command's
// item, whose End is not set; the items after it have not run. With blk
// nil, a command that blocks answers its timeout reply (inside MULTI). A
// pipeline holding a blocking command runs one command after another, so
// that nothing after it runs before it is served, and so does one run
// under a Guard (WithGuard): a guarded transaction stops at the first
// command whose condition fails, with none after it applied.
func (r *Runtime) ExecBatch(ctx context.Context, items []Item, out []byte, blk *Block) []byte {
	if !r.inline && len(items) > 1 && (blk == nil || !anyBlocking(items)) && guardOf(ctx) == nil {
		return r.execOverlapped(ctx, items, out)
	}
	return r.execSerial(ctx, items, out, blk)
}

// anyBlocking reports whether a command of items may block (its manifest
// flags it "blocking").
func anyBlocking(items []Item) bool {
	for i := range items {
		if slices.Contains(items[i].Cmd.Info.Flags, "blocking") {
			return true
		}
	}
	return false
}

// flight is a command of a window that runs on a goroutine of its own.
type flight struct {
	r     *Runtime
	ctx   context.Context
	it    *Item
	reply []byte
	done  *sync.WaitGroup // the window's: its commands are awaited together
}

var flightPool = sync.Pool{New: func() any { return new(flight) }}

// run executes the flight's command and signals done.
func (f *flight) run() {
	it, done := f.it, f.done
	f.reply = f.r.Exec(f.ctx, it.Cmd, &it.Start, f.reply[:0])
	f.ctx, f.it, f.done = nil, nil, nil
	<-overlapGoroutines
	done.Done()
}

// Overlapped commands run on worker goroutines that stay for the next
// command: a new goroutine's stack starts small and grows, by copying, to
// the depth a guest call needs (wazero's call path), which cost about a
// tenth of a pipelined command's CPU when every command had a goroutine of
// its own. Idle workers wait on idleWorkers; there are at most as many as
// overlapGoroutines admits at once, and the runtime's garbage collector
// shrinks the stacks of those that stay idle.
var idleWorkers = make(chan *worker, cap(overlapGoroutines))

// worker is a goroutine that runs overlapped commands.
type worker struct{ next chan *flight }

// startFlight runs f on an idle worker, or on a new one.
func startFlight(f *flight) {
	select {
	case w := <-idleWorkers:
		w.next <- f
	default:
		go runWorker(f)
	}
}

// runWorker runs f, then waits as an idle worker for the next flight; it
// ends when there is no room among the idle.
func runWorker(f *flight) {
	w := &worker{next: make(chan *flight, 1)}
	for {
		f.run()
		select {
		case idleWorkers <- w:
		default:
			return
		}
		f = <-w.next
	}
}

// execOverlapped runs a pipeline on a store that waits: each window of
// commands on distinct keys is in flight together (the first on the calling
// goroutine, the others on goroutines of their own), and their replies are
// appended in order.
func (r *Runtime) execOverlapped(ctx context.Context, items []Item, out []byte) []byte {
	var scratch []dbKey
	var flights []*flight
	var done sync.WaitGroup
	for i := 0; i < len(items); {
		var j int
		j, scratch = overlapEnd(items, i, scratch)
		if j-i == 1 {
			// Nothing to overlap with: the usual path, which runs
			// consecutive commands that need no store in shared guest calls.
			k := i + 1
			for k < len(items) {
				if e, _ := overlapEnd(items, k, scratch); e-k > 1 {
					break
				}
				k++
			}
			out = r.execSerial(ctx, items[i:k], out, nil)
			i = k
			continue
		}
		flights = flights[:0]
		for k := i + 1; k < j; k++ {
			select {
			case overlapGoroutines <- struct{}{}:
			default:
				j = k // none free: the rest waits for a later window
				continue
			}
			f := flightPool.Get().(*flight)
			f.r, f.ctx, f.it, f.done = r, ctx, &items[k], &done
			done.Add(1)
			flights = append(flights, f)
			startFlight(f)
		}
		it := &items[i]
		out = r.Exec(ctx, it.Cmd, &it.Start, out)
		it.End = len(out)
		done.Wait()
		for n, f := range flights {
			out = append(out, f.reply...)
			items[i+1+n].End = len(out)
			if cap(f.reply) > maxPooled {
				f.reply = nil
			}
			flightPool.Put(f)
		}
		i = j
	}
	clear(scratch)
	return out
}
