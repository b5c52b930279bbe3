#!/usr/bin/env bash
# Instructions per command of one of bench.sh's GEO benchmarks (GEOSEARCH,
# GEOADD of new members, PFADD, PFCOUNT of one key or two; scripts/geocg)
# in process, store and guest included, from callgrind's counts
# at two iteration counts (the difference divided by the difference of
# counts, so that start-up and the load cancel): repeatable to ~0.3% on a
# machine where timings move by 2x. Needs valgrind.
#
#   scripts/cg-geo.sh [search|addnew|pfadd|pfcount|pfcount2] [module.wasm] [N1] [N2]
#
# The module defaults to commands/geo.wasm, commands/hll.wasm for the PF
# benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-search}
case $which in pf*) module=commands/hll.wasm ;; *) module=commands/geo.wasm ;; esac
wasm=$(realpath "${2:-$module}"); n1=${3:-1000}; n2=${4:-3000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -o "$tmp/geocg" ./scripts/geocg
export GEOCG_CACHE=${GEOCG_CACHE:-$tmp/cache} GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1
count() {
	valgrind --tool=callgrind --smc-check=all --callgrind-out-file="$tmp/cg.$1" "$tmp/geocg" "$which" "$1" "$wasm" 2>&1 |
		awk '/Collected/ {print $4}'
}
# Compile into the cache first, under valgrind as the counts run: the
# cache is keyed by the CPU's features, which valgrind reports otherwise.
count 1 >/dev/null
a=$(count "$n1"); b=$(count "$n2")
echo "$which $(basename "$wasm"): $(((b - a) / (n2 - n1))) instructions per command ($n1: $a, $n2: $b)"
