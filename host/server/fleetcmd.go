package server

import (
	"github.com/respike/respike/host/fleet"
)

// MODULE DEPLOY, UNDEPLOY and FLEET: modules deployed to every proxy on the
// store (host/fleet, docs/operations.md "Deploying a module to a fleet").

// SetFleet gives the server the fleet of proxies it deploys modules to.
// Without it the fleet subcommands answer an error.
func (s *Server) SetFleet(f *fleet.Fleet) { s.fleet.Store(f) }

const errNoFleet = "ERR module deploys are off on this proxy"

// fleetFor returns the server's fleet, or answers why the client cannot
// use it (enable_module_command, when change is set; no fleet) and
// returns nil.
func (c *client) fleetFor(change bool) *fleet.Fleet {
	if change && !c.moduleAllowed() {
		c.w.Error(errModuleNotAllowed)
		return nil
	}
	f := c.s.fleet.Load()
	if f == nil {
		c.w.Error(errNoFleet)
	}
	return f
}

// cmdModuleDeploy implements MODULE DEPLOY path: load the module here, as
// MODULE LOAD does (a refused module is not deployed), then publish it for
// every proxy on the store, which swap it in at their next poll.
func cmdModuleDeploy(c *client, args [][]byte) {
	f := c.fleetFor(true)
	if f == nil {
		return
	}
	e, err := f.Deploy(c.s.ctx, string(args[2]))
	if err != nil {
		c.w.Error("ERR Error deploying the module: " + err.Error())
		return
	}
	c.s.log.Info("module deployed by MODULE DEPLOY", "module", e.Name, "sha256", e.SHA256, "version", e.Version, "client", c.id)
	c.w.OK()
}

// cmdModuleUndeploy implements MODULE UNDEPLOY name.
func cmdModuleUndeploy(c *client, args [][]byte) {
	f := c.fleetFor(true)
	if f == nil {
		return
	}
	if err := f.Undeploy(c.s.ctx, string(args[2])); err != nil {
		c.w.Error("ERR Error undeploying the module: " + err.Error())
		return
	}
	c.s.log.Info("module undeployed by MODULE UNDEPLOY", "module", string(args[2]), "client", c.id)
	c.w.OK()
}

// cmdModuleFleet answers one map per proxy and deployed module: the
// proxy's name, the module, the deployed version it last dealt with
// (sha256), the manifest version it serves, its state (serving, refused,
// fetch_failed) and why, when it reported it (Unix ms), whether that
// version is the one deployed now (current 1) or an older one (the proxy
// has not caught up, or has gone), the proxy's last heartbeat (Unix ms)
// and whether it is older than deploy_stale_after (stale 1: the proxy is
// gone or cut off from the store).
func cmdModuleFleet(c *client, _ [][]byte) {
	f := c.fleetFor(false)
	if f == nil {
		return
	}
	deployed, err := f.Deployed(c.s.ctx)
	if err != nil {
		c.w.Error("ERR cannot read the deployed modules: " + err.Error())
		return
	}
	states, err := f.Fleet(c.s.ctx)
	if err != nil {
		c.w.Error("ERR cannot read the fleet's states: " + err.Error())
		return
	}
	current := map[string]string{}
	for _, e := range deployed {
		current[e.Name] = e.SHA256
	}
	c.w.Array(len(states))
	for _, st := range states {
		c.w.Map(10)
		c.w.BulkString("proxy")
		c.w.BulkString(st.Proxy)
		c.w.BulkString("module")
		c.w.BulkString(st.Module)
		c.w.BulkString("sha256")
		c.w.BulkString(st.SHA256)
		c.w.BulkString("version")
		c.w.BulkString(st.Version)
		c.w.BulkString("state")
		c.w.BulkString(st.State)
		c.w.BulkString("error")
		c.w.BulkString(st.Error)
		c.w.BulkString("at_ms")
		c.w.Int(st.At)
		c.w.BulkString("current")
		if current[st.Module] == st.SHA256 {
			c.w.Int(1)
		} else {
			c.w.Int(0)
		}
		c.w.BulkString("last_seen_ms")
		c.w.Int(st.LastSeen)
		c.w.BulkString("stale")
		if st.Stale {
			c.w.Int(1)
		} else {
			c.w.Int(0)
		}
	}
}
