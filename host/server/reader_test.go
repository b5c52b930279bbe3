package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// chunkReader returns its data n bytes per Read, to split requests at
// every possible place.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := min(r.n, len(p), len(r.data))
	copy(p, r.data[:k])
	r.data = r.data[k:]
	return k, nil
}

// readAll parses in through a reader, returning the commands and the error
// that ended the stream.
func readAll(in string, chunk int, maxBulk int64) ([][]string, error) {
	rd := &reader{r: &chunkReader{data: []byte(in), n: chunk}, maxBulk: maxBulk}
	var out [][]string
	for {
		cmds, err := rd.ReadCommands()
		if err != nil {
			return out, err
		}
		for _, c := range cmds {
			var args []string
			for _, a := range c {
				args = append(args, string(a))
			}
			out = append(out, args)
		}
	}
}

func TestReaderFraming(t *testing.T) {
	big := strings.Repeat("b", 5000)
	in := encode("set", "k", big) + "PING\r\n" + "*0\r\n" + encode("get", "") + "*-1\r\n" +
		"echo \"a b\" 'c'\r\n" + "\r\n" + encode("ping") + "ping x\n"
	want := [][]string{{"set", "k", big}, {"PING"}, {"get", ""}, {"echo", "a b", "c"}, {"ping"}, {"ping", "x"}}
	for _, chunk := range []int{1, 2, 3, 7, 64, 4096, 1 << 20} {
		got, err := readAll(in, chunk, 1<<20)
		if err != io.EOF {
			t.Fatalf("chunk %d: err %v", chunk, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chunk %d: got %q", chunk, got)
		}
	}
}

func TestReaderErrorsKeepEarlierCommands(t *testing.T) {
	for _, tc := range []struct {
		name, in, err string
	}{
		{"oversized bulk", encode("ping") + "*1\r\n$101\r\n", "invalid bulk length"},
		{"bad element", encode("ping") + "*1\r\n:1\r\n", "expected '$', got ':'"},
		{"no CR after multibulk count", encode("ping") + "*1\n", "invalid multibulk length"},
		{"signed count", encode("ping") + "*+1\r\n$4\r\nping\r\n", "invalid multibulk length"},
		{"unbalanced quotes", encode("ping") + "ping 'a\r\n", "unbalanced quotes in request"},
		{"too long inline", encode("ping") + strings.Repeat("x", maxInline+1), "too big inline request"},
	} {
		for _, chunk := range []int{1, 5, 4096} {
			got, err := readAll(tc.in, chunk, 100)
			if !reflect.DeepEqual(got, [][]string{{"ping"}}) {
				t.Errorf("%s, chunk %d: commands %q", tc.name, chunk, got)
			}
			if err == nil || !strings.HasSuffix(err.Error(), tc.err) {
				t.Errorf("%s, chunk %d: err %v, want %q", tc.name, chunk, err, tc.err)
			}
		}
	}
}

func TestReaderOneCommandAtATimeBeforeAuth(t *testing.T) {
	s := newServer(testConfig(), newFakeRuntime(), nil, nil)
	s.setRequirePass("pw")
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newClient(s, 1, a)
	in := encode("auth", "pw") + encode("echo", strings.Repeat("x", 20000))
	c.rd.r = &chunkReader{data: []byte(in), n: 1 << 20}
	cmds, err := c.rd.ReadCommands()
	if err != nil || len(cmds) != 1 || string(cmds[0][0]) != "auth" {
		t.Fatalf("first batch: %v %v", cmds, err)
	}
	c.authenticated = true // as AUTH would
	cmds, err = c.rd.ReadCommands()
	if err != nil || len(cmds) != 1 || len(cmds[0][1]) != 20000 {
		t.Fatalf("second batch: %v", err)
	}

	// Without AUTH the same argument is refused.
	c2 := newClient(s, 2, a)
	c2.rd.r = &chunkReader{data: []byte(encode("echo", strings.Repeat("x", 20000))), n: 1 << 20}
	_, err = c2.rd.ReadCommands()
	var pe *protoError
	if !errors.As(err, &pe) || pe.msg != "unauthenticated bulk length" {
		t.Fatalf("unauthenticated: %v", err)
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	s := newServer(testConfig(), newFakeRuntime(), &fakeStore{}, nil)
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := newClient(s, 1, a)
	c.w.Buf = make([]byte, 0, 4096)
	for _, args := range [][][]byte{
		{[]byte("PING")},
		{[]byte("echo"), []byte("hello")},
		{[]byte("FGET"), []byte("key")},
	} {
		c.process(args) // warm the statistics cache and the pipe
		c.runPipe()
		allocs := testing.AllocsPerRun(100, func() {
			c.w.Buf = c.w.Buf[:0]
			c.process(args)
			c.runPipe() // module commands wait to run together
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per command", args[0], allocs)
		}
	}
	if !bytes.HasPrefix(c.w.Buf, []byte("$3\r\nkey\r\n")) {
		t.Fatalf("reply %q", c.w.Buf)
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "1": 1, "-1": -1, "9223372036854775807": 1<<63 - 1,
		"-9223372036854775808": -1 << 63, "42": 42} {
		if got, ok := parseInt([]byte(in)); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "-", "01", "+1", " 1", "1 ", "-0", "9223372036854775808", "-9223372036854775809", "1x", "99999999999999999999"} {
		if _, ok := parseInt([]byte(in)); ok {
			t.Errorf("parseInt(%q) accepted", in)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"*", "anything", true}, {"max*", "maxmemory", true}, {"*max*", "proto-max-bulk-len", true},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false}, {"h[ae]llo", "hallo", true},
		{"h[^e]llo", "hello", false}, {"h[a-c]llo", "hbllo", true}, {"h[c-a]llo", "hbllo", true},
		{"a\\*b", "a*b", true}, {"a\\*b", "axb", false}, {"MAX*", "maxclients", true},
		{"client|s*", "client|setname", true}, {"", "", true}, {"a", "", false}, {"[abc", "a", true},
	} {
		if got := globMatch(tc.p, tc.s, true); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
	if globMatch("MAX*", "maxclients", false) {
		t.Error("case-sensitive match folded case")
	}
}

// TestInlineQuotingIsRedis checks inline commands against Redis's
// sdssplitargs, which redis-cli users and telnet sessions rely on.
func TestInlineQuotingIsRedis(t *testing.T) {
	for in, want := range map[string][]string{
		"set a\"b c\" x\r\n":            {"set", "ab c", "x"},
		"echo \"\\x41\\n\\t\\q\"\n":     {"echo", "A\n\tq"},
		"echo 'it\\'s' '\\n'\n":         {"echo", "it's", "\\n"},
		"  \t\vping\t x \r\n":           {"ping", "x"},
		"echo \"\"\n":                   {"echo", ""},
		"ping\x00ignored after NUL\r\n": {"ping"},
	} {
		got, err := readAll(in, 1<<20, 1<<20)
		if err != io.EOF || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%q: got %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"echo \"a\"b\n", "echo 'a'b\n", "echo \"abc\n", "echo 'abc\n", "echo \"a\x00\"\n"} {
		if _, err := readAll(in, 1<<20, 1<<20); err == nil || !strings.Contains(err.Error(), "unbalanced quotes") {
			t.Errorf("%q: err %v", in, err)
		}
	}
}

// TestLargeCommandInSmallReads sends a command of 20,000 arguments a few
// bytes per read; it must arrive whole, once.
func TestLargeCommandInSmallReads(t *testing.T) {
	args := []string{"mset"}
	for i := range 10000 {
		args = append(args, "k"+strings.Repeat("x", i%7), "v")
	}
	got, err := readAll(encode(args...)+encode("ping"), 13, 1<<20)
	if err != io.EOF || len(got) != 2 || !reflect.DeepEqual(got[0], args) || got[1][0] != "ping" {
		t.Fatalf("%d commands, err %v", len(got), err)
	}
}

// TestReaderDoesNotAllocate checks that parsing a pipeline of multibulk
// commands allocates nothing once the reader is warm.
func TestReaderDoesNotAllocate(t *testing.T) {
	in := []byte(strings.Repeat(encode("get", "key")+encode("set", "key", "value"), 50))
	src := &chunkReader{}
	rd := &reader{r: src, maxBulk: 1 << 20}
	run := func() {
		src.data, src.n = in, len(in)
		n := 0
		for n < 100 {
			cmds, err := rd.ReadCommands()
			if err != nil {
				t.Fatal(err)
			}
			n += len(cmds)
		}
	}
	run()
	if allocs := testing.AllocsPerRun(50, run); allocs != 0 {
		t.Fatalf("%v allocations per pipeline of 100 commands", allocs)
	}
}

// TestReadMore reads a blocked client's pipelined input while its command
// runs: the command's arguments stay intact, whether the input fits the
// buffer's end or the buffer is replaced, and the input parses afterwards.
func TestReadMore(t *testing.T) {
	first := "*2\r\n$5\r\nBLPOP\r\n$1\r\nk\r\n"
	more := strings.Repeat("*1\r\n$4\r\nPING\r\n", 1000) // beyond the first buffer
	src := &chunkReader{data: []byte(first), n: len(first)}
	rd := &reader{r: src, maxBulk: 1 << 20}
	cmds, err := rd.ReadCommands()
	if err != nil || len(cmds) != 1 {
		t.Fatalf("ReadCommands: %q, %v", cmds, err)
	}
	src.data, src.n = []byte(more), 100
	for len(src.data) > 0 {
		if err := rd.readMore(); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(cmds[0][0]) + " " + string(cmds[0][1]); got != "BLPOP k" {
		t.Fatalf("the running command's arguments changed: %q", got)
	}
	if err := rd.readMore(); !errors.Is(err, io.EOF) {
		t.Fatalf("readMore at the end: %v, want EOF", err)
	}
	n := 0
	for {
		cmds, err := rd.ReadCommands()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		for _, c := range cmds {
			if len(c) != 1 || string(c[0]) != "PING" {
				t.Fatalf("command %q", c)
			}
			n++
		}
	}
	if n != 1000 {
		t.Fatalf("%d commands read after the block, want 1000", n)
	}
}

// The two bytes after a bulk payload are skipped unchecked, as Redis 7.0
// skips them (checked against redis-server 7.0.15: "$4\r\nPINGxx" is PING).
func TestReaderSkipsBytesAfterPayload(t *testing.T) {
	in := "*1\r\n$4\r\nPINGxx" + "*2\r\n$4\r\nECHO\r\n$2\r\nhi\n\n" + encode("ping")
	for _, chunk := range []int{1, 3, 4096} {
		got, err := readAll(in, chunk, 100)
		if err != io.EOF || !reflect.DeepEqual(got, [][]string{{"PING"}, {"ECHO", "hi"}, {"ping"}}) {
			t.Fatalf("chunk %d: %q, %v", chunk, got, err)
		}
	}
}

// More than 1,048,576 arguments are accepted, as in Redis 7.0 (up to
// INT_MAX, bounded by the query buffer limit); INT_MAX+1 is refused.
func TestReaderManyArguments(t *testing.T) {
	const n = 1<<20 + 5
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(n) + "\r\n")
	for range n {
		b.WriteString("$1\r\nx\r\n")
	}
	got, err := readAll(b.String()+encode("ping"), 1<<16, 100)
	if err != io.EOF || len(got) != 2 || len(got[0]) != n || got[1][0] != "ping" {
		t.Fatalf("%d commands, first of %d arguments, %v", len(got), len(got[0]), err)
	}
	if _, err := readAll("*2147483648\r\n", 4096, 100); err == nil || !strings.Contains(err.Error(), "invalid multibulk length") {
		t.Fatalf("INT_MAX+1 arguments: %v", err)
	}
}

// TestShortHeaderAgreesWithHeaderNumber checks the reader's fast path for
// header numbers against the general one: every line it accepts must parse
// to the same number there, and it must accept the common forms.
func TestShortHeaderAgreesWithHeaderNumber(t *testing.T) {
	lines := []string{"0\r\n", "1\r\n", "3\r\n", "16\r\n", "999999999\r\n", "1000000000\r\n",
		"01\r\n", "00\r\n", "-1\r\n", "+1\r\n", "1\n", "1\r", "1", "", "\r\n", "1 \r\n", "12a\r\n",
		"9223372036854775807\r\n", "123456789\r\nrest"}
	for i := range 2000 {
		lines = append(lines, strconv.Itoa(i*7919)+"\r\n")
	}
	accepted := 0
	for _, line := range lines {
		b := []byte("$" + line)
		n, next, ok := shortHeader(b, 1)
		if !ok {
			continue
		}
		accepted++
		j := bytes.IndexByte(b, '\n')
		want, wok := headerNumber(b[1:j])
		if !wok || want != n || next != j+1 {
			t.Errorf("shortHeader(%q) = %d, %d; headerNumber says %d, %v, next %d", line, n, next, want, wok, j+1)
		}
	}
	for _, line := range []string{"0\r\n", "3\r\n", "16\r\n", "999999999\r\n"} {
		if _, _, ok := shortHeader([]byte("*"+line), 1); !ok {
			t.Errorf("shortHeader(%q) fell back to the general path", line)
		}
	}
	if accepted < 2000 {
		t.Errorf("shortHeader accepted %d lines, want at least 2000", accepted)
	}
}
