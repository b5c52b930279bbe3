package aerospike

import (
	"errors"
	"math"
	"sort"
	"sync"
	"time"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/respike/respike/guest-sdk/codec"
)

// errFatal carries a failure of the whole request out of per-call code.
type errFatal struct {
	err   error
	class errClass
}

func (e *errFatal) Error() string { return errText(e.err) }

// records runs a ReqRecords request: one operate for a single call, batch
// operates for several.
func (x *execCtx) records(req *codec.Request, resp *codec.Response) {
	plans, live := x.plan(req, resp)
	defer x.s.putPlans(plans)
	var err error
	switch {
	case live == 0:
	case x.s.co != nil:
		j := x.job(req, resp, *plans, live)
		x.s.co.do(j)
		err = j.err
		putJob(j)
	default:
		err = x.own(req.Calls, *plans, resp.Results, live)
	}
	x.settle(resp, err)
}

// job is req, planned (plans, live calls), as a request for the coalescer;
// the caller returns it with putJob.
func (x *execCtx) job(req *codec.Request, resp *codec.Response, plans []plan, live int) *job {
	j := getJob()
	j.x, j.calls, j.plans, j.results, j.size = x, req.Calls, plans, resp.Results, live
	return j
}

// plan translates req's calls into plans (the caller returns them with
// putPlans), answers the calls that need no server, and returns how many
// do.
func (x *execCtx) plan(req *codec.Request, resp *codec.Response) (*[]plan, int) {
	n := len(req.Calls)
	if cap(resp.Results) < n {
		resp.Results = append(resp.Results[:cap(resp.Results)], make([]codec.Result, n-cap(resp.Results))...)
	}
	resp.Results = resp.Results[:n]

	plans := x.s.getPlans(n)
	live := 0
	now := x.planMs()
	for i := range req.Calls {
		call, p, res := &req.Calls[i], &(*plans)[i], &resp.Results[i]
		x.s.tr.translate(call, p, now)
		switch {
		case p.static != codec.OK:
		case p.hllFilter != nil:
			p.guard, p.filter = nil, p.hllFilter // guard and expiry included
		case p.exists == as.REPLACE && !p.keepX && p.filter == nil && p.guard == nil && p.gen == 0 && len(p.expects) == 0:
			// A replacing write of plain puts and nothing else (SET,
			// SETEX, MSET) leaves the same record whether the old one
			// had expired or not: no expiry filter, so that the server
			// replaces without reading the old record's bins.
		case p.sharedExp:
			p.liveOf, p.liveMs = p.filter, now
			p.withLiveShared(x.s.tr.live.get(now), &x.s.tr.live)
		default:
			p.withLive(x.s.tr.live.get(now))
		}
		resetResult(res, len(call.Ops))
		if p.static == codec.OK && x.s.cfg.MaxRecordBytes > 0 && p.write && payload(call) > x.s.cfg.MaxRecordBytes {
			p.fail(codec.RecordTooBig, "record too big: the call writes more than max_record_bytes (%d)", x.s.cfg.MaxRecordBytes)
		}
		if p.static != codec.OK {
			res.Code, res.Msg = p.static, p.staticMsg
			continue
		}
		live++
	}
	return plans, live
}

// settle reports err, a failure of the whole request's calls, in resp.
func (x *execCtx) settle(resp *codec.Response, err error) {
	if err == nil {
		return // the usual case: no errors.As, whose target escapes
	}
	var fe *errFatal
	if errors.As(err, &fe) {
		x.fail(resp, fe.err, fe.class)
	}
}

func resetResult(res *codec.Result, nOps int) {
	res.Code, res.Msg, res.Generation, res.TTL = codec.OK, "", 0, 0
	vals := res.Values[:0]
	for range nOps {
		vals = append(vals, codec.Nil)
	}
	res.Values = vals
}

// failResult sets a failed call's result: a code, no values.
func failResult(res *codec.Result, code codec.Code, msg string) {
	res.Code, res.Msg, res.Generation, res.TTL = code, msg, 0, 0
	clear(res.Values)
}

// payload estimates the bytes a call writes.
func payload(call *codec.Call) int {
	n := len(call.Key)
	for i := range call.Ops {
		op := &call.Ops[i]
		n += valueSize(op.Value) + valueSize(op.Value2)
		for _, v := range op.Values {
			n += valueSize(v)
		}
	}
	return n
}

func valueSize(v codec.Value) int {
	switch v.Kind {
	case codec.KindInt, codec.KindFloat:
		return 8
	case codec.KindBytes, codec.KindStr:
		return len(v.Bytes) + 1
	case codec.KindList, codec.KindMap:
		n := 4
		for _, e := range v.List {
			n += valueSize(e)
		}
		return n
	}
	return 1
}

func (s *Store) getPlans(n int) *[]plan {
	pp, _ := s.plans.Get().(*[]plan)
	if pp == nil {
		pp = new([]plan)
	}
	if cap(*pp) < n {
		*pp = append((*pp)[:cap(*pp)], make([]plan, n-cap(*pp))...)
	}
	*pp = (*pp)[:n]
	return pp
}

