#!/usr/bin/env bash
# Backend outage drill against a real Aerospike server: respike serves on
# it, clients INCR counters of their own (scripts/outageload), the server
# is stopped under load, started again, and the drill checks that every
# command answered (an error within the store timeout, no hang), that
# respike serves again without a restart, and that every acknowledged INCR
# is there afterwards. It prints the figures docs/operations.md reports.
#
# The server's start and stop are commands you give (the drill cannot know
# how your server runs); it must be a server you may stop, never a shared
# one:
#   AEROSPIKE=127.0.0.1:3100 \
#   START_CMD='/tmp/as2/start.sh' STOP_CMD='/tmp/as2/stop.sh' \
#   scripts/outage-drill.sh
# START_CMD must return once the server serves again (or soon before).
# Needs the daemon and modules built (make build commands).
#
# Knobs: CLIENTS (16), BEFORE (5 s of load before the stop), OUTAGE (10 s
# from the stop returning to the start), AFTER (10 s of load after the
# start returned), TOTAL_TIMEOUT ([aerospike] total_timeout, 1s),
# CONNECT_TIMEOUT ([aerospike] connect_timeout, the daemon's default),
# BATCH_SIZE ([aerospike] batch_size, the daemon's default; 1 = no gathering),
# NAMESPACE (test), SET (outage_drill).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${AEROSPIKE:?set AEROSPIKE=host:port of the Aerospike server to stop and start}"
: "${START_CMD:?set START_CMD to the command that starts the server}"
: "${STOP_CMD:?set STOP_CMD to the command that stops the server}"
CLIENTS=${CLIENTS:-16}
BEFORE=${BEFORE:-5}
OUTAGE=${OUTAGE:-10}
AFTER=${AFTER:-10}
TOTAL_TIMEOUT=${TOTAL_TIMEOUT:-1s}
NAMESPACE=${NAMESPACE:-test}
SET=${SET:-outage_drill}
[ -x bin/respike ] || { echo "bin/respike missing: make build commands" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'kill ${pid:-} ${lpid:-} 2>/dev/null || true; rm -rf "$tmp"' EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now_ms() { date +%s%3N; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }

go build -o "$tmp/outageload" ./scripts/outageload
port=$(freeport)
mport=$(freeport)
ct_line=""
[ -n "${CONNECT_TIMEOUT:-}" ] && ct_line="connect_timeout = \"$CONNECT_TIMEOUT\""
bs_line=""
[ -n "${BATCH_SIZE:-}" ] && bs_line="batch_size = $BATCH_SIZE"
cat >"$tmp/respike.toml" <<TOML
[store]
backend = "aerospike"
[aerospike]
hosts = ["$AEROSPIKE"]
namespace = "$NAMESPACE"
set = "$SET"
total_timeout = "$TOTAL_TIMEOUT"
$ct_line
$bs_line
[metrics]
listen = "127.0.0.1:$mport"
[log]
level = "info"
TOML
./bin/respike -config "$tmp/respike.toml" -listen "127.0.0.1:$port" >"$tmp/respike.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
	redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && break
	sleep 0.1
done
redis-cli -p "$port" PING 2>/dev/null | grep -q PONG || { echo "respike did not start:" >&2; cat "$tmp/respike.log" >&2; exit 1; }
redis-cli -p "$port" FLUSHALL >/dev/null

# The slow limit: the store timeout plus a second of slack for the proxy
# and a loaded machine; a hang would be the client's 30 s deadline.
slow_ms=$(( $(sed 's/ms$//; s/s$/000/' <<<"$TOTAL_TIMEOUT") + 1000 ))
"$tmp/outageload" -addr "127.0.0.1:$port" -clients "$CLIENTS" -slow "${slow_ms}ms" -flushall >"$tmp/report.json" 2>"$tmp/load.err" &
lpid=$!

sleep "$BEFORE"
rss_before=$(rss_kb)
stop_at=$(now_ms)
eval "$STOP_CMD" >"$tmp/stop.log" 2>&1
stopped_at=$(now_ms)
rss_during=$(rss_kb)
for _ in $(seq 1 "$OUTAGE"); do
	sleep 1
	r=$(rss_kb)
	[ "$r" -gt "$rss_during" ] && rss_during=$r
done
start_at=$(now_ms)
eval "$START_CMD" >"$tmp/start.log" 2>&1
started_at=$(now_ms)
# The first INCR through respike that succeeds after the start.
while ! redis-cli -p "$port" INCR "outage:probe" 2>/dev/null | grep -qE '^[0-9]+$'; do
	sleep 0.05
done
serving_at=$(now_ms)
sleep "$AFTER"
rss_after=$(rss_kb)
metrics=$(curl -s "http://127.0.0.1:$mport/metrics" | grep -E '^respike_(store_up|error_replies_total|store_requests_total\{kind="records")' || true)
kill -INT "$lpid"
status=0
wait "$lpid" || status=$?
alive=yes
kill -0 "$pid" 2>/dev/null || alive=no

cat "$tmp/report.json"
cat "$tmp/load.err" >&2
last_err=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["last_error_unix_ms"])' "$tmp/report.json" 2>/dev/null || echo 0)
cat <<EOF
timeline (unix ms)       stop ${stop_at}..${stopped_at}, start ${start_at}..${started_at}, first INCR served ${serving_at}
stop command took        $(( stopped_at - stop_at )) ms
start command took       $(( started_at - start_at )) ms
first INCR served        $(( serving_at - started_at )) ms after the start command returned ($(( serving_at - start_at )) ms after it began)
last error reply         $(( last_err - started_at )) ms after the start command returned
respike RSS              before ${rss_before} kB, during (max) ${rss_during} kB, after ${rss_after} kB
respike still running    $alive (never restarted)
$metrics
EOF
grep -E 'level=(ERROR|WARN)' "$tmp/respike.log" | cut -c1-200 | sort | uniq -c | sort -rn | head -8
exit "$status"
