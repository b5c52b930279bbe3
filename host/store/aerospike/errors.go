package aerospike

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	as "github.com/aerospike/aerospike-client-go/v8"
	"github.com/aerospike/aerospike-client-go/v8/types"

	"github.com/respike/respike/guest-sdk/codec"
)

// errClass is how a client error affects a request.
type errClass uint8

const (
	classRecord  errClass = iota // a per-record result code
	classUnavail                 // the cluster cannot be reached: fail the whole request
	classTimeout                 // the command timed out: fail the whole request
)

// recordError is the outcome of one record of a batch.
type recordError struct {
	rc  types.ResultCode
	err error
}

func (e *recordError) Error() string {
	if e.err != nil {
		return errText(e.err)
	}
	return codeName(e.rc)
}

func (e *recordError) Unwrap() error { return e.err }

// resultCode extracts the Aerospike result code of a client error.
func resultCode(err error) types.ResultCode {
	switch e := err.(type) { // the usual cases, without errors.As's allocations
	case *recordError:
		return e.rc
	case *as.AerospikeError:
		return e.ResultCode
	}
	return wrappedResultCode(err)
}

// wrappedResultCode is resultCode of an error that wraps the client's.
func wrappedResultCode(err error) types.ResultCode {
	var re *recordError
	if errors.As(err, &re) {
		return re.rc
	}
	var ae *as.AerospikeError
	if errors.As(err, &ae) {
		return ae.ResultCode
	}
	return types.COMMON_ERROR
}

// unavailCodes are client-side codes that mean the cluster or a node is not
// reachable.
var unavailCodes = []types.ResultCode{
	types.NO_AVAILABLE_CONNECTIONS_TO_NODE,
	types.INVALID_NODE_ERROR,
	types.SERVER_NOT_AVAILABLE,
	types.NETWORK_ERROR,
	types.NO_RESPONSE,
	types.INVALID_CLUSTER_PARTITION_MAP,
	types.PARTITION_UNAVAILABLE,
	types.MAX_ERROR_RATE,
	types.CLUSTER_NAME_MISMATCH_ERROR,
}

// classify says whether err fails one record or the whole request. The
// outermost code decides: the client chains the errors of earlier attempts
// (a connection it had to reopen) behind the server's final answer.
func classify(err error) errClass {
	if _, ok := err.(*recordError); ok {
		return classRecord // a batch record's code (no errors.As: it allocates)
	}
	var re *recordError
	if errors.As(err, &re) {
		return classRecord
	}
	var ae as.Error
	if !errors.As(err, &ae) {
		return classUnavail
	}
	code := resultCode(err)
	switch {
	case code == types.TIMEOUT && ae.Matches(types.NO_AVAILABLE_CONNECTIONS_TO_NODE, types.NETWORK_ERROR, types.SERVER_NOT_AVAILABLE):
		// Timed out waiting for a connection to a node that does not
		// answer: the cluster is unreachable, not slow.
		return classUnavail
	case code == types.TIMEOUT:
		return classTimeout
	case code == types.MAX_RETRIES_EXCEEDED:
		if ae.Matches(types.TIMEOUT) {
			return classTimeout
		}
		return classUnavail
	case slices.Contains(unavailCodes, code):
		return classUnavail
	}
	return classRecord
}

// codeName is an Aerospike result code as "NAME (code N)".
func codeName(rc types.ResultCode) string {
	return fmt.Sprintf("%s (Aerospike code %d)", types.ResultCodeToString(rc), int(rc))
}

