package metrics

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/memory"
)

func TestInstrumentStoreCountsByKindAndOutcome(t *testing.T) {
	st, r := InstrumentStore(memory.New(memory.Options{Databases: 2}))
	ctx := context.Background()
	var resp codec.Response
	st.Exec(ctx, 0, &codec.Request{Kind: codec.ReqCount}, &resp)
	st.Exec(ctx, 5, &codec.Request{Kind: codec.ReqCount}, &resp) // no such database
	if resp.Code == codec.OK {
		t.Fatal("database 5 of 2 answered OK")
	}
	if v := testutil.ToFloat64(r.total.WithLabelValues("count", "ok")); v != 1 {
		t.Fatalf("count/ok = %v", v)
	}
	if n := testutil.CollectAndCount(r.total); n != 2 {
		t.Fatalf("%d outcome series, want 2 (ok and the refusal)", n)
	}
	if n := testutil.CollectAndCount(r.duration); n != 1 {
		t.Fatalf("%d duration series, want 1", n)
	}
	if _, ok := st.(store.Statser); !ok {
		t.Fatal("the wrapper hides Stats")
	}
}
