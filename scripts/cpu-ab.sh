#!/usr/bin/env bash
# Two respike builds side by side under redis-benchmark -c 50 (C): requests/s, p50
# and each daemon's CPU per command (from /proc/<pid>/stat), tests and
# builds interleaved so that drift on a shared machine hits both.
#   A=<checkout, built> B=<checkout, built> scripts/cpu-ab.sh
# Knobs: STORE (memory, or aerospike: the cluster in RESPIKE_TEST_AEROSPIKE,
# sets <SET>_a and <SET>_b), SET (respike_ab), ROUNDS (3), N (100000),
# TESTS (get,set,incr), P (pipeline, 1), C (clients, 50), AENV / BENV (environment for one
# daemon, e.g. BENV=GOMAXPROCS=1 with A=B to compare settings), ACONF / BCONF
# (lines appended to one daemon's [aerospike] section, e.g. BCONF='batch_calls = 1'),
# KEEP (1: leave the records on Aerospike), STAT (1: count each daemon's context
# switches, futex calls and nanosleeps per command with perf stat; counts
# scatter far less than times on a shared machine: docs/performance.md, "Where
# the Aerospike path's extra CPU goes").
set -euo pipefail
: "${A:?set A= and B= to built checkouts}" "${B:?set B=}"
ROUNDS=${ROUNDS:-3}; N=${N:-100000}; TESTS=${TESTS:-get,set,incr}; P=${P:-1}; C=${C:-50}
SET=${SET:-respike_ab}
addr=${RESPIKE_TEST_AEROSPIKE:-127.0.0.1:3000}
tmp=$(mktemp -d)
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# start DIR PORT SET ENV CONF: starts DIR's bin/respike, prints its pid.
start() {
	cat >"$tmp/$2.toml" <<TOML
[server]
listen = "127.0.0.1:$2"
[store]
backend = "${STORE:-memory}"
[aerospike]
hosts = ["$addr"]
set = "$3"
$5
TOML
	# shellcheck disable=SC2086 # ENV is a list of NAME=value words
	(cd "$1" && exec env ${4:-} ./bin/respike -config "$tmp/$2.toml" >"$tmp/$2.log" 2>&1) &
	echo $!
}
porta=$(freeport); portb=$(freeport)
pa=$(start "$A" "$porta" "${SET}_a" "${AENV:-}" "${ACONF:-}")
pb=$(start "$B" "$portb" "${SET}_b" "${BENV:-}" "${BCONF:-}")
# On exit the daemons' own sets are flushed (KEEP=1 keeps them): Aerospike's
# namespace supervisor walks every record of the namespace each nsup-period,
# and the ~100,000 records a run leaves per daemon cost a loopback node a
# tenth to a fifth of a CPU, which skews everyone's later measurements.
cleanup() {
	if [ "${STORE:-memory}" = aerospike ] && [ -z "${KEEP:-}" ]; then
		for p in $porta $portb; do redis-cli -p "$p" flushall >/dev/null 2>&1 || true; done
	fi
	kill $pa $pb 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
for p in $porta $portb; do
	for _ in $(seq 600); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.2; done
done
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
events=context-switches,syscalls:sys_enter_futex,syscalls:sys_enter_nanosleep
tk=$(getconf CLK_TCK)
for t in ${TESTS//,/ }; do # warm up: instances, connections, keys
	for p in $porta $portb; do redis-benchmark -p "$p" -c 50 -n 20000 -r 100000 -t "$t" -q >/dev/null 2>&1; done
done
for r in $(seq "$ROUNDS"); do
	for t in ${TESTS//,/ }; do
		order="a b"; [ $((r % 2)) = 0 ] && order="b a" # alternate who goes first
		for x in $order; do
			if [ $x = a ]; then pid=$pa port=$porta; else pid=$pb port=$portb; fi
			c0=$(cpu "$pid")
			bench=(redis-benchmark -p "$port" -c "$C" -P "$P" -n "$N" -r 100000 -t "$t" --csv)
			if [ -n "${STAT:-}" ]; then
				bench=(perf stat -x, -o "$tmp/stat" -p "$pid" -e "$events" -- "${bench[@]}")
			fi
			line=$("${bench[@]}" 2>/dev/null | tail -1 | tr -d '"')
			rate=$(echo "$line" | cut -d, -f2); p50=$(echo "$line" | cut -d, -f5)
			c1=$(cpu "$pid")
			us=$(awk -v c=$((c1 - c0)) -v n="$N" -v tk="$tk" 'BEGIN {printf "%.1f", c * 1e6 / tk / n}')
			counts=""
			if [ -n "${STAT:-}" ]; then # value,unit,event,...: per command
				counts=$(awk -F, -v n="$N" '$1 ~ /^[0-9]+$/ {e = $3; sub(/^syscalls:sys_enter_/, "", e); gsub(/-/, "_", e); printf " %s=%.3f", e, $1 / n}' "$tmp/stat")
			fi
			echo "round=$r test=$t build=$x rate=$rate us_per_cmd=$us p50_ms=$p50$counts load=$(cut -d' ' -f1 /proc/loadavg)"
		done
	done
done
