//go:build !unix

package module

func cpuNanos() int64 { return 0 }
