package server

import (
	"bytes"
	"io"
)

// Limits of the request stream, as Redis's.
const (
	maxInline       = 64 << 10 // longest inline command line
	maxMultibulk    = 1 << 20  // most arguments in one command
	maxHeader       = 32       // longest *n or $n line; a valid one needs 22
	unauthMultibulk = 10       // most arguments before AUTH when a password is set
	unauthBulk      = 16 << 10 // longest argument before AUTH when a password is set
	guardBufSize    = 4096     // guard's read-ahead
)

// protoError is a request stream that breaks the protocol or its limits.
// The client receives "-ERR Protocol error: <msg>" and is disconnected.
type protoError struct{ msg string }

func (e *protoError) Error() string { return "Protocol error: " + e.msg }

// guard sits between the connection and redcon's reader and keeps
// malformed or oversized requests from reaching redcon, which has no limits
// (it buffers a bulk of any announced length and loops over any announced
// argument count) and which, on a malformed command, drops the commands
// read before it in the same batch. guard follows the RESP framing as bytes
// go by, without parsing arguments. When a command breaks the protocol or a
// limit, guard hands over only the bytes before that command and then
// fails with a protoError worded as Redis words it, so the earlier commands
// are still answered, in order, before the error.
//
// Two kinds of command are handed over alone, so that what redcon rejects
// cannot take other commands with it and what changes limits takes effect
// before the next command is read: inline commands (whose quoting redcon
// checks), and, before AUTH when a password is set, every command.
//
// guard reads through its own small buffer so that it can hold bytes back;
// a large bulk payload bypasses it and is read straight into redcon's.
type guard struct {
	r       io.Reader
	c       *client
	maxBulk int64

	buf      []byte // read-ahead: buf[off:end] is not handed over yet
	off, end int
	err      error // failure to return once earlier bytes are handed over

	state   uint8
	args    int64 // elements left in the current multibulk
	body    int64 // payload bytes left in the current bulk
	line    int   // length of the current inline line so far
	started int   // offset in buf[off:] where the current command began, or 0
}

const (
	gStart  uint8 = iota // between commands
	gInline              // inside an inline command line
	gBulk                // at a $<len> line
	gBody                // inside a bulk payload
	gCR                  // at the CR after a payload
	gLF                  // at the LF after a payload
)

// Read implements io.Reader for redcon's reader. redcon reads through a
// bufio.Reader, so p is at least 4096 bytes, longer than any header.
func (g *guard) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if g.buf == nil {
		g.buf = make([]byte, guardBufSize)
	}
	for {
		if g.off == g.end {
			if g.err != nil {
				return 0, g.err
			}
			if g.state == gBody && g.body >= int64(len(p)) {
				n, err := g.r.Read(p)
				g.body -= int64(n)
				if g.body == 0 {
					g.state = gCR
				}
				return n, err
			}
			g.off, g.end = 0, 0
			if !g.fill() {
				return 0, g.err
			}
		}
		k, more, err := g.scan(min(g.end-g.off, len(p)))
		if k > 0 {
			copy(p, g.buf[g.off:g.off+k])
			g.off += k
			if err != nil {
				g.err, g.off = err, g.end
			}
			return k, nil
		}
		if err != nil {
			g.err, g.off = err, g.end
			return 0, err
		}
		if !more {
			return 0, nil
		}
		// A header begins the buffer but does not end in it: read on.
		g.end = copy(g.buf, g.buf[g.off:g.end])
		g.off = 0
		if g.err != nil || !g.fill() {
			return 0, g.err
		}
	}
}

// fill reads more bytes after buf[:end]; false (with g.err set) when none
// came.
func (g *guard) fill() bool {
	n, err := g.r.Read(g.buf[g.end:])
	g.end += n
	if err != nil {
		g.err = err
	}
	return n > 0 || err == nil
}