func (s *Store) putPlans(pp *[]plan) {
	if cap(*pp) > 4096 {
		return
	}
	for i := range *pp {
		p := &(*pp)[i]
		p.reset()
		clear(p.ops[:cap(p.ops)])
		clear(p.notes[:cap(p.notes)])
	}
	s.plans.Put(pp)
}

func (x *execCtx) key(k []byte) (*as.Key, error) {
	return newKey(x.s.cfg.Namespace, x.set, k)
}

// writePolicy is the policy of one call's operate. withGen forces a
// generation check (with gen, which may be 0 for "the record is absent").
func (x *execCtx) writePolicy(p *plan, filter *as.Expression, gen uint32, withGen bool) *as.WritePolicy {
	wp := &as.WritePolicy{
		BasePolicy:         x.base(p.write),
		RecordExistsAction: p.exists,
		CommitLevel:        as.COMMIT_ALL,
		Expiration:         p.expire,
		// Every op answers, in order, so results map to ops; a read of all
		// bins cannot be combined with that (Aerospike refuses it).
		RespondPerEachOp: p.getAll < 0,
	}
	wp.FilterExpression = filter
	if p.write && (withGen || gen != 0) {
		wp.GenerationPolicy, wp.Generation = as.EXPECT_GEN_EQUAL, gen
	}
	return wp
}

// operate runs one operate, retrying while the server answers KEY_BUSY
// (code 14: too many transactions queued on this record, "hot key"). The
// server refused such a command before applying it, so a retry cannot apply
// a write twice; Redis clients hammering one key (redis-benchmark's default
// is a single key) expect no error there. Retries back off from 50µs up to
// 5ms and stop at the request's time budget.
func (x *execCtx) operate(wp *as.WritePolicy, key *as.Key, ops ...*as.Operation) (*as.Record, error) {
	x.s.nSingle.Add(1)
	rec, err := x.c.Operate(wp, key, ops...)
	if err == nil || resultCode(err) != types.KEY_BUSY {
		return rec, err
	}
	deadline := x.deadline
	pause := 50 * time.Microsecond
	for resultCode(err) == types.KEY_BUSY && time.Now().Add(pause).Before(deadline) {
		time.Sleep(pause)
		pause = min(2*pause, 5*time.Millisecond)
		x.s.nSingle.Add(1)
		rec, err = x.c.Operate(wp, key, ops...)
	}
	return rec, err
}

// single runs one call as one operate.
func (x *execCtx) single(call *codec.Call, p *plan, res *codec.Result) error {
	key, err := x.key(call.Key)
	if err != nil {
		failResult(res, codec.InvalidOperation, "aerospike: "+err.Error())
		return nil
	}
	if p.keepX {
		return x.keepExpiry(call, p, key, res)
	}
	rec, err := x.operate(x.writePolicy(p, p.filter, p.gen, false), key, p.ops...)
	return x.finish(call, p, key, rec, err, res, true)
}

// finish turns an operate's outcome into the call's result. respondAll says
// whether every op answered (false for batch reads).
func (x *execCtx) finish(call *codec.Call, p *plan, key *as.Key, rec *as.Record, err error, res *codec.Result, respondAll bool) error {
	if err != nil {
		if c := classify(err); c != classRecord {
			return &errFatal{err: err, class: c}
		}
		code, msg := errResult(err)
		if p.hll != nil {
			if handled, err := x.finishHLL(call, p, key, code, res); handled {
				return err
			}
		}
		if p.live != nil && (code == codec.FilteredOut || code == codec.Exists) {
			if handled, err := x.expired(call, p, key, res, code); handled {
				return err
			}
		}
		if code == codec.FilteredOut && p.bound != nil {
			return x.diagnose(call, p, key, res)
		}
		failResult(res, code, msg)
		return nil
	}
	if !decode(p, rec, res, respondAll) {
		// A batch read whose answers cannot be told apart: ask again alone.
		resetResult(res, len(call.Ops))
		return x.single(call, p, res)
	}
	if !p.write && p.gen != 0 && res.Generation != p.gen {
		failResult(res, codec.GenerationError, "generation mismatch")
	}
	return nil
}

