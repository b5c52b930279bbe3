package server

import (
	"strings"
	"testing"
)

// Every default in the table is a value its own validation accepts and
// shows unchanged, so CONFIG SET p <CONFIG GET p> always succeeds.
func TestParamDefaultsValidate(t *testing.T) {
	for _, p := range params {
		if p.def == "" || p.name == "bind" {
			continue
		}
		got, why := p.validate(p.def)
		if why != "" || got != p.def {
			t.Errorf("%s: default %q validates as %q, %q", p.name, p.def, got, why)
		}
	}
	if byName["hash-max-ziplist-entries"] != byName["hash-max-listpack-entries"] {
		t.Fatal("the ziplist alias does not name the listpack parameter")
	}
}

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "100": 100, "1k": 1000, "1kb": 1024, "1KB": 1024,
		"2mb": 2 << 20, "3g": 3e9, "1gb": 1 << 30, "7b": 7} {
		if got, ok := parseMemory(in); !ok || got != want {
			t.Errorf("parseMemory(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "-1", "+1", "1xb", "kb", "1.5mb", "99999999999999999999", "9223372036854775807gb"} {
		if got, ok := parseMemory(bad); ok {
			t.Errorf("parseMemory(%q) = %d, accepted", bad, got)
		}
	}
}

func TestSetTOMLKey(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"replaces the key in its section only",
			"[log]\ntimeout = 9\n[server]\n# timeout = 1\ntimeout = 5 # old\nlisten = \"x\"\n",
			"[log]\ntimeout = 9\n[server]\n# timeout = 1\ntimeout = 0\nlisten = \"x\"\n"},
		{"adds the key under the header",
			"# top\n[server] # main\nlisten = \"x\"\n",
			"# top\n[server] # main\ntimeout = 0\nlisten = \"x\"\n"},
		{"adds the section", "[log]\nlevel = \"info\"", "[log]\nlevel = \"info\"\n\n[server]\ntimeout = 0\n"},
		{"empty file", "", "\n[server]\ntimeout = 0\n"},
	} {
		if got := string(setTOMLKey([]byte(tc.in), "server", "timeout", "0")); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestTOMLString(t *testing.T) {
	if got := tomlString("a\"b\\c\n\x01é"); got != `"a\"b\\c\u000A\u0001é"` {
		t.Fatalf("tomlString = %s", got)
	}
}

func TestNotifyFlagsOrder(t *testing.T) {
	// As redis-server 7.0 shows them; n is not among A's classes, and
	// Redis does not show it after A.
	for in, want := range map[string]string{"KEA": "AKE", "Ex$g": "g$xE", "An": "A", "": "", "mnK": "nKm"} {
		got, why := notifyFlags(in)
		if why != "" || got != want {
			t.Errorf("notifyFlags(%q) = %q %q; want %q", in, got, why, want)
		}
	}
	if _, why := notifyFlags("Z"); !strings.HasPrefix(why, "Invalid event class") {
		t.Fatalf("Z accepted: %q", why)
	}
}
