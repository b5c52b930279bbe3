package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/sdktest"
	"github.com/respike/respike/host/store"
)

// each runs f on a fresh host twice: resuming after every store request
// (the remote-store path) and running requests inline (the embedded one).
func each(t *testing.T, f func(t *testing.T, h *sdktest.Host)) {
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

// script runs lines of `command args... => reply` against h, comparing
// replies in sdktest.Format notation. Arguments are separated by spaces; a
// Go-quoted argument ("a b\x00") may hold any bytes. Blank lines and lines
// starting with # are skipped.
func script(t *testing.T, h *sdktest.Host, s string) {
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
		if got := do(t, h, cmd); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", cmd, got, want)
		}
	}
}

// do runs one command line (see script) and returns the formatted reply.
func do(t *testing.T, h *sdktest.Host, cmd string) string {
	t.Helper()
	args, err := splitArgs(cmd)
	if err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	return h.Do(args...)
}

func splitArgs(s string) ([]string, error) {
	var args []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
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

// execStore runs one call directly on a store.
func execStore(t *testing.T, st store.Store, call codec.Call) codec.Result {
	t.Helper()
	req := codec.Request{Kind: codec.ReqRecords, Calls: []codec.Call{call}}
	var resp codec.Response
	st.Exec(context.Background(), 0, &req, &resp)
	if resp.Code != codec.OK || len(resp.Results) != 1 {
		t.Fatalf("store request failed: %d %s", resp.Code, resp.Msg)
	}
	return resp.Results[0]
}

// putMember adds member to set key directly in the store, as another
// client would.
func putMember(t *testing.T, st store.Store, key, member string) {
	t.Helper()
	var call codec.Call
	call.Key = []byte(key)
	call.Put(codec.BinType, codec.Str(codec.TypeSet)).
		MapPut(codec.BinValue, codec.MapOrderKey, []codec.Value{codec.Bytes([]byte(member)), codec.Int(1)})
	if r := execStore(t, st, call); r.Code != codec.OK {
		t.Fatalf("putMember: code %d", r.Code)
	}
}

// interceptStore runs before on every request, then the real store: tests
// use it to play another client writing between two steps of a command.
type interceptStore struct {
	store.Store
	before func(req *codec.Request)
}

func (s *interceptStore) Exec(ctx context.Context, db int, req *codec.Request, resp *codec.Response) {
	s.before(req)
	s.Store.Exec(ctx, db, req, resp)
}

// Test-only stand-ins for commands of other modules, so scripts here can
// make keys of another type and observe TTLs and existence: SET (a string,
// no TTL), EXPIRE (seconds), TTL, EXISTS (one key) and TYPE.
func init() {
	header := func(next sdk.Step) sdk.Step {
		return func(c *sdk.Ctx) { c.Record(c.Arg(1)).Get(codec.BinType); c.Exec(next) }
	}
	sdk.Register(sdk.Command{Name: "set", Arity: 3, Run: func(c *sdk.Ctx) {
		c.Record(c.Arg(1)).Exists(codec.ExistsReplace).TTLNever().
			Put(codec.BinType, codec.Str(codec.TypeString)).Put(codec.BinValue, codec.Bytes(c.Arg(2)))
		c.Exec(func(c *sdk.Ctx) { c.Reply().OK() })
	}}, sdk.Command{Name: "expire", Arity: 3, Run: func(c *sdk.Ctx) {
		n, _ := strconv.Atoi(string(c.Arg(2)))
		c.Record(c.Arg(1)).Expire(int64(n)).Touch()
		c.Exec(func(c *sdk.Ctx) {
			if c.Result(0).OK() {
				c.Reply().Int(1)
			} else {
				c.Reply().Int(0)
			}
		})
	}}, sdk.Command{Name: "ttl", Arity: 2, Run: header(func(c *sdk.Ctx) {
		switch r := c.Result(0); r.Code {
		case codec.NotFound:
			c.Reply().Int(-2)
		default:
			c.Reply().Int(r.TTL)
		}
	})}, sdk.Command{Name: "exists", Arity: 2, Run: header(func(c *sdk.Ctx) {
		if c.Result(0).Code == codec.OK {
			c.Reply().Int(1)
		} else {
			c.Reply().Int(0)
		}
	})}, sdk.Command{Name: "type", Arity: 2, Run: header(func(c *sdk.Ctx) {
		if r := c.Result(0); r.Code == codec.OK {
			c.Reply().Simple(string(r.Value(0).Bytes))
		} else {
			c.Reply().Simple("none")
		}
	})})
}

// splitReply splits a flat array reply in sdktest.Format notation into its
// elements (bulk strings without spaces only).
func splitReply(s string) []string {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if s == "" {
		return nil
	}
	return strings.Fields(s)
}

// rawArgs turns strings into the arguments DoRaw takes.
func rawArgs(args ...string) [][]byte {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return b
}

// parseRESP decodes one reply: strings for bulk and simple strings, int64
// for integers, nil for nulls, []any for arrays, sets and maps (flattened),
// error for errors. It reports the bytes left over.
func parseRESP(b []byte) (any, []byte) {
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
			e, rest = parseRESP(rest)
			out = append(out, e)
		}
		return out, rest
	}
	panic("parseRESP: unexpected reply " + string(b))
}

// doParsed runs a command and decodes its reply.
func doParsed(t *testing.T, h *sdktest.Host, args ...string) any {
	t.Helper()
	v, rest := parseRESP(h.DoRaw(rawArgs(args...)...))
	if len(rest) != 0 {
		t.Fatalf("%v: %d trailing bytes", args, len(rest))
	}
	if err, ok := v.(error); ok {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// chiSquare is Pearson's statistic of observed counts against a uniform
// expectation.
func chiSquare(counts map[string]int, cells int, total int) float64 {
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