// diagnose finds out why a call with overflow bounds was filtered out: the
// type guard, an overflow, or neither (then the call runs again, bounded by
// the generation it was checked against).
func (x *execCtx) diagnose(call *codec.Call, p *plan, key *as.Key, res *codec.Result) error {
	ops := []*as.Operation{as.GetBinOp(codec.BinType)}
	var bins []string
	for i := range p.tracks {
		tr := &p.tracks[i]
		if tr.known || tr.untracked || len(tr.ints) == 0 {
			continue
		}
		dup := false
		for _, b := range bins {
			dup = dup || b == tr.target.bin
		}
		if !dup && tr.target.bin != codec.BinType {
			bins = append(bins, tr.target.bin)
			ops = append(ops, as.GetBinOp(tr.target.bin))
		}
	}
	rp := x.writePolicy(&plan{getAll: -1}, nil, 0, false)
	for attempt := 0; attempt < 5; attempt++ {
		var gen uint32
		var recBins as.BinMap
		rec, err := x.operate(rp, key, ops...)
		switch {
		case err == nil:
			gen, recBins = rec.Generation, rec.Bins
		case resultCode(err) == types.KEY_NOT_FOUND_ERROR:
		default:
			if c := classify(err); c != classRecord {
				return &errFatal{err: err, class: c}
			}
			code, msg := errResult(err)
			failResult(res, code, msg)
			return nil
		}
		if call.Policy.Guard != "" && recBins != nil {
			if t, ok := recBins[codec.BinType]; ok && t != nil {
				if s, isStr := t.(string); !isStr || s != call.Policy.Guard {
					failResult(res, codec.FilteredOut, "filtered out by the type guard")
					return nil
				}
			}
		}
		for i := range p.tracks {
			tr := &p.tracks[i]
			if tr.known || tr.untracked || len(tr.ints) == 0 {
				continue
			}
			base := fromClient(recBins[tr.target.bin])
			if tr.target.isMap {
				base = mapLookup(base, tr.target.key)
			}
			if tr.replay(base) {
				failResult(res, codec.Overflow, "increment or decrement would overflow")
				return nil
			}
		}
		if call.Policy.Generation != 0 && call.Policy.Generation != gen {
			failResult(res, codec.GenerationError, "generation mismatch")
			return nil
		}
		resetResult(res, len(call.Ops))
		rec, err = x.operate(x.writePolicy(p, p.guard, gen, true), key, p.ops...)
		if err != nil {
			if rc := resultCode(err); rc == types.GENERATION_ERROR || rc == types.FILTERED_OUT {
				continue // the record changed since it was read
			}
		}
		q := *p
		q.bound = nil // no second diagnosis
		return x.finish(call, &q, key, rec, err, res, true)
	}
	failResult(res, codec.BackendError, "aerospike: the record kept changing while checking an increment for overflow")
	return nil
}

// mapLookup finds key in a map value; a missing key, or a value that is not
// a map, is Nil.
func mapLookup(m codec.Value, key codec.Value) codec.Value {
	if m.Kind != codec.KindMap {
		return codec.Nil
	}
	for i := 0; i+1 < len(m.List); i += 2 {
		if m.List[i].Equal(key) {
			return m.List[i+1]
		}
	}
	return codec.Nil
}

// decode fills res from a record the server answered. It reports false when
// the answers cannot be matched to ops (possible only when not every op
// answered).
func decode(p *plan, rec *as.Record, res *codec.Result, respondAll bool) bool {
	res.Code, res.Msg = codec.OK, ""
	res.Generation = rec.Generation
	switch {
	case rec.Generation == 0: // the write deleted the record
		res.TTL = 0
	case rec.Expiration == math.MaxUint32:
		res.TTL = -1
	default:
		res.TTL = int64(rec.Expiration)
	}
	if p.getAll >= 0 {
		res.Values[p.getAll] = allBins(rec.Bins)
		return true
	}
	if !respondAll {
		// Only reads that found something answered: per bin, either every
		// read answered or none did.
		for i, s := range p.slots {
			if !s.resp || firstOfBin(p.slots, i) != i {
				continue
			}
			want := 0
			for _, o := range p.slots {
				if o.resp && o.bin == s.bin {
					want++
				}
			}
			if got := entries(rec.Bins, s.bin); got != 0 && got != want {
				return false
			}
		}
	}
	for i, s := range p.slots {
		answers := s.entry
		if !respondAll {
			answers = s.resp
		}
		if !answers || s.op < 0 {
			continue
		}
		// This op's answer is the n-th answer for its bin.
		n := 0
		for _, o := range p.slots[:i] {
			if o.bin == s.bin && ((respondAll && o.entry) || (!respondAll && o.resp)) {
				n++
			}
		}
		if s.geo != nil {
			res.Values[s.op] = decodeGeoSearch(s.geo, rec.Bins, s.bin, n)
			continue
		}
		res.Values[s.op] = decodeSlot(s, entry(rec.Bins, s.bin, n))
	}
	return true
}

func firstOfBin(slots []slot, i int) int {
	for j := range slots[:i] {
		if slots[j].resp && slots[j].bin == slots[i].bin {
			return j
		}
	}
	return i
}

// entries is how many answers the server gave for bin.
func entries(bins as.BinMap, bin string) int {
	v, ok := bins[bin]
	if !ok {
		return 0
	}
	if r, ok := v.(as.OpResults); ok {
		return len(r)
	}
	return 1
}

// entry is the n-th answer for bin (nil when there is none).
func entry(bins as.BinMap, bin string, n int) any {
	v, ok := bins[bin]
	if !ok {
		return nil
	}
	if r, ok := v.(as.OpResults); ok {
		if n < len(r) {
			return r[n]
		}
		return nil
	}
	if n == 0 {
		return v
	}
	return nil
}

