package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The differential runner plays each testdata/diff/*.redis script against
// redis-server and respike and compares the raw replies byte for byte.
//
// Script format: one command per line, quoted as redis-cli quotes ("..."
// with \xHH, \n, \r, \t, \a, \b, \\ and \" escapes; '...' with \' only).
// Blank lines and lines starting with # are ignored. Directives, either
// alone on a line (then they apply to the next command) or before a command
// on the same line:
//
//	!sort     compare aggregate replies as multisets (maps by pairs)
//	!shape    compare only the RESP types and aggregate lengths (random replies)
//	!approx   integers may differ by 1 (TTLs); negative ones may not
//	!noredis  run on respike only: a documented deliberate difference;
//	          "!noredis CMD ... -> "REPLY"" also checks respike's raw reply
//	!proto3   (alone) switch both connections to RESP3 for the rest of the file
//
// Each file starts on fresh connections after FLUSHALL on both servers.

// scriptLine is one command of a script.
type scriptLine struct {
	file   string
	num    int
	text   string
	args   []string
	mode   string // "", "sort", "shape", "approx", "noredis", "proto3"
	expect *string
}

// parseScript reads a script into its commands.
func parseScript(name string, data []byte) ([]scriptLine, error) {
	var out []scriptLine
	pending := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for num := 1; sc.Scan(); num++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		mode := ""
		if strings.HasPrefix(text, "!") {
			word, rest, _ := strings.Cut(text, " ")
			mode, text = strings.TrimPrefix(word, "!"), strings.TrimSpace(rest)
			switch mode {
			case "sort", "shape", "approx", "noredis":
			case "proto3":
				if text != "" {
					return nil, fmt.Errorf("%s:%d: !proto3 stands alone", name, num)
				}
				out = append(out, scriptLine{file: name, num: num, mode: mode})
				continue
			default:
				return nil, fmt.Errorf("%s:%d: unknown directive !%s", name, num, mode)
			}
			if text == "" {
				if pending != "" {
					return nil, fmt.Errorf("%s:%d: two directives in a row", name, num)
				}
				pending = mode
				continue
			}
		}
		if mode == "" {
			mode, pending = pending, ""
		} else if pending != "" {
			return nil, fmt.Errorf("%s:%d: directive on a line after a directive line", name, num)
		}
		line := scriptLine{file: name, num: num, text: text, mode: mode}
		if mode == "noredis" {
			if cmd, want, ok := strings.Cut(text, " -> "); ok {
				w, err := splitArgs(want)
				if err != nil || len(w) != 1 {
					return nil, fmt.Errorf("%s:%d: bad expected reply %q", name, num, want)
				}
				line.text, line.expect = cmd, &w[0]
			}
		}
		args, err := splitArgs(line.text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, num, err)
		}
		line.args = args
		out = append(out, line)
	}
	if pending != "" {
		return nil, fmt.Errorf("%s: directive !%s at the end of the file", name, pending)
	}
	return out, sc.Err()
}

// splitArgs splits a line as redis-cli (sdssplitargs) does.
func splitArgs(line string) ([]string, error) {
	var args []string
	i := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0 }
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return args, nil
		}
		var cur []byte
		inq, insq := false, false
		for done := false; !done; {
			switch {
			case inq:
				switch {
				case i >= len(line):
					return nil, errors.New("unbalanced quotes")
				case line[i] == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					v, _ := strconv.ParseUint(line[i+2:i+4], 16, 8)
					cur = append(cur, byte(v))
					i += 3
				case line[i] == '\\' && i+1 < len(line):
					i++
					c := line[i]
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					cur = append(cur, c)
				case line[i] == '"':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, errors.New("closing quote must be followed by a space")
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			case insq:
				switch {
				case i >= len(line):
					return nil, errors.New("unbalanced quotes")
				case line[i] == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				case line[i] == '\'':
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, errors.New("closing quote must be followed by a space")
					}
					done = true
				default:
					cur = append(cur, line[i])
				}
			default:
				switch {
				case i >= len(line) || isSpace(line[i]):
					done = true
				case line[i] == '"':
					inq = true
				case line[i] == '\'':
					insq = true
				default:
					cur = append(cur, line[i])
				}
			}
			if i < len(line) {
				i++
			}
		}
		args = append(args, string(cur))
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// node is a parsed RESP reply.
type node struct {
	typ  byte
	head string // the header line without its type byte and CRLF
	raw  string // the whole reply
	kids []node
}

// parseNode parses one reply from s and returns it and the rest.
func parseNode(s string) (node, string, error) {
	end := strings.Index(s, "\r\n")
	if end < 1 {
		return node{}, s, fmt.Errorf("malformed reply %q", s)
	}
	n := node{typ: s[0], head: s[1:end]}
	rest := s[end+2:]
	count, _ := strconv.Atoi(n.head)
	switch n.typ {
	case '$', '=', '!':
		if count >= 0 {
			if len(rest) < count+2 {
				return n, rest, fmt.Errorf("short bulk %q", s)
			}
			rest = rest[count+2:]
		}
	case '*', '~', '>', '%', '|':
		if n.typ == '%' || n.typ == '|' {
			count *= 2
		}
		for i := 0; i < count; i++ {
			var k node
			var err error
			if k, rest, err = parseNode(rest); err != nil {
				return n, rest, err
			}
			n.kids = append(n.kids, k)
		}
	}
	n.raw = s[:len(s)-len(rest)]
	return n, rest, nil
}

func parseReply(s string) (node, error) {
	n, rest, err := parseNode(s)
	if err == nil && rest != "" {
		err = fmt.Errorf("trailing bytes %q", rest)
	}
	return n, err
}

func isAggregate(t byte) bool { return strings.IndexByte("*~>%|", t) >= 0 }

// sameReply compares two raw replies under a mode.
func sameReply(mode, a, b string) bool {
	if a == b {
		return true
	}
	if mode == "" {
		return false
	}
	na, err1 := parseReply(a)
	nb, err2 := parseReply(b)
	if err1 != nil || err2 != nil {
		return false
	}
	switch mode {
	case "sort":
		return sameMultiset(na, nb)
	case "shape":
		return sameShape(na, nb)
	case "approx":
		return sameApprox(na, nb)
	}
	return false
}

// sameMultiset compares aggregates ignoring element order at every depth,
// so that nested replies such as SCAN's [cursor, [keys...]] compare as sets
// too; map pairs stay together.
func sameMultiset(a, b node) bool {
	if !isAggregate(a.typ) || !isAggregate(b.typ) {
		return false
	}
	return canonical(a) == canonical(b)
}

// canonical renders n with the elements of every aggregate sorted.
func canonical(n node) string {
	if !isAggregate(n.typ) {
		return n.raw
	}
	var items []string
	step := 1
	if n.typ == '%' {
		step = 2
	}
	for i := 0; i+step <= len(n.kids); i += step {
		s := canonical(n.kids[i])
		if step == 2 {
			s += canonical(n.kids[i+1])
		}
		items = append(items, s)
	}
	sort.Strings(items)
	return fmt.Sprintf("%c%d[%s]", n.typ, len(n.kids), strings.Join(items, "\x00"))
}

func sameShape(a, b node) bool {
	if a.typ != b.typ {
		return false
	}
	if a.typ == '-' || a.typ == '!' {
		return a.raw == b.raw
	}
	if !isAggregate(a.typ) {
		return true
	}
	if len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if !sameShape(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

func sameApprox(a, b node) bool {
	if a.typ != b.typ {
		return false
	}
	if a.typ == ':' {
		x, err1 := strconv.ParseInt(a.head, 10, 64)
		y, err2 := strconv.ParseInt(b.head, 10, 64)
		if x < 0 || y < 0 {
			return x == y // -1 and -2 (no expiry, no key) are exact
		}
		return err1 == nil && err2 == nil && x-y <= 1 && y-x <= 1
	}
	if !isAggregate(a.typ) {
		return a.raw == b.raw
	}
	if len(a.kids) != len(b.kids) {
		return false
	}
	for i := range a.kids {
		if !sameApprox(a.kids[i], b.kids[i]) {
			return false
		}
	}
	return true
}

// diffConn is a pair of connections, to redis-server and to respike.
type diffConn struct {
	t       *testing.T
	redis   *RawConn
	respike *RawConn
	proto3  bool
	addr    string // respike's address; "" for the e2e daemon
}

func (d *diffConn) connect() {
	d.t.Helper()
	var err error
	if d.redis, err = DialRaw(redisServer(d.t).Addr); err != nil {
		d.t.Fatal(err)
	}
	addr := d.addr
	if addr == "" {
		addr = env.daemon.Addr
	}
	if d.respike, err = DialRaw(addr); err != nil {
		d.t.Fatal(err)
	}
	if d.proto3 {
		d.hello3()
	}
}

func (d *diffConn) close() {
	d.redis.Close()
	d.respike.Close()
}

func (d *diffConn) hello3() {
	d.t.Helper()
	for _, c := range []*RawConn{d.redis, d.respike} {
		r, err := c.Do("HELLO", "3")
		if err != nil || !strings.HasPrefix(r, "%") {
			d.t.Fatalf("HELLO 3: %q %v", r, err)
		}
	}
}

// flushBoth empties both servers.
func flushBoth(t *testing.T) { t.Helper(); flushOn(t, env.daemon.Addr) }

// flushOn empties redis-server and the respike daemon at addr.
func flushOn(t *testing.T, respikeAddr string) {
	t.Helper()
	for _, addr := range []string{redisServer(t).Addr, respikeAddr} {
		c, err := DialRaw(addr)
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.Do("FLUSHALL")
		c.Close()
		if err != nil || r != "+OK\r\n" {
			t.Fatalf("FLUSHALL on %s: %q %v", addr, r, err)
		}
	}
}

// pipelinable reports whether a script line may be sent in a pipeline:
// one that both servers answer, that leaves the connection open.
func pipelinable(l scriptLine) bool {
	return l.mode != "noredis" && l.mode != "proto3" && len(l.args) > 0 && !strings.EqualFold(l.args[0], "quit")
}

// pipeline sends lines to both servers in one write each and compares the
// replies, as a client pipelining the script would see them: respike runs
// such a pipeline's module commands in shared guest calls.
func (d *diffConn) pipeline(lines []scriptLine) {
	t := d.t
	t.Helper()
	var buf []byte
	for _, l := range lines {
		buf = append(buf, Encode(l.args...)...)
	}
	read := func(c *RawConn) ([]string, error) {
		// Written from another goroutine: a long pipeline's replies could
		// otherwise fill both directions' buffers.
		sent := make(chan error, 1)
		go func() { sent <- c.Send(buf) }()
		var out []string
		for range lines {
			r, err := c.Reply()
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
		return out, <-sent
	}
	theirs, theirErr := read(d.redis)
	ours, ourErr := read(d.respike)
	if theirErr != nil || ourErr != nil {
		t.Fatalf("pipeline of %d lines from %s:%d: redis %v, respike %v", len(lines), lines[0].file, lines[0].num, theirErr, ourErr)
	}
	for i, l := range lines {
		if !sameReply(l.mode, theirs[i], ours[i]) {
			t.Errorf("%s:%d (pipelined): %s\n  redis:   %q\n  respike: %q", l.file, l.num, l.text, theirs[i], ours[i])
		}
	}
}

// runScript plays one script and reports every mismatch; pipelined, it
// sends each run of lines that allow it as one pipeline.
func runScript(t *testing.T, lines []scriptLine, pipelined bool) {
	runScriptOn(t, "", lines, pipelined)
}

// runScriptOn is runScript against the respike daemon at addr ("" for
// the e2e daemon).
func runScriptOn(t *testing.T, addr string, lines []scriptLine, pipelined bool) {
	if addr == "" {
		flushBoth(t)
	} else {
		flushOn(t, addr)
	}
	d := &diffConn{t: t, addr: addr}
	d.connect()
	defer func() { d.close() }()
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if pipelined && pipelinable(l) {
			j := i + 1
			for j < len(lines) && pipelinable(lines[j]) {
				j++
			}
			d.pipeline(lines[i:j])
			i = j - 1
			continue
		}
		if l.mode == "proto3" {
			d.proto3 = true
			d.hello3()
			continue
		}
		ours, ourErr := d.respike.Do(l.args...)
		if l.mode == "noredis" {
			switch {
			case ourErr != nil:
				t.Errorf("%s:%d: %s\n  respike failed: %v", l.file, l.num, l.text, ourErr)
			case l.expect != nil && ours != *l.expect:
				t.Errorf("%s:%d: %s\n  want:    %q\n  respike: %q", l.file, l.num, l.text, *l.expect, ours)
			}
		} else {
			theirs, theirErr := d.redis.Do(l.args...)
			switch {
			case theirErr != nil || ourErr != nil:
				t.Errorf("%s:%d: %s\n  redis:   %q (%v)\n  respike: %q (%v)", l.file, l.num, l.text, theirs, theirErr, ours, ourErr)
			case !sameReply(l.mode, theirs, ours):
				mode := ""
				if l.mode != "" {
					mode = " (!" + l.mode + ")"
				}
				t.Errorf("%s:%d: %s%s\n  redis:   %q\n  respike: %q", l.file, l.num, l.text, mode, theirs, ours)
			}
		}
		if ourErr != nil || len(l.args) > 0 && strings.EqualFold(l.args[0], "quit") {
			d.close()
			d.connect()
		}
	}
}

func TestDifferential(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "diff", "*.redis"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	redisServer(t)
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(strings.TrimSuffix(name, ".redis"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines, err := parseScript(name, data)
			if err != nil {
				t.Fatal(err)
			}
			t.Run("sequential", func(t *testing.T) { runScript(t, lines, false) })
			t.Run("pipelined", func(t *testing.T) { runScript(t, lines, true) })
		})
	}
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string][]string{
		`SET k v`:                   {"SET", "k", "v"},
		`  SET   "a b"  'c d'  `:    {"SET", "a b", "c d"},
		`ECHO "\x00\x41\xff\n\r\t"`: {"ECHO", "\x00A\xff\n\r\t"},
		`ECHO "q\"uote" 'it\'s'`:    {"ECHO", `q"uote`, "it's"},
		`ECHO "" ''`:                {"ECHO", "", ""},
		`ECHO "\xZZ"`:               {"ECHO", "xZZ"},
		`ECHO a"b c"`:               {"ECHO", "ab c"},
	} {
		got, err := splitArgs(in)
		if err != nil || strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{`ECHO "abc`, `ECHO 'abc`, `ECHO "a"b`} {
		if _, err := splitArgs(in); err == nil {
			t.Errorf("splitArgs(%q) accepted", in)
		}
	}
}

func TestReplyComparison(t *testing.T) {
	for _, tc := range []struct {
		mode, a, b string
		same       bool
	}{
		{"", "+OK\r\n", "+OK\r\n", true},
		{"", "+OK\r\n", "+OK \r\n", false},
		{"sort", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\nb\r\n$1\r\na\r\n", true},
		{"sort", "*2\r\n$1\r\na\r\n$1\r\nb\r\n", "*2\r\n$1\r\na\r\n$1\r\na\r\n", false},
		{"sort", "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n", "%2\r\n$1\r\nb\r\n:2\r\n$1\r\na\r\n:1\r\n", true},
		{"sort", "%2\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n:2\r\n", "%2\r\n$1\r\na\r\n:2\r\n$1\r\nb\r\n:1\r\n", false},
		{"sort", "~1\r\n$1\r\na\r\n", "*1\r\n$1\r\na\r\n", false},
		{"shape", "*2\r\n$1\r\na\r\n:5\r\n", "*2\r\n$3\r\nxyz\r\n:7\r\n", true},
		{"shape", "*2\r\n$1\r\na\r\n:5\r\n", "*1\r\n$1\r\na\r\n", false},
		{"shape", "$1\r\na\r\n", ":1\r\n", false},
		{"shape", "-ERR a\r\n", "-ERR b\r\n", false},
		{"approx", ":100\r\n", ":99\r\n", true},
		{"approx", ":100\r\n", ":98\r\n", false},
		{"approx", "*2\r\n:5\r\n$1\r\na\r\n", "*2\r\n:6\r\n$1\r\na\r\n", true},
		{"approx", "*2\r\n:5\r\n$1\r\na\r\n", "*2\r\n:6\r\n$1\r\nb\r\n", false},
	} {
		if got := sameReply(tc.mode, tc.a, tc.b); got != tc.same {
			t.Errorf("sameReply(%q, %q, %q) = %v", tc.mode, tc.a, tc.b, got)
		}
	}
}

func TestParseScript(t *testing.T) {
	lines, err := parseScript("x.redis", []byte("# comment\n\nPING\n!sort\nSMEMBERS s\n!shape SRANDMEMBER s\n!proto3\n"+
		"!noredis CLIENT SETINFO lib-name x -> \"+OK\\r\\n\"\n!noredis\nCLIENT NO-TOUCH on\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		s := fmt.Sprintf("%d:%s:%q", l.num, l.mode, l.args)
		if l.expect != nil {
			s += "->" + *l.expect
		}
		got = append(got, s)
	}
	want := []string{`3::["PING"]`, `5:sort:["SMEMBERS" "s"]`, `6:shape:["SRANDMEMBER" "s"]`, `7:proto3:[]`,
		"8:noredis:[\"CLIENT\" \"SETINFO\" \"lib-name\" \"x\"]->+OK\r\n", `10:noredis:["CLIENT" "NO-TOUCH" "on"]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{"!bogus PING\n", "!sort\n", "!proto3 PING\n", "!sort\n!shape\nPING\n", "ECHO \"a\n"} {
		if _, err := parseScript("bad.redis", []byte(bad)); err == nil {
			t.Errorf("parseScript accepted %q", bad)
		}
	}
}
