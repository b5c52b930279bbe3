package kit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestMatchAgainstRedis replays KEYS answers recorded from redis-server
// 7.0.15 (testdata/glob.json: a fixed key set and ~2000 patterns, many
// random, with classes, escapes, NULs and bytes >= 0x80).
func TestMatchAgainstRedis(t *testing.T) {
	raw, err := os.ReadFile("testdata/glob.json")
	if err != nil {
		t.Fatal(err)
	}
	var fix struct {
		Keys  []string
		Cases []struct {
			P string
			M []string
		}
	}
	if err := json.Unmarshal(raw, &fix); err != nil {
		t.Fatal(err)
	}
	dec := func(s string) []byte {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range fix.Cases {
		pat := dec(c.P)
		want := map[string]bool{}
		for _, m := range c.M {
			want[string(dec(m))] = true
		}
		for _, k := range fix.Keys {
			key := dec(k)
			if got := Match(pat, key); got != want[string(key)] {
				t.Errorf("Match(%q, %q) = %v, Redis says %v", pat, key, got, !got)
			}
		}
	}
	if len(fix.Cases) < 1000 {
		t.Errorf("only %d cases", len(fix.Cases))
	}
}

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		s  string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"123", 123, true},
		{"9223372036854775807", math.MaxInt64, true}, {"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false}, {"-9223372036854775809", 0, false},
		{"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-", 0, false}, {"-0", 0, false}, {"00", 0, false}, {"01", 0, false},
		{"+1", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1a", 0, false}, {"1.0", 0, false},
		{"0x1", 0, false}, {"\x001", 0, false}, {"123456789012345678901", 0, false},
	} {
		n, ok := ParseInt([]byte(c.s))
		if n != c.n || ok != c.ok {
			t.Errorf("ParseInt(%q) = %d, %v; want %d, %v", c.s, n, ok, c.n, c.ok)
		}
		if ok {
			if strconv.FormatInt(n, 10) != c.s {
				t.Errorf("ParseInt(%q) accepted a non-canonical form", c.s)
			}
			if v := StrValue([]byte(c.s)); v.Int != n {
				t.Errorf("StrValue(%q) = %+v", c.s, v)
			}
		}
	}
}

func TestSecondsUntil(t *testing.T) {
	for _, c := range []struct{ when, now, want int64 }{
		{1000, 0, 1}, {1001, 0, 2}, {1, 0, 1}, {0, 0, 0}, {-5, 0, 0}, {1500, 0, 2},
		{100_000, 0, 100}, {5000, 4001, 1}, {5000, 3999, 2},
	} {
		if got := SecondsUntil(c.when, c.now); got != c.want {
			t.Errorf("SecondsUntil(%d, %d) = %d, want %d", c.when, c.now, got, c.want)
		}
	}
}

func TestExpiry(t *testing.T) {
	const now = 1_700_000_000_000
	for _, c := range []struct {
		n         int64
		secs, rel bool
		when      int64
		ok        bool
	}{
		{10, true, true, now + 10_000, true},
		{10, false, true, now + 10, true},
		{5, true, false, 5000, true},
		{0, true, true, 0, false},
		{-1, false, false, 0, false},
		{math.MaxInt64 / 1000, true, true, 0, false}, // overflows with now
		{math.MaxInt64/1000 + 1, true, false, 0, false},
		{math.MaxInt64, false, false, math.MaxInt64, true},
		{math.MaxInt64, false, true, 0, false},
	} {
		when, ok := SetExpiry(c.n, c.secs, c.rel, now)
		if ok != c.ok || (ok && when != c.when) {
			t.Errorf("SetExpiry(%d, %v, %v) = %d, %v", c.n, c.secs, c.rel, when, ok)
		}
	}
	for _, c := range []struct {
		n    int64
		secs bool
		base int64
		when int64
		ok   bool
	}{
		{-5, true, now, now - 5000, true},
		{math.MaxInt64/1000 + 1, true, 0, 0, false},
		{math.MinInt64/1000 - 1, true, 0, 0, false},
		{math.MaxInt64 / 1000, true, now, 0, false},
		{math.MaxInt64, false, 0, math.MaxInt64, true},
		{math.MaxInt64, false, now, 0, false},
	} {
		when, ok := KeyExpiry(c.n, c.secs, c.base)
		if ok != c.ok || (ok && when != c.when) {
			t.Errorf("KeyExpiry(%d, %v, %d) = %d, %v", c.n, c.secs, c.base, when, ok)
		}
	}
}

