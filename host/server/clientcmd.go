package server

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// CLIENT subcommands.

func cmdClientID(c *client, _ [][]byte) { c.w.Int(int64(c.id)) }

func cmdClientGetname(c *client, _ [][]byte) {
	if c.info.name == "" {
		c.w.Null()
		return
	}
	c.w.BulkString(c.info.name)
}

func cmdClientSetname(c *client, args [][]byte) {
	if !validName(args[2]) {
		c.w.Error(errBadName)
		return
	}
	c.setInfo(func(i *clientInfo) { i.name = string(args[2]) })
	c.w.OK()
}

func cmdClientSetinfo(c *client, args [][]byte) {
	attr := string(args[2])
	lib := strings.EqualFold(attr, "lib-name")
	if !lib && !strings.EqualFold(attr, "lib-ver") {
		c.w.Error("ERR Unrecognized option '" + attr + "'")
		return
	}
	if !validName(args[3]) {
		c.w.Error("ERR " + attr + " cannot contain spaces, newlines or special characters.")
		return
	}
	val := string(args[3])
	c.setInfo(func(i *clientInfo) {
		if lib {
			i.libName = val
		} else {
			i.libVer = val
		}
	})
	c.w.OK()
}

// onOff parses ON or OFF.
func onOff(b []byte) (on, ok bool) {
	switch {
	case strings.EqualFold(string(b), "on"):
		return true, true
	case strings.EqualFold(string(b), "off"):
		return false, true
	}
	return false, false
}

// cmdClientNoEvict accepts the setting: respike never evicts clients.
func cmdClientNoEvict(c *client, args [][]byte) {
	on, ok := onOff(args[2])
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	c.noEvict = on
	c.w.OK()
}

// cmdClientNoTouch accepts the setting: respike keeps no access times.
func cmdClientNoTouch(c *client, args [][]byte) {
	on, ok := onOff(args[2])
	if !ok {
		c.w.Error(errSyntax)
		return
	}
	c.noTouch = on
	c.w.OK()
}

// cmdClientReply implements CLIENT REPLY ON|OFF|SKIP. OFF and SKIP are not
// answered; ON is, even right after SKIP or OFF.
func cmdClientReply(c *client, args [][]byte) {
	switch strings.ToLower(string(args[2])) {
	case "on":
		c.replyOff, c.skipping = false, false
		c.w.OK()
	case "off":
		c.replyOff = true
	case "skip":
		if !c.replyOff {
			c.skipNext = true
		}
	default:
		c.w.Error(errSyntax)
	}
}

func cmdClientInfo(c *client, _ [][]byte) {
	c.w.Verbatim("txt", string(c.describe(c.snapshot(), time.Now(), nil)))
}

// cmdClientList implements CLIENT LIST [TYPE type] [ID id ...].
func cmdClientList(c *client, args [][]byte) {
	var ids []uint64
	all := true
	switch {
	case len(args) == 2:
	case len(args) == 4 && strings.EqualFold(string(args[2]), "type"):
		switch strings.ToLower(string(args[3])) {
		case "normal":
		case "master", "replica", "slave", "pubsub":
			all = false
		default:
			c.w.Error("ERR Unknown client type '" + string(args[3]) + "'")
			return
		}
	case len(args) >= 4 && strings.EqualFold(string(args[2]), "id"):
		for _, a := range args[3:] {
			n, ok := parseInt(a)
			if !ok || n <= 0 {
				c.w.Error("ERR Invalid client ID")
				return
			}
			ids = append(ids, uint64(n))
		}
	default:
		c.w.Error(errSyntax)
		return
	}
	var out []byte
	if all {
		clients := c.s.clientList()
		slices.SortFunc(clients, func(a, b *client) int { return compareID(a.id, b.id) })
		now := time.Now()
		for _, o := range clients {
			if ids != nil && !slices.Contains(ids, o.id) {
				continue
			}
			out = o.describe(o.snapshot(), now, out)
		}
	}
	c.w.Verbatim("txt", string(out))
}

