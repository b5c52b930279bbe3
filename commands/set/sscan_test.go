package main

import (
	"fmt"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestSScan(t *testing.T) {
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
			sscan s 0 match [23] count 2 => ["2" ["2"]]
			sscan s 2 match [23] count 2 => ["0" ["3"]]
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
