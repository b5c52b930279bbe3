package codec

import (
	"encoding/binary"
	"math"
	"strconv"
)

// AppendScore formats f as Redis 7.0 replies with a sorted-set score
// (addReplyDouble): C's %.17g, and inf, -inf.
func AppendScore(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case f == 0 && math.Signbit(f):
		return append(dst, "-0"...)
	case f > -1e17 && f < 1e17 && f == math.Trunc(f):
		// %.17g prints an integral value below 1e17 as its digits; formatting
		// it as an integer skips the 128-bit arithmetic of fixed-precision
		// float formatting, which WebAssembly has to emulate.
		if f < 0 {
			return appendUint(append(dst, '-'), uint64(-f))
		}
		return appendUint(dst, uint64(f))
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// ScoreOf reads a stored value as a sorted-set score: a float as it is, an
// integer (written by another client) as its value, anything else as 0,
// and -0 as 0 (increments can leave a -0 behind; Redis answers 0).
func ScoreOf(v *Value) float64 {
	var f float64
	switch v.Kind {
	case KindFloat:
		f = v.Float
	case KindInt:
		f = float64(v.Int)
	}
	if f == 0 {
		return 0
	}
	return f
}

// AppendReplyItem appends the reply elements of one map item, key k and
// value v, as reply return type t (ReturnRESPKeys and the like) lays them
// out:
//
//	ReturnRESPKeys     $1\r\na\r\n
//	ReturnRESPScores   $1\r\na\r\n$3\r\n1.5\r\n
//	ReturnRESP3Scores  *2\r\n$1\r\na\r\n,1.5\r\n
//	ReturnScoredKeys   <1.5 as 8 bytes LE> 01 00 00 00 a
//
// The key is written as AppendBulks writes an item, the score (ScoreOf v)
// as AppendScore formats it: byte for byte what Redis 7.0 answers to
// ZRANGE, WITHSCORES or not, in RESP2 and RESP3.
func AppendReplyItem(dst []byte, t MapReturn, k, v *Value) []byte {
	t = t.Type()
	if t == ReturnScoredKeys {
		return appendScoredKey(dst, k, ScoreOf(v))
	}
	if t == ReturnRESP3Scores {
		dst = append(dst, "*2\r\n"...)
	}
	dst = appendBulk(dst, k)
	if t == ReturnRESPKeys {
		return dst
	}
	var num [32]byte
	s := AppendScore(num[:0], ScoreOf(v))
	if t == ReturnRESP3Scores {
		dst = append(dst, ',')
	} else {
		n := len(s) // below 100: at most 24 characters
		if n < 10 {
			dst = append(dst, '$', byte('0'+n), '\r', '\n')
		} else {
			dst = append(dst, '$', byte('0'+n/10), byte('0'+n%10), '\r', '\n')
		}
	}
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// appendUint appends u in decimal. Below 2^32 it divides 32-bit numbers,
// whose division by a constant WebAssembly does with a 64-bit multiply; a
// 64-bit one needs a high multiply that it emulates.
func appendUint(dst []byte, u uint64) []byte {
	if u >= 1<<32 {
		return strconv.AppendUint(dst, u, 10)
	}
	v := uint32(u)
	if v < 10 {
		return append(dst, byte('0'+v))
	}
	var b [10]byte
	i := len(b)
	for v >= 100 {
		q := v / 100
		r := v - q*100
		i -= 2
		b[i], b[i+1] = digits2[2*r], digits2[2*r+1]
		v = q
	}
	if v >= 10 {
		i -= 2
		b[i], b[i+1] = digits2[2*v], digits2[2*v+1]
	} else {
		i--
		b[i] = byte('0' + v)
	}
	return append(dst, b[i:]...)
}

// digits2 holds "00" to "99".
const digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendScoredKey appends one item of ReturnScoredKeys: the score's bits,
// the key's length and the key, as appendBulk would write the key.
func appendScoredKey(dst []byte, k *Value, score float64) []byte {
	var num [32]byte
	b := MemberBytes(k, &num)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(score))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// MemberBytes is a map key as a member's bytes, as the reply return types
// lay out an item: bytes and strings as they are, numbers in decimal
// (written into scratch), anything else none.
func MemberBytes(k *Value, scratch *[32]byte) []byte {
	switch k.Kind {
	case KindBytes, KindStr:
		return k.Bytes
	case KindInt:
		return strconv.AppendInt(scratch[:0], k.Int, 10)
	case KindFloat:
		return strconv.AppendFloat(scratch[:0], k.Float, 'g', -1, 64)
	}
	return nil
}
