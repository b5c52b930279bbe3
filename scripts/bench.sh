#!/usr/bin/env bash
# Runs redis-benchmark against respike and redis-server in the same run,
# under the same load, and prints requests/s (min and median over ROUNDS
# rounds), the ratio of the medians respike/redis-server, and the min and
# median of the rounds' own ratios. Each benchmark runs against the two
# servers back to back (the order alternating by round), so that both sides
# of a ratio are measured seconds apart. The machines are shared and noisy:
# only ratios taken side by side mean anything.
#
# Besides redis-benchmark's own tests (TESTS), it measures ZRANGE 0 99
# WITHSCORES and ZRANGEBYSCORE (100 members, WITHSCORES) on a sorted set of
# 10,000 members loaded into both servers first (ZSET=0 skips them), and
# SETBIT (bit 1000 of one of 1,000 keys, set) and BITCOUNT (of those keys,
# 126 bytes each) (BITS=0 skips them), and
# GEOADD, GEOSEARCH (radius 5 km around a point of a 10,000-member geo set,
# COUNT 10: about 15 members in range), PFADD and PFCOUNT (one dense HLL,
# and the union of two) on keys loaded the same way (GEO=0 skips them).
#
# respike runs on the embedded store, or on Aerospike with BACKEND=aerospike
# (the node at RESPIKE_TEST_AEROSPIKE, default 127.0.0.1:3000, namespace
# test, set respike_bench or AEROSPIKE_SET: give your own when others
# benchmark on the same node). PIPELINES="1 16" lists the -P depths.
# GOMAXPROCS=1 runs respike as [server] procs = 1 does (one thread). PIN=0
# shares all CPUs between the servers and redis-benchmark (scripts/servers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-100000}
CLIENTS=${CLIENTS:-50}
# lrange runs LRANGE_100, _300, _500 and _600 after an LPUSH that fills the list.
TESTS=${TESTS:-get,set,incr,lpush,rpush,lpop,rpop,lrange,zadd,zpopmin}
ZSET=${ZSET:-1}
BITS=${BITS:-1}
GEO=${GEO:-1}
ROUNDS=${ROUNDS:-2}
PIPELINES=${PIPELINES:-1 16}
BACKEND=${BACKEND:-memory}
. scripts/servers.sh
servers_init bench
config=proxy.toml
if [ "$BACKEND" = aerospike ]; then
	config=$tmp/proxy.toml
	cat >"$config" <<TOML
[store]
backend = "aerospike"
[aerospike]
hosts = ["${RESPIKE_TEST_AEROSPIKE:-127.0.0.1:3000}"]
namespace = "${RESPIKE_TEST_AEROSPIKE_NAMESPACE:-test}"
set = "${AEROSPIKE_SET:-respike_bench}"
[commands]
dir = "$PWD/commands"
TOML
fi
servers_start "$config"

# jobs lists the benchmarks, one per line: redis-benchmark's tests one by one,
# then the custom ones. Each is run against both servers back to back.
jobs() {
	tr ',' '\n' <<<"$TESTS" | sed 's/^/t /'
	if [ "$ZSET" = 1 ]; then printf '%s\n' zrange100 zrangebyscore; fi
	if [ "$BITS" = 1 ]; then printf '%s\n' setbit bitcount; fi
	if [ "$GEO" = 1 ]; then printf '%s\n' geoadd geosearch pfadd pfcount pfcount2; fi
}

run() { # port pipeline job -> "test rps" lines
	case $3 in
	t\ *)
		"${LOAD[@]}" redis-benchmark -p "$1" -c "$CLIENTS" -n "$N" -P "$2" -t "${3#t }" -q 2>/dev/null |
			tr '\r' '\n' | awk -F': ' '/requests per second/ && !/needed to benchmark/ {
				split($1, t, " "); split($2, a, " "); print t[1], a[1] }' ;;
	zrange100) custom "$1" "$2" zrange100 ZRANGE bench:zset 0 99 WITHSCORES ;;
	zrangebyscore) custom "$1" "$2" zrangebyscore ZRANGEBYSCORE bench:zset 5000 5099 WITHSCORES ;;
	# __rand_int__ is 12 zero-padded digits, which SETBIT refuses as an
	# offset (Redis's strict integers): it picks the key instead.
	setbit) custom "$1" "$2" setbit -r 1000 SETBIT bench:bits:__rand_int__ 1000 1 ;;
	bitcount) custom "$1" "$2" bitcount -r 1000 BITCOUNT bench:bits:__rand_int__ ;;
	geoadd) custom "$1" "$2" geoadd -r 100000 GEOADD bench:geoadd 13.361389 38.115556 member:__rand_int__ ;;
	geosearch) custom "$1" "$2" geosearch GEOSEARCH bench:geo FROMLONLAT 13.9 37.4 BYRADIUS 5 km COUNT 10 ASC WITHDIST ;;
	pfadd) custom "$1" "$2" pfadd -r 1000000 PFADD bench:hlladd element:__rand_int__ ;;
	pfcount) custom "$1" "$2" pfcount PFCOUNT bench:hll ;;
	pfcount2) custom "$1" "$2" pfcount2 PFCOUNT bench:hll bench:hll2 ;;
	esac
}

