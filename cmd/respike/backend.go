package main

import (
	"context"
	"log/slog"

	"github.com/respike/respike/host/config"
	"github.com/respike/respike/host/store"
	"github.com/respike/respike/host/store/aerospike"
)

// openAerospike opens the Aerospike backend. An unreachable cluster is not an
// error: the store keeps trying in the background and answers
// "backend unavailable" meanwhile.
func openAerospike(ctx context.Context, cfg config.Aerospike, log *slog.Logger) (store.Store, error) {
	return aerospike.New(ctx, aerospike.Config{
		Hosts:               cfg.Hosts,
		Namespace:           cfg.Namespace,
		Set:                 cfg.Set,
		User:                cfg.User,
		Password:            cfg.Password,
		TLSName:             cfg.TLSName,
		TLSCAFile:           cfg.TLSCAFile,
		TLSCertFile:         cfg.TLSCertFile,
		TLSKeyFile:          cfg.TLSKeyFile,
		ConnectTimeout:      cfg.ConnectTimeout.D(),
		SocketTimeout:       cfg.SocketTimeout.D(),
		TotalTimeout:        cfg.TotalTimeout.D(),
		MaxRetries:          cfg.MaxRetries,
		ConnectionQueueSize: cfg.ConnectionQueueSize,
		MaxRecordBytes:      int(cfg.MaxRecordBytes),
		BatchSize:           cfg.BatchSize,
		BatchCalls:          cfg.BatchCalls,
		BatchDispatch:       !cfg.BatchInline,
	}, log)
}
