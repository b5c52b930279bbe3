// Package resp writes Redis protocol replies in RESP2 or RESP3. The guest SDK
// and the host's built-in commands share it, so every reply respike sends is
// shaped by one piece of code. It depends on the standard library only.
package resp

import (
	"math"
	"strconv"
)

// Writer appends replies to a byte buffer. The zero value writes RESP2.
// Writing never allocates once Buf has grown to the reply's size.
type Writer struct {
	// Buf holds the reply bytes written so far.
	Buf []byte
	// Proto is 2 or 3. RESP3-only types degrade to their RESP2 form as Redis
	// does (maps become flat arrays, doubles bulk strings, nulls $-1).
	Proto int
}

// Reset empties the buffer and sets the protocol version.
func (w *Writer) Reset(proto int) {
	w.Buf = w.Buf[:0]
	w.Proto = proto
}

// RESP3 reports whether the connection speaks RESP3.
func (w *Writer) RESP3() bool { return w.Proto == 3 }

func (w *Writer) header(c byte, n int64) {
	if uint64(n) < 10 { // most headers: a one-digit length or integer
		w.Buf = append(w.Buf, c, byte('0'+n), '\r', '\n')
		return
	}
	var tmp [24]byte
	i := len(tmp) - 2
	tmp[i], tmp[i+1] = '\r', '\n'
	i = formatInt(&tmp, i, n)
	i--
	tmp[i] = c
	w.Buf = append(w.Buf, tmp[i:]...)
}

// digits2 holds "00" to "99".
const digits2 = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// formatInt writes n in decimal into tmp, ending before index i, and
// returns where it starts. Below 2^32 it divides by 100 with a 64-bit
// multiply and shift: WebAssembly has no 64-bit high multiply, so Go
// compiles a constant division there to a real division, which is slow
// (strconv was a third of an INCR's reply).
func formatInt(tmp *[24]byte, i int, n int64) int {
	u := uint64(n)
	if n < 0 {
		u = -u
	}
	for u >= 1<<32 {
		q := u / 100
		d := (u - q*100) * 2
		i -= 2
		tmp[i], tmp[i+1] = digits2[d], digits2[d+1]
		u = q
	}
	x := uint32(u)
	for x >= 100 {
		q := uint32(uint64(x) * 0x51EB851F >> 37) // x / 100, exact for every uint32
		d := (x - q*100) * 2
		i -= 2
		tmp[i], tmp[i+1] = digits2[d], digits2[d+1]
		x = q
	}
	if x >= 10 {
		i -= 2
		tmp[i], tmp[i+1] = digits2[x*2], digits2[x*2+1]
	} else {
		i--
		tmp[i] = byte('0' + x)
	}
	if n < 0 {
		i--
		tmp[i] = '-'
	}
	return i
}

// Simple writes a simple string (+OK). s must not contain CR or LF.
func (w *Writer) Simple(s string) {
	w.Buf = append(w.Buf, '+')
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// OK writes +OK.
func (w *Writer) OK() { w.Buf = append(w.Buf, "+OK\r\n"...) }

// Error writes an error reply. msg starts with its code (ERR, WRONGTYPE, ...);
// CR and LF in it are replaced by spaces so a reply can never break framing.
func (w *Writer) Error(msg string) {
	w.Buf = append(w.Buf, '-')
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		w.Buf = append(w.Buf, c)
	}
	w.Buf = append(w.Buf, '\r', '\n')
}

// Int writes an integer.
func (w *Writer) Int(n int64) { w.header(':', n) }