func compareID(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// describe appends the CLIENT LIST line of c, in Redis 7.2's field order.
// Fields respike does not track (buffers, memory) read 0.
func (c *client) describe(info clientInfo, now time.Time, dst []byte) []byte {
	cmd := "NULL"
	if p := c.lastCmd.Load(); p != nil {
		cmd = *p
	}
	flags := "N"
	switch {
	case info.multi >= 0:
		flags = "x"
	case info.blocked:
		flags = "b"
	}
	idle := now.Sub(time.Unix(0, c.lastAt.Load()))
	dst = append(dst, "id="...)
	dst = strconv.AppendUint(dst, c.id, 10)
	dst = append(dst, " addr="...)
	dst = append(dst, c.addr...)
	dst = append(dst, " laddr="...)
	dst = append(dst, c.laddr...)
	dst = append(dst, " fd=-1 name="...)
	dst = append(dst, info.name...)
	dst = append(dst, " age="...)
	dst = strconv.AppendInt(dst, int64(now.Sub(c.created)/time.Second), 10)
	dst = append(dst, " idle="...)
	dst = strconv.AppendInt(dst, max(int64(idle/time.Second), 0), 10)
	dst = append(dst, " flags="...)
	dst = append(dst, flags...)
	dst = append(dst, " db="...)
	dst = strconv.AppendInt(dst, int64(info.db), 10)
	dst = append(dst, " sub=0 psub=0 ssub=0 multi="...)
	dst = strconv.AppendInt(dst, int64(info.multi), 10)
	dst = append(dst, " qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd="...)
	dst = append(dst, cmd...)
	dst = append(dst, " user="...)
	dst = append(dst, info.user...)
	dst = append(dst, " redir=-1 resp="...)
	dst = strconv.AppendInt(dst, int64(info.proto), 10)
	dst = append(dst, " lib-name="...)
	dst = append(dst, info.libName...)
	dst = append(dst, " lib-ver="...)
	dst = append(dst, info.libVer...)
	return append(dst, '\n')
}

// cmdClientKill implements CLIENT KILL addr and CLIENT KILL <filter> <value>
// ... with the filters ID, ADDR, LADDR, USER, SKIPME.
func cmdClientKill(c *client, args [][]byte) {
	if len(args) == 3 {
		n := c.kill(func(o *client) bool { return o.addr == string(args[2]) }, false)
		if n == 0 {
			c.w.Error("ERR No such client")
			return
		}
		c.w.OK()
		return
	}
	if len(args)%2 != 0 {
		c.w.Error(errSyntax)
		return
	}
	var filters []func(*client) bool
	skipMe := true
	for i := 2; i < len(args); i += 2 {
		val := string(args[i+1])
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, ok := parseInt(args[i+1])
			if !ok || n <= 0 {
				c.w.Error("ERR client-id should be greater than 0")
				return
			}
			filters = append(filters, func(o *client) bool { return o.id == uint64(n) })
		case "addr":
			filters = append(filters, func(o *client) bool { return o.addr == val })
		case "laddr":
			filters = append(filters, func(o *client) bool { return o.laddr == val })
		case "user":
			filters = append(filters, func(*client) bool { return val == "default" })
		case "type":
			t := strings.ToLower(val)
			switch t {
			case "normal", "master", "replica", "slave", "pubsub":
			default:
				c.w.Error("ERR Unknown client type '" + val + "'")
				return
			}
			filters = append(filters, func(*client) bool { return t == "normal" })
		case "skipme":
			switch strings.ToLower(val) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				c.w.Error(errSyntax)
				return
			}
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	n := c.kill(func(o *client) bool {
		for _, f := range filters {
			if !f(o) {
				return false
			}
		}
		return true
	}, skipMe)
	c.w.Int(int64(n))
}

// kill closes the connections that match, this one after its reply, and
// returns how many matched.
func (c *client) kill(match func(*client) bool, skipMe bool) int {
	n := 0
	for _, o := range c.s.clientList() {
		if !match(o) || (skipMe && o == c) {
			continue
		}
		n++
		if o == c {
			c.closeAfter = true
		} else {
			o.hangUp()
		}
	}
	return n
}

// cmdClientUnblock implements CLIENT UNBLOCK id [TIMEOUT|ERROR], as Redis
// 7.0: the reason is checked before the id; 1 if the client waited in a
// blocking command and now answers, 0 otherwise.
func cmdClientUnblock(c *client, args [][]byte) {
	how := unblockTimeout
	if len(args) == 4 {
		switch {
		case strings.EqualFold(string(args[3]), "timeout"):
		case strings.EqualFold(string(args[3]), "error"):
			how = unblockError
		default:
			c.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	} else if len(args) != 3 {
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" + string(cstr(args[1], 128)) + "'. Try CLIENT HELP.")
		return
	}
	id, ok := parseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if id > 0 && c.s.unblockClient(uint64(id), how) {
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

func cmdClientHelp(c *client, _ [][]byte) {
	writeHelp(c, "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME.",
		"LIST [options ...]",
		"    Return information about client connections. Options: TYPE, ID.",
		"NO-EVICT (ON|OFF)",
		"    Accepted; respike never evicts clients.",
		"NO-TOUCH (ON|OFF)",
		"    Accepted; respike keeps no access times.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETINFO <LIB-NAME|LIB-VER> <value>",
		"    Set the client library name or version.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"HELP",
		"    Prints this help.")
}

// writeHelp writes a HELP reply: an array of status lines.
func writeHelp(c *client, lines ...string) {
	c.w.Array(len(lines))
	for _, l := range lines {
		c.w.Simple(l)
	}
}
