// Package sdktest runs a module's commands natively, in the test binary,
// against respike's embedded store, so command logic is unit-tested with a
// plain `go test`: no wasm build, no daemon.
//
// Import the module's package (its init functions register its commands),
// then:
//
//	h := sdktest.New()
//	h.Do("SET", "k", "v")              // "OK"
//	if got := h.Do("GET", "k"); got != `"v"` { ... }
//
// Do returns the reply in redis-cli's notation, which reads well in test
// failures; DoRaw returns the RESP bytes.
package sdktest

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/guest-sdk/internal/hook"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/memory"
)

// Host is a fake respike host: one client connection to the commands
// registered in this test binary.
type Host struct {
	// Store is the store commands run against.
	Store store.Store
	// Proto is the RESP version replies are written in (2 or 3).
	Proto int
	// DB is the selected database.
	DB int
	// Inline runs store requests inside the guest call, as the daemon does
	// for the embedded store; false exercises the resume path.
	Inline bool

	// Blocked is set when the last command called sdk.Ctx.Block: what it
	// blocked on. Do and DoRaw then return the reply the client would get
	// when the timeout passes; a test runs the command again after a write,
	// as the daemon does, with Do.
	Blocked *Blocked
	// Logs are the lines the commands logged (sdk.Ctx.Log), oldest first.
	Logs []LogLine

	dec   codec.Decoder
	req   codec.Request
	resp  codec.Response
	index map[string]uint32 // command name → manifest position + 1, as the daemon sends it
	now   func() time.Time  // the commands' clock; nil: the real one
}

// Blocked is what a command that called sdk.Ctx.Block waits for.
type Blocked struct {
	Keys    []string
	Timeout time.Duration // 0: no limit
}

// blocked records the block answer ans and returns its timeout reply.
func (h *Host) blocked(ans []byte) []byte {
	var b codec.Block
	if err := codec.DecodeBlock(ans, &b); err != nil {
		panic("sdktest: malformed block answer: " + err.Error())
	}
	h.Blocked = &Blocked{Timeout: time.Duration(b.Timeout)}
	for _, k := range b.Keys {
		h.Blocked.Keys = append(h.Blocked.Keys, string(k))
	}
	return append([]byte(nil), b.Reply...)
}

// New returns a host on a fresh embedded store, RESP2, database 0, resuming
// after every request (the path a remote store takes).
func New() *Host {
	return &Host{Store: memory.New(memory.Options{}), Proto: 2}
}

// NewWithClock is New with now as the clock of the store and of the
// commands (sdk.Ctx.Now), so tests can move time forward and watch keys
// expire without sleeping, and expiry arithmetic is exact.
func NewWithClock(now func() time.Time) *Host {
	return &Host{Store: memory.New(memory.Options{Now: now, SweepInterval: -1}), Proto: 2, now: now}
}

// Exec runs store calls directly, bypassing commands: to seed records a
// test needs or to inspect what a command wrote. The results own their
// memory.
func (h *Host) Exec(calls ...codec.Call) []codec.Result {
	req := codec.Request{Kind: codec.ReqRecords, Calls: calls}
	var resp codec.Response
	h.Store.Exec(context.Background(), h.DB, &req, &resp)
	if resp.Code != codec.OK {
		panic(fmt.Sprintf("sdktest: store failed: code %d: %s", resp.Code, resp.Msg))
	}
	// Lay the results out in fresh memory so they never alias the store.
	return codec.ResponseAt(codec.NewResponse(codec.ReqRecords, &resp)).Results
}

// Do runs one command and returns its reply in redis-cli notation (see
// Format).
func (h *Host) Do(args ...string) string {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	return Format(h.DoRaw(b...))
}

