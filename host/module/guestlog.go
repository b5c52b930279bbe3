package module

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// Guest logs (ABI 6): respike.log(level, ptr, len) writes a line of the
// current command to the daemon's structured log, with the module, its
// version and the command. A module cannot flood the log: each module has
// a token bucket of guestLogBurst lines refilled at guestLogRate per
// second; lines beyond it are dropped and counted (ModuleInfo.LogDropped),
// and the next line let through says how many were. Lines are cut at
// guestLogMax bytes.
const (
	guestLogRate  = 100
	guestLogBurst = 200
	guestLogMax   = 4096
)

// guestLevels maps the SDK's levels (sdk.LogDebug ... sdk.LogError).
var guestLevels = [...]slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

func (r *Runtime) hostLog(ctx context.Context, _ api.Module, stack []uint64) {
	in := instanceOf(ctx)
	if in == nil {
		panic(errors.New("respike.log called outside a command"))
	}
	level := uint32(stack[0])
	if level >= uint32(len(guestLevels)) {
		panic(errors.New("respike.log: unknown level"))
	}
	n := uint32(stack[2])
	b, ok := in.mem.Read(uint32(stack[1]), n)
	if !ok {
		panic(errors.New("respike.log of bytes outside guest memory"))
	}
	lvl := guestLevels[level]
	if !r.log.Enabled(ctx, lvl) {
		return
	}
	ctr := in.v.ctr
	dropped, ok := ctr.allowLog(time.Now())
	if !ok {
		return
	}
	if len(b) > guestLogMax {
		b = b[:guestLogMax]
	}
	attrs := []any{"module", in.v.name, "version", in.v.manifest.Version, "command", in.command()}
	if dropped > 0 {
		attrs = append(attrs, "dropped_before", dropped)
	}
	r.log.Log(context.Background(), lvl, string(b), attrs...)
}

// command names the command running on the instance.
func (in *instance) command() string {
	c := in.cur
	if c == nil {
		return ""
	}
	if c.items != nil && c.nreply < len(c.items) {
		return c.items[c.nreply].Cmd.Info.Name
	}
	return c.name
}

// allowLog takes a token for a line at now: false when the bucket is
// empty (the line is dropped and counted); when true, dropped is the
// number of lines dropped since the last one let through.
func (m *modCounters) allowLog(now time.Time) (dropped int64, ok bool) {
	m.logMu.Lock()
	defer m.logMu.Unlock()
	if m.logLast.IsZero() {
		m.logTokens = guestLogBurst
	} else {
		m.logTokens = min(guestLogBurst, m.logTokens+now.Sub(m.logLast).Seconds()*guestLogRate)
	}
	m.logLast = now
	if m.logTokens < 1 {
		m.logQuiet++
		m.logDropped.Add(1)
		return 0, false
	}
	m.logTokens--
	m.logged.Add(1)
	dropped, m.logQuiet = m.logQuiet, 0
	return dropped, true
}