func TestDedup(t *testing.T) {
	keys := func(ss ...string) [][]byte {
		var b [][]byte
		for _, s := range ss {
			b = append(b, []byte(s))
		}
		return b
	}
	if got := Dedup(keys("a", "b", "c"), false); got != nil {
		t.Errorf("distinct keys: %v", got)
	}
	if got := Dedup(keys("a", "b", "a", "a"), false); !slices.Equal(got, []bool{true, true, false, false}) {
		t.Errorf("first: %v", got)
	}
	if got := Dedup(keys("a", "b", "a", "a"), true); !slices.Equal(got, []bool{false, true, false, true}) {
		t.Errorf("last: %v", got)
	}
	var many []string
	for i := range 40 {
		many = append(many, strconv.Itoa(i%13))
	}
	for _, last := range []bool{false, true} {
		got := Dedup(keys(many...), last)
		seen := map[string]int{}
		for i, k := range many {
			if got[i] {
				seen[k]++
				if last && slices.Contains(many[i+1:], k) || !last && slices.Contains(many[:i], k) {
					t.Errorf("last=%v kept %q at %d", last, k, i)
				}
			}
		}
		if len(seen) != 13 {
			t.Errorf("last=%v kept %d distinct keys", last, len(seen))
		}
	}
}

// shortDecimal agrees with strconv.ParseFloat bit for bit on the plain
// decimals it takes, and leaves the rest to it.
func TestShortDecimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 300000 {
		var s string
		switch i % 4 {
		case 0:
			s = strconv.FormatFloat(rng.Float64()*360-180, 'f', rng.IntN(9), 64)
		case 1:
			s = strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(12))), 'f', rng.IntN(12), 64)
		case 2:
			s = strconv.FormatUint(rng.Uint64N(1_000_000_000_000_000), 10)
			k := rng.IntN(len(s) + 1)
			s = s[:k] + "." + s[k:]
		default:
			s = []string{"-0.0", "0.", ".5", "-.5", "+1.25", "1e5", "1.5e3", ".", "-", "1.2.3", "0x1p3", "123456789012345.6", "99999999999999.9", "9007199254740993.0", " 1.5", "1_0.5"}[i/4%16]
		}
		want, err := strconv.ParseFloat(s, 64)
		got, ok := shortDecimal([]byte(s))
		if ok && (err != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("%q: %v, ParseFloat %v %v", s, got, want, err)
		}
		if f, ok := Strtod([]byte(s)); err == nil && !strings.Contains(s, "_") && s[0] != ' ' && (!ok || math.Float64bits(f) != math.Float64bits(want)) {
			t.Fatalf("Strtod(%q) = %v %v, want %v", s, f, ok, want)
		}
	}
}

// TestNoFmtNoTime checks that kit, as a module links it, imports neither
// fmt nor time (and the os, reflection and syscall they bring): they were
// a fifth of a built-in module and of its load time (docs/RATIONALE.md,
// "Guest modules without fmt and time").
func TestNoFmtNoTime(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "fmt", "os", "runtime/debug", "time", "syscall":
			t.Errorf("kit imports %s in a module", pkg)
		}
	}
}