// DoRaw runs one command and returns its RESP reply bytes.
func (h *Host) DoRaw(args ...[]byte) []byte {
	ctx := context.Background()
	h.setInline(ctx)
	hook.SetLog(func(level int32, msg string) { h.Logs = append(h.Logs, LogLine{Level: int(level), Msg: msg}) })
	defer hook.SetLog(nil)
	var cmd uint32
	if len(args) > 0 {
		cmd = h.cmdIndex(string(args[0]))
	}
	now := time.Now
	if h.now != nil {
		now = h.now
	}
	st := codec.Start{Proto: uint8(h.Proto), DB: uint16(h.DB), Cmd: cmd, ClientID: 1,
		Now: now().UnixNano(), Args: args}
	h.Blocked = nil
	out := hook.Start(codec.NewStart(&st))
	for {
		switch out[0] {
		case codec.StatusDone:
			return append([]byte(nil), out[1:]...)
		case codec.StatusBlock:
			return h.blocked(out)
		case codec.StatusFinal:
			reply, restart := h.final(ctx, out)
			if !restart {
				return reply
			}
			out = h.restart(&st)
		case codec.StatusPending:
			handle := binary.LittleEndian.Uint32(out[1:5])
			res := h.exec(ctx, out[5:])
			out = hook.Resume(handle, res)
		default:
			panic(fmt.Sprintf("sdktest: bad status byte %d", out[0]))
		}
	}
}

// Pipeline runs commands as the host runs a client's pipeline: as batches
// (one guest call for several commands), resuming a command that waits on
// the store before it sends the rest. It returns each command's reply in
// redis-cli notation.
func (h *Host) Pipeline(cmds ...[]string) []string {
	ctx := context.Background()
	h.setInline(ctx)
	hook.SetLog(func(level int32, msg string) { h.Logs = append(h.Logs, LogLine{Level: int(level), Msg: msg}) })
	defer hook.SetLog(nil)
	var replies []string
	hook.SetReply(func(resp []byte) { replies = append(replies, Format(resp)) })
	defer hook.SetReply(nil)
	now := time.Now
	if h.now != nil {
		now = h.now
	}
	for len(replies) < len(cmds) {
		rest := cmds[len(replies):min(len(cmds), len(replies)+codec.MaxBatch)]
		starts := make([]codec.Start, len(rest))
		for i, args := range rest {
			b := make([][]byte, len(args))
			for j, a := range args {
				b[j] = []byte(a)
			}
			starts[i] = codec.Start{Proto: uint8(h.Proto), DB: uint16(h.DB), Cmd: h.cmdIndex(args[0]),
				ClientID: 1, Now: now().UnixNano(), Args: b}
		}
		before := len(replies)
		out := hook.Batch(codec.NewBatch(starts))
		for len(out) > 0 {
			if out[0] == codec.StatusDone { // a restarted command's
				replies = append(replies, Format(out[1:]))
				break
			}
			if out[0] == codec.StatusFinal {
				// The batch ended at a command that ended with a final
				// answer: the host answers it by its recipe.
				reply, restart := h.final(ctx, out)
				if restart {
					out = h.restart(&starts[len(replies)-before])
					continue
				}
				replies = append(replies, Format(reply))
				break
			}
			if out[0] == codec.StatusBlock {
				// The batch ended at a command that blocks: the client
				// would get its timeout reply, if nothing wakes it.
				replies = append(replies, Format(h.blocked(out)))
				break
			}
			if out[0] != codec.StatusPending {
				panic(fmt.Sprintf("sdktest: bad status byte %d", out[0]))
			}
			handle := binary.LittleEndian.Uint32(out[1:5])
			out = hook.Resume(handle, h.exec(ctx, out[5:]))
			switch out[0] {
			case codec.StatusDone:
				replies = append(replies, Format(out[1:]))
				out = nil
			case codec.StatusBlock:
				replies = append(replies, Format(h.blocked(out)))
				out = nil
			}
		}
		if len(replies) == before {
			panic("sdktest: a batch made no progress")
		}
	}
	return replies
}

