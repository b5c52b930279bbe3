package server

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// Limits of the request stream, as Redis's.
const (
	maxInline       = 64 << 10  // longest inline command line
	maxMultibulk    = 1<<31 - 1 // most arguments in one command: Redis 7.0's INT_MAX; memory is bounded by argCost
	argCost         = 40        // bytes of bookkeeping per argument (two offsets, one slice header)
	maxHeader       = 32        // longest *n or $n line; a valid one needs 22
	unauthMultibulk = 10        // most arguments before AUTH when a password is set
	unauthBulk      = 16 << 10  // longest argument before AUTH when a password is set
	readBufSize     = 4 << 10   // a connection's read buffer at first; it grows for larger commands and pipelines
	keepReadBuf     = 64 << 10  // the largest read buffer kept once empty
	maxQueryBuf     = 1 << 30   // Redis's client-query-buffer-limit: one command may not need more
)

// errQueryBuf closes a connection whose one command outgrew maxQueryBuf;
// Redis closes it without a reply too.
var errQueryBuf = errors.New("query buffer limit reached")

// protoError is a request stream that breaks the protocol or its limits.
// The client receives "-ERR Protocol error: <msg>" and is disconnected.
type protoError struct{ msg string }

func (e *protoError) Error() string { return "Protocol error: " + e.msg }

// reader reads a connection's requests and parses them into commands whose
// arguments alias its buffer: nothing is copied, nothing allocated for a
// multibulk command. It enforces Redis's framing and limits as bytes
// arrive; a command that breaks them ends the stream with a protoError
// worded as Redis words it, but only after the commands before it were
// handed out, so they are still answered, in order.
//
// Before AUTH, when a password is set, commands are handed out one at a
// time, so that the tighter limits stop applying from the command after
// AUTH.
type reader struct {
	r       io.Reader
	c       *client // for the limits before AUTH; nil in tests
	maxBulk int64   // the limit when c is nil (tests)
	nread   int64   // bytes read since the client's last flushStats

	buf      []byte // buf[off:end] is read but not parsed
	off, end int
	err      error // ends the stream once the commands before it are handed out

	argv  [][]byte   // the batch's arguments
	spans []int      // where each command of the batch starts in argv
	cmds  [][][]byte // the batch's commands, slices of argv

	// mb is the multibulk command being parsed while count > 0: its
	// argument count, the offset of its next bulk header and its arguments'
	// start and end offsets, all from the command's start.
	mb struct {
		count int64
		p     int
		pos   []int
	}
}

// ReadCommands returns the next commands: all complete ones that have
// arrived, waiting for one if none has. Their arguments are valid until the
// next call. After the last command it returns the error that ended the
// stream (io.EOF, a protoError, a read error).
func (rd *reader) ReadCommands() ([][][]byte, error) {
	rd.argv, rd.spans, rd.cmds = rd.argv[:0], rd.spans[:0], rd.cmds[:0]
	for {
		perr := rd.parse()
		if len(rd.spans) > 0 {
			if perr != nil {
				rd.err, rd.off, rd.end = perr, 0, 0
			}
			return rd.batch(), nil
		}
		if perr != nil {
			rd.err, rd.off, rd.end = perr, 0, 0
		}
		if rd.err != nil {
			return nil, rd.err
		}
		rd.fill()
	}
}

// batch returns the parsed commands, now that argv no longer moves.
func (rd *reader) batch() [][][]byte {
	for i, at := range rd.spans {
		end := len(rd.argv)
		if i+1 < len(rd.spans) {
			end = rd.spans[i+1]
		}
		rd.cmds = append(rd.cmds, rd.argv[at:end:end])
	}
	return rd.cmds
}

// fill reads more bytes, first making room: the unparsed rest moves to the
// buffer's start, and a full buffer doubles. A buffer grown by a large
// command shrinks back once it is empty.
func (rd *reader) fill() {
	if rd.off == rd.end {
		rd.off, rd.end = 0, 0
		if cap(rd.buf) > keepReadBuf {
			rd.buf = nil
		}
	}
	if rd.buf == nil {
		rd.buf = make([]byte, readBufSize)
	}
	if rd.end == len(rd.buf) {
		if rd.off > 0 {
			rd.end = copy(rd.buf, rd.buf[rd.off:rd.end])
			rd.off = 0
		} else {
			if 2*len(rd.buf) > maxQueryBuf {
				rd.err = errQueryBuf
				return
			}
			grown := make([]byte, 2*len(rd.buf))
			copy(grown, rd.buf[:rd.end])
			rd.buf = grown
		}
	}
	n, err := rd.r.Read(rd.buf[rd.end:])
	rd.end += n
	rd.nread += int64(n)
	if err != nil {
		rd.err = err
	}
}

