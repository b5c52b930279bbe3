// Package sdk is what a respike command author imports. A command module is a
// Go main package built with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared; its
// init functions register commands, and the host runs them.
//
// A command is a chain of steps. A step reads the arguments and the results
// of the previous store request, then either writes a reply and returns, or
// builds the next request with Record and calls Exec with the step that
// continues. The host performs the request with no module instance held, so a
// command waiting on the database costs only its Ctx.
//
//	func init() {
//		sdk.Register(sdk.Command{
//			Name: "get", Arity: 2, Flags: []string{"readonly", "fast"},
//			FirstKey: 1, LastKey: 1, Step: 1, Group: "string",
//			Summary: "Returns the string value of a key.",
//			Run: func(c *sdk.Ctx) {
//				c.Record(c.Arg(1)).Get(codec.BinType).Get(codec.BinValue)
//				c.Exec(replyValue)
//			},
//		})
//	}
//
// Steps must not keep references to Arg, Results or decoded values beyond the
// step in which they were obtained, except Args, which live for the whole
// command.
package sdk

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/resp"
)

// Step is one step of a command.
type Step func(c *Ctx)

// Command describes a command and gives its first step. The fields other than
// Run become the module's manifest, from which the host answers COMMAND and
// checks arity before Run is called.
type Command struct {
	// Name is the command's name; matched case-insensitively.
	Name string
	// Arity is Redis's arity: n means exactly n arguments including the
	// name, -n at least n.
	Arity int
	// Flags are Redis command flags: "write", "readonly", "fast", "denyoom", ...
	Flags []string
	// FirstKey, LastKey and Step locate key arguments (LastKey -1: the last
	// argument); all 0 for a command without keys.
	FirstKey, LastKey, Step int
	// Group is the Redis command group: "string", "generic", "hash", ...
	Group string
	// Summary is a one-line description for COMMAND DOCS.
	Summary string
	// Since is the module version that introduced the command.
	Since string
	// Run is the first step.
	Run Step
}

// Module names the module and its version for MODULE LIST and INFO. Call it
// once, from an init function; the default name is "module", version "0".
func Module(name, version string) {
	eng.manifest.Module, eng.manifest.Version = name, version
}

// asciiLower lower-cases the ASCII letters of a command name. Not
// strings.ToLower, which links the unicode tables into every module: the
// host accepts only printable ASCII names.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Register adds commands to the module. Call it from init functions.
// Registering a name twice panics: that is a bug in the module.
func Register(cmds ...Command) {
	for _, cmd := range cmds {
		name := asciiLower(cmd.Name)
		if _, dup := eng.commands[name]; dup {
			panic("sdk: command registered twice: " + name)
		}
		if cmd.Run == nil {
			panic("sdk: command without Run: " + name)
		}
		eng.commands[name] = cmd.Run
		eng.addCommand(name, cmd.Run)
		eng.byIndex = append(eng.byIndex, cmd.Run)
		eng.manifest.Commands = append(eng.manifest.Commands, codec.CommandInfo{
			Name: name, Arity: cmd.Arity, Flags: cmd.Flags,
			FirstKey: cmd.FirstKey, LastKey: cmd.LastKey, Step: cmd.Step,
			Group: cmd.Group, Summary: cmd.Summary, Since: cmd.Since,
		})
	}
}

// Ctx is one command in flight: its arguments, its reply, the store request
// being built and the results of the last one. A Ctx is reused after the
// command ends; steps must not retain it.
type Ctx struct {
	handle uint32
	// st is the start message, laid out by the host in the guest's message
	// buffer (see codec.AppendStart); when the command waits on the host, whose
	// next message overwrites that buffer, own copies it to ownSt, with the
	// arguments in argBuf.
	st      *codec.Start
	ownSt   codec.Start
	argBuf  []byte
	argHdrs [][]byte

	w resp.Writer // reply; Buf[0] is reserved for the status byte

	req    codec.Request
	reqBuf []byte
	// res is the last response, laid out by the host in a guest buffer
	// (see codec.AppendResponse), or noRes before the first one.
	res     *codec.Response
	noRes   codec.Response
	next    Step
	pending bool
	vals    []Value
	// final is the recipe of the step's request when it was sent with
	// ExecFinal.
	final *codec.Recipe

	// A step that called Block: the keys and the timeout of the answer.
	blocked  bool
	blockOn  [][]byte
	blockFor Duration

	// N is scratch state that survives from step to step of one command
	// (counters, flags, parsed options). It is zeroed when a command starts.
	N [8]int64
	// B is scratch bytes that survive from step to step; reset to empty
	// when a command starts, its capacity kept.
	B []byte
}

