#!/usr/bin/env bash
# Compares two builds of respike side by side: both daemons serve at once
# (embedded store), and redis-benchmark runs against them in turn, ROUNDS
# times, so the machine's drift hits both. Each checkout must be built
# (make build commands) and is run from its own folder, with its own
# proxy.toml and commands/.
#
#   scripts/bench-ab.sh /path/to/old-checkout .          # GET SET INCR at -P 16 and -P 1
#   TESTS=get P="16" ROUNDS=4 scripts/bench-ab.sh ../old .
#
# Prints each test's mean requests/s for A and B and the ratio B/A.
set -euo pipefail
A=$(cd "${1:?usage: bench-ab.sh A_CHECKOUT B_CHECKOUT}" && pwd)
B=$(cd "${2:?usage: bench-ab.sh A_CHECKOUT B_CHECKOUT}" && pwd)
N=${N:-150000}
ROUNDS=${ROUNDS:-2}
TESTS=${TESTS:-get set incr}
P=${P:-16 1}
command -v redis-benchmark >/dev/null || { echo "bench-ab: redis-benchmark missing: apt-get install redis-tools" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PA=$(free_port)
PB=$(free_port)
(cd "$A" && exec ./bin/respike -config proxy.toml -listen "127.0.0.1:$PA" >/dev/null 2>&1) &
pa=$!
(cd "$B" && exec ./bin/respike -config proxy.toml -listen "127.0.0.1:$PB" >/dev/null 2>&1) &
pb=$!
trap 'kill $pa $pb 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for port in "$PA" "$PB"; do
	# Ready when a module command answers (modules load after the listener).
	for _ in $(seq 600); do
		r=$(redis-cli -p "$port" get bench-ab-probe 2>/dev/null || true)
		[ -n "$r" ] && [ "${r#ERR}" = "$r" ] && break
		sleep 0.2
	done
done
rps() { # port pipeline test
	redis-benchmark -p "$1" -c 50 -n "$N" -P "$2" -t "$3" -q 2>/dev/null | tr '\r' '\n' |
		awk -F': ' '/requests per second/ {split($2, a, " "); print a[1]}' | tail -1
}
printf '%-6s %-4s %12s %12s %7s\n' test P A B B/A
for p in $P; do
	for t in $TESTS; do
		for _ in $(seq "$ROUNDS"); do
			echo "A $(rps "$PA" "$p" "$t")"
			echo "B $(rps "$PB" "$p" "$t")"
		done | awk -v t="$t" -v p="$p" '{s[$1] += $2; n[$1]++}
			END {printf "%-6s %-4s %12.0f %12.0f %7.2f\n", t, p, s["A"]/n["A"], s["B"]/n["B"], s["B"]/n["B"]/(s["A"]/n["A"])}'
	done
done