// unauth reports whether the client has yet to authenticate.
func (g *guard) unauth() bool {
	return g.c != nil && g.c.s.password != "" && !g.c.authenticated
}

// scan follows buf[off:end] through the framing and returns how many bytes,
// at most limit, may be handed over; more when a header at the start needs
// more bytes; a protoError when a command breaks the protocol or a limit.
// It may rewrite the buffer (see the empty multibulk case).
func (g *guard) scan(limit int) (n int, more bool, err error) {
	b := g.buf[g.off:g.end]
	g.started = 0
	fail := func(msg string) (int, bool, error) { return g.started, false, &protoError{msg} }
	i := 0
	for i < limit {
		switch g.state {
		case gStart:
			g.started = i
			if b[i] != '*' {
				if i > 0 {
					return i, false, nil // an inline command goes alone
				}
				g.state, g.line = gInline, 0
				continue
			}
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 || i+j >= limit {
				if j < 0 && len(b)-i > maxHeader {
					return fail("too big mbulk count string")
				}
				if i > 0 {
					return i, false, nil
				}
				if j >= 0 {
					return fail("too big mbulk count string") // cannot happen: limit >= 4096
				}
				return 0, true, nil
			}
			count, ok := headerNumber(b[i+1 : i+j])
			switch {
			case !ok || count > maxMultibulk:
				return fail("invalid multibulk length")
			case count <= 0:
				// Redis ignores an empty multibulk; redcon rejects it,
				// so blank it into an empty inline line, which redcon
				// skips.
				for k := i; k < i+j-1; k++ {
					b[k] = ' '
				}
			case g.unauth() && count > unauthMultibulk:
				return fail("unauthenticated multibulk length")
			default:
				g.args, g.state = count, gBulk
			}
			i += j + 1
		case gBulk:
			if b[i] != '$' {
				return fail("expected '$', got '" + string(b[i]) + "'")
			}
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 || i+j >= limit {
				if j < 0 && len(b)-i > maxHeader {
					return fail("too big bulk count string")
				}
				if i > 0 {
					return i, false, nil // the command goes on in the next Read
				}
				if j >= 0 {
					return fail("too big bulk count string") // cannot happen: limit >= 4096
				}
				return 0, true, nil
			}
			size, ok := headerNumber(b[i+1 : i+j])
			switch {
			case !ok || size < 0 || size > g.maxBulk:
				return fail("invalid bulk length")
			case g.unauth() && size > unauthBulk:
				return fail("unauthenticated bulk length")
			}
			g.body, g.state = size, gBody
			if size == 0 {
				g.state = gCR
			}
			i += j + 1
		case gInline:
			j := bytes.IndexByte(b[i:limit], '\n')
			if j < 0 {
				g.line += limit - i
				if g.line > maxInline {
					return fail("too big inline request")
				}
				i = limit
				continue
			}
			if g.line += j; g.line > maxInline {
				return fail("too big inline request")
			}
			g.state = gStart
			return i + j + 1, false, nil // an inline command goes alone
		case gBody:
			k := min(g.body, int64(limit-i))
			i += int(k)
			if g.body -= k; g.body == 0 {
				g.state = gCR
			}
		case gCR, gLF:
			want := byte('\r')
			if g.state == gLF {
				want = '\n'
			}
			if b[i] != want {
				return fail("invalid bulk length")
			}
			i++
			if g.state == gCR {
				g.state = gLF
				continue
			}
			if g.args--; g.args > 0 {
				g.state = gBulk
				continue
			}
			g.state = gStart
			if g.unauth() {
				return i, false, nil // before AUTH, one command at a time
			}
		}
	}
	return limit, false, nil
}

// headerNumber parses the number of a *<n> or $<n> line given without its
// type byte and with its CR: Redis's strict integer syntax.
func headerNumber(h []byte) (int64, bool) {
	if len(h) < 2 || h[len(h)-1] != '\r' {
		return 0, false
	}
	return parseInt(h[:len(h)-1])
}