// Lockstep runs cmds as concurrent commands of different clients whose
// store requests reach the store in rounds, as a remote store's batch call
// gathers the requests of commands running at the same moment: in each
// round every command still running has sent one request, the store runs
// them in the order of cmds, then each command resumes with its result. It
// returns each command's reply in redis-cli notation (a command that blocks:
// its timeout reply). Races between multi-step commands that only show when
// their steps keep meeting — two commands that undo and retry in step with
// each other for ever — are tested with it. Requests never run inline.
func (h *Host) Lockstep(cmds ...[]string) []string {
	ctx := context.Background()
	hook.SetInline(nil)
	hook.SetLog(func(level int32, msg string) { h.Logs = append(h.Logs, LogLine{Level: int(level), Msg: msg}) })
	defer hook.SetLog(nil)
	now := time.Now
	if h.now != nil {
		now = h.now
	}
	replies := make([]string, len(cmds))
	type waiting struct {
		i      int
		handle uint32
		req    []byte
		recipe []byte // a final answer's
	}
	var round []waiting
	starts := make([]codec.Start, len(cmds))
	// settle records out, command i's answer, as its reply or as the
	// request it waits on.
	settle := func(i int, out []byte) {
		switch out[0] {
		case codec.StatusDone:
			replies[i] = Format(out[1:])
		case codec.StatusBlock:
			replies[i] = Format(h.blocked(out))
		case codec.StatusPending:
			round = append(round, waiting{i, binary.LittleEndian.Uint32(out[1:5]), append([]byte(nil), out[5:]...), nil})
		case codec.StatusFinal:
			n := 5 + binary.LittleEndian.Uint32(out[1:5])
			round = append(round, waiting{i, 0, append([]byte(nil), out[n:]...), append([]byte(nil), out[5:n]...)})
		default:
			panic(fmt.Sprintf("sdktest: bad status byte %d", out[0]))
		}
	}
	for i, args := range cmds {
		b := make([][]byte, len(args))
		for j, a := range args {
			b[j] = []byte(a)
		}
		starts[i] = codec.Start{Proto: uint8(h.Proto), DB: uint16(h.DB),
			Cmd: h.cmdIndex(args[0]), ClientID: uint64(i + 1), Now: now().UnixNano(), Args: b}
		settle(i, hook.Start(codec.NewStart(&starts[i])))
	}
	for len(round) > 0 {
		this := round
		round = nil
		results := make([][]byte, len(this))
		finals := make([]bool, len(this)) // a final answer's reply, or its restart
		for k, w := range this {
			if w.recipe != nil {
				reply, restart := h.runFinal(ctx, w.recipe, w.req)
				results[k], finals[k] = reply, restart
				continue
			}
			results[k] = append([]byte(nil), h.exec(ctx, w.req)...)
		}
		for k, w := range this {
			switch {
			case w.recipe != nil && finals[k]:
				settle(w.i, h.restart(&starts[w.i]))
			case w.recipe != nil:
				replies[w.i] = Format(results[k])
			default:
				settle(w.i, hook.Resume(w.handle, results[k]))
			}
		}
	}
	return replies
}

// final runs the request of out, a command's final answer (natively: the
// status, the recipe's length and the recipe, then the encoded request),
// as the daemon does, and returns the reply by the recipe, or restart
// true when the recipe says to run the command again.
func (h *Host) final(ctx context.Context, out []byte) (reply []byte, restart bool) {
	n := 5 + binary.LittleEndian.Uint32(out[1:5])
	return h.runFinal(ctx, out[5:n], out[n:])
}

// runFinal checks recipe against the encoded request req, runs req and
// applies the recipe, in the connection's protocol.
func (h *Host) runFinal(ctx context.Context, recipe, req []byte) (reply []byte, restart bool) {
	if err := h.dec.DecodeRequest(req, &h.req); err != nil {
		panic("sdktest: the module sent a malformed request: " + err.Error())
	}
	var p codec.ParsedRecipe
	if err := codec.ParseRecipe(recipe, &h.req, &p); err != nil {
		panic("sdktest: the module sent a malformed recipe")
	}
	db := h.DB
	if h.req.OtherDB {
		db = int(h.req.DB)
	}
	h.Store.Exec(ctx, db, &h.req, &h.resp)
	return p.Apply(nil, h.Proto, &h.resp)
}

