package memory

import (
	"bytes"

	"github.com/respike/respike/guest-sdk/codec"
)

// typeRank orders value kinds as Aerospike orders CDT elements
// (msgpack_cmp_internal): NIL < FALSE < TRUE < INTEGER < STRING < LIST <
// MAP < BYTES < DOUBLE. So every integer sorts below every float.
func typeRank(v *codec.Value) int {
	switch v.Kind {
	case codec.KindNil:
		return 0
	case codec.KindBool:
		if v.Int != 0 {
			return 2
		}
		return 1
	case codec.KindInt:
		return 3
	case codec.KindStr:
		return 4
	case codec.KindList:
		return 5
	case codec.KindMap:
		return 6
	case codec.KindBytes:
		return 7
	case codec.KindFloat:
		return 8
	}
	return 9
}

// compare orders two values as Aerospike does: by type rank, then integers
// and floats by value (NaN equals everything, as in msgpack_cmp_internal),
// strings and blobs bytewise with the shorter prefix first, lists element by
// element with the shorter prefix first, maps by size and then element by
// element.
func compare(a, b *codec.Value) int {
	ra, rb := typeRank(a), typeRank(b)
	if ra != rb {
		if ra < rb {
			return -1
		}
		return 1
	}
	switch a.Kind {
	case codec.KindInt:
		switch {
		case a.Int < b.Int:
			return -1
		case a.Int > b.Int:
			return 1
		}
	case codec.KindFloat:
		switch {
		case a.Float < b.Float:
			return -1
		case a.Float > b.Float:
			return 1
		}
	case codec.KindStr, codec.KindBytes:
		return bytes.Compare(a.Bytes, b.Bytes)
	case codec.KindList:
		n := min(len(a.List), len(b.List))
		for i := 0; i < n; i++ {
			if c := compare(&a.List[i], &b.List[i]); c != 0 {
				return c
			}
		}
		switch {
		case len(a.List) < len(b.List):
			return -1
		case len(a.List) > len(b.List):
			return 1
		}
	case codec.KindMap:
		switch {
		case len(a.List) < len(b.List):
			return -1
		case len(a.List) > len(b.List):
			return 1
		}
		for i := range a.List {
			if c := compare(&a.List[i], &b.List[i]); c != 0 {
				return c
			}
		}
	}
	return 0
}

// validKey reports whether v may be a map key: Aerospike accepts integers,
// strings and blobs (map_is_key).
func validKey(v *codec.Value) bool {
	switch v.Kind {
	case codec.KindInt, codec.KindStr, codec.KindBytes:
		return true
	}
	return false
}

// Type tags are stored shared rather than copied: nearly every record has
// one. These slices are never written.
var typeTags = [...][]byte{
	[]byte(codec.TypeString),
	[]byte(codec.TypeHash),
	[]byte(codec.TypeList),
	[]byte(codec.TypeSet),
	[]byte(codec.TypeZSet),
}

// typeTag returns the shared type tag (typeTags) whose text is b, or nil.
// It picks the candidate by length before comparing: the loop over the
// tags with bytes.Equal it replaces cost ~100 instructions more per GEOADD
// (every write of a type tag).
func typeTag(b []byte) []byte {
	var t []byte
	switch len(b) {
	case len(codec.TypeString):
		t = typeTags[0]
	case len(codec.TypeSet):
		t = typeTags[3]
	case 4: // hash, list, zset
		switch b[0] {
		case codec.TypeHash[0]:
			t = typeTags[1]
		case codec.TypeList[0]:
			t = typeTags[2]
		case codec.TypeZSet[0]:
			t = typeTags[4]
		}
	}
	if t == nil || string(t) != string(b) {
		return nil
	}
	return t
}

// ownValue returns a deep copy of v that the store may keep (callers reuse
// their buffers).
func ownValue(v codec.Value) (codec.Value, *opError) {
	switch v.Kind {
	case codec.KindNil, codec.KindInt, codec.KindFloat:
		return codec.Value{Kind: v.Kind, Int: v.Int, Float: v.Float}, nil
	case codec.KindBool:
		if v.Int != 0 {
			return codec.Bool(true), nil
		}
		return codec.Bool(false), nil
	case codec.KindStr:
		if t := typeTag(v.Bytes); t != nil {
			return codec.Value{Kind: codec.KindStr, Bytes: t}, nil
		}
		return codec.Value{Kind: codec.KindStr, Bytes: cloneBytes(v.Bytes)}, nil
	case codec.KindBytes:
		return codec.Value{Kind: codec.KindBytes, Bytes: cloneBytes(v.Bytes)}, nil
	case codec.KindList, codec.KindMap:
		if v.Kind == codec.KindMap && len(v.List)%2 != 0 {
			return codec.Nil, &opError{codec.InvalidOperation, "memory: map value with an odd element count"}
		}
		l := make([]codec.Value, len(v.List))
		for i := range v.List {
			e, err := ownValue(v.List[i])
			if err != nil {
				return codec.Nil, err
			}
			l[i] = e
		}
		return codec.Value{Kind: v.Kind, List: l}, nil
	}
	return codec.Nil, &opError{codec.InvalidOperation, "memory: unknown value kind"}
}

// cloneBytes copies b; never nil, so an empty blob stays a blob.
func cloneBytes(b []byte) []byte {
	return append(make([]byte, 0, len(b)), b...)
}

// valueSize approximates the stored size of a value.
func valueSize(v codec.Value) int {
	switch v.Kind {
	case codec.KindInt, codec.KindFloat:
		return 8
	case codec.KindBytes, codec.KindStr:
		return 1 + len(v.Bytes)
	case codec.KindList, codec.KindMap:
		n := 1
		for _, e := range v.List {
			n += valueSize(e)
		}
		return n
	}
	return 1
}
