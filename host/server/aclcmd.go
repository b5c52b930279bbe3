package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"sort"
	"strings"
	"time"
)

// The ACL command: CAT, DELUSER, DRYRUN, GENPASS, GETUSER, HELP, LIST,
// LOG, SETUSER, USERS, WHOAMI, as Redis 7.0. LOAD and SAVE answer an
// error: respike has no ACL file (users come from the TOML file).

func cmdACLWhoami(c *client, _ [][]byte) { c.w.BulkString(c.userName) }

func cmdACLUsers(c *client, _ [][]byte) {
	names := c.s.userNames()
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// userNames returns the users' names, sorted as Redis's rax.
func (s *Server) userNames() []string {
	t := s.acl.users.load()
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func cmdACLList(c *client, _ [][]byte) {
	t := c.s.acl.users.load()
	names := c.s.userNames()
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(t[n].describe())
	}
}

func cmdACLGetuser(c *client, args [][]byte) {
	u := c.s.user(string(args[2]))
	if u == nil {
		c.w.Null()
		return
	}
	w := &c.w
	w.Map(6)
	w.BulkString("flags")
	f := u.flags()
	w.Set(len(f))
	for _, s := range f {
		w.BulkString(s)
	}
	w.BulkString("passwords")
	w.Array(len(u.passwords))
	for _, p := range u.passwords {
		w.BulkString(p)
	}
	w.BulkString("commands")
	w.BulkString(u.commandRules())
	w.BulkString("keys")
	w.BulkString(u.keyRules())
	w.BulkString("channels")
	w.BulkString(u.channelRules())
	w.BulkString("selectors")
	w.Array(0)
}

func cmdACLSetuser(c *client, args [][]byte) {
	name := string(args[2])
	rules := make([]string, 0, len(args)-3)
	for _, a := range args[3:] {
		rules = append(rules, string(a))
	}
	err := c.s.changeUsers(func(t aclTable) error {
		u, err := parseUser(name, t[name], rules, c.s.knownCommand)
		if err != nil {
			return err
		}
		t[name] = u
		return nil
	})
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	c.w.OK()
}

func cmdACLDeluser(c *client, args [][]byte) {
	var gone []string
	err := c.s.changeUsers(func(t aclTable) error {
		for _, a := range args[2:] {
			if string(a) == "default" {
				return errors.New("The 'default' user cannot be removed")
			}
		}
		for _, a := range args[2:] {
			if _, ok := t[string(a)]; ok {
				delete(t, string(a))
				gone = append(gone, string(a))
			}
		}
		return nil
	})
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	// As Redis, the connections authenticated as a deleted user close.
	if len(gone) > 0 {
		c.kill(func(o *client) bool { return slices.Contains(gone, o.snapshot().user) }, false)
	}
	c.w.Int(int64(len(gone)))
}

// cmdACLCat implements ACL CAT [category].
func cmdACLCat(c *client, args [][]byte) {
	if len(args) == 2 {
		c.w.Array(len(aclCategoryNames))
		for _, n := range aclCategoryNames {
			c.w.BulkString(n)
		}
		return
	}
	cat := strings.ToLower(string(args[2]))
	if !slices.Contains(aclCategoryNames, cat) {
		c.w.Error("ERR Unknown category '" + string(args[2]) + "'")
		return
	}
	var names []string
	for _, b := range builtins.all {
		if slices.Contains(b.acl, "@"+cat) {
			names = append(names, b.name)
		}
	}
	for _, m := range c.s.rt.Commands() {
		if slices.Contains(commandCats(nil, m), "@"+cat) {
			names = append(names, m.Info.Name)
		}
	}
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// cmdACLDryrun implements ACL DRYRUN user command [arg ...].
func cmdACLDryrun(c *client, args [][]byte) {
	u := c.s.user(string(args[2]))
	if u == nil {
		c.w.Error("ERR User '" + string(args[2]) + "' not found")
		return
	}
	cmd := args[3:]
	b, m := c.lookup(cmd)
	if b != nil && b.subs != nil && len(cmd) >= 2 {
		sub := b.sub(cmd[1], c.lname[:0])
		if sub == nil {
			c.w.Error("ERR Command '" + string(args[3]) + "' not found")
			return
		}
		b = sub
	}
	if b == nil && m == nil {
		c.w.Error("ERR Command '" + string(args[3]) + "' not found")
		return
	}
	arity, name := 0, ""
	if b != nil {
		arity, name = b.arity, b.name
	} else {
		arity, name = m.Info.Arity, m.Info.Name
	}
	if !arityOK(arity, len(cmd)) {
		c.w.Error("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	if u.unrestricted() {
		c.w.OK()
		return
	}
	switch reason, obj := u.deny(b, m, cmd); reason {
	case "":
		c.w.OK()
	case aclDeniedKey:
		c.w.BulkString("This user has no permissions to access the '" + obj + "' key")
	default:
		c.w.BulkString("This user has no permissions to run the '" + obj + "' command")
	}
}

// cmdACLLog implements ACL LOG [count | RESET].
func cmdACLLog(c *client, args [][]byte) {
	l := &c.s.acl.log
	n := int64(10)
	if len(args) > 3 {
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(cstr(args[1], 128)) + "'. Try ACL HELP.")
		return
	}
	if len(args) == 3 {
		if strings.EqualFold(string(args[2]), "reset") {
			l.mu.Lock()
			l.entries = nil
			l.mu.Unlock()
			c.w.OK()
			return
		}
		v, ok := parseInt(args[2])
		if !ok {
			c.w.Error(errNotInteger)
			return
		}
		n = max(v, 0)
	}
	l.mu.Lock()
	entries := make([]aclLogEntry, 0, min(int(n), len(l.entries)))
	for _, e := range l.entries[:min(int(n), len(l.entries))] {
		entries = append(entries, *e)
	}
	l.mu.Unlock()
	now := time.Now()
	w := &c.w
	w.Array(len(entries))
	for _, e := range entries {
		w.Map(7)
		w.BulkString("count")
		w.Int(e.count)
		w.BulkString("reason")
		w.BulkString(e.reason)
		w.BulkString("context")
		w.BulkString(e.context)
		w.BulkString("object")
		w.BulkString(e.object)
		w.BulkString("username")
		w.BulkString(e.username)
		w.BulkString("age-seconds")
		w.Double(float64(now.Sub(e.at).Milliseconds()) / 1000)
		w.BulkString("client-info")
		w.BulkString(e.clientInfo)
	}
}

// cmdACLGenpass implements ACL GENPASS [bits].
func cmdACLGenpass(c *client, args [][]byte) {
	bits := int64(256)
	if len(args) == 3 {
		v, ok := parseInt(args[2])
		if !ok {
			c.w.Error(errNotInteger)
			return
		}
		if v <= 0 || v > 4096 {
			c.w.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = v
	}
	n := (bits + 7) / 8
	buf := make([]byte, n)
	_, _ = rand.Read(buf)
	c.w.BulkString(hex.EncodeToString(buf)[:(bits+3)/4])
}

func cmdACLNoFile(c *client, _ [][]byte) {
	c.w.Error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")
}

var aclHelp = []string{
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Prints this help.",
}

func cmdACLHelp(c *client, _ [][]byte) {
	c.w.Array(len(aclHelp))
	for _, l := range aclHelp {
		c.w.Simple(l)
	}
}