// Value is a shorthand for codec.Value.
type Value = codec.Value

// NArg is the number of arguments including the command name.
func (c *Ctx) NArg() int { return len(c.st.Args) }

// Arg returns argument i (0 is the command name), or nil if out of range.
// The bytes stay valid for the whole command.
func (c *Ctx) Arg(i int) []byte {
	if uint(i) >= uint(len(c.st.Args)) {
		return nil
	}
	return c.st.Args[i]
}

// Args returns all arguments, the command name first.
func (c *Ctx) Args() [][]byte { return c.st.Args }

// DB is the connection's selected database.
func (c *Ctx) DB() int { return int(c.st.DB) }

// Proto is the connection's RESP version, 2 or 3.
func (c *Ctx) Proto() int { return int(c.st.Proto) }

// Now is when the command started, in Unix nanoseconds, by the host's
// clock: take expiry arithmetic from it (it is what sdktest's clock sets,
// and it costs no host call, where time.Now does).
func (c *Ctx) Now() int64 { return c.st.Now }

// ClientID is the connection's CLIENT ID.
func (c *Ctx) ClientID() uint64 { return c.st.ClientID }

// Reply is the reply writer. Write exactly one reply per command.
func (c *Ctx) Reply() *resp.Writer { return &c.w }

// LogLevel is the level of a module's log line.
type LogLevel int32

// Log levels, as the daemon's: a line below the daemon's level is dropped.
const (
	LogDebug LogLevel = iota
	LogInfo
	LogWarn
	LogError
)

// Log writes msg to the daemon's structured log at level, with the module,
// its version and the command that logged it. The host keeps a module
// from flooding its log: past a rate of lines per second (docs/operations.md)
// lines are dropped and counted. Natively, under sdktest, lines go to
// Host.Logs.
func (c *Ctx) Log(level LogLevel, msg string) { logHost(level, msg) }

// Error replies with an error; msg starts with its code, as "ERR ...".
func (c *Ctx) Error(msg string) { c.w.Error(msg) }

// Values returns a scratch slice of n Values owned by the command for the
// current request (for MapPut pairs, key lists, ...). It is valid until the
// next request is built.
func (c *Ctx) Values(n int) []Value {
	if cap(c.vals)-len(c.vals) < n {
		// Grow into a new slice; earlier slices handed out keep the old
		// backing array, so they stay valid.
		c.vals = make([]Value, 0, 2*cap(c.vals)+n)
	}
	s := c.vals[len(c.vals) : len(c.vals)+n]
	c.vals = c.vals[:len(c.vals)+n]
	return s
}

// Record adds a call on key to the next request and returns it for building.
func (c *Ctx) Record(key []byte) *codec.Call {
	n := len(c.req.Calls)
	if n == cap(c.req.Calls) {
		c.req.Calls = append(c.req.Calls, codec.Call{})
	}
	c.req.Calls = c.req.Calls[:n+1]
	call := &c.req.Calls[n]
	// The call encodes its ops as they are added: cheaper in wasm than
	// building Op structs and encoding them at Exec.
	call.BeginEncoded(key)
	return call
}

// Exec sends the calls built with Record to the store; next runs with their
// results. If the whole request fails (backend unavailable), the command
// replies with the error and next does not run.
func (c *Ctx) Exec(next Step) {
	if len(c.req.Calls) == 0 {
		panic("sdk: Exec without Record")
	}
	c.req.Kind = codec.ReqRecords
	c.submit(next)
}

