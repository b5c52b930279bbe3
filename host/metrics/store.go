package metrics

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// StoreRequests are the store's per-request figures: requests by kind and
// outcome, and their latency.
type StoreRequests struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// kinds names the request kinds for the "kind" label.
var kinds = map[codec.RequestKind]string{codec.ReqRecords: "records", codec.ReqScan: "scan",
	codec.ReqCount: "count", codec.ReqTruncate: "truncate"}

// InstrumentStore wraps st so that each Exec is counted by kind and
// outcome (the request's code, or for record requests the first record's
// that was not OK) and timed. It is meant for a store that waits on a
// network (Aerospike), where two clock reads are nothing beside a round
// trip; the embedded store is left bare.
func InstrumentStore(st store.Store) (store.Store, *StoreRequests) {
	r := &StoreRequests{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "respike_store_requests_total",
			Help: "Store requests by kind (records, scan, count, truncate) and outcome (ok, or the result code's name)."},
			[]string{"kind", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "respike_store_request_duration_seconds",
			Help: "Time of a store request, from the host's call to its answer.", Buckets: DurationBuckets},
			[]string{"kind"}),
	}
	return &instrumented{Store: st, r: r}, r
}

type instrumented struct {
	store.Store
	r *StoreRequests
}

// Stats keeps the wrapped store's counters visible (INFO, block registry).
func (s *instrumented) Stats() []store.Stat {
	if st, ok := s.Store.(store.Statser); ok {
		return st.Stats()
	}
	return nil
}

func (s *instrumented) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	began := time.Now()
	s.Store.Exec(ctx, db, req, resp)
	s.observe(began, req, resp)
}

var _ store.Batcher = (*instrumented)(nil)

// ExecMany keeps the wrapped store's ExecMany (store.Batcher): each request
// is counted, and timed as the whole set's time, which is what it waited.
func (s *instrumented) ExecMany(ops []store.Op) {
	began := time.Now()
	store.ExecMany(s.Store, ops)
	for i := range ops {
		s.observe(began, ops[i].Req, ops[i].Resp)
	}
}

// observe counts and times one request that began at began.
func (s *instrumented) observe(began time.Time, req *codec.Request, resp *codec.Response) {
	kind := kinds[req.Kind]
	if kind == "" {
		kind = strconv.Itoa(int(req.Kind))
	}
	code := resp.Code
	if code == codec.OK {
		for i := range resp.Results {
			if c := resp.Results[i].Code; c != codec.OK && c != codec.NotFound {
				code = c
				break
			}
		}
	}
	s.r.duration.WithLabelValues(kind).Observe(time.Since(began).Seconds())
	s.r.total.WithLabelValues(kind, codeName(code)).Inc()
}

// codeNames label result codes with Aerospike's names (respike's own
// codes, 1000 and above, with theirs).
var codeNames = map[codec.Code]string{codec.OK: "ok", codec.ServerError: "server_error",
	codec.NotFound: "key_not_found", codec.GenerationError: "generation_error",
	codec.ParameterError: "parameter_error", codec.Exists: "key_exists", codec.Timeout: "timeout",
	codec.BinTypeError: "bin_type_error", codec.RecordTooBig: "record_too_big",
	codec.ElementNotFound: "element_not_found", codec.ElementExists: "element_exists",
	codec.OpNotApplicable: "op_not_applicable", codec.FilteredOut: "filtered_out",
	codec.Overflow: "overflow", codec.BackendError: "backend_error",
	codec.BackendUnavail: "backend_unavailable", codec.InvalidOperation: "invalid_operation"}

// codeName is the label of a result code.
func codeName(c codec.Code) string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return "code_" + strconv.Itoa(int(c))
}
