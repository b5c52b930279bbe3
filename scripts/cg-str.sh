#!/usr/bin/env bash
# Instructions per unpipelined GET, SET or INCR in process (scripts/strcg:
# module.Runtime.Exec on the embedded store, as the server runs a command
# that arrives alone: guest, codec layouts and store included; not the
# network, RESP parsing or the server's bookkeeping). callgrind counts from
# the start of the measured loop (--zero-before=main.measure), so the load
# and the compilation are not counted; the count is the loop's total over N.
# Repeatable to a few instructions per command on a machine whose timings
# move by 2x; what runs by wall time (the module watchdog's tick, Go's
# sysmon) adds ~1% that valgrind's slowness inflates. Needs valgrind.
#
#   scripts/cg-str.sh [get|set|incr ...]     knobs: WASM (commands/strings.wasm), N (3000)
#
# The compilation cache is STRCG_CACHE (/tmp/strcg-cache), kept between
# runs: compiling under valgrind takes minutes, and the cache is keyed by
# the CPU features valgrind reports, so it is filled under valgrind.
# PROFILE=DIR also names the guest's functions: a perfmap build compiled
# without the cache (wazero writes its perf map only when it compiles);
# DIR keeps each test's callgrind file and perf map, and
# scripts/cg-guest.py prints the instructions per function.
set -euo pipefail
cd "$(dirname "$0")/.."
wasm=$(realpath "${WASM:-commands/strings.wasm}"); n=${N:-3000}
tests=("$@"); [ ${#tests[@]} -gt 0 ] || tests=(get set incr)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tags=; [ -n "${PROFILE:-}" ] && tags=perfmap
CGO_ENABLED=0 go build -tags "$tags" -o "$tmp/strcg" ./scripts/strcg
export STRCG_CACHE=${STRCG_CACHE:-/tmp/strcg-cache} GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1
[ -n "${PROFILE:-}" ] && mkdir -p "$PROFILE"
for t in "${tests[@]}"; do
	out=$tmp/cg.$t
	[ -n "${PROFILE:-}" ] && { out=$PROFILE/cg.$t; export STRCG_CACHE= STRCG_ONE=1; }
	# Collected: the count since callgrind zeroed it, the loop's.
	loop=$(valgrind --tool=callgrind --smc-check=all --zero-before=main.measure --callgrind-out-file="$out" \
		"$tmp/strcg" "$t" "$n" "$wasm" 2>&1 | awk '/Collected/ {print $4}')
	echo "$t $(basename "$wasm"): $((loop / n)) instructions per command (N=$n, loop $loop)"
	if [ -n "${PROFILE:-}" ]; then
		cp /tmp/perf-"$(awk '/^pid:/ {print $2; exit}' "$out")".map "$PROFILE/perf.$t.map"
	fi
done
