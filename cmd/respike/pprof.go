//go:build pprof

package main

// Built with -tags pprof, the daemon serves net/http/pprof on the address
// in RESPIKE_PPROF (for example 127.0.0.1:6060), for profiling under a
// benchmark. Never in a default build: the endpoint has no access control.

import (
	"net/http"
	_ "net/http/pprof" // registers the handlers on http.DefaultServeMux
	"os"
)

func init() {
	if addr := os.Getenv("RESPIKE_PPROF"); addr != "" {
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}
}
