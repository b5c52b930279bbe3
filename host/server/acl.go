package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/respike/respike/host/module"
)

// ACL users, as Redis 6+ (7.0 semantics): each user has a state (on/off),
// passwords (kept as SHA-256 hex, as Redis does), command rules (by
// category and by command), key patterns (read, write or both) and channel
// patterns (stored for compatibility only: respike has no pub/sub).
//
// Users are immutable values: ACL SETUSER builds a new one and swaps it
// into the server's table, bumping aclGen, so a connection re-resolves its
// user by name when the generation it saw changed. The hot path of a
// server whose users are all unrestricted is one atomic boolean load
// (Server.aclRestricted): only when some user has command or key limits
// does a command pay for a check.

// aclUser is one user. Never modified once it is in the table.
type aclUser struct {
	name      string
	on        bool
	nopass    bool
	passwords []string // SHA-256 hex, in the order added
	allCmds   bool     // the rules start from +@all (else -@all)
	cmdRules  []cmdRule
	allKeys   bool // ~* for reading and writing
	keys      []keyPattern
	allChans  bool
	chans     []string
	// sanitize is Redis's sanitize-payload (1) / skip-sanitize-payload
	// (-1) flag: kept for ACL GETUSER, as respike has no RESTORE.
	sanitize int

	// decisions caches command permissions: *builtin or *module.Command →
	// bool. Safe because the user never changes.
	decisions sync.Map
}

// cmdRule is one +/- rule after the +@all/-@all base.
type cmdRule struct {
	allow bool
	cat   string // category name without '@'; "" for a command rule
	cmd   string // "get" or "config|get"
}

// keyPattern is a key glob with the access it grants.
type keyPattern struct {
	pat  string
	r, w bool
}

// unrestricted reports whether the user may run every command on every key.
func (u *aclUser) unrestricted() bool {
	return u.on && u.allCmds && len(u.cmdRules) == 0 && u.allKeys
}

// newUser is a user as ACL SETUSER creates it: off, no password, no
// commands, no keys, no channels.
func newUser(name string) *aclUser { return &aclUser{name: name} }

// defaultUser is the default user of a server with password p ("" none).
func defaultUser(p string) *aclUser {
	u := &aclUser{name: "default", on: true, allCmds: true, allKeys: true, allChans: true}
	if p == "" {
		u.nopass = true
	} else {
		u.passwords = []string{hashPassword(p)}
	}
	return u
}

func hashPassword(p string) string {
	h := sha256.Sum256([]byte(p))
	return hex.EncodeToString(h[:])
}

// clone copies u without its cache, to change.
func (u *aclUser) clone() *aclUser {
	return &aclUser{name: u.name, on: u.on, nopass: u.nopass, passwords: slices.Clone(u.passwords),
		allCmds: u.allCmds, cmdRules: slices.Clone(u.cmdRules), allKeys: u.allKeys,
		keys: slices.Clone(u.keys), allChans: u.allChans, chans: slices.Clone(u.chans), sanitize: u.sanitize}
}

// checkPass reports whether pass is one of the user's passwords (or the
// user has none to check).
func (u *aclUser) checkPass(pass []byte) bool {
	if !u.on {
		return false
	}
	if u.nopass {
		return true
	}
	h := sha256.Sum256(pass)
	var buf [64]byte
	hex.Encode(buf[:], h[:])
	ok := false
	for _, p := range u.passwords {
		if subtle.ConstantTimeCompare(buf[:], []byte(p)) == 1 {
			ok = true
		}
	}
	return ok
}

// aclCategoryNames is Redis 7.0's category list, in ACL CAT's order.
var aclCategoryNames = aclOrder

// ruleError is a rule that ACL SETUSER refuses, with Redis's reason.
type ruleError struct{ reason string }

func (e *ruleError) Error() string { return e.reason }

const (
	errRuleSyntax  = "Syntax error"
	errRuleUnknown = "Unknown command or category name in ACL"
	errRuleHash    = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	errRuleNoPass  = "The password you are trying to remove from the user does not exist"
	errRuleAllKeys = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	errRuleAllChan = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	errRuleSub     = "Allowing first-arg of a subcommand is not supported"
)

// knownCommand reports whether name ("get", "config|get") names a command
// a rule may refer to.
type knownCommand func(name string) bool