func decodeSlot(s slot, x any) codec.Value {
	v := decodeEntry(s, x)
	if s.reply == 0 {
		return v
	}
	if v.Kind != codec.KindMap && v.Kind != codec.KindList {
		return codec.Nil // the bin is missing
	}
	kv := v.List
	n := len(kv) / 2
	buf := make([]byte, 0, 48*n)
	for j := range n {
		i := j
		if s.reply.Reversed() {
			i = n - 1 - j
		}
		buf = codec.AppendReplyItem(buf, s.reply, &kv[2*i], &kv[2*i+1])
	}
	return codec.List(codec.Int(int64(n)), codec.Bytes(buf))
}

// decodeEntry is the value of a slot's result entry, before a reply
// return type lays it out.
func decodeEntry(s slot, x any) codec.Value {
	switch s.dec {
	case decNone:
		return codec.Nil
	case decSize:
		if x == nil {
			return codec.Int(0)
		}
	case decMapRead:
		if s.ret == codec.ReturnNone {
			return codec.Nil
		}
	case decValueRange:
		return rankOrder(fromClient(x), s.ret)
	case decBulks:
		v := fromClient(x)
		if v.Kind != codec.KindList {
			return codec.Nil // the bin is missing
		}
		return codec.List(codec.Int(int64(len(v.List))), codec.Bytes(codec.AppendBulks(nil, v.List)))
	case decExistsCount:
		if v := fromClient(x); v.Kind == codec.KindInt {
			return codec.Bool(v.Int > 0)
		}
	case decRaised:
		return codec.Int(1)
	case decRankOne:
		if v := fromClient(x); v.Kind == codec.KindInt && v.Int >= 0 {
			return codec.List(v)
		}
		return codec.List()
	}
	return fromClient(x)
}

// rankOrder sorts key-value pairs by value, then key (Aerospike's rank
// order), and keeps what ret asks for.
func rankOrder(m codec.Value, ret codec.MapReturn) codec.Value {
	if m.Kind != codec.KindMap {
		return m // nil: the bin is missing
	}
	kv := m.List
	sort.Stable(rankSorter(kv[:len(kv)/2*2]))
	switch ret {
	case codec.ReturnKey, codec.ReturnValue:
		out := make([]codec.Value, 0, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			if ret == codec.ReturnKey {
				out = append(out, kv[i])
			} else {
				out = append(out, kv[i+1])
			}
		}
		return codec.List(out...)
	}
	return m
}

type rankSorter []codec.Value

func (r rankSorter) Len() int { return len(r) / 2 }
func (r rankSorter) Less(i, j int) bool {
	if c := compareValues(r[2*i+1], r[2*j+1]); c != 0 {
		return c < 0
	}
	return compareValues(r[2*i], r[2*j]) < 0
}
func (r rankSorter) Swap(i, j int) {
	r[2*i], r[2*j] = r[2*j], r[2*i]
	r[2*i+1], r[2*j+1] = r[2*j+1], r[2*i+1]
}

// allBins is a read of all bins: a map of bin name → value, by name.
func allBins(bins as.BinMap) codec.Value {
	names := make([]string, 0, len(bins))
	for name := range bins {
		names = append(names, name)
	}
	sort.Strings(names)
	kv := make([]codec.Value, 0, 2*len(names))
	for _, name := range names {
		kv = append(kv, codec.Value{Kind: codec.KindStr, Bytes: []byte(name)}, fromClient(bins[name]))
	}
	return codec.Map(kv...)
}