// ExecFinal is Exec for a command whose reply follows from the request's
// outcome by recipe r (a codec.Recipe built once, in a var): where the
// store waits (Aerospike), the command ends here, and the host answers the
// client from the store's result by r, without entering the module again
// (docs/abi.md, "Final answers"); where the host runs the request at once
// (the embedded store), next runs with the results, as after Exec. So next
// must reply exactly as r says, for every outcome: test both paths
// (sdktest.Host.Inline true and false).
//
// A rule of r may restart the command (codec.Recipe.Restart): the command
// then runs again from its first step, where Restarted reports true, and
// may take another way. Call ExecFinal last in a step; a command that has
// more steps to take after the request uses Exec.
func (c *Ctx) ExecFinal(r *codec.Recipe, next Step) {
	if r == nil {
		panic("sdk: ExecFinal without a recipe")
	}
	c.Exec(next)
	c.final = r
}

// Restarted reports whether this run of the command is a restart that a
// recipe asked for (codec.Recipe.Restart): the command's earlier run ended
// with a final answer whose call failed with a code the recipe restarts
// on, and had no effect.
func (c *Ctx) Restarted() bool { return c.st.Restart != 0 }

// ExecDB is Exec in database db instead of the connection's (MOVE, COPY
// ... DB). A db the server does not have fails the request as a whole:
// the command replies "ERR DB index is out of range" and next does not run.
func (c *Ctx) ExecDB(db int, next Step) {
	if db < 0 || db > 0xffff {
		panic("sdk: ExecDB: database out of range")
	}
	c.req.OtherDB, c.req.DB = true, uint16(db)
	c.Exec(next)
}

// Scan asks for one page of keys; next reads it with Page.
func (c *Ctx) Scan(args codec.ScanArgs, next Step) {
	c.req.Kind = codec.ReqScan
	c.req.Scan = args
	c.submit(next)
}

// Count asks for the number of keys in the database; next reads it with
// Counted.
func (c *Ctx) Count(next Step) {
	c.req.Kind = codec.ReqCount
	c.submit(next)
}

// Truncate deletes every key of the database, or of all databases.
func (c *Ctx) Truncate(allDBs bool, next Step) {
	c.req.Kind = codec.ReqTruncate
	c.req.AllDBs = allDBs
	c.submit(next)
}

func (c *Ctx) submit(next Step) {
	if next == nil {
		panic("sdk: request without a next step")
	}
	if c.pending || c.blocked {
		panic("sdk: two requests in one step")
	}
	c.next = next
	c.pending = true
}

// Results are the outcomes of the last request's calls, in order.
func (c *Ctx) Results() []codec.Result { return c.res.Results }

// Result is the outcome of call i of the last request.
func (c *Ctx) Result(i int) *codec.Result { return &c.res.Results[i] }

// Page is the scan page of the last Scan.
func (c *Ctx) Page() *codec.ScanPage { return &c.res.Scan }

// Counted is the answer of the last Count.
func (c *Ctx) Counted() int64 { return c.res.Count }

// Duration is a span of time in nanoseconds, as a time.Duration counts it:
// convert with sdk.Duration(d) and time.Duration(d). The SDK does not use
// package time, whose initialisation (and the syscall and godebug packages
// it brings) was a tenth of a module that does not otherwise need it, and
// of its load time (docs/RATIONALE.md, "Guest modules without fmt and time").
type Duration int64

// Durations for Block, as package time's.
const (
	Millisecond Duration = 1e6
	Second      Duration = 1e9
)

// Block makes a blocking command wait, as BLPOP does on empty lists: the
// command ends without replying now, and the client waits until another
// command writes one of keys (in the connection's database, through this
// proxy or any other on the same store) or until timeout passes (0: no
// limit; see ParseTimeout). Call it last in a step, after writing the
// reply the client gets if the timeout passes: the null reply of the
// command's shape, such as c.Reply().NullArray().
//
// When a key is written, the command runs again from its first step, with
// the same arguments and a new Now, on the module version then loaded: it
// may reply, or call Block again (the timeout still counts from the first
// call). Clients blocked on one key run again in the order they blocked,
// one at a time while each takes what the write left.
//
// Where a command may not block (inside MULTI) the client gets the timeout
// reply at once, as Redis answers BLPOP inside a transaction. No module
// instance or goroutine waits with the client: a blocked command costs the
// host under 1 KiB of heap (docs/performance.md).
func (c *Ctx) Block(keys [][]byte, timeout Duration) {
	switch {
	case len(keys) == 0:
		panic("sdk: Block without keys")
	case c.pending || c.blocked:
		panic("sdk: Block in a step that made a request")
	case len(c.w.Buf) == 1:
		panic("sdk: Block before the timeout reply was written")
	}
	c.blocked, c.blockOn, c.blockFor = true, keys, max(timeout, 0)
}