// restart runs the command of st again from the start, as the daemon does
// when a final answer's recipe says so, and returns its answer.
func (h *Host) restart(st *codec.Start) []byte {
	if st.Restart == 255 {
		panic("sdktest: a command restarted 255 times")
	}
	st.Restart++
	return hook.Start(codec.NewStart(st))
}

// setInline connects the engine's inline store path to this host's store,
// or disconnects it (h.Inline false: every request waits and resumes).
func (h *Host) setInline(ctx context.Context) {
	if h.Inline {
		hook.SetInline(func(req []byte) ([]byte, bool) { return h.exec(ctx, req), true })
	} else {
		hook.SetInline(nil)
	}
}

// cmdIndex is the manifest index + 1 the host sends for a command name
// (codec.Start.Cmd), or 0 for a name no command has.
func (h *Host) cmdIndex(name string) uint32 {
	if h.index == nil {
		h.index = map[string]uint32{}
		for i, c := range Manifest().Commands {
			h.index[c.Name] = uint32(i + 1)
		}
	}
	return h.index[strings.ToLower(name)]
}

func (h *Host) exec(ctx context.Context, req []byte) []byte {
	if err := h.dec.DecodeRequest(req, &h.req); err != nil {
		panic("sdktest: the module sent a malformed request: " + err.Error())
	}
	db := h.DB
	if h.req.Kind == codec.ReqRecords && h.req.OtherDB {
		db = int(h.req.DB) // sdk.Ctx.ExecDB: MOVE, COPY ... DB
	}
	h.Store.Exec(ctx, db, &h.req, &h.resp)
	return codec.NewResponse(h.req.Kind, &h.resp)
}

// Manifest returns the manifest of the commands registered in this binary.
func Manifest() codec.Manifest {
	m, err := codec.DecodeManifest(hook.Manifest())
	if err != nil {
		panic(err)
	}
	return m
}

// Format renders a RESP reply much as redis-cli does: OK, (nil),
// (integer) 5, (error) ERR ..., a bulk string Go-quoted ("v"), arrays as
// "[a b c]" with elements formatted likewise, doubles "(double) 1.5",
// maps "{k: v, ...}", booleans "(true)" / "(false)".
func Format(b []byte) string {
	s, rest := format(b)
	if len(rest) != 0 {
		return s + fmt.Sprintf(" <+%d trailing bytes>", len(rest))
	}
	return s
}

func format(b []byte) (string, []byte) {
	if len(b) < 3 {
		return "<short reply>", nil
	}
	i := strings.Index(string(b), "\r\n")
	if i < 0 {
		return "<unterminated reply>", nil
	}
	line, rest := string(b[1:i]), b[i+2:]
	switch b[0] {
	case '+':
		return line, rest
	case '-':
		return "(error) " + line, rest
	case ':':
		return "(integer) " + line, rest
	case ',':
		return "(double) " + line, rest
	case '#':
		if line == "t" {
			return "(true)", rest
		}
		return "(false)", rest
	case '_':
		return "(nil)", rest
	case '$', '=':
		n, _ := strconv.Atoi(line)
		if n < 0 {
			return "(nil)", rest
		}
		if len(rest) < n+2 {
			return "<short bulk>", nil
		}
		return strconv.Quote(string(rest[:n])), rest[n+2:]
	case '*', '~', '>', '%':
		n, _ := strconv.Atoi(line)
		if n < 0 {
			return "(nil)", rest
		}
		if b[0] == '%' {
			parts := make([]string, 0, n)
			for j := 0; j < n; j++ {
				var k, v string
				k, rest = format(rest)
				v, rest = format(rest)
				parts = append(parts, k+": "+v)
			}
			return "{" + strings.Join(parts, ", ") + "}", rest
		}
		parts := make([]string, 0, n)
		for j := 0; j < n; j++ {
			var e string
			e, rest = format(rest)
			parts = append(parts, e)
		}
		return "[" + strings.Join(parts, " ") + "]", rest
	}
	return "<unknown reply type " + string(b[0]) + ">", nil
}

// LogLine is a line a command logged: its level (sdk.LogDebug ...
// sdk.LogError, as an int) and message.
type LogLine struct {
	Level int
	Msg   string
}
