package aerospike

import (
	"errors"
	"fmt"
	"slices"

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
		return e.err.Error()
	}
	return codeName(e.rc)
}

func (e *recordError) Unwrap() error { return e.err }

// resultCode extracts the Aerospike result code of a client error.
func resultCode(err error) types.ResultCode {
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
		msg = "aerospike: " + err.Error()
	}
	return code, msg
}
