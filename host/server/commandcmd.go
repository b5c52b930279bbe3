package server

import (
	"slices"
	"strings"

	"github.com/respike/respike/guest-sdk/resp"
	"github.com/respike/respike/host/module"
)

// COMMAND and its subcommands, built from the builtin table and the module
// manifests.

// cmdView is what COMMAND reports about a builtin or a module command.
type cmdView struct {
	name                  string
	arity                 int
	flags, acl, tips      []string
	firstKey, lastKey, st int
	group, since, summary string
	module                string // serving module; "" for builtins
	subs                  []*builtin
}

func builtinView(b *builtin) cmdView {
	return cmdView{name: b.name, arity: b.arity, flags: b.flags, acl: b.acl, tips: b.tips,
		firstKey: b.firstKey, lastKey: b.lastKey, st: b.step,
		group: b.group, since: b.since, summary: b.summary, subs: b.subs}
}

func moduleView(m *module.Command) cmdView {
	i := &m.Info
	return cmdView{name: i.Name, arity: i.Arity, flags: i.Flags, acl: aclCategories(i.Flags, i.Group),
		firstKey: i.FirstKey, lastKey: i.LastKey, st: i.Step,
		group: i.Group, since: i.Since, summary: i.Summary, module: m.Module}
}

// aclOrder is Redis's order of ACL categories in COMMAND INFO.
var aclOrder = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting"}

// aclCategories derives a module command's ACL categories from its flags
// and group, as Redis derives the implicit ones.
func aclCategories(flags []string, group string) []string {
	has := map[string]bool{}
	fast := false
	for _, f := range flags {
		switch f {
		case "write":
			has["write"] = true
		case "readonly":
			has["read"] = true
		case "admin":
			has["admin"], has["dangerous"] = true, true
		case "fast":
			fast = true
		case "blocking":
			has["blocking"] = true
		}
	}
	if fast {
		has["fast"] = true
	} else {
		has["slow"] = true
	}
	switch g := strings.ToLower(group); g {
	case "generic":
		has["keyspace"] = true
	case "sorted_set", "sortedset", "zset":
		has["sortedset"] = true
	case "transactions":
		has["transaction"] = true
	default:
		if slices.Contains(aclOrder, g) {
			has[g] = true
		}
	}
	var out []string
	for _, cat := range aclOrder {
		if has[cat] {
			out = append(out, "@"+cat)
		}
	}
	return out
}

// allViews returns every top-level command, sorted by name.
func (s *Server) allViews() []cmdView {
	mods := s.rt.Commands()
	out := make([]cmdView, 0, len(builtins.top)+len(mods))
	for _, b := range builtins.top {
		out = append(out, builtinView(b))
	}
	for _, m := range mods {
		if builtins.byName[m.Info.Name] == nil {
			out = append(out, moduleView(m))
		}
	}
	slices.SortFunc(out, func(a, b cmdView) int { return strings.Compare(a.name, b.name) })
	return out
}

// findView finds a command by name ("get", "client|list"), case-insensitively.
func (s *Server) findView(name []byte) (cmdView, bool) {
	lname := strings.ToLower(string(name))
	parent, sub, isSub := strings.Cut(lname, "|")
	if b := builtins.byName[parent]; b != nil {
		if !isSub {
			return builtinView(b), true
		}
		if sb := b.subIndex[sub]; sb != nil {
			return builtinView(sb), true
		}
		return cmdView{}, false
	}
	if isSub {
		return cmdView{}, false
	}
	if m := s.rt.Lookup(name); m != nil {
		return moduleView(m), true
	}
	return cmdView{}, false
}

func cmdCommand(c *client, _ [][]byte) {
	views := c.s.allViews()
	c.w.Array(len(views))
	for i := range views {
		writeCommandInfo(&c.w, &views[i])
	}
}

func cmdCommandCount(c *client, _ [][]byte) { c.w.Int(int64(len(c.s.allViews()))) }

func cmdCommandInfo(c *client, args [][]byte) {
	if len(args) == 2 {
		cmdCommand(c, args)
		return
	}
	c.w.Array(len(args) - 2)
	for _, name := range args[2:] {
		v, ok := c.s.findView(name)
		if !ok {
			c.w.Null() // $-1, as Redis, not *-1
			continue
		}
		writeCommandInfo(&c.w, &v)
	}
}

// writeCommandInfo writes Redis 7's ten-element command description.
func writeCommandInfo(w *resp.Writer, v *cmdView) {
	w.Array(10)
	w.BulkString(v.name)
	w.Int(int64(v.arity))
	w.Set(len(v.flags))
	for _, f := range v.flags {
		w.Simple(f)
	}
	w.Int(int64(v.firstKey))
	w.Int(int64(v.lastKey))
	w.Int(int64(v.st))
	w.Set(len(v.acl))
	for _, a := range v.acl {
		w.Simple(a)
	}
	w.Set(len(v.tips))
	for _, t := range v.tips {
		w.BulkString(t)
	}
	if v.firstKey > 0 {
		w.Set(1)
		writeKeySpec(w, v)
	} else {
		w.Set(0)
	}
	w.Set(len(v.subs))
	for _, sb := range v.subs {
		sv := builtinView(sb)
		writeCommandInfo(w, &sv)
	}
}

