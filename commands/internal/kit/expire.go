package kit

import "math"

// MaxTTL is the longest TTL the store keeps: Aerospike refuses TTLs over
// ten years (MAX_ALLOWED_TTL) and the embedded store does the same.
const MaxTTL = 10 * 365 * 24 * 3600

// TooFar answers an expiry Redis accepts but the store cannot keep.
const TooFar = "ERR respike: expire times more than 10 years ahead are not supported by the store"

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
