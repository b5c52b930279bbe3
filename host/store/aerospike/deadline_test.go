package aerospike

import (
	"errors"
	"testing"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
)

// A request's calls get what is left of its budget, not the whole budget
// again: one that waited for a gathered batch call, or made calls before,
// still answers within total_timeout.
func TestCallsGetTheBudgetLeft(t *testing.T) {
	s := &Store{cfg: Config{SocketTimeout: time.Second, TotalTimeout: time.Second}}
	x := &execCtx{s: s, timeout: time.Second, deadline: time.Now().Add(100 * time.Millisecond)}
	if p := x.base(true); p.TotalTimeout <= 0 || p.TotalTimeout > 100*time.Millisecond || p.SocketTimeout > p.TotalTimeout {
		t.Errorf("100 ms left of a 1 s budget: total timeout %v, socket timeout %v", p.TotalTimeout, p.SocketTimeout)
	}
	spent := &execCtx{s: s, timeout: time.Second, deadline: time.Now().Add(-time.Second)}
	if p := spent.base(false); p.TotalTimeout != time.Millisecond {
		t.Errorf("a spent budget: total timeout %v, want 1ms (0 would be no limit)", p.TotalTimeout)
	}
	if bp := batchPolicy(x); bp.TotalTimeout <= time.Millisecond || bp.TotalTimeout > 100*time.Millisecond || bp.MaxRetries != 0 {
		t.Errorf("batch policy of a 100 ms budget: total timeout %v, max retries %d", bp.TotalTimeout, bp.MaxRetries)
	}
}

// Requests whose deadline passed while they waited for a gathered batch
// call are answered at once with a timeout and not sent (the test's store
// has no client: a call would panic); the call of the others ends by the
// first of their deadlines, so no request waits for a later one's.
func TestBatchSkipsRequestsPastTheirDeadline(t *testing.T) {
	s := &Store{cfg: Config{Namespace: "test", SocketTimeout: time.Second, TotalTimeout: time.Second}}
	past := time.Now().Add(-time.Millisecond)
	var errA, errB error
	a := &execCtx{s: s, set: "a", timeout: time.Second, deadline: past}
	b := &execCtx{s: s, set: "b", timeout: time.Second, deadline: past.Add(-time.Second)}
	incr := codec.Call{Key: []byte("k"), Ops: []codec.Op{{Code: codec.OpAdd, Bin: codec.BinValue, Value: codec.Int(1)}}}
	calls := []codec.Call{incr, incr}
	plans := make([]plan, 2)
	results := make([]codec.Result, 2)
	tr := newTranslator()
	for i := range calls {
		tr.translate(&calls[i], &plans[i], 0)
	}
	runEntries([]member{
		{x: a, call: &calls[0], p: &plans[0], res: &results[0], fatal: &errA},
		{x: b, call: &calls[1], p: &plans[1], res: &results[1], fatal: &errB},
	})
	for name, err := range map[string]error{"a": errA, "b": errB} {
		var fe *errFatal
		if !errors.As(err, &fe) || fe.class != classTimeout || !errors.Is(fe.err, errWaitedTooLong) {
			t.Errorf("request %s past its deadline: %v, want a timeout, unsent", name, err)
		}
	}
}
