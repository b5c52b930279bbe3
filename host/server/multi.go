package server

// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//
// MULTI queues commands and EXEC runs them in order on this connection and
// answers their replies as one array, as Redis does; but the commands are
// not isolated: other connections' commands may run between them, because
// the store offers no atomicity across keys. WATCH is refused, since
// respike cannot detect that a watched key changed.

func cmdMulti(c *client, _ [][]byte) {
	if c.inMulti {
		c.w.Error("ERR MULTI calls can not be nested")
		return
	}
	c.inMulti, c.multiDirty = true, false
	c.queue = c.queue[:0]
	c.setInfo(func(i *clientInfo) { i.multi = 0 })
	c.w.OK()
}

func cmdExec(c *client, _ [][]byte) {
	if !c.inMulti {
		c.w.Error("ERR EXEC without MULTI")
		return
	}
	if c.multiDirty {
		c.discardMulti()
		c.w.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	q := c.queue
	c.inMulti = false
	c.setInfo(func(i *clientInfo) { i.multi = -1 })
	c.w.Array(len(q))
	c.settle()
	// Blocking commands answer at once, as their non-blocking forms, as
	// Redis runs them in a transaction.
	c.noBlock = true
	defer func() { c.noBlock = false }()
	for i := range q {
		if q[i].b == nil {
			// Module commands run together, as a pipeline's do. Only
			// builtins change CLIENT REPLY, so their replies settle
			// together too.
			c.hold(q[i].m, q[i].args)
			continue
		}
		c.runPipe()
		c.settle()
		// A command that answers nothing (a queued CLIENT REPLY OFF or
		// SKIP) leaves the array short, as Redis does.
		c.call(q[i].b, q[i].m, q[i].args)
		c.settle()
	}
	c.runPipe()
	clear(q)
	c.queue = q[:0]
}

func cmdDiscard(c *client, _ [][]byte) {
	if !c.inMulti {
		c.w.Error("ERR DISCARD without MULTI")
		return
	}
	c.discardMulti()
	c.w.OK()
}

// discardMulti leaves MULTI, forgetting the queued commands.
func (c *client) discardMulti() {
	if !c.inMulti {
		return
	}
	clear(c.queue)
	c.queue = c.queue[:0]
	c.inMulti, c.multiDirty = false, false
	c.setInfo(func(i *clientInfo) { i.multi = -1 })
}

func cmdWatch(c *client, _ [][]byte) {
	if c.inMulti {
		c.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	c.w.Error("ERR WATCH is not supported by respike: transactions are not isolated, so a watched key's change cannot be detected")
}

// cmdUnwatch succeeds: nothing is ever watched.
func cmdUnwatch(c *client, _ [][]byte) { c.w.OK() }