// apply applies one rule to u (which the caller owns), as Redis's
// ACLSetUser.
func (u *aclUser) apply(rule string, known knownCommand) error {
	low := strings.ToLower(rule)
	switch low {
	case "on":
		u.on = true
		return nil
	case "off":
		u.on = false
		return nil
	case "nopass":
		u.nopass, u.passwords = true, nil
		return nil
	case "resetpass":
		u.nopass, u.passwords = false, nil
		return nil
	case "allkeys":
		u.allKeys, u.keys = true, nil
		return nil
	case "resetkeys":
		u.allKeys, u.keys = false, nil
		return nil
	case "allchannels":
		u.allChans, u.chans = true, nil
		return nil
	case "resetchannels":
		u.allChans, u.chans = false, nil
		return nil
	case "allcommands", "+@all":
		u.allCmds, u.cmdRules = true, nil
		return nil
	case "nocommands", "-@all":
		u.allCmds, u.cmdRules = false, nil
		return nil
	case "reset":
		*u = aclUser{name: u.name, sanitize: 1}
		return nil
	case "sanitize-payload":
		u.sanitize = 1
		return nil
	case "skip-sanitize-payload":
		u.sanitize = -1
		return nil
	}
	if rule == "" {
		return &ruleError{errRuleSyntax}
	}
	switch rule[0] {
	case '>':
		u.addPassword(hashPassword(rule[1:]))
		return nil
	case '#':
		if !validHash(rule[1:]) {
			return &ruleError{errRuleHash}
		}
		u.addPassword(rule[1:])
		return nil
	case '<', '!':
		h := rule[1:]
		if rule[0] == '<' {
			h = hashPassword(h)
		} else if !validHash(h) {
			return &ruleError{errRuleHash}
		}
		i := slices.Index(u.passwords, h)
		if i < 0 {
			return &ruleError{errRuleNoPass}
		}
		u.passwords = slices.Delete(u.passwords, i, i+1)
		return nil
	case '~':
		return u.addKey(rule[1:], true, true)
	case '%':
		perm, pat, ok := strings.Cut(rule[1:], "~")
		if !ok || perm == "" {
			return &ruleError{errRuleSyntax}
		}
		r, w := false, false
		for _, ch := range strings.ToUpper(perm) {
			switch ch {
			case 'R':
				r = true
			case 'W':
				w = true
			default:
				return &ruleError{errRuleSyntax}
			}
		}
		return u.addKey(pat, r, w)
	case '&':
		if u.allChans {
			return &ruleError{errRuleAllChan}
		}
		if rule[1:] == "*" {
			u.allChans, u.chans = true, nil
		} else if !slices.Contains(u.chans, rule[1:]) {
			u.chans = append(u.chans, rule[1:])
		}
		return nil
	case '+', '-':
		allow := rule[0] == '+'
		name := low[1:]
		if strings.HasPrefix(name, "@") {
			if !slices.Contains(aclCategoryNames, name[1:]) {
				return &ruleError{errRuleUnknown}
			}
			u.cmdRules = append(u.cmdRules, cmdRule{allow: allow, cat: name[1:]})
			return nil
		}
		if !known(name) {
			if parent, _, sub := strings.Cut(name, "|"); sub && known(parent) {
				return &ruleError{errRuleSub}
			}
			return &ruleError{errRuleUnknown}
		}
		u.cmdRules = append(u.cmdRules, cmdRule{allow: allow, cmd: name})
		return nil
	case '(':
		return &ruleError{"Selectors are not supported by respike"}
	}
	return &ruleError{errRuleSyntax}
}

func (u *aclUser) addPassword(h string) {
	u.nopass = false
	if !slices.Contains(u.passwords, h) {
		u.passwords = append(u.passwords, h)
	}
}

func (u *aclUser) addKey(pat string, r, w bool) error {
	if u.allKeys {
		return &ruleError{errRuleAllKeys}
	}
	if pat == "*" && r && w {
		u.allKeys, u.keys = true, nil
		return nil
	}
	for i := range u.keys {
		if u.keys[i].pat == pat {
			u.keys[i].r = u.keys[i].r || r
			u.keys[i].w = u.keys[i].w || w
			return nil
		}
	}
	u.keys = append(u.keys, keyPattern{pat: pat, r: r, w: w})
	return nil
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, ch := range h {
		if (ch < '0' || ch > '9') && (ch < 'a' || ch > 'f') {
			return false
		}
	}
	return true
}

