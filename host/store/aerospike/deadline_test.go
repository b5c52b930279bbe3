package aerospike

import (
	"testing"
	"time"
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
	// A batch call carrying both gets the later deadline.
	bp := batchPolicy([]member{{x: spent}, {x: x}})
	if bp.TotalTimeout <= time.Millisecond || bp.TotalTimeout > 100*time.Millisecond {
		t.Errorf("batch of a spent and a 100 ms budget: total timeout %v", bp.TotalTimeout)
	}
}
