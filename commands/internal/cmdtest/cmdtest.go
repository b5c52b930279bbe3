// Package cmdtest holds the test helpers shared by the built-in command
// modules' unit tests: running a test under both store paths, scripted
// command/reply checks, direct store access, a store wrapper for playing a
// concurrent client, stand-in commands of other modules and a RESP decoder.
// Only _test.go files import it.
package cmdtest

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// Each runs f on a fresh host twice: resuming after every store request
// (the remote-store path) and running requests inline (the embedded one).
func Each(t *testing.T, f func(t *testing.T, h *sdktest.Host)) {
	t.Helper()
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			h := sdktest.New()
			t.Cleanup(func() { h.Store.Close() })
			h.Inline = inline
			f(t, h)
		})
	}
}

// Script runs lines of `command args... => reply` against h, comparing
// replies in sdktest.Format notation. Arguments are separated by spaces; a
// Go-quoted argument ("a b\x00") may hold any bytes. Blank lines and lines
// starting with # are skipped.
func Script(t testing.TB, h *sdktest.Host, s string) {
	t.Helper()
	for n, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmd, want, ok := strings.Cut(line, " => ")
		if !ok {
			t.Fatalf("script line %d has no ' => ': %q", n+1, line)
		}
		if got := Do(t, h, cmd); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", cmd, got, want)
		}
	}
}

// Do runs one command line (see Script) and returns the formatted reply.
func Do(t testing.TB, h *sdktest.Host, cmd string) string {
	t.Helper()
	args, err := SplitArgs(cmd)
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return h.Do(args...)
}

// SplitArgs splits a command line into arguments: space-separated words or
// Go-quoted strings.
func SplitArgs(s string) ([]string, error) {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, fmt.Errorf("quoted argument in %q: %w", s, err)
			}
			a, _ := strconv.Unquote(q)
			args = append(args, a)
			s = s[len(q):]
			continue
		}
		a, rest, _ := strings.Cut(s, " ")
		args = append(args, a)
		s = rest
	}
	return args, nil
}

// Exec runs one call directly on st in database 0 (the one sdktest hosts
// use), failing the test if the request as a whole fails.
func Exec(t testing.TB, st store.Store, call codec.Call) codec.Result {
	t.Helper()
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}
	var resp codec.Response
	st.Exec(context.Background(), 0, &req, &resp)
	if resp.Code != codec.OK || len(resp.Results) != 1 {
		t.Fatalf("store request failed: %d %s", resp.Code, resp.Msg)
	}
	return resp.Results[0]
}

// PutType creates key as a record of type typ (a hash-like map), to give
// commands a key of another type.
func PutType(t testing.TB, st store.Store, key, typ string) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(typ)).
		MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte("f")), codec.Bytes([]byte("x"))})
	if r := Exec(t, st, call); r.Code != codec.OK {
		t.Fatalf("PutType: code %d", r.Code)
	}
}

// PutString stores v as the value of string key, bypassing the commands (to
// reach states such as a canonical integer stored as bytes, or to play
// another client).
func PutString(t testing.TB, st store.Store, key string, v codec.Value) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Exists(codec.ExistsReplace).Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, v)
	if r := Exec(t, st, call); r.Code != codec.OK {
		t.Fatalf("PutString: code %d", r.Code)
	}
}

// InterceptStore runs Before on every request, then the real store, then
// After if set: tests use it to play another client writing between two
// steps of a command, or to rewrite an outcome.
type InterceptStore struct {
	store.Store
	Before func(req *codec.Request)
	After  func(resp *codec.Response)
}

// Exec runs the request through the hooks and the wrapped store.
func (s *InterceptStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	if s.Before != nil {
		s.Before(req)
	}
	s.Store.Exec(ctx, db, req, resp)
	if s.After != nil {
		s.After(resp)
	}
}

// SplitReply splits a flat array reply in sdktest.Format notation into its
// elements (bulk strings without spaces only).
func SplitReply(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// RawArgs turns strings into the arguments DoRaw takes.
func RawArgs(args ...string) [][]byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return b
}

// ParseRESP decodes one reply: strings for bulk and simple strings, int64
// for integers, nil for nulls, []any for arrays, sets and maps (flattened),
// error for errors. It reports the bytes left over.
func ParseRESP(b []byte) (any, []byte) {
	i := strings.Index(string(b), "\r\n")
	line, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case '+':
		return line, rest
	case '-':
		return fmt.Errorf("%s", line), rest
	case ':':
		n, _ := strconv.ParseInt(line, 10, 64)
		return n, rest
	case '_':
		return nil, rest
	case '$':
		n, _ := strconv.Atoi(line)
		if n < 0 {
			return nil, rest
		}
		return string(rest[:n]), rest[n+2:]
	case '*', '~', '%':
		n, _ := strconv.Atoi(line)
		if n < 0 {
			return nil, rest
		}
		if b[0] == '%' {
			n *= 2
		}
		out := make([]any, 0, n)
		for range n {
			var e any
			e, rest = ParseRESP(rest)
			out = append(out, e)
		}
		return out, rest
	}
	panic("ParseRESP: unexpected reply " + string(b))
}

// DoParsed runs a command and decodes its reply, failing the test on an
// error reply.
func DoParsed(t testing.TB, h *sdktest.Host, args ...string) any {
	t.Helper()
	v, rest := ParseRESP(h.DoRaw(RawArgs(args...)...))
	if len(rest) != 0 {
		t.Fatalf("%v: %d trailing bytes", args, len(rest))
	}
	if err, ok := v.(error); ok {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// ChiSquare is Pearson's statistic of observed counts against a uniform
// expectation over cells.
func ChiSquare(counts map[string]int, cells int, total int) float64 {
	exp := float64(total) / float64(cells)
	x := 0.0
	seen := 0
	for _, n := range counts {
		d := float64(n) - exp
		x += d * d / exp
		seen++
	}
	// Cells never drawn count too.
	x += float64(cells-seen) * exp
	return x
}

// ChiBound is the value a ChiSquare statistic with df degrees of freedom
// exceeds with probability about 6e-8 when the draws are uniform (the
// Wilson–Hilferty approximation of the chi-square quantile at z = 5.3).
// Why not mean + 6σ: the chi-square's right tail is heavy at few degrees
// of freedom, where that bound is passed once in ~3,000 fair runs (df 4),
// and a suite of a dozen such checks failed now and then. A sampler that
// is really biased lands far above either bound with the tests' draws.
func ChiBound(df int) float64 {
	k := float64(df)
	c := 2 / (9 * k)
	v := 1 - c + 5.3*math.Sqrt(c)
	return k * v * v * v
}

// Spec is what a module's manifest must say of one command, as Redis 7.0's
// COMMAND INFO does: {arity, first key, last key}. An array, so that tables
// of them stay one short literal per command.
type Spec [3]int

// CheckManifest checks that the manifest of the module under test is named
// module and describes each command of want with its Spec, group and a
// summary. Commands it does not name (test-only stand-ins) are ignored.
func CheckManifest(t *testing.T, module, group string, want map[string]Spec) {
	t.Helper()
	m := sdktest.Manifest()
	if m.Module != module {
		t.Errorf("module name %q", m.Module)
	}
	found := 0
	for _, c := range m.Commands {
		s, ok := want[c.Name]
		if !ok {
			continue // a test-only stand-in
		}
		found++
		if c.Arity != s[0] || c.FirstKey != s[1] || c.LastKey != s[2] || c.Group != group || c.Summary == "" {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
	if found != len(want) {
		t.Errorf("%d of %d commands in the manifest", found, len(want))
	}
}