// batch runs several calls with batch operates. Calls on the same key must
// see each other's effects in order, which one batch does not promise, so
// the calls are cut into groups of distinct keys that run one after another.
func (x *execCtx) batch(calls []codec.Call, plans []plan, results []codec.Result) error {
	var seen map[string]struct{} // keys of the current group, for large requests
	if len(calls) > 32 {
		seen = make(map[string]struct{}, len(calls))
	}
	for start := 0; start < len(calls); {
		end := groupEnd(calls, plans, start, seen)
		if err := x.batchGroup(calls[start:end], plans[start:end], results[start:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// groupEnd returns the end of the group of calls from start on whose keys
// are distinct. seen, when not nil, is scratch space for the keys.
func groupEnd(calls []codec.Call, plans []plan, start int, seen map[string]struct{}) int {
	clear(seen)
	end := start
	for ; end < len(calls); end++ {
		if plans[end].static != codec.OK {
			continue
		}
		k := calls[end].Key
		dup := false
		if seen != nil {
			_, dup = seen[string(k)]
			seen[string(k)] = struct{}{}
		} else {
			for j := start; j < end && !dup; j++ {
				dup = plans[j].static == codec.OK && string(calls[j].Key) == string(k)
			}
		}
		if dup {
			break
		}
	}
	return end
}

func (x *execCtx) batchGroup(calls []codec.Call, plans []plan, results []codec.Result) error {
	var fatal error
	es := make([]member, 0, len(calls))
	for i := range calls {
		if plans[i].static == codec.OK {
			es = append(es, member{x: x, call: &calls[i], p: &plans[i], res: &results[i], fatal: &fatal})
		}
	}
	runEntries(es)
	return fatal
}

// member is one call in a batch call, and the request it belongs to: calls
// of several requests (several connections' commands) may share a batch.
type member struct {
	x     *execCtx // the request's database, client and time budget
	call  *codec.Call
	p     *plan
	res   *codec.Result
	key   *as.Key
	fatal *error // the request's failure (an *errFatal); its other calls stop
	// probe: merged into another's operate, the member's ops follow a
	// read of the type bin, which tells whether a member before it
	// emptied the record (mergeTarget).
	probe bool
}

// failed reports whether the entry's request has failed as a whole; its
// remaining calls then need not run.
func (e *member) failed() bool { return *e.fatal != nil }

// finished records a call's outcome error: a failure of its whole request.
func (e *member) finished(err error) {
	if err != nil && *e.fatal == nil {
		*e.fatal = err
	}
}

// runEntries runs calls on distinct records as one batch operate. Each record's result
// answers only its own call: a filtered-out guard, a generation conflict or
// an overflow check is that call's, and a record the server refused with
// KEY_BUSY runs again alone, retried as single calls are. Calls a batch
// cannot carry run alone after it.
func runEntries(es []member) {
	if len(es) == 1 {
		// One record: an operate, cheaper than a batch of one.
		if e := &es[0]; !e.failed() {
			e.finished(e.x.single(e.call, e.p, e.res))
		}
		return
	}
	bs := batchPool.Get().(*batchScratch)
	recs, idx, alone := bs.recs[:0], bs.idx[:0], bs.alone[:0] // alone: calls a batch cannot carry
	defer func() {
		bs.recs, bs.idx, bs.alone = recs, idx, alone
		bs.put()
	}()
	var first *execCtx // the request whose deadline comes first
	// chain links the members merged into one record's operate (a hot
	// key's rows): chain[i] is the member after es[i] in its record, or
	// -1; nil while nothing merged.
	var chain []int
	now := time.Now()
	for i := range es {
		e := &es[i]
		if e.failed() {
			continue
		}
		if !e.x.deadline.After(now) {
			// Its deadline passed while it waited (for a lane, or its
			// own earlier calls): answer it now, unsent; the call's
			// deadline is the first of the others'.
			e.finished(&errFatal{err: errWaitedTooLong, class: classTimeout})
			continue
		}
		p := e.p
		key, err := e.x.key(e.call.Key)
		if err != nil {
			failResult(e.res, codec.InvalidOperation, "aerospike: "+err.Error())
			continue
		}
		e.key = key
		switch {
		case p.write && p.getAll >= 0, p.keepX:
			// A batch write makes every op answer, which a read of all
			// bins refuses; keeping an exact expiry takes a read first.
			alone = append(alone, i)
			continue
		case p.write:
			wp := bs.writePolicy(p)
			if j, probe := mergeTarget(es, recs, idx, chain, i, wp); j >= 0 {
				if chain == nil {
					chain = make([]int, len(es))
					for k := range chain {
						chain[k] = -1
					}
				}
				k := idx[j]
				for chain[k] >= 0 {
					k = chain[k]
				}
				chain[k] = i
				w := recs[j].(*as.BatchWrite)
				// A full slice: the first append copies, so no plan's
				// ops are written to.
				w.Ops = w.Ops[:len(w.Ops):len(w.Ops)]
				if probe {
					e.probe = true
					w.Ops = append(w.Ops, probeOp)
				}
				w.Ops = append(w.Ops, p.ops...)
				if e.x.deadline.Before(first.deadline) {
					first = e.x
				}
				continue
			}
			recs = append(recs, bs.write(wp, key, p.ops))
		default:
			recs = append(recs, bs.read(bs.readPolicy(p.filter), key, p.ops))
		}
		if first == nil || e.x.deadline.Before(first.deadline) {
			first = e.x
		}
		idx = append(idx, i)
	}

	if len(recs) > 0 {
		x := es[idx[0]].x
		x.s.nBatch.Add(1)
		x.s.nBatchRecords.Add(uint64(len(recs)))
		err := x.c.BatchOperate(batchPolicy(first), recs)
		if err != nil {
			if c := classify(err); c != classRecord && !anyAnswered(recs) {
				for _, i := range idx {
					for ; i >= 0; i = next(chain, i) {
						es[i].finished(&errFatal{err: err, class: c})
					}
				}
				return
			}
		}
		for j, r := range recs {
			e := &es[idx[j]]
			br := r.BatchRec()
			if chain != nil && chain[idx[j]] >= 0 {
				// Its members answer each for itself, whichever of
				// their requests failed meanwhile.
				finishMerged(es, idx[j], chain, br)
				continue
			}
			if e.failed() {
				continue
			}
			if br.ResultCode == types.KEY_BUSY {
				// Refused before it was applied: run it alone, which
				// retries it within the request's budget.
				resetResult(e.res, len(e.call.Ops))
				e.finished(e.x.single(e.call, e.p, e.res))
				continue
			}
			var rerr error
			switch br.ResultCode {
			case types.OK:
			case types.KEY_NOT_FOUND_ERROR:
				rerr = errNotFound // a read of a missing key: common, and its text is fixed
			default:
				// Per-record codes, including a node that did not answer,
				// fail only this call.
				rerr = &recordError{rc: br.ResultCode, err: br.Err}
			}
			e.finished(e.x.finish(e.call, e.p, e.key, br.Record, rerr, e.res, e.p.write))
		}
	}
	for _, i := range alone {
		if e := &es[i]; !e.failed() {
			e.finished(e.x.single(e.call, e.p, e.res))
		}
	}
}

// mergeTarget returns the record of recs (the batch call being built)
// that es[i], a write, can join, or -1, and whether es[i] needs a probe
// there (below). Rows of different requests on one
// record that share a batch call (a hot key's SADDs, HSETs, ZADDs, LPUSHes,
// SREMs from many clients) each rewrite the whole record on the server,
// which at tens of thousands of members is most of what the command costs;
// merged into one operate of all their ops, in order, they rewrite it
// once, with the same effect as the rows one after another. Only writes
// with the same policy merge (the same filter, so the same millisecond's
// expiry filter, TTL; no generation check; update, not create-only or
// replace; the expiry filter may be of different milliseconds:
// sameButMs), and only calls whose result is read from their own ops alone:
// no overflow bound (its diagnosis), no read of all bins, no kept expiry,
// no HLL raise, no list-item or size expectation.
//
// A DeleteIfEmpty call (SREM, HDEL, ZREM) merges with its delete ops right
// after its own, so a record it empties loses its bins there, between the
// rows, as its row would have deleted it: a later member that writes (an
// SADD) makes the record again from nothing, with only its own bins (no
// type or exact expiry left over), and one that removes finds nothing, as
// its row would have found no record. The operate's outcome differs from
// the rows' only in what no command answers from: a record emptied and
// made again keeps counting generations. What a merged operate cannot do
// by itself is answer a member "no record" when an earlier one emptied it:
// its exists check is the operate's, once, at the start. An update-only
// member (SPOP, LPOP, ZPOPMIN: the record must exist, and a multi-key pop
// reads "no record" as "try the next key") after one that may empty the
// record therefore merges only when its ops read or remove (they change
// nothing on a record that is gone), and after a read of the type bin (its
// probe): when that finds nothing, an earlier member emptied the record,
// and the member answers NotFound, as its row would have. Members of one
// record share its policy, so its exists action.
func mergeTarget(es []member, recs []as.BatchRecordIfc, idx, chain []int, i int, wp *as.BatchWritePolicy) (int, bool) {
	e := &es[i]
	if !mergeable(e.p) {
		return -1, false
	}
	probe := false
	for j := len(recs) - 1; j >= 0; j-- {
		o := &es[idx[j]]
		if !o.p.write || !sameRecord(o, e) {
			continue
		}
		w, ok := recs[j].(*as.BatchWrite)
		if !ok || !mergeable(o.p) {
			return -1, false // the record's last row cannot take it
		}
		same := w.Policy == wp
		if !same && !sameButMs(o.p, e.p, w.Policy, wp) {
			return -1, false
		}
		latest, empties := int64(0), false // the record's filter's millisecond; a member may empty it
		for k := idx[j]; k >= 0; k = next(chain, k) {
			latest = max(latest, es[k].p.liveMs)
			empties = empties || es[k].p.delEmpty
		}
		if empties && e.p.exists == as.UPDATE_ONLY {
			if !e.p.removes {
				return -1, false
			}
			probe = true
		}
		if !same && e.p.liveMs > latest {
			// The operate runs after both milliseconds: the later one's
			// expiry filter, the stricter, checks all its members. A
			// record that expired between them fails it, and each
			// member runs alone, with its own (finishMerged).
			w.Policy = wp
		}
		return j, probe
	}
	return -1, false
}

// probeOp reads the type bin, which every record respike writes has,
// before a merged member's ops (member.probe).
var probeOp = as.GetBinOp(codec.BinType)

// sameButMs reports whether two writes' batch policies, a's pa and b's pb,
// differ only in the millisecond of their expiry filters: the same shared
// guard under it, and the same everything else. Calls a batch call gathers
// come from the last millisecond or two, so a hot key's rows would
// otherwise merge only in runs of one millisecond.
func sameButMs(a, b *plan, pa, pb *as.BatchWritePolicy) bool {
	if a.liveMs == 0 || b.liveMs == 0 || a.liveOf != b.liveOf {
		return false
	}
	qa, qb := *pa, *pb
	qa.FilterExpression, qb.FilterExpression = nil, nil
	return qa == qb
}

// next is the member after es[i] in its merged record, or -1.
func next(chain []int, i int) int {
	if chain == nil {
		return -1
	}
	return chain[i]
}

// mergeable reports whether a write call's ops can run inside another's
// operate (mergeTarget).
func mergeable(p *plan) bool {
	if p.getAll >= 0 || p.keepX || p.hll != nil || p.bound != nil || p.gen != 0 || len(p.expects) > 0 {
		return false
	}
	// The exists action is checked once per operate, a row's once per
	// row: create-only rows after the first fail (a read-modify-write
	// of a missing key retries on that), merged they would all succeed;
	// a replace deletes the bins only the rows before it wrote.
	if p.exists != as.UPDATE && p.exists != as.UPDATE_ONLY {
		return false
	}
	if p.delEmpty && p.exists != as.UPDATE && !p.removes {
		return false // mergeTarget says why
	}
	hidden := len(p.slots) // DeleteIfEmpty's ops, the last three, may merge
	if p.delEmpty {
		hidden -= 3
	}
	for k, s := range p.slots {
		if (s.op < 0 && k < hidden) || s.bin == "" || s.geo != nil {
			return false
		}
	}
	return true
}

// finishMerged answers the members merged into one record's operate,
// es[head] and those chain links to it. The operate succeeded or failed as
// a whole: on success each member's answers are its own ops' entries, bin
// by bin in order; when the server refused it (nothing was applied: a type
// guard, KEY_BUSY, a record grown too big…) each member runs again alone,
// to get its own answer, as its row would have; when the outcome is in
// doubt (a timeout), each member fails with it, as its row would have.
func finishMerged(es []member, head int, chain []int, br *as.BatchRecord) {
	rc := br.ResultCode
	switch {
	case rc == types.OK && br.Record != nil:
		pos := make(map[string]int, 2) // entries of each bin taken by earlier members
		for i := head; i >= 0; i = chain[i] {
			e := &es[i]
			gone := false // a member before it emptied the record
			if e.probe {
				gone = entry(br.Record.Bins, codec.BinType, pos[codec.BinType]) == nil
				pos[codec.BinType]++
			}
			n := make(map[string]int, 2) // this member's entries per bin
			for _, s := range e.p.slots {
				if s.entry {
					n[s.bin]++
				}
			}
			bins := make(as.BinMap, len(n))
			for bin, k := range n {
				bins[bin] = entryRange(br.Record.Bins, bin, pos[bin], k)
				pos[bin] += k
			}
			if e.failed() {
				continue
			}
			if gone {
				// Its ops found nothing and changed nothing (removals);
				// its row would have found no record.
				e.finished(e.x.finish(e.call, e.p, e.key, nil, errNotFound, e.res, true))
				continue
			}
			rec := &as.Record{Key: br.Record.Key, Bins: bins, Generation: br.Record.Generation, Expiration: br.Record.Expiration}
			e.finished(e.x.finish(e.call, e.p, e.key, rec, nil, e.res, true))
		}
	case rc > 0 && rc != types.TIMEOUT && !br.InDoubt:
		for i := head; i >= 0; i = chain[i] {
			if e := &es[i]; !e.failed() {
				resetResult(e.res, len(e.call.Ops))
				e.finished(e.x.single(e.call, e.p, e.res))
			}
		}
	default:
		rerr := &recordError{rc: rc, err: br.Err}
		for i := head; i >= 0; i = chain[i] {
			if e := &es[i]; !e.failed() {
				e.finished(e.x.finish(e.call, e.p, e.key, nil, rerr, e.res, true))
			}
		}
	}
}

// entryRange is bin's answers from the n-th on, count of them, as a
// record of those ops alone would hold them: one value, or OpResults.
func entryRange(bins as.BinMap, bin string, n, count int) any {
	if count == 1 {
		return entry(bins, bin, n)
	}
	r := make(as.OpResults, count)
	for k := range r {
		r[k] = entry(bins, bin, n+k)
	}
	return r
}

// batchScratch is runEntries' reusable memory: the call's records and the
// entries they answer, and the record policies of the call, shared by its
// records that have the same ones (the client only reads them). A gathered
// GET call's reads mostly carry one filter (the millisecond's expiry filter
// AND-ed with the type guard, built once: liveCache), and SETs one policy:
// one policy per distinct filter or write policy rather than one per
// record, and no slices per call. The batch records themselves are reused
// too (brs, bws): the client reads them and writes their results, and
// only during BatchOperate.
type batchScratch struct {
	recs       []as.BatchRecordIfc
	idx, alone []int
	reads      []*as.BatchReadPolicy
	writes     []*as.BatchWritePolicy
	nr, nw     int // policies handed out in this call
	brs        []*as.BatchRead
	bws        []*as.BatchWrite
	nbr, nbw   int // records handed out in this call
}

// read returns a batch read of ops on key, one of bs's.
func (bs *batchScratch) read(pol *as.BatchReadPolicy, key *as.Key, ops []*as.Operation) *as.BatchRead {
	if bs.nbr == len(bs.brs) {
		bs.brs = append(bs.brs, as.NewBatchReadOps(nil, nil))
	}
	r := bs.brs[bs.nbr]
	bs.nbr++
	r.Policy, r.BinNames, r.ReadAllBins, r.Ops = pol, nil, false, ops
	resetBatchRecord(&r.BatchRecord, key)
	return r
}

// write returns a batch write of ops on key, one of bs's.
func (bs *batchScratch) write(pol *as.BatchWritePolicy, key *as.Key, ops []*as.Operation) *as.BatchWrite {
	if bs.nbw == len(bs.bws) {
		bs.bws = append(bs.bws, as.NewBatchWrite(nil, nil))
	}
	w := bs.bws[bs.nbw]
	bs.nbw++
	w.Policy, w.Ops = pol, ops
	resetBatchRecord(&w.BatchRecord, key)
	return w
}

// resetBatchRecord makes r a record of key with no result yet, as the
// client's constructors make it (which also set whether it writes: a
// reused record keeps that).
func resetBatchRecord(r *as.BatchRecord, key *as.Key) {
	r.Key, r.Record, r.ResultCode, r.Err, r.InDoubt = key, nil, types.NO_RESPONSE, nil, false
}

// maxSharedPolicies bounds the distinct policies a call's records share
// (and the scan for one); records beyond it get policies of their own.
const maxSharedPolicies = 8

var batchPool = sync.Pool{New: func() any { return new(batchScratch) }}

// readPolicy returns a batch read policy with filter f, shared within the
// call.
func (bs *batchScratch) readPolicy(f *as.Expression) *as.BatchReadPolicy {
	for _, rp := range bs.reads[:bs.nr] {
		if rp.FilterExpression == f {
			return rp
		}
	}
	if bs.nr == maxSharedPolicies {
		rp := as.NewBatchReadPolicy()
		rp.FilterExpression = f
		return rp
	}
	if bs.nr == len(bs.reads) {
		bs.reads = append(bs.reads, new(as.BatchReadPolicy))
	}
	rp := bs.reads[bs.nr]
	bs.nr++
	*rp = *as.NewBatchReadPolicy()
	rp.FilterExpression = f
	return rp
}

// writePolicy returns the batch write policy of p, shared within the call
// with the records whose policy is the same.
func (bs *batchScratch) writePolicy(p *plan) *as.BatchWritePolicy {
	want := as.BatchWritePolicy{
		FilterExpression:   p.filter,
		RecordExistsAction: p.exists,
		CommitLevel:        as.COMMIT_ALL,
		Expiration:         p.expire,
		SendKey:            true,
	}
	if p.gen != 0 {
		want.GenerationPolicy, want.Generation = as.EXPECT_GEN_EQUAL, p.gen
	}
	for _, wp := range bs.writes[:bs.nw] {
		if *wp == want {
			return wp
		}
	}
	if bs.nw == maxSharedPolicies {
		wp := new(as.BatchWritePolicy) // not &want: want would escape on every call
		*wp = want
		return wp
	}
	if bs.nw == len(bs.writes) {
		bs.writes = append(bs.writes, new(as.BatchWritePolicy))
	}
	wp := bs.writes[bs.nw]
	bs.nw++
	*wp = want
	return wp
}

// put returns bs to the pool once the call's results are read: nothing
// of the call is kept (its records, keys and filters), and a scratch grown
// by a very large call is dropped.
func (bs *batchScratch) put() {
	clear(bs.recs)
	for _, rp := range bs.reads[:bs.nr] {
		*rp = as.BatchReadPolicy{}
	}
	for _, wp := range bs.writes[:bs.nw] {
		*wp = as.BatchWritePolicy{}
	}
	bs.nr, bs.nw = 0, 0
	for _, r := range bs.brs[:bs.nbr] {
		r.Policy, r.Ops = nil, nil
		resetBatchRecord(&r.BatchRecord, nil)
	}
	for _, w := range bs.bws[:bs.nbw] {
		w.Policy, w.Ops = nil, nil
		resetBatchRecord(&w.BatchRecord, nil)
	}
	bs.nbr, bs.nbw = 0, 0
	if cap(bs.recs) > 4096 {
		return
	}
	bs.recs, bs.idx, bs.alone = bs.recs[:0], bs.idx[:0], bs.alone[:0]
	batchPool.Put(bs)
}

// errNotFound is a batch record's KEY_NOT_FOUND_ERROR: only its code is
// used (mapCode's text), so one value serves every record.
var errNotFound = &recordError{rc: types.KEY_NOT_FOUND_ERROR}

// errWaitedTooLong fails a request whose deadline passed before its batch
// call went (it waited for a lane, or for its own earlier calls): none of
// its calls from then on was sent.
var errWaitedTooLong = errors.New("request deadline passed before its batch call went (not sent)")

// anyAnswered reports whether the server answered any record of a batch.
func anyAnswered(recs []as.BatchRecordIfc) bool {
	for _, r := range recs {
		if rc := r.BatchRec().ResultCode; rc >= 0 {
			return true
		}
	}
	return false
}
