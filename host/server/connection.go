package server

import (
	"strings"
)

// Connection commands: PING, ECHO, QUIT, RESET, SELECT, AUTH, HELLO.

const (
	errNotInteger = "ERR value is not an integer or out of range"
	errSyntax     = "ERR syntax error"
	errWrongPass  = "WRONGPASS invalid username-password pair or user is disabled."
	errNoPassword = "ERR AUTH <password> called without any password configured for the default user. " +
		"Are you sure your configuration is correct?"
	errHelloNoAuth = "NOAUTH HELLO must be called with the client already authenticated, otherwise the " +
		"HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP " +
		"protocol version at the same time"
	errBadName = "ERR Client names cannot contain spaces, newlines or special characters."
)

func cmdPing(c *client, args [][]byte) {
	switch len(args) {
	case 1:
		c.w.Simple("PONG")
	case 2:
		c.w.Bulk(args[1])
	default:
		c.w.Error("ERR wrong number of arguments for 'ping' command")
	}
}

func cmdEcho(c *client, args [][]byte) { c.w.Bulk(args[1]) }

func cmdQuit(c *client, _ [][]byte) {
	c.w.OK()
	c.closeAfter = true
}

// cmdReset returns the connection to its initial state, as Redis's RESET.
func cmdReset(c *client, _ [][]byte) {
	c.endMonitor()
	c.discardMulti()
	c.selectDB(0)
	c.setProto(2)
	c.setInfo(func(i *clientInfo) { i.name = "" })
	c.replyOff, c.skipNext, c.noEvict, c.noTouch = false, false, false, false
	c.setUser(c.s.user("default"))
	c.authenticated = c.s.defaultNoPass()
	c.w.Simple("RESET")
}

func cmdSelect(c *client, args [][]byte) {
	n, ok := parseInt(args[1])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if n < -1<<31 || n >= 1<<31 {
		c.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if n < 0 || n >= int64(c.s.cfg.Server.Databases) {
		c.w.Error("ERR DB index is out of range")
		return
	}
	c.selectDB(int(n))
	c.w.OK()
}

func cmdAuth(c *client, args [][]byte) {
	var user, pass []byte
	switch len(args) {
	case 2:
		if c.s.defaultNoPass() {
			c.w.Error(errNoPassword)
			return
		}
		user, pass = []byte("default"), args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		c.w.Error(errSyntax)
		return
	}
	if !c.login(user, pass) {
		c.w.Error(errWrongPass)
		return
	}
	c.w.OK()
}

// login authenticates the connection as user with pass; false (logged in
// ACL LOG, as Redis does) when they are no enabled user's credentials.
func (c *client) login(user, pass []byte) bool {
	u := c.s.user(string(user))
	if u == nil || !u.checkPass(pass) {
		ctx := "toplevel"
		if c.inMulti {
			ctx = "multi"
		}
		c.s.logDenial(c, "auth", ctx, "AUTH", string(user))
		return false
	}
	c.setUser(u)
	return true
}

// cmdHello implements HELLO [protover [AUTH user pass] [SETNAME name]].
func cmdHello(c *client, args [][]byte) {
	proto := 0
	if len(args) >= 2 {
		n, ok := parseInt(args[1])
		if !ok {
			c.w.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if n < 2 || n > 3 {
			c.w.Error("NOPROTO unsupported protocol version")
			return
		}
		proto = int(n)
	}
	var user, pass, name []byte
	auth, setName := false, false
	for j := 2; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := string(args[j])
		switch {
		case strings.EqualFold(opt, "auth") && more >= 2:
			user, pass, auth = args[j+1], args[j+2], true
			j += 2
		case strings.EqualFold(opt, "setname") && more >= 1:
			name, setName = args[j+1], true
			j++
		default:
			c.w.Error("ERR Syntax error in HELLO option '" + string(cstr(args[j], len(args[j]))) + "'")
			return
		}
	}
	if auth {
		if !c.login(user, pass) {
			c.w.Error(errWrongPass)
			return
		}
	}
	if !c.authenticated {
		c.w.Error(errHelloNoAuth)
		return
	}
	if setName {
		if !validName(name) {
			c.w.Error(errBadName)
			return
		}
		c.setInfo(func(i *clientInfo) { i.name = string(name) })
	}
	if proto != 0 {
		c.setProto(proto)
	}
	w := &c.w
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(RedisVersion)
	w.BulkString("proto")
	w.Int(int64(c.proto))
	w.BulkString("id")
	w.Int(int64(c.id))
	w.BulkString("mode")
	w.BulkString("standalone")
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(0)
}

// validName reports whether a client name or library attribute can be
// shown in CLIENT LIST: printable ASCII without spaces.
func validName(b []byte) bool {
	for _, ch := range b {
		if ch < '!' || ch > '~' {
			return false
		}
	}
	return true
}

// parseInt parses a decimal int64 exactly as Redis's string2ll: no sign but
// a leading '-', no leading zeros, no spaces.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	if b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	var v uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		d := uint64(ch - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > 1<<63-1 {
		return 0, false
	}
	return int64(v), true
}