// parseIntRef is ParseInt before its short path (shortInt): the reference
// the short path must agree with.
func parseIntRef(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	p := b
	if neg {
		p = b[1:]
		if len(p) == 0 {
			return 0, false
		}
	}
	if p[0] < '1' || p[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, ch := range p {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (1<<64-1)/10 {
			return 0, false
		}
		v *= 10
		if v > 1<<64-1-d {
			return 0, false
		}
		v += d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}

// parseDoubleRef is ParseDouble before its fast path (plainDecimal), on
// parseIntRef.
func parseDoubleRef(b []byte) (float64, bool) {
	if len(b) == 0 || IsSpace(b[0]) {
		return 0, false
	}
	var f float64
	var ok bool
	if n, isInt := parseIntRef(b); isInt && n >= -1<<53 && n <= 1<<53 {
		f, ok = float64(n), true
	} else if g, short := shortDecimal(b); short {
		f, ok = g, true
	} else {
		s := strings.ReplaceAll(string(b), "_", "?") // C takes no underscores
		if len(s) > 1 && (s[0] == '+' || s[0] == '-') && len(s) > 2 && s[1] == '0' && (s[2] == 'x' || s[2] == 'X') ||
			len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
			if !strings.ContainsAny(s, "pP") {
				s += "p0"
			}
		}
		g, err := strconv.ParseFloat(s, 64)
		f, ok = g, err == nil && !math.IsNaN(g)
	}
	if ok && f == 0 && underflows(b) {
		return 0, false
	}
	if !ok {
		return 0, false
	}
	return f, true
}

// numberInputs are strings of the characters numbers are made of (and a
// few others): every one of up to four characters, and random ones and
// formatted numbers up to 22 bytes.
func numberInputs(yield func([]byte) bool) {
	const alpha = "0123456789.-+e x"
	var buf [22]byte
	for n := 0; n <= 4; n++ {
		total := 1
		for range n {
			total *= len(alpha)
		}
		for k := range total {
			x := k
			for i := range n {
				buf[i] = alpha[x%len(alpha)]
				x /= len(alpha)
			}
			if !yield(buf[:n]) {
				return
			}
		}
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 400000 {
		var b []byte
		switch i % 5 {
		case 0: // digits, maybe a sign and a point, mostly valid
			n := rng.IntN(21)
			for range n {
				b = append(b, byte('0'+rng.IntN(10)))
			}
			if rng.IntN(2) == 0 && n > 0 {
				k := rng.IntN(n + 1)
				b = append(b[:k], append([]byte{'.'}, b[k:]...)...)
			}
			if rng.IntN(3) == 0 {
				b = append([]byte{"-+"[rng.IntN(2)]}, b...)
			}
		case 1:
			n := rng.IntN(22)
			if i%10 == 6 {
				// Bytes next to the digits and the point, at the
				// lengths of decimalWords's byte-parallel tests.
				const near = "0123456789./:-+\x2d\x2f\x3a\x3f\xae\xb0\xb9\x00\xff"
				for range 8 + rng.IntN(10) {
					b = append(b, near[rng.IntN(len(near))])
				}
				break
			}
			for range n {
				b = append(b, alpha[rng.IntN(len(alpha))])
			}
		case 2:
			b = strconv.AppendFloat(nil, rng.Float64()*360-180, 'f', rng.IntN(10), 64)
		case 3:
			b = strconv.AppendInt(nil, rng.Int64()>>rng.IntN(64), 10)
		default:
			b = strconv.AppendFloat(nil, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(20)-5)), 'g', -1, 64)
		}
		if !yield(b) {
			return
		}
	}
}

// The short paths of ParseInt and ParseDouble answer exactly as the code
// they go in front of, over every short string of number characters and
// many random and formatted numbers.
func TestParseShortPaths(t *testing.T) {
	n := 0
	for b := range numberInputs {
		n++
		if v, ok := ParseInt(b); true {
			w, wok := parseIntRef(b)
			if v != w || ok != wok {
				t.Fatalf("ParseInt(%q) = %d, %v; the general path %d, %v", b, v, ok, w, wok)
			}
		}
		f, ok := ParseDouble(b)
		g, gok := parseDoubleRef(b)
		if ok != gok || math.Float64bits(f) != math.Float64bits(g) {
			t.Fatalf("ParseDouble(%q) = %v, %v; the general path %v, %v", b, f, ok, g, gok)
		}
	}
	if n < 400000 {
		t.Fatalf("only %d inputs", n)
	}
}

