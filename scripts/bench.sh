#!/usr/bin/env bash
# Runs redis-benchmark against respike (embedded store) and redis-server in the
# same run, under the same load, and prints requests/s and the ratio
# respike/redis-server. The machines are shared and noisy: only ratios taken
# side by side mean anything.
#
# Besides redis-benchmark's own tests (TESTS), it measures ZRANGE 0 99
# WITHSCORES and ZRANGEBYSCORE (100 members, WITHSCORES) on a sorted set of
# 10,000 members loaded into both servers first (ZSET=0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
CLIENTS=${CLIENTS:-50}
# lrange runs LRANGE_100, _300, _500 and _600 after an LPUSH that fills the list.
TESTS=${TESTS:-get,set,incr,lpush,rpush,lpop,rpop,lrange,zadd,zpopmin}
ZSET=${ZSET:-1}
. scripts/servers.sh
servers_init bench
servers_start proxy.toml

run() { # port pipeline -> "test rps" lines
	redis-benchmark -p "$1" -c "$CLIENTS" -n "$N" -P "$2" -t "$TESTS" -q 2>/dev/null |
		tr '\r' '\n' | awk -F': ' '/requests per second/ && !/needed to benchmark/ {
			split($1, t, " "); split($2, a, " "); print t[1], a[1] }'
	[ "$ZSET" = 1 ] || return 0
	custom "$1" "$2" zrange100 ZRANGE bench:zset 0 99 WITHSCORES
	custom "$1" "$2" zrangebyscore ZRANGEBYSCORE bench:zset 5000 5099 WITHSCORES
}

custom() { # port pipeline label command... -> "label rps"
	local port=$1 p=$2 label=$3
	shift 3
	redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -P "$p" -q "$@" 2>/dev/null |
		tr '\r' '\n' | awk -F': ' -v l="$label" '/requests per second/ {split($2, a, " "); print l, a[1]}'
}

# The 10,000-member sorted set of the custom ZSET benchmarks, in both servers.
if [ "$ZSET" = 1 ]; then
	for port in "$PPORT" "$RPORT"; do
		seq 0 9999 | awk '{printf "%d member:%05d ", $1, $1}' | xargs -n 2000 redis-cli -p "$port" ZADD bench:zset >/dev/null
		[ "$(redis-cli -p "$port" ZCARD bench:zset)" = 10000 ] || { echo "bench: loading bench:zset failed on $port" >&2; exit 1; }
	done
fi

printf '%-14s %-4s %14s %14s %8s\n' test P respike redis ratio
for P in 1 16; do
	# Interleave the two servers, twice, so drift on a shared machine hits both.
	run "$PPORT" "$P" >"$tmp/p1"; run "$RPORT" "$P" >"$tmp/r1"
	run "$PPORT" "$P" >"$tmp/p2"; run "$RPORT" "$P" >"$tmp/r2"
	join <(cat "$tmp/p1" "$tmp/p2" | awk '{s[$1]+=$2; n[$1]++} END {for (k in s) print k, s[k]/n[k]}' | sort) \
	     <(cat "$tmp/r1" "$tmp/r2" | awk '{s[$1]+=$2; n[$1]++} END {for (k in s) print k, s[k]/n[k]}' | sort) |
		awk -v P="$P" '{printf "%-14s %-4s %14.0f %14.0f %8.2f\n", $1, P, $2, $3, $2/$3}'
done
