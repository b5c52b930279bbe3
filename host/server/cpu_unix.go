//go:build unix

package server

import (
	"fmt"
	"syscall"
)

// cpuTimes answers INFO cpu's fields as Redis formats them: seconds with
// six decimals, for the process and for its children.
func cpuTimes() [][2]string {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) string { return fmt.Sprintf("%d.%06d", t.Sec, t.Usec) }
	return [][2]string{
		{"used_cpu_sys", tv(self.Stime)},
		{"used_cpu_user", tv(self.Utime)},
		{"used_cpu_sys_children", tv(kids.Stime)},
		{"used_cpu_user_children", tv(kids.Utime)},
	}
}
