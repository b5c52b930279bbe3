package main

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/commands/internal/kit"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestSScan(t *testing.T) {
	// The cursor after a page is the position after its last member.
	after2 := strconv.FormatUint(kit.CursorAfter([]byte("2")), 10)
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			sscan nokey 0 => ["0" []]
			sscan nokey x => (error) ERR invalid cursor
			sscan nokey 0 badopt => ["0" []]
			set str v => OK
			sscan str 0 badopt => `+wrongType+`
			sscan str x => (error) ERR invalid cursor
			sadd s 1 2 3 => (integer) 3
			sscan s 0 => ["0" ["1" "2" "3"]]
			sscan s "" => ["0" ["1" "2" "3"]]
			sscan s "0\x00x" => ["0" ["1" "2" "3"]]
			sscan s " 0" => (error) ERR invalid cursor
			sscan s 18446744073709551616 => (error) ERR invalid cursor
			sscan s -1 => ["0" []]
			sscan s 0 match 1* => ["0" ["1"]]
			sscan s 0 match [23] count 2 => ["`+after2+`" ["2"]]
			sscan s `+after2+` match [23] count 2 => ["0" ["3"]]
			sscan s 0 count 0 => (error) ERR syntax error
			sscan s 0 count x => (error) ERR value is not an integer or out of range
			sscan s 0 count => (error) ERR syntax error
			sscan s 0 novalues => (error) ERR syntax error
			sscan s 0 type set => (error) ERR syntax error
			sscan s 0 MATCH * COUNT 100 => ["0" ["1" "2" "3"]]
		`)
	})
}

func TestSScanPages(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		fillSet(h, "s", 33)
		seen := map[string]bool{}
		cursor, pages := "0", 0
		for {
			got := cmdtest.DoParsed(t, h, "sscan", "s", cursor).([]any)
			for _, m := range got[1].([]any) {
				if seen[m.(string)] {
					t.Fatalf("%s returned twice", m)
				}
				seen[m.(string)] = true
			}
			pages++
			if cursor = got[0].(string); cursor == "0" {
				break
			}
		}
		if pages != 4 || len(seen) != 33 {
			t.Errorf("%d pages, %d members", pages, len(seen))
		}
		for i := range 33 {
			if !seen[fmt.Sprintf("m%03d", i)] {
				t.Errorf("m%03d never returned", i)
			}
		}
	})
}

// A full SSCAN returns every member present from its start to its end while
// members are removed and added between pages: short members, members
// sharing a prefix longer than a cursor position, binary members and the
// empty member, with small and default COUNTs.
func TestSScanChurn(t *testing.T) {
	pools := map[string]func(i int) string{
		"short":  func(i int) string { return fmt.Sprintf("m%d", i) },
		"prefix": func(i int) string { return fmt.Sprintf("session:user:%06d", i) },
		"runs":   func(i int) string { return fmt.Sprintf("%07d:%d", i/16, i) },
		"binary": func(i int) string {
			if i == 0 {
				return ""
			}
			return string([]byte{byte(i * 37), 0, 0xff, byte(i), 0, byte(i >> 8)})
		},
	}
	for name, member := range pools {
		for _, count := range []string{"1", "3", "10"} {
			t.Run(name+"/count="+count, func(t *testing.T) {
				cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
					rng := rand.New(rand.NewPCG(uint64(len(name)), uint64(len(count))))
					const pool = 300
					present := map[string]bool{}
					for i := range pool / 2 {
						m := member(rng.IntN(pool))
						if i == 0 {
							m = member(0)
						}
						h.DoRaw([]byte("sadd"), []byte("s"), []byte(m))
						present[m] = true
					}
					throughout := maps.Clone(present)
					seen := map[string]bool{}
					cursor := "0"
					for pages := 0; ; pages++ {
						if pages > 10*pool {
							t.Fatal("the scan does not end")
						}
						got := cmdtest.DoParsed(t, h, "sscan", "s", cursor, "count", count).([]any)
						for _, m := range got[1].([]any) {
							seen[m.(string)] = true
						}
						if cursor = got[0].(string); cursor == "0" {
							break
						}
						for range 3 {
							m := member(rng.IntN(pool))
							if rng.IntN(2) == 0 {
								h.DoRaw([]byte("srem"), []byte("s"), []byte(m))
								delete(throughout, m)
							} else {
								h.DoRaw([]byte("sadd"), []byte("s"), []byte(m))
							}
						}
					}
					for m := range throughout {
						if !seen[m] {
							t.Errorf("member %q present throughout was not returned", m)
						}
					}
				})
			})
		}
	}
}
