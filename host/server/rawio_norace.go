//go:build linux && !race

package server

import (
	"syscall"
	"unsafe"
)

// sysRead reads from fd without the scheduler's system-call path
// (rawio_linux.go says why); fd is non-blocking, so it returns at once.
func sysRead(fd uintptr, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

// sysRecvmsg receives into msg from fd, as sysRead reads.
func sysRecvmsg(fd uintptr, msg *syscall.Msghdr) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(msg)), 0)
	return int(r), e
}

// sysWrite writes to fd as sysRead reads.
func sysWrite(fd uintptr, p []byte) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(r), e
}

// raceBuild: the system calls are raw (see rawio_race.go).
const raceBuild = false
