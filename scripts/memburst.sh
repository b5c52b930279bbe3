#!/usr/bin/env bash
# Resident memory after a burst of large values, and after the burst ends
# and the idle timeout passes (docs/operations.md, "Instances follow
# load"). Builds respike with -tags pprof (for /debug/pprof/heap?gc=1,
# which runs a garbage collection) and runs it on the embedded store with
# the strings module only (make commands/strings.wasm), twice: with
# instances never released nor recycled (idle_timeout "0s",
# recycle_memory_mib 0) and with release and recycling on.
#
#   scripts/memburst.sh                  # 50 clients, 4 MB values, idle_timeout 10s
#   CLIENTS=50 SIZE=4000000 N=500 IDLE=10s RECYCLE=32 scripts/memburst.sh
#
# Prints RSS (VmRSS) and the Go heap in use (go_memstats_heap_inuse_bytes)
# at start, right after the burst, after the idle timeout plus the
# reaper's period, and after two garbage collections then 10 s for the
# runtime to return the freed pages (Go forces a collection every two
# minutes anyway; an idle proxy allocates too little to start one).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-50}
SIZE=${SIZE:-4000000}
N=${N:-500}
IDLE=${IDLE:-10s}
RECYCLE=${RECYCLE:-32}
command -v redis-benchmark >/dev/null || { echo "memburst: redis-benchmark missing: apt-get install redis-tools" >&2; exit 1; }
[ -f "$ROOT/commands/strings.wasm" ] || { echo "memburst: run make commands/strings.wasm first" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
idle_secs=$(python3 -c "import sys; s=sys.argv[1]; print(float(s[:-1]) if s.endswith('s') else float(s[:-1])*60)" "$IDLE")
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$tmp/commands"
cp "$ROOT/commands/strings.wasm" "$tmp/commands/"
(cd "$ROOT" && go build -tags pprof -o "$tmp/respike" ./cmd/respike)

figures() { # label
	local rss heap
	rss=$(awk '/^VmRSS/ {print int($2/1024)}' "/proc/$pid/status")
	heap=$(curl -s "http://127.0.0.1:$MPORT/metrics" | awk '/^go_memstats_heap_inuse_bytes/ {printf "%d", $2/1048576}')
	insts=$(curl -s "http://127.0.0.1:$MPORT/metrics" | awk '/^respike_module_instances\{module="strings"\}/ {print $2}')
	mem=$(curl -s "http://127.0.0.1:$MPORT/metrics" | awk '/^respike_module_memory_bytes\{module="strings"\}/ {printf "%d", $2/1048576}')
	printf '  %-28s RSS %5d MiB   Go heap in use %5d MiB   strings instances %s (%s MiB linear memory)\n' "$1" "$rss" "$heap" "$insts" "$mem"
}

run() { # idle_timeout recycle_memory_mib
	PORT=$(free_port)
	MPORT=$(free_port)
	PPORT=$(free_port)
	cat >"$tmp/proxy.toml" <<TOML
[server]
listen = "127.0.0.1:$PORT"
proto_max_bulk_len = "512mb"
[commands]
dir = "$tmp/commands"
# A 4 MB value among 50 clients can take more than the default second of
# wall time on a busy machine: not what this measures.
deadline = "10s"
idle_timeout = "$1"
recycle_memory_mib = $2
[metrics]
listen = "127.0.0.1:$MPORT"
[log]
level = "warn"
TOML
	RESPIKE_PPROF="127.0.0.1:$PPORT" "$tmp/respike" -config "$tmp/proxy.toml" >/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 600); do
		[ "$(redis-cli -p "$PORT" set memburst:probe 1 2>/dev/null)" = OK ] && break
		sleep 0.1
	done
	echo "idle_timeout=$1 recycle_memory_mib=$2:"
	figures "started"
	redis-benchmark -p "$PORT" -c "$CLIENTS" -n "$N" -d "$SIZE" -t set,get -q >/dev/null
	figures "after the burst"
	redis-cli -p "$PORT" flushall >/dev/null
	sleep "$(python3 -c "print($idle_secs * 1.25 + 2)")"
	figures "idle, values deleted"
	# Two collections: sync.Pool keeps what it holds through one.
	curl -s "http://127.0.0.1:$PPORT/debug/pprof/heap?gc=1" >/dev/null
	curl -s "http://127.0.0.1:$PPORT/debug/pprof/heap?gc=1" >"${HEAPDUMP:-/dev/null}.$1"
	sleep 10
	figures "then 2 GCs and 10 s"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
}

echo "burst: $CLIENTS clients, SET and GET of $SIZE-byte values, $N requests each"
run 0s 0
run "$IDLE" "$RECYCLE"
