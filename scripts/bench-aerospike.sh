#!/usr/bin/env bash
# respike in front of Aerospike vs the same operations issued directly with
# the Go client, at the same concurrency (50), in one run. Needs a cluster:
#   RESPIKE_TEST_AEROSPIKE=127.0.0.1:3000 scripts/bench-aerospike.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${RESPIKE_TEST_AEROSPIKE:?set RESPIKE_TEST_AEROSPIKE=host:port of an Aerospike node}"
N=${N:-20000}
host=${RESPIKE_TEST_AEROSPIKE%:*}
port=${RESPIKE_TEST_AEROSPIKE##*:}
tmp=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
cat >"$tmp/proxy.toml" <<TOML
[store]
backend = "aerospike"
[aerospike]
hosts = ["$host:$port"]
namespace = "${RESPIKE_TEST_AEROSPIKE_NAMESPACE:-test}"
set = "respike_bench"
TOML
PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
./bin/respike -config "$tmp/proxy.toml" -listen "127.0.0.1:$PPORT" >"$tmp/respike.log" 2>&1 &
pid=$!
for _ in $(seq 300); do redis-cli -p "$PPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

redis-benchmark -p "$PPORT" -c 50 -n "$N" -r 100000 -t get,set,incr -q 2>/dev/null | tr '\r' '\n' |
	awk -F': ' '/requests per second/ {split($2, a, " "); print $1, a[1]}' | sort >"$tmp/proxy"
go test -run '^$' -bench 'DirectClient' -benchtime "${N}x" ./host/store/aerospike 2>/dev/null |
	awk '/DirectClient\// {split($1, n, "/"); sub(/-[0-9]+$/, "", n[2]); for (i = 1; i <= NF; i++) if ($(i+1) == "ops/s") print n[2], $i}' | sort >"$tmp/direct"
printf '%-6s %12s %12s %7s\n' test respike direct ratio
join "$tmp/proxy" "$tmp/direct" | awk '{printf "%-6s %12.0f %12.0f %7.2f\n", $1, $2, $3, $2/$3}'
echo "errors through respike: $(redis-cli -p "$PPORT" info stats | tr -d '\r' | awk -F: '/total_error_replies/ {print $2}')"