// zaddOption names the option bits of the words the six names in turn
// (ZAddOptions before) named: every word of up to four bytes from the
// options' letters in both cases and others, and random bytes.
func TestZAddOption(t *testing.T) {
	names := [...]string{"nx", "xx", "ch", "incr", "gt", "lt"}
	ref := func(a []byte) int64 {
		for bit, name := range names {
			if Fold(a, name) {
				return 1 << bit
			}
		}
		return 0
	}
	const alpha = "nNxXcChHiIrRgGtTlL.0\x00\x80\xceJ"
	check := func(a []byte) {
		if got, want := zaddOption(a), ref(a); got != want {
			t.Fatalf("zaddOption(%q) = %d, want %d", a, got, want)
		}
	}
	var buf [5]byte
	for n := 0; n <= 4; n++ {
		total := 1
		for range n {
			total *= len(alpha)
		}
		for k := range total {
			x := k
			for i := range n {
				buf[i] = alpha[x%len(alpha)]
				x /= len(alpha)
			}
			check(buf[:n])
		}
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for range 200000 {
		n := rng.IntN(6)
		for i := range n {
			buf[i] = byte(rng.Uint32())
		}
		check(buf[:n])
	}
}

// DecimalPair answers ParseDouble's values bit for bit, and strconv's,
// whenever it takes a pair, over every short string of number characters
// and many random and formatted numbers (each paired with the one
// before), and takes every pair of plain decimals of 8 to 16 bytes with
// at most 15 digits: coordinates as clients send them.
func TestDecimalPair(t *testing.T) {
	check := func(a, b []byte) bool {
		x, y, ok := DecimalPair(a, b)
		if !ok {
			return false
		}
		for _, c := range []struct {
			arg []byte
			got float64
		}{{a, x}, {b, y}} {
			want, wok := ParseDouble(c.arg)
			f, err := strconv.ParseFloat(string(c.arg), 64)
			if !wok || err != nil || math.Float64bits(c.got) != math.Float64bits(want) || math.Float64bits(f) != math.Float64bits(want) {
				t.Fatalf("DecimalPair(%q, %q) = %v, %v; ParseDouble %v, %v; ParseFloat %v, %v", a, b, x, y, want, wok, f, err)
			}
		}
		return true
	}
	var prev []byte
	taken := 0
	for b := range numberInputs {
		if check(prev, b) {
			taken++
		}
		if check(b, b) {
			taken++
		}
		prev = append(prev[:0], b...)
	}
	// Plain decimals of every length and point position the fast path
	// takes, with signs, zeros and 15 digits, and random coordinates.
	rng := rand.New(rand.NewPCG(20, 14))
	plain := func(body int, point int, sign string) []byte {
		b := []byte(sign)
		for j := range body {
			if j == point {
				b = append(b, '.')
			} else {
				b = append(b, byte('0'+rng.IntN(10)))
			}
		}
		return b
	}
	for i := range 200000 {
		body := 8 + i%9
		point := rng.IntN(body + 1) // body: no point, if 15 digits or fewer
		sign := []string{"", "-", "+"}[rng.IntN(3)]
		a, b := plain(body, point, sign), strconv.AppendFloat(nil, rng.Float64()*170-85, 'f', 6, 64)
		if i%7 == 0 {
			a = bytes.ReplaceAll(a, []byte("9"), []byte("0")) // zeros, -0
		}
		valid := point < body || body <= 15
		got := check(a, b)
		if len(b) >= 8 && len(b) <= 17 && got != valid {
			t.Fatalf("DecimalPair(%q, %q) took %v, want %v", a, b, got, valid)
		}
	}
	for _, c := range [][2]string{
		{"13.361389", "38.115556"}, {"-180.0000", "85.05112878"}, {"-0.000000", "+0.000000"},
		{".123456789012345", "123456789012345."}, {"999999999999999.", "0.00000000000001"},
		{"9007199254740993", "1.000000"}, {"12345678", "1234567"}, {"1.2.3456", "12345678"},
		{"1234567e", "12345678"}, {" 1.23456", "12345678"}, {"12345678", ""},
	} {
		check([]byte(c[0]), []byte(c[1]))
	}
	if taken < 20000 {
		t.Fatalf("only %d pairs taken", taken)
	}
}
