package e2e

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkDispatch measures the whole dispatch path of the real daemon:
// RESP in over loopback TCP → server → strings module (wasm) → embedded
// store → RESP out, 100 commands per pipelined write. ns/cmd is wall time
// per command; server-allocs/cmd counts every allocation in this process
// (server and the benchmark's own reader, which allocates nothing once warm)
// divided by the commands.
func BenchmarkDispatch(b *testing.B) {
	const depth = 100
	for _, cmd := range [][]string{
		{"GET", "bench:k"},
		{"SET", "bench:k", "xxx"},
		{"INCR", "bench:n"},
	} {
		b.Run(cmd[0], func(b *testing.B) {
			c, err := DialRaw(env.daemon.Addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Do("SET", "bench:k", "xxx"); err != nil {
				b.Fatal(err)
			}
			req := bytes.Repeat(Encode(cmd...), depth)
			want := map[string]int{"GET": len("$3\r\nxxx\r\n"), "SET": len("+OK\r\n")}[cmd[0]]
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			buf := make([]byte, 64<<10)
			for b.Loop() {
				if err := c.Send(req); err != nil {
					b.Fatal(err)
				}
				// Read the replies for all commands; for GET and SET their
				// total length is known, INCR's grows, so count lines.
				got, lines := 0, 0
				for lines < depth {
					n, err := c.br.Read(buf)
					if err != nil && err != io.EOF {
						b.Fatal(err)
					}
					if want > 0 {
						got += n
						if got >= want*depth {
							break
						}
						continue
					}
					lines += strings.Count(string(buf[:n]), "\n")
				}
			}
			runtime.ReadMemStats(&ms1)
			cmds := float64(b.N * depth)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/cmds, "ns/cmd")
			b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/cmds, "allocs/cmd")
		})
	}
}