// ParseTimeout parses a blocking command's timeout argument, in seconds, as
// Redis 7.0 does: a decimal, hexadecimal or floating-point number, rounded
// up to whole milliseconds; 0 means no limit. It returns the timeout, or
// the message of the error reply ("ERR timeout is negative", ...) and
// false. Like Redis on x86, it takes a timeout too large for a 64-bit count
// of milliseconds (inf, 1e16) for a negative one.
func (c *Ctx) ParseTimeout(arg []byte) (Duration, string, bool) {
	f, ok := parseSeconds(string(arg))
	if !ok {
		return 0, "ERR timeout is not a float or out of range", false
	}
	ms := math.Ceil(f * 1000)
	if ms < 0 || ms >= 1<<63 { // C's (long long) of an out-of-range value is LLONG_MIN
		return 0, "ERR timeout is negative", false
	}
	if ms > 0 && int64(ms) > math.MaxInt64-c.Now()/1e6 {
		return 0, "ERR timeout is out of range", false // Redis adds it to the time in milliseconds
	}
	if ms >= math.MaxInt64/1e6 {
		return math.MaxInt64, "", true // beyond 292 years: no limit in practice
	}
	return Duration(ms) * Millisecond, "", true
}

// parseSeconds parses a number as Redis's string2ld (C's strtold on an
// x86 long double: a 15-bit exponent) does; false where it refuses the
// text. Not math/big: it would add 180 KB to every module that blocks.
func parseSeconds(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "_ \t\n\v\f\r") {
		return 0, false // Go's digit separators are not C's; strtold takes no space
	}
	body := strings.TrimLeft(s, "+-")
	hex := len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')
	t := s
	if hex && !strings.ContainsAny(s, "pP") {
		t += "p0" // Go wants a hexadecimal float's exponent; C does not
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsNaN(f) {
		return 0, false
	}
	e, nonzero, ok := exponent2(body, hex)
	tiny := f == 0 && nonzero // underflowed a float64
	if err == nil && !tiny {
		return f, true // "inf" and "infinity" too
	}
	// Beyond a float64: within a long double, strtold takes it.
	if !ok || e > 16383 || e < -16445 {
		return 0, false // strtold's ERANGE
	}
	if tiny {
		return math.Copysign(math.SmallestNonzeroFloat64, f), true
	}
	return f, true // ±Inf: out of range as milliseconds
}

// exponent2 returns the binary exponent of the leading digit of the
// number body (unsigned, decimal or hexadecimal with its 0x), to within a
// few units, and whether it has a non-zero digit; ok is false when its
// exponent does not fit an int.
func exponent2(body string, hex bool) (e int, nonzero, ok bool) {
	expCh, digits := "eE", "123456789"
	if hex {
		body, expCh, digits = body[2:], "pP", "123456789abcdefABCDEF"
	}
	m, exp := body, 0
	if i := strings.IndexAny(body, expCh); i >= 0 {
		m = body[:i]
		n, err := strconv.Atoi(strings.TrimPrefix(body[i+1:], "+"))
		if err != nil {
			return 0, true, false
		}
		exp = n
	}
	first := strings.IndexAny(m, digits)
	if first < 0 {
		return 0, false, true
	}
	point := strings.IndexByte(m, '.')
	if point < 0 {
		point = len(m)
	}
	pos := point - first // the power of the radix of the first non-zero digit, plus one
	if first < point {
		pos--
	}
	if hex {
		return exp + 4*pos, true, true
	}
	return int(math.Floor(float64(exp+pos) * math.Log2(10))), true, true
}
