#!/usr/bin/env bash
# Instructions per command of one of bench.sh's GEO benchmarks (GEOSEARCH,
# GEOADD of new members, the same into a set of 100,000 members (addbig),
# GEOADD of members that set holds (addold), PFADD, PFCOUNT of one key or two; scripts/geocg)
# in process, store and guest included, from callgrind's counts. Needs
# valgrind.
#
#   scripts/cg-geo.sh [search|addnew|addbig|addold|pfadd|pfcount|pfcount2] [module.wasm] [N1] [N2]
#
# The module defaults to commands/geo.wasm, commands/hll.wasm for the PF
# benchmarks. Each of the two runs (N1 and N2 commands, 1000 and 3000 by
# default) counts from the start of its second command
# (--zero-before=main.measure): the load, the compilation and the first
# command, which instantiates the module, are not counted. Each run's
# count over its commands is printed: they agree within ~0.5% (GEOADD's
# set is larger in the longer run). Before, the figure was the difference
# of the two runs' whole counts over the difference of N, which the
# load's garbage collections in the guest could move by thousands per
# command: they depend on time (the guest's pacer reads the clock, which
# valgrind stretches).
#
# PROFILE=DIR names the guest's functions instead: a perfmap build,
# compiled without the cache (wazero writes its perf map only when it
# compiles), one run of N2 commands; DIR keeps the callgrind file and the
# perf map, and the instructions per function are printed
# (scripts/cg-guest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-search}
case $which in pf*) module=commands/hll.wasm ;; *) module=commands/geo.wasm ;; esac
wasm=$(realpath "${2:-$module}"); n1=${3:-1000}; n2=${4:-3000}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tags=; [ -n "${PROFILE:-}" ] && tags=perfmap
CGO_ENABLED=0 go build -tags "$tags" -o "$tmp/geocg" ./scripts/geocg
export GEOCG_CACHE=${GEOCG_CACHE:-$tmp/cache} GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1
if [ -n "${PROFILE:-}" ]; then
	mkdir -p "$PROFILE"
	out=$PROFILE/cg.$which
	GEOCG_FRESH=1 valgrind --tool=callgrind --smc-check=all --zero-before=main.measure --callgrind-out-file="$out" \
		"$tmp/geocg" "$which" "$n2" "$wasm" 2>&1 | awk '/Collected/'
	cp /tmp/perf-"$(awk '/^pid:/ {print $2; exit}' "$out")".map "$PROFILE/perf.$which.map"
	scripts/cg-guest.py "$out" "$PROFILE/perf.$which.map" "$((n2 - 1))" 50
	exit
fi
# count N: callgrind's count of N commands from the second on.
count() {
	valgrind --tool=callgrind --smc-check=all --zero-before=main.measure --callgrind-out-file="$tmp/cg.$1" \
		"$tmp/geocg" "$which" "$1" "$wasm" 2>&1 | awk '/Collected/ {print $4}'
}
# Compile into the cache first, under valgrind as the counts run: the
# cache is keyed by the CPU's features, which valgrind reports otherwise.
count 2 >/dev/null
a=$(count "$n1"); b=$(count "$n2")
echo "$which $(basename "$wasm"): $((a / (n1 - 1))) and $((b / (n2 - 1))) instructions per command (N=$n1: $a, N=$n2: $b)"
