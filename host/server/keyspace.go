package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/respike/respike/guest-sdk/codec"
)

// Keyspace administration served by the host on the store directly: DBSIZE,
// FLUSHDB, FLUSHALL, SWAPDB. They act on whole databases, not on records,
// so they need no module.

func cmdDBSize(c *client, _ [][]byte) {
	req := codec.Request{Kind: codec.ReqCount}
	resp, errMsg := c.storeExec(c.db, &req)
	if errMsg != "" {
		c.w.Error(errMsg)
		return
	}
	c.w.Int(resp.Count)
}

func cmdFlushDB(c *client, args [][]byte)  { c.flush1(args, false) }
func cmdFlushAll(c *client, args [][]byte) { c.flush1(args, true) }

// flush1 implements FLUSHDB and FLUSHALL [ASYNC|SYNC]. Both modes delete
// synchronously: the reply comes once the store has truncated.
func (c *client) flush1(args [][]byte, all bool) {
	if len(args) > 2 || len(args) == 2 && !strings.EqualFold(string(args[1]), "async") &&
		!strings.EqualFold(string(args[1]), "sync") {
		c.w.Error(errSyntax)
		return
	}
	req := codec.Request{Kind: codec.ReqTruncate, AllDBs: all}
	if _, errMsg := c.storeExec(c.db, &req); errMsg != "" {
		c.w.Error(errMsg)
		return
	}
	c.w.OK()
}

func cmdSwapDB(c *client, _ [][]byte) {
	c.w.Error("ERR SWAPDB is not supported by respike: databases map to Aerospike sets, which cannot be renamed")
}

// storeExec runs a keyspace request with a bound, so that a store that is
// down yields an error reply, never a hung connection. It returns the
// error reply text on failure.
func (c *client) storeExec(db int, req *codec.Request) (*codec.Response, string) {
	if c.s.st == nil {
		return nil, "ERR respike: no store configured"
	}
	ctx, cancel := context.WithTimeout(c.s.ctx, adminTimeout)
	defer cancel()
	resp := new(codec.Response)
	c.s.st.Exec(ctx, db, req, resp)
	if resp.Code != codec.OK {
		return nil, backendError(resp.Code, resp.Msg)
	}
	return resp, ""
}

// backendError is the reply for a request the store could not run; it
// words failures as the guest SDK does, so every command reports a store
// failure alike.
func backendError(code codec.Code, msg string) string {
	switch code {
	case codec.BackendUnavail:
		return "ERR backend unavailable: " + msg
	case codec.Timeout:
		return "ERR backend timeout: " + msg
	}
	return fmt.Sprintf("ERR backend error (code %d): %s", code, msg)
}
