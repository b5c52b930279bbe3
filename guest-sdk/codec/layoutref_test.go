package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The layout writers as they were before their fast paths, kept to check
// that the fast paths write the same bytes.

// refStart is the general writer's Start layout (AppendStart before it
// wrote the message in one pass).
func (w *layoutWriter) refStart(s *Start) {
	at := w.zero(startSize)
	w.u8(at+offStartProto, s.Proto)
	w.u16(at+offStartDB, s.DB)
	w.u32(at+offStartCmd, s.Cmd)
	w.u64(at+offStartClient, s.ClientID)
	w.u64(at+offStartNow, uint64(s.Now))
	w.byteSlices(at+offStartArgs, s.Args)
	w.alloc(startPad, 1)
}

func refAppendStart(dst []byte, base uint64, s *Start) []byte {
	w := layoutWriter{buf: dst, at0: len(dst), base: base}
	w.refStart(s)
	return w.buf
}

// randArgs returns up to 12 arguments of up to 40 bytes, some empty.
func randArgs(rng *rand.Rand) [][]byte {
	n := rng.IntN(13)
	if rng.IntN(10) == 0 {
		return nil
	}
	args := make([][]byte, n)
	for i := range args {
		b := make([]byte, rng.IntN(41))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		args[i] = b
	}
	return args
}

func TestAppendStartMatchesWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		s := &Start{Proto: uint8(rng.Uint32()), DB: uint16(rng.Uint32()), Cmd: rng.Uint32(),
			ClientID: rng.Uint64(), Now: int64(rng.Uint64()), Args: randArgs(rng)}
		// A prefix already in dst (as in a batch), garbage in the spare
		// capacity (a reused buffer), and a capacity that fits or not.
		prefix := make([]byte, rng.IntN(3)*8)
		spare := rng.IntN(300)
		dst := append(make([]byte, 0, len(prefix)+spare), prefix...)
		junk := dst[len(dst):cap(dst)]
		for j := range junk {
			junk[j] = 0xA5
		}
		base := uint64(rng.Uint32()) &^ 7
		want := refAppendStart(bytes.Clone(prefix), base, s)
		got := AppendStart(dst, base, s)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d (%d args): AppendStart wrote\n%x\nthe writer\n%x", i, len(s.Args), got, want)
		}
	}
}

func refAppendResponse(dst []byte, base uint64, kind RequestKind, r *Response) []byte {
	w := layoutWriter{buf: dst, at0: len(dst), base: base}
	w.response(kind, r)
	return w.buf
}

// randValue returns a value of any kind; lists and maps only when deep.
func randValue(rng *rand.Rand, deep bool) Value {
	switch k := rng.IntN(8); {
	case k == 0:
		return Nil
	case k == 1:
		return Int(int64(rng.Uint64()))
	case k == 2:
		return Float(rng.NormFloat64())
	case k == 3:
		return Value{Kind: KindBool, Int: int64(rng.IntN(2))}
	case k == 7 && deep:
		l := make([]Value, 2*rng.IntN(3))
		for i := range l {
			l[i] = randValue(rng, false)
		}
		return Value{Kind: KindMap, List: l}
	default:
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if k == 4 {
			return Value{Kind: KindStr, Bytes: b}
		}
		return Bytes(b)
	}
}

func TestAppendResponseMatchesWriter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	codes := []Code{OK, OK, OK, NotFound, FilteredOut, Exists}
	for i := range 20000 {
		r := &Response{Code: OK}
		if rng.IntN(20) == 0 {
			r.Code, r.Msg = Timeout, "slow"
		}
		if rng.IntN(30) == 0 {
			r.Msg = "note"
		}
		deep := rng.IntN(4) == 0
		r.Results = make([]Result, rng.IntN(4))
		for j := range r.Results {
			res := &r.Results[j]
			res.Code = codes[rng.IntN(len(codes))]
			res.Generation, res.TTL = rng.Uint32(), int64(rng.Uint64())
			if rng.IntN(15) == 0 {
				res.Msg = string(make([]byte, rng.IntN(9)+1))
			}
			res.Values = make([]Value, rng.IntN(4))
			for k := range res.Values {
				res.Values[k] = randValue(rng, deep)
			}
		}
		kind := ReqRecords
		if rng.IntN(10) == 0 {
			kind = ReqCount
		}
		prefix := make([]byte, rng.IntN(3)*8)
		spare := rng.IntN(600)
		dst := append(make([]byte, 0, len(prefix)+spare), prefix...)
		junk := dst[len(dst):cap(dst)]
		for j := range junk {
			junk[j] = 0x5A
		}
		base := uint64(rng.Uint32()) &^ 7
		want := refAppendResponse(bytes.Clone(prefix), base, kind, r)
		got := AppendResponse(dst, base, kind, r)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d: AppendResponse wrote\n%x\nthe writer\n%x", i, got, want)
		}
	}
}
