//go:build linux && race

package server

import (
	"errors"
	"syscall"
	"unsafe"
)

// sysRead is syscall.Read under the race detector: its annotations make a
// write on one end of a socket happen before the read at the other, which
// the raw system call (rawio_norace.go) would hide from the detector.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	n, err := syscall.Read(int(fd), p)
	return max(n, 0), errnoOf(err)
}

// sysRecvmsg receives into msg from fd, then reads nothing with
// syscall.Read, for its annotations (sysRead says why): syscall.Recvmsg
// has none, and would allocate a Sockaddr.
func sysRecvmsg(fd uintptr, msg *syscall.Msghdr) (int, syscall.Errno) {
	r, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(msg)), 0)
	if e == 0 {
		_, _ = syscall.Read(int(fd), nil)
	}
	return int(r), e
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
