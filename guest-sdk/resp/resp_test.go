package resp

import (
	"math"
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
