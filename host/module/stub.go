package module

// This file is a placeholder so dependants compile while runtime.go is
// written; runtime.go replaces it.

import (
	"context"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store"
)

// Runtime holds the loaded modules.
type Runtime struct{}

// New creates a runtime.
func New(ctx context.Context, cfg Config, st store.Store) (*Runtime, error) { panic("unimplemented") }

// LoadDir loads every module in the directory.
func (r *Runtime) LoadDir(ctx context.Context) error { panic("unimplemented") }

// Load loads or replaces one module.
func (r *Runtime) Load(ctx context.Context, path string) (ModuleInfo, error) { panic("unimplemented") }

// Unload removes a module.
func (r *Runtime) Unload(name string) error { panic("unimplemented") }

// Lookup finds a command.
func (r *Runtime) Lookup(name []byte) *Command { panic("unimplemented") }

// Commands lists commands.
func (r *Runtime) Commands() []*Command { panic("unimplemented") }

// Modules lists modules.
func (r *Runtime) Modules() []ModuleInfo { panic("unimplemented") }

// Exec runs a command.
func (r *Runtime) Exec(ctx context.Context, cmd *Command, start *codec.Start, out []byte) []byte {
	panic("unimplemented")
}

// Close closes the runtime.
func (r *Runtime) Close(ctx context.Context) error { panic("unimplemented") }
