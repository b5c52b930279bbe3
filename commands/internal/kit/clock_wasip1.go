package kit

import "strconv"

// clockTimeGet is WASI's clock_time_get, which package time's Now calls
// too. A module reads it directly so as not to link package time, whose
// initialisation and the syscall and godebug packages it brings are a
// tenth of a module and of its load time (docs/RATIONALE.md, "Guest
// modules without fmt and time").
//
//go:wasmimport wasi_snapshot_preview1 clock_time_get
//go:noescape
func clockTimeGet(clock uint32, precision uint64, t *uint64) (errno uint32)

// clockRealtime is WASI's wall clock.
const clockRealtime = 0

// now is the wall clock in Unix nanoseconds.
func now() int64 {
	var t uint64
	if errno := clockTimeGet(clockRealtime, 1, &t); errno != 0 {
		// The host gives every module the wall clock; without it,
		// a retry or a pending mark could not be timed.
		panic("kit: no wall clock (WASI errno " + strconv.FormatUint(uint64(errno), 10) + ")")
	}
	return int64(t)
}
