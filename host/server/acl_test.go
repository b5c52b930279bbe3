package server

import (
	"strings"
	"testing"
)

// knownForTest knows a few commands, as a server with the strings module.
func knownForTest(name string) bool {
	switch name {
	case "get", "set", "flushall", "config", "config|get", "config|set":
		return true
	}
	return false
}

func mustUser(t *testing.T, rules string) *aclUser {
	t.Helper()
	u, err := parseUser("u", nil, strings.Fields(rules), knownForTest)
	if err != nil {
		t.Fatalf("%q: %v", rules, err)
	}
	return u
}

func TestACLRuleParsing(t *testing.T) {
	for _, tc := range []struct {
		rules, list string
	}{
		{"", "user u off resetchannels -@all"},
		{"on >pw ~app1:* +@read -@dangerous", "user u on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~app1:* resetchannels -@all +@read -@dangerous"},
		{"on nopass allkeys allcommands allchannels", "user u on nopass ~* &* +@all"},
		{"on >a nopass", "user u on nopass resetchannels -@all"},
		{"on nopass >a", "user u on #ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb resetchannels -@all"},
		{"on >a resetpass", "user u on resetchannels -@all"},
		{"%R~r:* %W~w:* %RW~b:* ~r:*", "user u off ~r:* %W~w:* ~b:* resetchannels -@all"},
		{"+@all -flushall +get -@all +set", "user u off resetchannels -@all +set"},
		{"+config|get -config +config", "user u off resetchannels -@all +config|get -config +config"},
		{"on >x ~k +@all reset", "user u off sanitize-payload resetchannels -@all"},
		{"&a &b &a", "user u off resetchannels &a &b -@all"},
		{"ON NOPASS ALLKEYS +GET", "user u on nopass ~* resetchannels -@all +get"},
	} {
		if got := mustUser(t, tc.rules).describe(); got != tc.list {
			t.Errorf("%q:\n got  %s\n want %s", tc.rules, got, tc.list)
		}
	}
}

func TestACLRuleErrors(t *testing.T) {
	for rules, want := range map[string]string{
		"bad":            "Error in ACL SETUSER modifier 'bad': Syntax error",
		"+@nosuch":       "Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL",
		"+nosuch":        "Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL",
		"+get|x":         "Error in ACL SETUSER modifier '+get|x': Allowing first-arg of a subcommand is not supported",
		"#abc":           "Error in ACL SETUSER modifier '#abc': " + errRuleHash,
		"<nope":          "Error in ACL SETUSER modifier '<nope': " + errRuleNoPass,
		"allkeys ~a":     "Error in ACL SETUSER modifier '~a': " + errRuleAllKeys,
		"%X~a":           "Error in ACL SETUSER modifier '%X~a': Syntax error",
		"(+get ~k)":      "Error in ACL SETUSER modifier '(+get': Selectors are not supported by respike",
		"allchannels &x": "Error in ACL SETUSER modifier '&x': " + errRuleAllChan,
	} {
		_, err := parseUser("u", nil, strings.Fields(rules), knownForTest)
		if err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %q", rules, err, want)
		}
	}
}

func TestACLPasswords(t *testing.T) {
	u := mustUser(t, "on >one >two <one")
	if u.checkPass([]byte("one")) || !u.checkPass([]byte("two")) {
		t.Fatal("password removal")
	}
	h := hashPassword("three")
	u = mustUser(t, "on #"+h)
	if !u.checkPass([]byte("three")) || u.checkPass([]byte("x")) {
		t.Fatal("#hash password")
	}
	if mustUser(t, "off nopass").checkPass(nil) {
		t.Fatal("an off user logged in")
	}
	if !defaultUser("").checkPass([]byte("anything")) || defaultUser("pw").checkPass([]byte("x")) {
		t.Fatal("default user")
	}
}

func TestACLCommandAndKeyChecks(t *testing.T) {
	get := &builtin{name: "get", flags: []string{"readonly", "fast"}, acl: []string{"@read", "@string", "@fast"}, firstKey: 1, lastKey: 1, step: 1}
	set := &builtin{name: "set", flags: []string{"write"}, acl: []string{"@write", "@string", "@slow"}, firstKey: 1, lastKey: 1, step: 1}
	mset := &builtin{name: "mset", flags: []string{"write"}, acl: []string{"@write", "@string", "@slow"}, firstKey: 1, lastKey: -1, step: 2}
	cfgGet := &builtin{name: "config|get", acl: []string{"@admin", "@slow", "@dangerous"}}
	sort := &builtin{name: "sort", flags: []string{"write", "movablekeys"}, acl: []string{"@write"}, firstKey: 1, lastKey: 1, step: 1}
	args := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	u := mustUser(t, "on nopass %R~r:* %W~w:* ~b:* +@read +@write -set +config")
	for _, tc := range []struct {
		b             *builtin
		args          string
		reason, where string
	}{
		{get, "get r:1", "", ""},
		{get, "get b:1", "", ""},
		{get, "get w:1", aclDeniedKey, "w:1"},
		{set, "set b:1 v", aclDeniedCmd, "set"},
		{mset, "mset w:1 v b:2 v", "", ""},
		{mset, "mset w:1 v r:2 v", aclDeniedKey, "r:2"},
		{cfgGet, "config get x", "", ""},
		{sort, "sort b:1", aclDeniedKey, "b:1"},
	} {
		reason, where := u.deny(tc.b, nil, args(tc.args))
		if reason != tc.reason || where != tc.where {
			t.Errorf("%s: %q %q, want %q %q", tc.args, reason, where, tc.reason, tc.where)
		}
	}
	if !mustUser(t, "on nopass allkeys +@all").unrestricted() || mustUser(t, "on nopass allkeys +@all -get").unrestricted() {
		t.Fatal("unrestricted")
	}
}

func TestACLSetuserRedacted(t *testing.T) {
	args := [][]byte{[]byte("ACL"), []byte("SETUSER"), []byte("u"), []byte(">secret"), []byte("on")}
	for i, want := range []bool{false, false, true, true, true} {
		if got := redacted(args, i); got != want {
			t.Errorf("argument %d: redacted %v, want %v", i, got, want)
		}
	}
	if redacted([][]byte{[]byte("acl"), []byte("getuser"), []byte("u")}, 2) {
		t.Error("ACL GETUSER's user redacted")
	}
}
