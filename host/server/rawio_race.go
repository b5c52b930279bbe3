//go:build linux && race

package server

import (
	"errors"
	"syscall"
)

// sysRead is syscall.Read under the race detector: its annotations make a
// write on one end of a socket happen before the read at the other, which
// the raw system call (rawio_norace.go) would hide from the detector.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errnoOf(err)
}

// sysWrite is syscall.Write, as sysRead is syscall.Read.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Write(int(fd), p)
	return max(n, 0), errnoOf(err)
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if err != nil && !errors.As(err, &e) {
		return syscall.EIO
	}
	return e
}

// raceBuild: the system calls are syscall.Read and Write, which allocate
// for the detector's annotations.
const raceBuild = true
