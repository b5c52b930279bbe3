package kit

import (
	"math"

	"github.com/respike/respike/guest-sdk/codec"
)

// ExpireAtOf is a record's expiry in Unix milliseconds, or -1 when it has
// none, from a call's result and that call's read of codec.BinExpire: the
// exact time the store keeps for a record written with codec.TTLAt, else
// (a record written with whole seconds, or by another application) now
// plus the TTL in whole seconds.
func ExpireAtOf(r *codec.Result, x codec.Value, nowMs int64) int64 {
	if x.Kind == codec.KindInt {
		return x.Int
	}
	if r.TTL < 0 {
		return -1
	}
	return nowMs + r.TTL*1000
}

// InvalidExpire is Redis's error for an out-of-range expiry of command cmd
// (lower case, as Redis prints the command's name).
func InvalidExpire(cmd string) string {
	return "ERR invalid expire time in '" + cmd + "' command"
}

// SetExpiry turns the value n of a SET-style option (EX, PX, EXAT, PXAT,
// SETEX, GETEX ...) into an absolute Unix time in milliseconds, as Redis's
// getExpireMillisecondsOrReply does; ok is false for a value Redis calls an
// invalid expire time (not positive, or overflowing).
func SetExpiry(n int64, seconds, relative bool, nowMs int64) (whenMs int64, ok bool) {
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		return 0, false
	}
	if seconds {
		n *= 1000
	}
	if relative {
		n += nowMs // wraps negative on overflow, as it does in Redis
	}
	if n <= 0 {
		return 0, false
	}
	return n, true
}

// KeyExpiry turns the argument n of EXPIRE, PEXPIRE, EXPIREAT or PEXPIREAT
// into an absolute Unix time in milliseconds, as Redis's
// expireGenericCommand does: negative values are allowed (they delete the
// key), overflow is an invalid expire time. baseMs is now for the relative
// forms and 0 for the absolute ones.
func KeyExpiry(n int64, seconds bool, baseMs int64) (whenMs int64, ok bool) {
	if seconds {
		if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
			return 0, false
		}
		n *= 1000
	}
	if n > math.MaxInt64-baseMs {
		return 0, false
	}
	return n + baseMs, true
}