custom() { # port pipeline label command... -> "label rps"
	local port=$1 p=$2 label=$3
	shift 3
	"${LOAD[@]}" redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -P "$p" -q "$@" 2>/dev/null |
		tr '\r' '\n' | awk -F': ' -v l="$label" '/requests per second/ {split($2, a, " "); print l, a[1]}'
}

# The 10,000-member sorted set of the custom ZSET benchmarks, in both servers.
if [ "$ZSET" = 1 ]; then
	for port in "$PPORT" "$RPORT"; do
		seq 0 9999 | awk '{printf "%d member:%05d ", $1, $1}' | xargs -n 2000 redis-cli -p "$port" ZADD bench:zset >/dev/null
		[ "$(redis-cli -p "$port" ZCARD bench:zset)" = 10000 ] || { echo "bench: loading bench:zset failed on $port" >&2; exit 1; }
	done
fi

# The geo set (10,000 members spread over Sicily) and the HLLs (dense,
# 20,000 and 10,000 elements) of the GEO benchmarks, in both servers.
if [ "$GEO" = 1 ]; then
	for port in "$PPORT" "$RPORT"; do
		seq 0 9999 | awk '{printf "%.6f %.6f geo:%05d ", 12.4 + ($1 * 7919 % 10000) / 10000 * 3.2, 36.7 + ($1 * 104729 % 10000) / 10000 * 1.5, $1}' |
			xargs -n 3000 redis-cli -p "$port" GEOADD bench:geo >/dev/null
		seq 0 19999 | xargs -n 2000 redis-cli -p "$port" PFADD bench:hll >/dev/null
		seq 10000 19999 | sed 's/^/x/' | xargs -n 2000 redis-cli -p "$port" PFADD bench:hll2 >/dev/null
		[ "$(redis-cli -p "$port" ZCARD bench:geo)" = 10000 ] || { echo "bench: loading bench:geo failed on $port" >&2; exit 1; }
	done
fi

stats() { # "test value" lines -> "test min median", sorted by test
	sort -k1,1 -k2,2g | awk '
		function flush() { if (k != "") printf "%s %s %s\n", k, v[1], (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) }
		$1 != k { flush(); k = $1; n = 0 }
		{ v[++n] = $2 }
		END { flush() }'
}

printf '%-14s %-4s %11s %11s %11s %11s %8s %9s %9s\n' test P respike-min respike-med redis-min redis-med ratio ratio-min ratio-med
for P in $PIPELINES; do
	# Each benchmark runs against the two servers back to back, seconds
	# apart, so that drift on a shared machine hits both sides of one
	# ratio; the order alternates round by round. ratio is the ratio of
	# the medians; ratio-min and ratio-med are over the rounds' own ratios.
	: >"$tmp/p"; : >"$tmp/r"; : >"$tmp/q"
	mapfile -t todo < <(jobs)
	for round in $(seq "$ROUNDS"); do
		for job in "${todo[@]}"; do
			if [ $((round % 2)) = 1 ]; then
				run "$PPORT" "$P" "$job" >"$tmp/p1"; run "$RPORT" "$P" "$job" >"$tmp/r1"
			else
				run "$RPORT" "$P" "$job" >"$tmp/r1"; run "$PPORT" "$P" "$job" >"$tmp/p1"
			fi
			cat "$tmp/p1" >>"$tmp/p"; cat "$tmp/r1" >>"$tmp/r"
			join <(sort "$tmp/p1") <(sort "$tmp/r1") | awk '$3 > 0 {print $1, $2 / $3}' >>"$tmp/q"
		done
	done
	join <(join <(stats <"$tmp/p") <(stats <"$tmp/r")) <(stats <"$tmp/q") |
		awk -v P="$P" '{printf "%-14s %-4s %11.0f %11.0f %11.0f %11.0f %8.2f %9.2f %9.2f\n", $1, P, $2, $3, $4, $5, $3/$5, $6, $7}'
done
echo "errors through respike: $(redis-cli -p "$PPORT" info stats | tr -d '\r' | awk -F: '/total_error_replies/ {print $2}')"
