package aerospike

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/respike/respike/guest-sdk/codec"
)

// chainLike builds the error the client returns from a command that found
// its node's connection pool empty n times until its total timeout: each
// attempt's error wraps the ones before (the client's chainErrors, which
// copies the outer error and sets its unexported wrapped field).
func chainLike(n int) error {
	link := func(outer *as.AerospikeError, inner error) *as.AerospikeError {
		e := new(as.AerospikeError)
		outer.As(e) // copies the code and message
		f := reflect.ValueOf(e).Elem().FieldByName("wrapped")
		reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(&inner).Elem())
		return e
	}
	var err error
	for i := 0; i < n; i++ {
		e := new(as.AerospikeError)
		as.ErrConnectionPoolEmpty.As(e)
		if err == nil {
			err = e
		} else {
			err = link(e, err)
		}
	}
	to := new(as.AerospikeError)
	as.ErrTimeout.As(to)
	return link(to, err)
}

// A command that spent its second in the client's empty-pool loop returns
// a chain about 1,000 errors deep, whose Error() is quadratic: that
// formatting, done for every request of a gathered batch call, answered
// requests seconds after their timeout. Replies and logs get a bounded
// summary instead; short chains keep the client's text.
func TestErrTextBoundsLongChains(t *testing.T) {
	long := chainLike(1000)
	start := time.Now()
	full := len(long.Error())
	fullTook := time.Since(start)
	if full < 100_000 {
		t.Fatalf("the client's text of a 1,000-deep chain is %d bytes; this test's premise (quadratic text) no longer holds", full)
	}
	start = time.Now()
	got := errText(long)
	took := time.Since(start)
	if len(got) > 1000 || strings.Contains(got, "\n") {
		t.Errorf("errText of a 1,000-deep chain: %d bytes, want a one-line summary: %.300q", len(got), got)
	}
	for _, want := range []string{"TIMEOUT", "NO_AVAILABLE_CONNECTIONS_TO_NODE ×1000", "connection pool is empty"} {
		if !strings.Contains(got, want) {
			t.Errorf("errText = %q, want it to contain %q", got, want)
		}
	}
	t.Logf("1,000-deep chain: client text %d bytes in %v; errText %d bytes in %v: %s", full, fullTook, len(got), took, got)

	short := chainLike(2)
	if errText(short) != short.Error() {
		t.Errorf("a short chain: errText = %q, want the client's %q", errText(short), short.Error())
	}
	if rc := resultCode(long); rc != types.TIMEOUT {
		t.Errorf("result code of the chain: %v, want TIMEOUT", rc)
	}

	// The reply of a request failed by such an error is bounded too.
	x := &execCtx{s: &Store{}}
	var resp codec.Response
	x.fail(&resp, long, classTimeout)
	if resp.Code != codec.Timeout || len(resp.Msg) > 1100 {
		t.Errorf("fail: code %v, %d-byte message", resp.Code, len(resp.Msg))
	}
}