// Bulk writes a bulk string.
func (w *Writer) Bulk(b []byte) {
	if n := len(b); n < 10 {
		// The common short value: one growth check, one slice store.
		out := w.grow(n + 6)
		out[0], out[1], out[2], out[3] = '$', byte('0'+n), '\r', '\n'
		copy(out[4:], b)
		out[n+4], out[n+5] = '\r', '\n'
		return
	}
	w.header('$', int64(len(b)))
	w.Buf = append(w.Buf, b...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// grow extends Buf by n bytes and returns them.
func (w *Writer) grow(n int) []byte {
	l := len(w.Buf)
	if cap(w.Buf)-l < n {
		w.Buf = append(w.Buf[:l:l], make([]byte, n)...)
	} else {
		w.Buf = w.Buf[:l+n]
	}
	return w.Buf[l : l+n : l+n]
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) {
	w.header('$', int64(len(s)))
	w.Buf = append(w.Buf, s...)
	w.Buf = append(w.Buf, '\r', '\n')
}

// BulkInt writes n as a bulk string of its decimal form.
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.Bulk(tmp[formatInt(&tmp, len(tmp), n):])
}

// Null writes the null reply: $-1 in RESP2, _ in RESP3.
func (w *Writer) Null() {
	if w.Proto == 3 {
		w.Buf = append(w.Buf, "_\r\n"...)
		return
	}
	w.Buf = append(w.Buf, "$-1\r\n"...)
}

// NullArray writes the null array: *-1 in RESP2, _ in RESP3.
func (w *Writer) NullArray() {
	if w.Proto == 3 {
		w.Buf = append(w.Buf, "_\r\n"...)
		return
	}
	w.Buf = append(w.Buf, "*-1\r\n"...)
}

// Array opens an array of n elements; write them next.
func (w *Writer) Array(n int) { w.header('*', int64(n)) }

// Map opens a map of n pairs: %n in RESP3, an array of 2n in RESP2.
func (w *Writer) Map(n int) {
	if w.Proto == 3 {
		w.header('%', int64(n))
		return
	}
	w.header('*', int64(2*n))
}

// Set opens a set of n elements: ~n in RESP3, an array in RESP2.
func (w *Writer) Set(n int) {
	if w.Proto == 3 {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Push opens a push message of n elements (>n, RESP3 only; an array in RESP2).
func (w *Writer) Push(n int) {
	if w.Proto == 3 {
		w.header('>', int64(n))
		return
	}
	w.header('*', int64(n))
}

// Double writes a float: ,f in RESP3, a bulk string in RESP2, formatted as
// Redis formats doubles (shortest round-trip form, inf, -inf, nan).
func (w *Writer) Double(f float64) {
	var tmp [40]byte
	b := AppendDouble(tmp[:0], f)
	if w.Proto == 3 {
		w.Buf = append(w.Buf, ',')
		w.Buf = append(w.Buf, b...)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	w.Bulk(b)
}

// Bool writes a boolean: #t/#f in RESP3, :1/:0 in RESP2.
func (w *Writer) Bool(b bool) {
	if w.Proto == 3 {
		if b {
			w.Buf = append(w.Buf, "#t\r\n"...)
		} else {
			w.Buf = append(w.Buf, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Verbatim writes a verbatim string (=, RESP3) with the given 3-letter
// format, or a bulk string in RESP2.
func (w *Writer) Verbatim(format string, s string) {
	if w.Proto == 3 {
		w.header('=', int64(len(s)+4))
		w.Buf = append(w.Buf, format...)
		w.Buf = append(w.Buf, ':')
		w.Buf = append(w.Buf, s...)
		w.Buf = append(w.Buf, '\r', '\n')
		return
	}
	w.BulkString(s)
}

// Raw appends already encoded RESP bytes.
func (w *Writer) Raw(b []byte) { w.Buf = append(w.Buf, b...) }

// AppendDouble formats f as Redis does for replies: the shortest form that
// reads back as f, in plain notation where C's %.17g would use it (decimal
// exponent from -4 to 16) and exponent notation otherwise; inf, -inf, nan.
func AppendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	exp := math.Floor(math.Log10(math.Abs(f)))
	if exp >= -4 && exp < 17 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'e', -1, 64)
}
