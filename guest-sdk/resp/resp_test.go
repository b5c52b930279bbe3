package resp

import (
	"math"
	"strconv"
	"testing"
)

func TestRESP2AndRESP3Shapes(t *testing.T) {
	cases := []struct {
		name   string
		write  func(w *Writer)
		v2, v3 string
	}{
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"map", func(w *Writer) { w.Map(1); w.BulkString("a"); w.Int(1) }, "*2\r\n$1\r\na\r\n:1\r\n", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"set", func(w *Writer) { w.Set(1); w.BulkString("m") }, "*1\r\n$1\r\nm\r\n", "~1\r\n$1\r\nm\r\n"},
		{"double", func(w *Writer) { w.Double(1.5) }, "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"bool", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"error framing", func(w *Writer) { w.Error("ERR a\r\nb") }, "-ERR a  b\r\n", "-ERR a  b\r\n"},
		{"empty bulk", func(w *Writer) { w.Bulk(nil) }, "$0\r\n\r\n", "$0\r\n\r\n"},
	}
	for _, c := range cases {
		for _, proto := range []int{2, 3} {
			var w Writer
			w.Reset(proto)
			c.write(&w)
			want := c.v2
			if proto == 3 {
				want = c.v3
			}
			if string(w.Buf) != want {
				t.Errorf("%s RESP%d: got %q, want %q", c.name, proto, w.Buf, want)
			}
		}
	}
}

func TestAppendDouble(t *testing.T) {
	cases := map[float64]string{
		0: "0", 1: "1", -2.5: "-2.5", 0.1: "0.1", 1e17: "1e+17", 1e16: "10000000000000000",
		0.0001: "0.0001", 0.00001: "1e-05", math.Inf(1): "inf", math.Inf(-1): "-inf", 3.0e3: "3000",
	}
	for f, want := range cases {
		if got := string(AppendDouble(nil, f)); got != want {
			t.Errorf("AppendDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestIntFormatting checks the header and integer formatter against
// strconv across digit counts, both halves of the 32-bit fast path and
// the extremes.
func TestIntFormatting(t *testing.T) {
	vals := []int64{0, 9, 10, 99, 100, 101, 999, 1000, 65535, 1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<32 + 1,
		4294967295, 4294967296, 99999999999, 1e18, 1<<63 - 1, -1 << 63}
	for v := int64(1); v < 1e18; v = v*7 + 3 {
		vals = append(vals, v)
	}
	for _, v := range vals {
		for _, n := range []int64{v, -v} {
			var w Writer
			w.Int(n)
			if want := ":" + strconv.FormatInt(n, 10) + "\r\n"; string(w.Buf) != want {
				t.Fatalf("Int(%d) = %q, want %q", n, w.Buf, want)
			}
		}
	}
	for x := uint64(0); x < 1<<32; x += 7919 {
		if q := uint32(x * 0x51EB851F >> 37); q != uint32(x)/100 {
			t.Fatalf("%d / 100 = %d", x, q)
		}
	}
}

func TestBulkInt(t *testing.T) {
	for _, n := range []int64{0, 7, -7, 12345, -1 << 63, 1<<63 - 1} {
		var w Writer
		w.BulkInt(n)
		s := strconv.FormatInt(n, 10)
		if want := "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n"; string(w.Buf) != want {
			t.Fatalf("BulkInt(%d) = %q, want %q", n, w.Buf, want)
		}
	}
}