// readMore reads what has arrived into the end of the buffer, for a client
// that waits in a blocking command: reading is how it learns that its
// connection closed, and a pipelined command waits there to be parsed
// once the blocking one has replied. Nothing is parsed, and nothing read
// moves: the commands being run alias the buffer. A full buffer is
// replaced (the old one stays with the commands that alias it), up to
// maxQueryBuf of unparsed bytes. A read error is returned; it also ends
// the stream unless it is a deadline's.
func (rd *reader) readMore() error {
	if rd.err != nil {
		if _, ok := rd.err.(*protoError); !ok {
			return rd.err
		}
		// A protocol error waits for the commands before it: what comes
		// next is never parsed, so read it away, to notice a close.
		var scratch [512]byte
		_, err := rd.r.Read(scratch[:])
		return err
	}
	if rd.end == len(rd.buf) {
		unparsed := rd.end - rd.off
		if unparsed >= maxQueryBuf {
			rd.err = errQueryBuf
			return rd.err
		}
		grown := make([]byte, max(readBufSize, len(rd.buf), 2*unparsed))
		rd.end = copy(grown, rd.buf[rd.off:rd.end])
		rd.buf, rd.off = grown, 0
	}
	n, err := rd.r.Read(rd.buf[rd.end:])
	rd.end += n
	rd.nread += int64(n)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		rd.err = err
	}
	return err
}

// bulkLimit is the largest bulk string accepted: the server's
// proto-max-bulk-len, which CONFIG SET may change, or maxBulk in tests.
func (rd *reader) bulkLimit() int64 {
	if rd.c != nil {
		return rd.c.s.maxBulk.Load()
	}
	return rd.maxBulk
}

// unauth reports whether the client has yet to authenticate.
func (rd *reader) unauth() bool {
	return rd.c != nil && !rd.c.authenticated
}

// parse parses the complete commands in buf[off:end] into the batch and
// returns the protocol error that stopped it, if any.
func (rd *reader) parse() error {
	for rd.off < rd.end {
		b := rd.buf[rd.off:rd.end]
		mark := len(rd.argv)
		var n int
		var err error
		if b[0] == '*' {
			n, err = rd.multibulk(b)
		} else {
			n, err = rd.inline(b)
		}
		if err != nil || n == 0 {
			rd.argv = rd.argv[:mark] // the arguments of an incomplete or bad command
			return err
		}
		rd.off += n
		if len(rd.spans) > 0 && rd.unauth() {
			return nil // before AUTH, one command at a time
		}
	}
	return nil
}

// multibulk parses the *<count> command at the start of b into the batch
// and returns its length, or 0 when it has not all arrived. What it parsed
// of an incomplete command is kept in rd.mb, so that a command arriving in
// many reads (a large MSET) is parsed once, not once per read.
func (rd *reader) multibulk(b []byte) (int, error) {
	st := &rd.mb
	if st.count == 0 {
		count, next, ok := shortHeader(b, 1)
		if !ok {
			j := bytes.IndexByte(b, '\n')
			if j < 0 {
				if len(b) > maxHeader {
					return 0, &protoError{"too big mbulk count string"}
				}
				return 0, nil
			}
			count, ok = headerNumber(b[1:j])
			next = j + 1
		}
		switch {
		case !ok || count > maxMultibulk:
			return 0, &protoError{"invalid multibulk length"}
		case count <= 0:
			return next, nil // Redis ignores an empty multibulk
		case rd.unauth() && count > unauthMultibulk:
			return 0, &protoError{"unauthenticated multibulk length"}
		}
		st.count, st.p, st.pos = count, next, st.pos[:0]
	}
	for int64(len(st.pos)/2) < st.count {
		p := st.p
		if p == len(b) {
			return 0, nil
		}
		if b[p] != '$' {
			st.count = 0
			return 0, &protoError{"expected '$', got '" + string(b[p]) + "'"}
		}
		size, body, ok := shortHeader(b, p+1)
		if !ok {
			q := bytes.IndexByte(b[p:], '\n')
			if q < 0 {
				if len(b)-p > maxHeader {
					st.count = 0
					return 0, &protoError{"too big bulk count string"}
				}
				return 0, nil
			}
			size, ok = headerNumber(b[p+1 : p+q])
			body = p + q + 1
		}
		switch {
		case !ok || size < 0 || size > rd.bulkLimit():
			st.count = 0
			return 0, &protoError{"invalid bulk length"}
		case rd.unauth() && size > unauthBulk:
			st.count = 0
			return 0, &protoError{"unauthenticated bulk length"}
		}
		if int64(len(b)-body) < size+2 {
			return 0, nil
		}
		end := body + int(size)
		// The two bytes after the payload are skipped unchecked, as Redis
		// 7.0 skips them (processMultibulkBuffer): "$2\r\nhi\n\n" is "hi".
		// A command's arguments cost memory beyond its bytes (argCost
		// each): with the buffer they count toward the query buffer
		// limit, the bound that replaces a cap on their number.
		if int64(len(st.pos)/2+1)*argCost+int64(len(b)) > maxQueryBuf {
			st.count = 0
			return 0, errQueryBuf
		}
		st.pos = append(st.pos, body, end)
		st.p = end + 2
	}
	rd.spans = append(rd.spans, len(rd.argv))
	for i := 0; i < len(st.pos); i += 2 {
		rd.argv = append(rd.argv, b[st.pos[i]:st.pos[i+1]:st.pos[i+1]])
	}
	st.count = 0
	if cap(st.pos) > 1024 {
		st.pos = nil // a huge command's offsets
	}
	return st.p, nil
}

