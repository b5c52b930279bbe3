package rdb

import (
	"errors"
	"testing"
)

// FuzzDecode feeds Decode arbitrary payloads, seeded with redis-server's
// dumps of every encoding (testdata/dumps). Each input is tried as it is
// (mostly refused by the checksum) and with a valid trailer appended, so
// that the body decoder sees every corruption. Decode must not panic, must
// answer one of its errors, and whatever it accepts must encode to a
// payload that decodes to the same value. Run it with a short
// minimization time (the seeds are up to 12 KB, and minimizing each new
// input for the default minute looks like a hang):
//
//	go test -run '^$' -fuzz FuzzDecode -fuzzminimizetime 2s ./commands/internal/rdb
func FuzzDecode(f *testing.F) {
	for _, p := range dumps(f) {
		f.Add(p)
		f.Add(p[:len(p)-10]) // the body alone: the fuzzer mutates it
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range [][]byte{data, payload(data)} {
			o, err := Decode(p)
			if err != nil {
				var u *UnsupportedError
				if !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrFormat) &&
					!errors.Is(err, ErrTooBig) && !errors.As(err, &u) {
					t.Fatalf("unexpected error %v", err)
				}
				continue
			}
			o2, err := Decode(Encode(o))
			if err != nil {
				t.Fatalf("re-encoding does not decode: %v", err)
			}
			if canon(o) != canon(o2) {
				t.Fatalf("round trip changed the value\n  %s\n  %s", canon(o), canon(o2))
			}
		}
	})
}