// writeKeySpec writes the key specification equivalent to the legacy
// first/last/step triple. Its flags are derived from readonly/write only.
func writeKeySpec(w *resp.Writer, v *cmdView) {
	flags := []string{"RO", "access"}
	if slices.Contains(v.flags, "write") {
		flags = []string{"RW", "update"}
	}
	last := v.lastKey
	if last >= 0 {
		last -= v.firstKey
	}
	w.Map(3)
	w.BulkString("flags")
	w.Set(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.Map(2)
	w.BulkString("type")
	w.BulkString("index")
	w.BulkString("spec")
	w.Map(1)
	w.BulkString("index")
	w.Int(int64(v.firstKey))
	w.BulkString("find_keys")
	w.Map(2)
	w.BulkString("type")
	w.BulkString("range")
	w.BulkString("spec")
	w.Map(3)
	w.BulkString("lastkey")
	w.Int(int64(last))
	w.BulkString("keystep")
	w.Int(int64(v.st))
	w.BulkString("limit")
	w.Int(0)
}

func cmdCommandDocs(c *client, args [][]byte) {
	var views []cmdView
	if len(args) == 2 {
		views = c.s.allViews()
	} else {
		for _, name := range args[2:] {
			if v, ok := c.s.findView(name); ok {
				views = append(views, v)
			}
		}
	}
	c.w.Map(len(views))
	for i := range views {
		c.w.BulkString(views[i].name)
		writeCommandDocs(&c.w, &views[i])
	}
}

// writeCommandDocs writes the documentation map of one command.
func writeCommandDocs(w *resp.Writer, v *cmdView) {
	n := 1 // group
	if v.summary != "" {
		n++
	}
	if v.since != "" {
		n++
	}
	if v.module != "" {
		n++
	}
	if len(v.subs) > 0 {
		n++
	}
	w.Map(n)
	if v.summary != "" {
		w.BulkString("summary")
		w.BulkString(v.summary)
	}
	if v.since != "" {
		w.BulkString("since")
		w.BulkString(v.since)
	}
	w.BulkString("group")
	w.BulkString(v.group)
	if v.module != "" {
		w.BulkString("module")
		w.BulkString(v.module)
	}
	if len(v.subs) > 0 {
		w.BulkString("subcommands")
		w.Map(len(v.subs))
		for _, sb := range v.subs {
			sv := builtinView(sb)
			w.BulkString(sv.name)
			writeCommandDocs(w, &sv)
		}
	}
}

// cmdCommandList implements COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p].
func cmdCommandList(c *client, args [][]byte) {
	var keep func(v *cmdView) bool
	switch {
	case len(args) == 2:
		keep = func(*cmdView) bool { return true }
	case len(args) == 5 && strings.EqualFold(string(args[2]), "filterby"):
		arg := string(args[4])
		switch strings.ToLower(string(args[3])) {
		case "module":
			keep = func(v *cmdView) bool { return v.module == arg }
		case "aclcat":
			cat := "@" + strings.ToLower(arg)
			keep = func(v *cmdView) bool { return slices.Contains(v.acl, cat) }
		case "pattern":
			keep = func(v *cmdView) bool { return globMatch(arg, v.name, true) }
		}
	}
	if keep == nil {
		c.w.Error(errSyntax)
		return
	}
	var names []string
	for _, v := range c.s.allViews() {
		if keep(&v) {
			names = append(names, v.name)
		}
		for _, sb := range v.subs {
			if sv := builtinView(sb); keep(&sv) {
				names = append(names, sv.name)
			}
		}
	}
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// cmdCommandGetkeys implements COMMAND GETKEYS for commands whose keys the
// first/last/step triple describes.
func cmdCommandGetkeys(c *client, args [][]byte) {
	cmd := args[2:]
	v, ok := c.s.findView(cmd[0])
	if !ok || strings.Contains(v.name, "|") {
		c.w.Error("ERR Invalid command specified")
		return
	}
	if len(v.subs) > 0 && len(cmd) >= 2 {
		sb := builtins.byName[v.name].sub(cmd[1], make([]byte, 0, maxBuiltinName))
		if sb == nil {
			c.w.Error("ERR Invalid command specified")
			return
		}
		v = builtinView(sb)
	}
	if !arityOK(v.arity, len(cmd)) {
		c.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	if v.firstKey <= 0 {
		c.w.Error("ERR The command has no key arguments")
		return
	}
	last := v.lastKey
	if last < 0 {
		last += len(cmd)
	}
	step := max(v.st, 1)
	var keys [][]byte
	for i := v.firstKey; i <= last && i < len(cmd); i += step {
		keys = append(keys, cmd[i])
	}
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.Bulk(k)
	}
}

func cmdCommandHelp(c *client, _ [][]byte) {
	writeHelp(c, "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"(no subcommand)",
		"    Return details about all commands.",
		"COUNT",
		"    Return the total number of commands.",
		"LIST",
		"    Return a list of all commands.",
		"LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
		"    Return a list of commands, filtered.",
		"INFO [<command-name> ...]",
		"    Return details about multiple commands.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple commands.",
		"GETKEYS <full-command>",
		"    Return the keys from a full command.",
		"HELP",
		"    Print this help.")
}
