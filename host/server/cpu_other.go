//go:build !unix

package server

// cpuTimes has nothing true to say on this platform.
func cpuTimes() [][2]string { return nil }
