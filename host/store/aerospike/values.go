package aerospike

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"sort"

	as "github.com/aerospike/aerospike-client-go/v8"

	"github.com/respike/respike/guest-sdk/codec"
)

// Values going to the client are plain Go values that the client packs
// without reflection: nil, int64, float64, bool, string (string particle),
// []byte (blob particle), and the listVal / mapVal packers below for
// collections. Map keys are blobKey: []byte cannot key a Go map, and the
// client packs an AerospikeBlob as a blob particle.

// blobKey is a map key that the client packs as a blob particle.
type blobKey string

// EncodeBlob implements as.AerospikeBlob.
func (k blobKey) EncodeBlob() ([]byte, error) { return []byte(k), nil }

// toClient converts a codec value to what the client packs as the matching
// particle type.
func toClient(v codec.Value) any {
	switch v.Kind {
	case codec.KindInt:
		return v.Int
	case codec.KindFloat:
		return v.Float
	case codec.KindBytes:
		if v.Bytes == nil {
			return []byte{} // a nil slice would pack as nil
		}
		return v.Bytes
	case codec.KindStr:
		return string(v.Bytes)
	case codec.KindBool:
		return v.Int != 0
	case codec.KindList:
		return listVal(v.List)
	case codec.KindMap:
		return mapVal(v.List)
	default:
		return nil
	}
}

// toClientKey converts a codec value used as a map key (element of a Go map).
func toClientKey(v codec.Value) any {
	if v.Kind == codec.KindBytes {
		return blobKey(v.Bytes)
	}
	return toClient(v)
}

// toClientValue wraps a codec value as an as.Value (for bins and CDT
// arguments that the client takes as Value).
func toClientValue(v codec.Value) as.Value {
	switch v.Kind {
	case codec.KindInt:
		return as.LongValue(v.Int)
	case codec.KindFloat:
		return as.FloatValue(v.Float)
	case codec.KindBytes:
		if v.Bytes == nil {
			return as.BytesValue([]byte{})
		}
		return as.BytesValue(v.Bytes)
	case codec.KindStr:
		return as.StringValue(string(v.Bytes))
	case codec.KindBool:
		return as.BoolValue(v.Int != 0)
	case codec.KindList:
		return as.NewListerValue(listVal(v.List))
	case codec.KindMap:
		return as.NewMapperValue(mapVal(v.List))
	default:
		return as.NewNullValue()
	}
}

// listVal packs a codec list as a msgpack array.
type listVal []codec.Value

// Len implements as.ListIter.
func (l listVal) Len() int { return len(l) }

