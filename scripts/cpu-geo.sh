#!/usr/bin/env bash
# Server CPU per request (µs) of bench.sh's GEOSEARCH and of GET, for
# respike and redis-server side by side (pinned as bench.sh pins them),
# from each server's utime+stime (/proc/PID/stat) around each
# redis-benchmark run: steadier on a shared machine than requests/s, which
# other load moves by 2×. ROUNDS interleaved rounds (3) of N requests
# (50000). The argument is a built checkout (default this one), so that
# two builds can be alternated:
#
#   scripts/cpu-geo.sh /work/wt/base; scripts/cpu-geo.sh
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
N=${N:-50000}; ROUNDS=${ROUNDS:-3}; CLIENTS=50
. scripts/servers.sh
servers_init cpu
servers_start proxy.toml
for port in "$PPORT" "$RPORT"; do
	seq 0 9999 | awk '{printf "%.6f %.6f geo:%05d ", 12.4 + ($1 * 7919 % 10000) / 10000 * 3.2, 36.7 + ($1 * 104729 % 10000) / 10000 * 1.5, $1}' |
		xargs -n 3000 redis-cli -p "$port" GEOADD bench:geo >/dev/null
done
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
measure() { # pid port label cmd... -> "label usec-per-request"
	local pid=$1 port=$2 label=$3; shift 3
	local t0 t1
	t0=$(ticks "$pid")
	"${LOAD[@]}" redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -P 1 -q "$@" >/dev/null 2>&1
	t1=$(ticks "$pid")
	awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$N" -v l="$label" 'BEGIN {printf "%s %.1f\n", l, d / hz / n * 1e6}'
}
for r in $(seq "$ROUNDS"); do
	measure "$ppid_" "$PPORT" respike-geosearch GEOSEARCH bench:geo FROMLONLAT 13.9 37.4 BYRADIUS 5 km COUNT 10 ASC WITHDIST
	measure "$rpid" "$RPORT" redis-geosearch GEOSEARCH bench:geo FROMLONLAT 13.9 37.4 BYRADIUS 5 km COUNT 10 ASC WITHDIST
	measure "$ppid_" "$PPORT" respike-get GET foo
	measure "$rpid" "$RPORT" redis-get GET foo
done