// inline parses the inline command line at the start of b into the batch
// and returns its length, or 0 when it has not all arrived. An empty line
// is skipped, as Redis skips it.
func (rd *reader) inline(b []byte) (int, error) {
	j := bytes.IndexByte(b, '\n')
	if j < 0 {
		if len(b) > maxInline {
			return 0, &protoError{"too big inline request"}
		}
		return 0, nil
	}
	if j > maxInline {
		return 0, &protoError{"too big inline request"}
	}
	line := b[:j]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	mark := len(rd.argv)
	var ok bool
	if rd.argv, ok = splitArgs(rd.argv, line); !ok {
		return 0, &protoError{"unbalanced quotes in request"}
	}
	if len(rd.argv) > mark {
		rd.spans = append(rd.spans, mark)
	}
	return j + 1, nil
}

// splitArgs appends the arguments of an inline command line to dst, split
// and unquoted exactly as Redis's sdssplitargs does: blanks separate
// arguments; "double quotes" take \n \r \t \b \a \xHH and \<any> escapes;
// 'single quotes' take \' only; a closing quote must end the argument. A
// NUL byte ends the arguments, as it ends sdssplitargs's C string (Redis
// itself, looking for the newline with strchr, waits for more input after
// a NUL; answering the line is more use). ok is false for unbalanced
// quotes. The arguments are new slices: quoting changes their bytes.
func splitArgs(dst [][]byte, line []byte) (out [][]byte, ok bool) {
	at := func(i int) byte { // the C string's byte i: 0 past the end
		if i < len(line) {
			return line[i]
		}
		return 0
	}
	i := 0
	for {
		for isSpace(at(i)) {
			i++
		}
		if at(i) == 0 {
			return dst, true
		}
		var cur []byte
		inq, insq := false, false
		for done := false; !done; {
			c := at(i)
			switch {
			case inq:
				switch {
				case c == '\\' && at(i+1) == 'x' && isHex(at(i+2)) && isHex(at(i+3)):
					cur = append(cur, unhex(at(i+2))<<4|unhex(at(i+3)))
					i += 3
				case c == '\\' && at(i+1) != 0:
					i++
					cur = append(cur, unescape(at(i)))
				case c == '"':
					if n := at(i + 1); n != 0 && !isSpace(n) {
						return dst, false // the closing quote must end the argument
					}
					done = true
				case c == 0:
					return dst, false
				default:
					cur = append(cur, c)
				}
			case insq:
				switch {
				case c == '\\' && at(i+1) == '\'':
					i++
					cur = append(cur, '\'')
				case c == '\'':
					if n := at(i + 1); n != 0 && !isSpace(n) {
						return dst, false
					}
					done = true
				case c == 0:
					return dst, false
				default:
					cur = append(cur, c)
				}
			default:
				switch c {
				case ' ', '\n', '\r', '\t', 0:
					done = true
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					cur = append(cur, c)
				}
			}
			if at(i) != 0 {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		dst = append(dst, cur)
	}
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// unescape is the byte a backslash escape inside double quotes stands for.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

// shortHeader parses the common header number: the bytes of b from i are
// one to nine digits, without a leading zero unless the number is 0, then
// "\r\n". It returns the number and the offset after the "\n"; ok is
// false for anything else (a sign, more digits, a malformed or incomplete
// line), which the general path (IndexByte, headerNumber) then parses and
// judges. What it accepts headerNumber accepts with the same value, so it
// changes no answer; it saves that path's two calls and their loops per
// header, three headers per GET (docs/performance.md, "Host CPU per
// unpipelined command").
func shortHeader(b []byte, i int) (n int64, next int, ok bool) {
	j := i
	for ; j < len(b) && j-i < 9; j++ {
		c := b[j]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	if j == i || j+1 >= len(b) || b[j] != '\r' || b[j+1] != '\n' || b[i] == '0' && j-i > 1 {
		return 0, 0, false
	}
	return n, j + 2, true
}

// headerNumber parses the number of a *<n> or $<n> line given without its
// type byte and with its CR: Redis's strict integer syntax.
func headerNumber(h []byte) (int64, bool) {
	if len(h) < 2 || h[len(h)-1] != '\r' {
		return 0, false
	}
	return parseInt(h[:len(h)-1])
}
