package server

import (
	"strconv"
	"strings"
	"time"
)

// MODULE subcommands: list, load and unload command modules.

const errModuleNotAllowed = "ERR MODULE command not allowed. If the enable-module-command option is set to " +
	`"local", you can run it from a local connection, otherwise you need to set this option in the ` +
	"configuration file, and then restart the server."

// moduleAllowed reports whether the connection may load and unload
// modules, per enable_module_command.
func (c *client) moduleAllowed() bool {
	switch c.s.cfg.Server.EnableModuleCommand {
	case "yes":
		return true
	case "local":
		return c.local
	}
	return false
}

// cmdModuleList answers Redis's shape (name, ver, path, args) plus
// respike's own fields: the version as the manifest writes it, the commands
// the module serves, when its serving version was loaded (Unix time in
// milliseconds, 0 when none is), how long that load took, how many times a
// new file replaced a serving one, and why the newest file was refused, if
// it was ("" otherwise).
func cmdModuleList(c *client, _ [][]byte) {
	mods := c.s.rt.Modules()
	c.w.Array(len(mods))
	for _, m := range mods {
		c.w.Map(10)
		c.w.BulkString("name")
		c.w.BulkString(m.Name)
		c.w.BulkString("ver")
		c.w.Int(versionNumber(m.Version))
		c.w.BulkString("path")
		c.w.BulkString(m.Path)
		c.w.BulkString("args")
		c.w.Array(0)
		c.w.BulkString("version")
		c.w.BulkString(m.Version)
		c.w.BulkString("commands")
		c.w.Array(len(m.Commands))
		for _, name := range m.Commands {
			c.w.BulkString(name)
		}
		c.w.BulkString("loaded_at")
		c.w.Int(unixMilli(m.LoadedAt))
		c.w.BulkString("load_usec")
		c.w.Int(m.LoadDuration.Microseconds())
		c.w.BulkString("swaps")
		c.w.Int(m.Swaps)
		c.w.BulkString("last_error")
		c.w.BulkString(m.LastError)
	}
}

// unixMilli is t in Unix milliseconds, 0 for the zero time.
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// versionNumber encodes a manifest's "major.minor.patch" the way Redis
// numbers module versions (MODULE LIST "ver", INFO modules "ver"):
// major*10000 + minor*100 + patch, so "1.2.3" is 10203 and "2" is 20000. A
// leading "v" and a suffix such as "-rc1" are ignored, a minor or patch
// above 99 counts as 99 so that it cannot spill into the next field, and a
// version that does not parse is 0. The string itself is reported as
// "version".
func versionNumber(v string) int64 {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	var n int64
	for i, mult := range []int64{10000, 100, 1} {
		if i >= len(parts) {
			break
		}
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j]
		}
		d, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || d >= 1e12 { // absurd, and would overflow
			return 0
		}
		if i > 0 {
			d = min(d, 99)
		}
		n += d * mult
	}
	return n
}

// cmdModuleLoad implements MODULE LOAD path: load or replace a module.
func cmdModuleLoad(c *client, args [][]byte) {
	if !c.moduleAllowed() {
		c.w.Error(errModuleNotAllowed)
		return
	}
	if len(args) > 3 {
		c.w.Error("ERR Error loading the extension: respike modules take no arguments")
		return
	}
	info, err := c.s.rt.Load(c.s.ctx, string(args[2]))
	if err != nil {
		c.w.Error("ERR Error loading the extension: " + err.Error())
		return
	}
	c.s.log.Info("module loaded by MODULE LOAD", "module", info.Name, "path", info.Path, "client", c.id)
	c.w.OK()
}

// cmdModuleUnload implements MODULE UNLOAD name.
func cmdModuleUnload(c *client, args [][]byte) {
	if !c.moduleAllowed() {
		c.w.Error(errModuleNotAllowed)
		return
	}
	if err := c.s.rt.Unload(string(args[2])); err != nil {
		c.w.Error("ERR Error unloading module: " + err.Error())
		return
	}
	c.s.log.Info("module unloaded by MODULE UNLOAD", "module", string(args[2]), "client", c.id)
	c.w.OK()
}

func cmdModuleHelp(c *client, _ [][]byte) {
	writeHelp(c, "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path>",
		"    Load a command module (.wasm) from <path>, replacing a loaded one of the same name.",
		"UNLOAD <name>",
		"    Unload a module and its commands.",
		"DEPLOY <path>",
		"    Load a module here, then deploy it to every proxy on the same store.",
		"UNDEPLOY <name>",
		"    Remove a deployed module from every proxy on the same store.",
		"FLEET",
		"    Show which version of each deployed module every proxy serves.",
		"HELP",
		"    Prints this help.")
}
