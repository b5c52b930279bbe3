package main

import (
	"strconv"
	"testing"

	"github.com/respike/respike/commands/internal/cmdtest"
	"github.com/respike/respike/commands/internal/kit"
	"github.com/respike/respike/guest-sdk/sdktest"
)

func TestHScan(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		cmdtest.Script(t, h, `
			hscan nokey 0 => ["0" []]
			hscan nokey x => (error) ERR invalid cursor
			hscan nokey 0 badopt => ["0" []]
			hscan nokey 0 count 0 => ["0" []]
			set s v => OK
			hscan s 0 badopt => `+wrongType+`
			hscan s x => (error) ERR invalid cursor
			hset h f 1 z 2 => (integer) 2
			hscan h 0 => ["0" ["f" "1" "z" "2"]]
			hscan h "" => ["0" ["f" "1" "z" "2"]]
			hscan h +0 => ["0" ["f" "1" "z" "2"]]
			hscan h "0\x00junk" => ["0" ["f" "1" "z" "2"]]
			hscan h " 1" => (error) ERR invalid cursor
			hscan h "1 " => (error) ERR invalid cursor
			hscan h - => (error) ERR invalid cursor
			hscan h 18446744073709551616 => (error) ERR invalid cursor
			hscan h 18446744073709551615 => ["0" []]
			hscan h -1 => ["0" []]
			hscan h 0 count 0 => (error) ERR syntax error
			hscan h 0 count -1 => (error) ERR syntax error
			hscan h 0 count x => (error) ERR value is not an integer or out of range
			hscan h 0 count 9223372036854775808 => (error) ERR value is not an integer or out of range
			hscan h 0 count => (error) ERR syntax error
			hscan h 0 match => (error) ERR syntax error
			hscan h 0 type string => (error) ERR syntax error
			hscan h 0 count x count 0 => (error) ERR value is not an integer or out of range
			hscan h 0 match * count 1 match z => ["`+strconv.FormatUint(kit.CursorAfter([]byte("f")), 10)+`" []]
			hscan h 0 match z count 5 => ["0" ["z" "2"]]
			hscan h 0 COUNT 5 MATCH * => ["0" ["f" "1" "z" "2"]]
			hscan h 0 novalues => ["0" ["f" "z"]]
			hscan h 0 NOVALUES match f => ["0" ["f"]]
			hscan h 0 count 9223372036854775807 => ["0" ["f" "1" "z" "2"]]
		`)
		h.Proto = 3
		cmdtest.Script(t, h, `
			hscan h 0 => ["0" ["f" "1" "z" "2"]]
			hscan nokey 0 => ["0" []]
		`)
	})
}

// Paging by COUNT visits every field exactly once when nothing changes,
// with MATCH applied per page.
func TestHScanPages(t *testing.T) {
	cmdtest.Each(t, func(t *testing.T, h *sdktest.Host) {
		fillHash(h, "h", 25)
		seen := map[string]string{}
		cursor := "0"
		pages := 0
		for {
			got := cmdtest.DoParsed(t, h, "hscan", "h", cursor, "count", "7").([]any)
			items := got[1].([]any)
			for i := 0; i < len(items); i += 2 {
				f := items[i].(string)
				if _, dup := seen[f]; dup {
					t.Fatalf("field %s returned twice", f)
				}
				seen[f] = items[i+1].(string)
			}
			pages++
			cursor = got[0].(string)
			if cursor == "0" {
				break
			}
		}
		if pages != 4 || len(seen) != 25 {
			t.Errorf("%d pages, %d fields; want 4 pages and 25 fields", pages, len(seen))
		}
		for f, v := range seen {
			if v != "v"+f[1:] {
				t.Errorf("field %s has value %s", f, v)
			}
		}
		// The cursor is the position after the page's last field.
		after := func(k string) string { return strconv.FormatUint(kit.CursorAfter([]byte(k)), 10) }
		c1, c2 := after("f009"), after("f019")
		cmdtest.Script(t, h, `
			hscan h 0 => ["`+c1+`" ["f000" "v000" "f001" "v001" "f002" "v002" "f003" "v003" "f004" "v004" "f005" "v005" "f006" "v006" "f007" "v007" "f008" "v008" "f009" "v009"]]
			hscan h `+c1+` match f01[0-2] => ["`+c2+`" ["f010" "v010" "f011" "v011" "f012" "v012"]]
			hscan h `+c2+` match *3 novalues => ["0" ["f023"]]
			hscan h `+after("f023")+` => ["0" ["f024" "v024"]]
			hscan h `+after("f024")+` => ["0" []]
		`)
	})
}