// mapCode translates an Aerospike result code to a codec code, with a
// message for anything but success.
func mapCode(rc types.ResultCode) (codec.Code, string) {
	switch rc {
	case types.OK:
		return codec.OK, ""
	case types.KEY_NOT_FOUND_ERROR:
		return codec.NotFound, "record not found"
	case types.GENERATION_ERROR:
		return codec.GenerationError, "generation mismatch"
	case types.KEY_EXISTS_ERROR:
		return codec.Exists, "record exists"
	case types.BIN_TYPE_ERROR:
		return codec.BinTypeError, "bin type mismatch"
	case types.BIN_NOT_FOUND:
		return codec.BinNotFound, "bin not found"
	case types.RECORD_TOO_BIG:
		return codec.RecordTooBig, "record too big for the namespace's write-block / max-record-size"
	case types.OP_NOT_APPLICABLE:
		return codec.OpNotApplicable, "operation not applicable"
	case types.FILTERED_OUT:
		return codec.FilteredOut, "filtered out by the type guard"
	case types.FAIL_ELEMENT_NOT_FOUND:
		return codec.ElementNotFound, "element not found"
	case types.FAIL_ELEMENT_EXISTS:
		return codec.ElementExists, "element exists"
	case types.PARAMETER_ERROR:
		return codec.ParameterError, "Aerospike refused a parameter of the call"
	case types.SERVER_ERROR:
		return codec.ServerError, "Aerospike server error"
	case types.TIMEOUT:
		return codec.Timeout, "Aerospike timeout"
	case types.FAIL_FORBIDDEN:
		return codec.BackendError, "aerospike: " + codeName(rc) +
			": the namespace refuses this write; when the call sets a TTL the namespace needs nsup-period > 0 (or allow-ttl-without-nsup true); a set being truncated or at stop-writes also refuses writes"
	case types.NO_RESPONSE, types.SERVER_NOT_AVAILABLE, types.NETWORK_ERROR, types.INVALID_NODE_ERROR,
		types.NO_AVAILABLE_CONNECTIONS_TO_NODE, types.PARTITION_UNAVAILABLE:
		return codec.BackendUnavail, "aerospike: " + codeName(rc)
	}
	return codec.BackendError, "aerospike: " + codeName(rc)
}

// errResult translates a client error for one record.
func errResult(err error) (codec.Code, string) {
	rc := resultCode(err)
	code, msg := mapCode(rc)
	if code == codec.BackendError && rc == types.COMMON_ERROR {
		msg = "aerospike: " + errText(err)
	}
	return code, msg
}

// Bounds of errText.
const (
	chainShown = 4   // a chain this deep or shallower is shown whole
	leafShown  = 240 // bytes of the earliest error's own text
)

// errText is err's text for a reply or a log line, short whatever err is.
//
// The client returns one error per command that chains the error of every
// attempt before it, and AerospikeError.Error formats each link with the
// text of all the links below it: quadratic in the chain's length. While a
// node's connection pool stays empty (a node that died: its connections
// broke, new ones fail), a command attempts again every
// SleepBetweenRetries (1 ms) until its total timeout and chains an error
// each time: a second makes a chain about 1,000 deep, whose Error() is
// some 120 KB and takes 0.2–0.4 s of CPU, and every request of a gathered
// batch call got the same error and formatted it again. That, not the
// call, made requests answer seconds after their timeout in the outage
// drill (docs/operations.md). A longer chain is summed up instead: the
// outermost code, the codes below it with their counts, and the earliest
// error's own text.
func errText(err error) string {
	depth := 0
	for e := err; e != nil && depth <= chainShown; e = errors.Unwrap(e) {
		depth++
	}
	if depth <= chainShown {
		return err.Error()
	}
	var (
		top   types.ResultCode
		codes []types.ResultCode // below the outermost, in order of first appearance
		count = map[types.ResultCode]int{}
		links int
		leaf  error
	)
	first := true
	for e := err; e != nil; e = errors.Unwrap(e) {
		leaf = e
		ae, ok := e.(*as.AerospikeError)
		if !ok {
			continue
		}
		links++
		if first {
			top, first = ae.ResultCode, false
			continue
		}
		if count[ae.ResultCode] == 0 {
			codes = append(codes, ae.ResultCode)
		}
		count[ae.ResultCode]++
	}
	var b strings.Builder
	if first {
		b.WriteString("client error")
	} else {
		b.WriteString(top.String())
	}
	fmt.Fprintf(&b, " after %d chained client errors (", links)
	for i, c := range codes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", c.String(), count[c])
	}
	b.WriteString("); the earliest: ")
	var lt string
	if ae, ok := leaf.(*as.AerospikeError); ok && ae.Unwrap() == nil {
		lt = ae.Error()
	} else if !ok {
		lt = leaf.Error()
	} else {
		lt = ae.ResultCode.String()
	}
	if len(lt) > leafShown {
		lt = lt[:leafShown] + "…"
	}
	b.WriteString(strings.ReplaceAll(lt, "\n", " "))
	return b.String()
}
