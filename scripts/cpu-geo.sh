#!/usr/bin/env bash
# Server CPU per request (µs) of some of bench.sh's GEO benchmarks and of
# GET, for respike and redis-server side by side (pinned as bench.sh pins
# them), from each server's utime+stime (/proc/PID/stat) around each
# redis-benchmark run: steadier on a shared machine than requests/s, which
# other load moves by 2×. ROUNDS interleaved rounds (3) of N requests
# (50000). The argument is a built checkout (default this one), so that
# two builds can be alternated:
#
#   scripts/cpu-geo.sh /work/wt/base; scripts/cpu-geo.sh
#
# TESTS (default "geosearch get") picks the benchmarks:
#   geosearch   bench.sh's GEOSEARCH on a 10,000-member geo set
#   get         GET of one key
#   geoadd      bench.sh's GEOADD (new members, -r 100000) into a key that
#               starts empty in every round (it ends near 40,000 members)
#   geoadd100k  the same into a key preloaded with 100,000 other members
#               (it ends near 140,000): what the set's size costs
#   geoaddold   GEOADD of members the 100,000-member key already holds at
#               the same place (no insert: the store's lookup and the rest)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
N=${N:-50000}; ROUNDS=${ROUNDS:-3}; CLIENTS=50
TESTS=${TESTS:-geosearch get}
. scripts/servers.sh
servers_init cpu
servers_start proxy.toml
for port in "$PPORT" "$RPORT"; do
	seq 0 9999 | awk '{printf "%.6f %.6f geo:%05d ", 12.4 + ($1 * 7919 % 10000) / 10000 * 3.2, 36.7 + ($1 * 104729 % 10000) / 10000 * 1.5, $1}' |
		xargs -n 3000 redis-cli -p "$port" GEOADD bench:geo >/dev/null
	case " $TESTS " in *" geoadd100k "* | *" geoaddold "*)
		# 100,000 members at bench.sh's point, named as redis-benchmark's
		# __rand_int__ would not name them (pre:N), and in geoaddold's
		# key as it does (member:%012d).
		seq 0 99999 | awk '{printf "13.361389 38.115556 pre:%d ", $1}' |
			xargs -n 3000 redis-cli -p "$port" GEOADD bench:geo100k >/dev/null
		seq 0 99999 | awk '{printf "13.361389 38.115556 member:%012d ", $1}' |
			xargs -n 3000 redis-cli -p "$port" GEOADD bench:geoold >/dev/null
		[ "$(redis-cli -p "$port" ZCARD bench:geo100k)" = 100000 ] || { echo "cpu-geo: loading bench:geo100k failed on $port" >&2; exit 1; }
		[ "$(redis-cli -p "$port" ZCARD bench:geoold)" = 100000 ] || { echo "cpu-geo: loading bench:geoold failed on $port" >&2; exit 1; }
		;;
	esac
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
both() { # label cmd... : respike then redis-server
	local label=$1; shift
	measure "$ppid_" "$PPORT" "respike-$label" "$@"
	measure "$rpid" "$RPORT" "redis-$label" "$@"
}
for r in $(seq "$ROUNDS"); do
	for t in $TESTS; do
		case $t in
		geosearch) both geosearch GEOSEARCH bench:geo FROMLONLAT 13.9 37.4 BYRADIUS 5 km COUNT 10 ASC WITHDIST ;;
		get) both get GET foo ;;
		geoadd) both geoadd -r 100000 GEOADD "bench:geoadd:$r" 13.361389 38.115556 member:__rand_int__ ;;
		geoadd100k)
			for port in "$PPORT" "$RPORT"; do redis-cli -p "$port" COPY bench:geo100k "bench:geo100k:$r" >/dev/null; done
			both geoadd100k -r 100000 GEOADD "bench:geo100k:$r" 13.361389 38.115556 member:__rand_int__ ;;
		geoaddold) both geoaddold -r 100000 GEOADD bench:geoold 13.361389 38.115556 member:__rand_int__ ;;
		*) echo "cpu-geo: unknown test $t" >&2; exit 1 ;;
		esac
	done
done
