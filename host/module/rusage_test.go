//go:build unix

package module

import "syscall"

// cpuNanos is the CPU time (user and system, all threads) the process has
// used: benchmarks report it per op because wall time on a shared machine
// measures the neighbours.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
