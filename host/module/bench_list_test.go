package module

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// listModule builds commands/list once per test binary run.
var listModule = sync.OnceValues(func() (string, error) { return buildFamily("list") })

// BenchmarkExecList measures whole Execs of the list commands
// redis-benchmark runs (LPUSH, RPUSH, LPOP, RPOP, LRANGE of 100 and 600
// items) on the embedded memory store, inline as the daemon runs them.
func BenchmarkExecList(b *testing.B) {
	path, err := listModule()
	if err != nil {
		b.Fatal(err)
	}
	st := memory.New(memory.Options{})
	defer st.Close()
	r := newRuntime(b, Config{}, st)
	if _, err := r.Load(context.Background(), path); err != nil {
		b.Fatal(err)
	}
	for range 1000 {
		do(b, r, "rpush", "mylist", "xxx")
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"LPUSH", []string{"LPUSH", "mylist", "xxx"}, ":"},
		{"RPUSH", []string{"RPUSH", "mylist", "xxx"}, ":"},
		{"LPOP", []string{"LPOP", "mylist"}, "$3\r\nxxx\r\n"},
		{"RPOP", []string{"RPOP", "mylist"}, "$3\r\nxxx\r\n"},
		{"LRANGE_100", []string{"LRANGE", "mylist", "0", "99"}, "*100\r\n"},
		{"LRANGE_600", []string{"LRANGE", "mylist", "0", "599"}, "*600\r\n"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cmd := r.Lookup([]byte(tc.args[0]))
			start := &codec.Start{Proto: 2}
			for _, a := range tc.args {
				start.Args = append(start.Args, []byte(a))
			}
			ctx := context.Background()
			var out []byte
			b.ReportAllocs()
			cpu := cpuNanos()
			for b.Loop() {
				out = r.Exec(ctx, cmd, start, out[:0])
				if tc.name == "LPOP" || tc.name == "RPOP" {
					// Keep the list's length: push back what was popped.
					r.Exec(ctx, r.Lookup([]byte("rpush")), &codec.Start{Proto: 2, Args: [][]byte{[]byte("rpush"), []byte("mylist"), []byte("xxx")}}, nil)
				}
			}
			reportCPU(b, cpu)
			if !strings.HasPrefix(string(out), tc.want) {
				b.Fatalf("%s = %.40q", tc.name, out)
			}
		})
	}
}
