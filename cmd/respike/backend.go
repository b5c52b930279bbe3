package main

import (
	"context"
	"errors"

	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/store"
)

// openAerospike opens the Aerospike backend. It is expected to become
// `return aerospike.New(ctx, cfg)` once host/store/aerospike exists.
func openAerospike(ctx context.Context, cfg config.Aerospike) (store.Store, error) {
	_, _ = ctx, cfg
	return nil, errors.New("aerospike backend not built in yet")
}
