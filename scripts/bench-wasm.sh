#!/usr/bin/env bash
# Runs a guest package's benchmarks (or tests) as WebAssembly, under the
# compiler the daemon uses (scripts/wasmtest: wazero, the respike imports
# stubbed), so that a guest-side change is measured as the daemon runs it
# without the store, the ABI or the network. Arguments after the package
# are test flags.
#
#   scripts/bench-wasm.sh ./commands/geo -test.run '^$' -test.bench SearchPhases -test.count 3
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=${1:?usage: bench-wasm.sh PACKAGE [test flags...]}
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/wasmtest" ./scripts/wasmtest
GOOS=wasip1 GOARCH=wasm go test -c -o "$tmp/pkg.wasm" "$pkg"
cd "$pkg"
"$tmp/wasmtest" "$tmp/pkg.wasm" "$@"