// PackList implements as.ListIter.
func (l listVal) PackList(buf as.BufferEx) (int, error) {
	n := 0
	for _, e := range l {
		m, err := packValue(buf, e)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// mapVal packs flattened codec map pairs as an (unordered) msgpack map.
type mapVal []codec.Value

// Len implements as.MapIter.
func (m mapVal) Len() int { return len(m) / 2 }

// PackMap implements as.MapIter.
func (m mapVal) PackMap(buf as.BufferEx) (int, error) {
	n := 0
	for i := 0; i+1 < len(m); i += 2 {
		for _, e := range m[i : i+2] {
			k, err := packValue(buf, e)
			n += k
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// packValue packs one codec value with the client's exported packers, which
// accept a nil buffer to measure.
func packValue(buf as.BufferEx, v codec.Value) (int, error) {
	switch v.Kind {
	case codec.KindInt:
		return as.PackInt64(buf, v.Int)
	case codec.KindFloat:
		return as.PackFloat64(buf, v.Float)
	case codec.KindBytes:
		return as.PackBytes(buf, v.Bytes)
	case codec.KindStr:
		return as.PackString(buf, string(v.Bytes))
	case codec.KindBool:
		return as.PackBool(buf, v.Int != 0)
	case codec.KindList:
		return as.PackList(buf, listVal(v.List))
	case codec.KindMap:
		return as.PackMap(buf, mapVal(v.List))
	default:
		return as.PackNil(buf)
	}
}

// fromClient converts a value decoded by the client to a codec value. Maps
// that the server sent ordered arrive as []as.MapPair and keep their order;
// unordered maps arrive as Go maps and are sorted by key so that results are
// deterministic.
func fromClient(x any) codec.Value {
	switch v := x.(type) {
	case nil:
		return codec.Nil
	case int:
		return codec.Int(int64(v))
	case int64:
		return codec.Int(v)
	case float64:
		return codec.Float(v)
	case []byte:
		return codec.Bytes(v)
	case string:
		return codec.Value{Kind: codec.KindStr, Bytes: []byte(v)}
	case bool:
		return codec.Bool(v)
	case []any:
		out := make([]codec.Value, len(v))
		for i, e := range v {
			out[i] = fromClient(e)
		}
		return codec.List(out...)
	case []as.MapPair:
		out := make([]codec.Value, 0, 2*len(v))
		for _, p := range v {
			out = append(out, fromClient(p.Key), fromClient(p.Value))
		}
		return codec.Map(out...)
	case map[any]any:
		out := make([]codec.Value, 0, 2*len(v))
		for k, e := range v {
			out = append(out, fromClient(k), fromClient(e))
		}
		sortPairs(out)
		return codec.Map(out...)
	case as.OpResults:
		// Only reached for values nested where the caller did not expect
		// several results; keep them all.
		out := make([]codec.Value, len(v))
		for i, e := range v {
			out[i] = fromClient(e)
		}
		return codec.List(out...)
	case uint64:
		if v <= math.MaxInt64 {
			return codec.Int(int64(v))
		}
		return codec.Float(float64(v))
	case as.GeoJSONValue:
		return codec.Value{Kind: codec.KindStr, Bytes: []byte(v)}
	case as.HLLValue:
		return codec.Bytes([]byte(v))
	}
	// The client decodes blob map keys as fixed-size byte arrays ([N]byte),
	// which only reflection can read.
	rv := reflect.ValueOf(x)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return codec.Bytes(b)
	}
	return codec.Value{Kind: codec.KindStr, Bytes: []byte(fmt.Sprint(x))}
}

// sortPairs sorts flattened key,value pairs by key, in Aerospike's order
// (see kindRank).
func sortPairs(kv []codec.Value) {
	sort.Sort(pairSorter{kv: kv[:len(kv)/2*2]})
}

type pairSorter struct{ kv []codec.Value }

func (p pairSorter) Len() int           { return len(p.kv) / 2 }
func (p pairSorter) Less(i, j int) bool { return compareValues(p.kv[2*i], p.kv[2*j]) < 0 }
func (p pairSorter) Swap(i, j int) {
	p.kv[2*i], p.kv[2*j] = p.kv[2*j], p.kv[2*i]
	p.kv[2*i+1], p.kv[2*j+1] = p.kv[2*j+1], p.kv[2*i+1]
}

// kindRank orders kinds as Aerospike orders values of different types: nil,
// bool, integer, string, list, map, blob, float (observed: integers rank
// below floats; keys order integer < string < blob).
func kindRank(k codec.Kind) int {
	switch k {
	case codec.KindNil:
		return 0
	case codec.KindBool:
		return 1
	case codec.KindInt:
		return 2
	case codec.KindStr:
		return 3
	case codec.KindList:
		return 4
	case codec.KindMap:
		return 5
	case codec.KindBytes:
		return 6
	default:
		return 7
	}
}

func compareValues(a, b codec.Value) int {
	if ra, rb := kindRank(a.Kind), kindRank(b.Kind); ra != rb {
		return ra - rb
	}
	switch a.Kind {
	case codec.KindInt, codec.KindBool:
		switch {
		case a.Int < b.Int:
			return -1
		case a.Int > b.Int:
			return 1
		}
		return 0
	case codec.KindFloat:
		switch {
		case a.Float < b.Float:
			return -1
		case a.Float > b.Float:
			return 1
		}
		return 0
	case codec.KindBytes, codec.KindStr:
		return bytes.Compare(a.Bytes, b.Bytes)
	default:
		if len(a.List) != len(b.List) {
			return len(a.List) - len(b.List)
		}
		for i := range a.List {
			if c := compareValues(a.List[i], b.List[i]); c != 0 {
				return c
			}
		}
		return 0
	}
}
