#!/usr/bin/env bash
# Runs redis-benchmark against one respike daemon serving both the Go
# commands/strings module (GET, SET, INCR) and the C module examples/cstrings
# (CGET, CSET, CINCR: the same requests to the same embedded store), and
# against redis-server, interleaved, and prints requests/s and the ratios.
# Same host, same store, same load: the difference is the guest code.
#
#   make bench-guest                  # P="1 16"; N: 200000 unpipelined, 1000000 pipelined
#   N=2000000 P=16 ./scripts/bench-guest.sh
#
# Needs bin/respike, commands/*.wasm and examples/cstrings/cstrings.wasm
# (make build commands examples-c), redis-server and redis-benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-}
P=${P:-"1 16"}
CLIENTS=${CLIENTS:-50}
[ -f examples/cstrings/cstrings.wasm ] || { echo "bench-guest: examples/cstrings/cstrings.wasm missing: make examples-c" >&2; exit 1; }
. scripts/servers.sh
servers_init bench-guest
mkdir "$tmp/commands"
cp commands/*.wasm examples/cstrings/cstrings.wasm "$tmp/commands/"
sed "s#^dir = \"commands\"#dir = \"$tmp/commands\"#" proxy.toml >"$tmp/proxy.toml"
servers_start "$tmp/proxy.toml"
for _ in $(seq 600); do
	redis-cli -p "$PPORT" command info cget | grep -q cget && break
	sleep 0.1
done
redis-cli -p "$PPORT" command info cget | grep -q cget || { echo "bench-guest: cstrings not loaded"; cat "$tmp/respike.log"; exit 1; }

rps() { # port pipeline command... -> requests/s
	local n=${N:-$([ "$2" = 1 ] && echo 200000 || echo 1000000)}
	"${LOAD[@]}" redis-benchmark -p "$1" -c "$CLIENTS" -n "$n" -P "$2" -q "${@:3}" 2>/dev/null |
		tr '\r' '\n' | awk -F': ' '/requests per second/ {split($2, a, " "); r = a[1]} END {print r}'
}

printf '%-5s %-3s %10s %10s %10s %8s %8s %6s\n' test P redis go c go/redis c/redis c/go
for p in $P; do
	for t in GET SET INCR; do
		case $t in
		GET) args=(key:__rand_int__) ;;
		SET) args=(key:__rand_int__ xxx) ;;
		INCR) args=(counter) ;;
		esac
		# Interleaved, so drift on a shared machine hits all three.
		r=$(rps "$RPORT" "$p" "$t" "${args[@]}")
		g=$(rps "$PPORT" "$p" "$t" "${args[@]}")
		c=$(rps "$PPORT" "$p" "C$t" "${args[@]}")
		awk -v t="$t" -v p="$p" -v r="$r" -v g="$g" -v c="$c" \
			'BEGIN {printf "%-5s %-3s %10.0f %10.0f %10.0f %8.2f %8.2f %6.2f\n", t, p, r, g, c, g/r, c/r, c/g}'
	done
done