// flags is the user's flags as ACL GETUSER lists them.
func (u *aclUser) flags() []string {
	f := []string{"off"}
	if u.on {
		f[0] = "on"
	}
	if u.nopass {
		f = append(f, "nopass")
	}
	switch u.sanitize {
	case -1:
		f = append(f, "skip-sanitize-payload")
	case 1:
		f = append(f, "sanitize-payload")
	}
	return f
}

// commandRules describes the command rules as ACL GETUSER and ACL LIST
// do: the base, then the rules in the order given (as Redis 7.2; 7.0
// recomputes an approximation from its command bitmap).
func (u *aclUser) commandRules() string {
	var b strings.Builder
	if u.allCmds {
		b.WriteString("+@all")
	} else {
		b.WriteString("-@all")
	}
	for _, r := range u.cmdRules {
		b.WriteByte(' ')
		if r.allow {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
		if r.cat != "" {
			b.WriteString("@" + r.cat)
		} else {
			b.WriteString(r.cmd)
		}
	}
	return b.String()
}

// keyRules describes the key patterns as Redis does.
func (u *aclUser) keyRules() string {
	if u.allKeys {
		return "~*"
	}
	parts := make([]string, 0, len(u.keys))
	for _, k := range u.keys {
		switch {
		case k.r && k.w:
			parts = append(parts, "~"+k.pat)
		case k.r:
			parts = append(parts, "%R~"+k.pat)
		default:
			parts = append(parts, "%W~"+k.pat)
		}
	}
	return strings.Join(parts, " ")
}

// channelRules describes the channel patterns as Redis does.
func (u *aclUser) channelRules() string {
	if u.allChans {
		return "&*"
	}
	parts := make([]string, 0, len(u.chans))
	for _, c := range u.chans {
		parts = append(parts, "&"+c)
	}
	return strings.Join(parts, " ")
}

// describe is the user as ACL LIST shows it.
func (u *aclUser) describe() string {
	parts := []string{"user", u.name}
	parts = append(parts, u.flags()...)
	for _, p := range u.passwords {
		parts = append(parts, "#"+p)
	}
	if k := u.keyRules(); k != "" {
		parts = append(parts, k)
	}
	if u.allChans {
		parts = append(parts, "&*")
	} else {
		parts = append(parts, "resetchannels")
		if c := u.channelRules(); c != "" {
			parts = append(parts, c)
		}
	}
	parts = append(parts, u.commandRules())
	return strings.Join(parts, " ")
}

// canRun reports whether the user may run the command named name (with
// parent, the container's name, for a subcommand) in categories cats
// ("@read"...): the last rule that names it, one of its categories or
// its container decides.
func (u *aclUser) canRun(name, parent string, cats []string) bool {
	ok := u.allCmds
	for _, r := range u.cmdRules {
		var match bool
		if r.cat != "" {
			match = slices.Contains(cats, "@"+r.cat)
		} else {
			match = r.cmd == name || (parent != "" && r.cmd == parent)
		}
		if match {
			ok = r.allow
		}
	}
	return ok
}

// canKey reports whether the user may read (r) and/or write (w) key.
func (u *aclUser) canKey(key []byte, r, w bool) bool {
	if u.allKeys {
		return true
	}
	k := string(key)
	// A key may be readable by one pattern and writable by another.
	needR, needW := r, w
	for _, p := range u.keys {
		if (needR && p.r || needW && p.w) && globMatch(p.pat, k, false) {
			if p.r {
				needR = false
			}
			if p.w {
				needW = false
			}
			if !needR && !needW {
				return true
			}
		}
	}
	return !needR && !needW
}

// aclTable is the server's users, by name; replaced whole on change.
type aclTable map[string]*aclUser

// parseUser builds a user from rules, starting from base (nil: a new user).
func parseUser(name string, base *aclUser, rules []string, known knownCommand) (*aclUser, error) {
	var u *aclUser
	if base != nil {
		u = base.clone()
	} else {
		u = newUser(name)
	}
	for _, r := range rules {
		if err := u.apply(r, known); err != nil {
			return nil, fmt.Errorf("Error in ACL SETUSER modifier '%s': %w", r, err)
		}
	}
	return u, nil
}

// commandCats returns a command's ACL categories. A module command's are
// derived each time: users cache their decisions, so this runs once per
// user and command.
func commandCats(b *builtin, m *module.Command) []string {
	if b != nil {
		return b.acl
	}
	return aclCategories(m.Info.Flags, m.Info.Group)
}
