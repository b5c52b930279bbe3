//go:build !wasip1

package kit

import "time"

// now is the wall clock in Unix nanoseconds. Natively (sdktest) it is
// package time's; a module reads WASI's clock itself (clock_wasip1.go).
func now() int64 { return time.Now().UnixNano() }
