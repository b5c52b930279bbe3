#!/usr/bin/env bash
# respike in front of a real Aerospike vs the Go client calling Aerospike
# directly, in one run, rounds interleaved so that drift on a shared machine
# hits every column. Needs a cluster, redis-benchmark and the built daemon
# and modules (make build commands):
#   RESPIKE_TEST_AEROSPIKE=127.0.0.1:3000 scripts/bench-aerospike.sh
#
# Each round measures, for GET, SET and INCR:
#   respike, redis-benchmark -c 50 -r 100000, unpipelined and -P 16:
#     requests/s, respike's CPU per command (µs, from /proc), p50/p99 (ms);
#   respike, one client (-c 1), unpipelined and -P 16: p50/p99;
#   the Go client directly, 50 goroutines: one record per call
#     (BenchmarkDirectClient), and 16 records per BatchOperate
#     (BenchmarkDirectClientBatch): records/s and its CPU per record;
#     "direct-16i": the same with the server running each call inline
#     (AllowInlineSSD), as respike's batch_inline asks;
#   the Aerospike server's CPU per command or record, when asd runs on
#   this machine (the whole cost of a command is client + proxy + server);
# then prints min and median over the rounds, and the ratios the targets of
# docs/performance.md are stated in. SUITE adds redis-benchmark's default
# tests that respike serves, at -c 50, unpipelined and -P 16, once per round.
#
# Knobs: ROUNDS (3), N (requests per test, 50000), N1 (one-client requests,
# 5000), SUITE ("" to skip), BATCH_SIZE / BATCH_CALLS ([aerospike] keys),
# BENCH_SET (the daemon's set, respike_bench; the base build's gets
# "_base" appended; the direct client writes RESPIKE_TEST_AEROSPIKE_SET or
# respiketest),
# BASE (another checkout with bin/respike and commands/*.wasm built: it
# serves too, on its own set, and its rows "base-…" interleave with ours),
# PROCS / BASE_PROCS ([server] procs of our daemon / the base's),
# DIRECT_PROCS (adds rows "direct-1p": the direct client's single-record
# run again with GOMAXPROCS=DIRECT_PROCS, and its ratio).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${RESPIKE_TEST_AEROSPIKE:?set RESPIKE_TEST_AEROSPIKE=host:port of an Aerospike node}"
ROUNDS=${ROUNDS:-3}
N=${N:-50000}
N1=${N1:-5000}
SUITE=${SUITE-ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,lrange_300,lrange_500,lrange_600,mset}
BENCH_SET=${BENCH_SET:-respike_bench}
host=${RESPIKE_TEST_AEROSPIKE%:*}
port=${RESPIKE_TEST_AEROSPIKE##*:}
tmp=$(mktemp -d)
trap 'kill ${pid:-} ${bpid:-} 2>/dev/null || true; rm -rf "$tmp"' EXIT
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# serve DIR SET: starts DIR's bin/respike on Aerospike (set SET) in DIR,
# prints "pid port".
serve() {
	local dir=$1 set=$2 p
	local procs=${PROCS:-}
	[ "$set" = "${BENCH_SET}_base" ] && procs=${BASE_PROCS:-}
	cat >"$tmp/$set.toml" <<TOML
[server]
${procs:+procs = $procs}
[store]
backend = "aerospike"
[aerospike]
hosts = ["$host:$port"]
namespace = "${RESPIKE_TEST_AEROSPIKE_NAMESPACE:-test}"
set = "$set"
${BATCH_SIZE:+batch_size = $BATCH_SIZE}
${BATCH_CALLS:+batch_calls = $BATCH_CALLS}
TOML
	if [ "$set" = "${BENCH_SET}_base" ]; then
		# An older build may not know the batch keys.
		sed -i '/^batch_/d' "$tmp/$set.toml"
	fi
	p=$(freeport)
	(cd "$dir" && exec ./bin/respike -config "$tmp/$set.toml" -listen "127.0.0.1:$p" >"$tmp/$set.log" 2>&1) &
	echo "$! $p"
}
read -r pid PPORT < <(serve . "$BENCH_SET")
if [ -n "${BASE:-}" ]; then
	read -r bpid BPORT < <(serve "$BASE" "${BENCH_SET}_base")
fi
for p in $PPORT ${BPORT:-}; do
	for _ in $(seq 300); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
done
go test -c -o "$tmp/direct.test" ./host/store/aerospike

ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # a daemon's user+system ticks
# The server's own CPU per command when it runs on this machine (asd):
# the whole cost of a command is the client's, the proxy's and the
# server's, and batching moves it between them.
asd=$(pgrep -xo asd || true)
export asd
asdcpu() { if [ -n "$asd" ]; then cpu "$asd" 2>/dev/null || echo 0; else echo 0; fi; }

# calls PORT: the Aerospike calls the daemon has made for record requests
# so far (INFO stats store_single_calls + store_batch_calls; 0 for a build
# that does not count them).
calls() {
	redis-cli -p "$1" info stats | tr -d '\r' |
		awk -F: '/^store_(single|batch)_calls:/ {n += $2} END {print n + 0}'
}

# rb NAME ARGS...: one redis-benchmark run per test against our daemon
# (RBPID/RBPORT select another), rows "NAME/TEST rps cpu_us_per_cmd p50 p99
# rb_cpu_us_per_cmd calls_per_cmd" into $tmp/rows: redis-benchmark's own
# CPU (user+system, from time) is the load generator's share of the same
# cores, which the direct client's rows include in their own CPU.
rb() {
	local name=$1 t c0 c1 n a0 a1 p=${RBPORT:-$PPORT} d=${RBPID:-$pid}
	shift
	for t in $(echo "$TESTS" | tr ',' ' '); do
		n=$N
		[[ " $* " == *" -c 1 "* ]] && n=$N1
		c0=$(cpu "$d")
		s0=$(asdcpu)
		a0=$(calls "$p")
		# redis-benchmark exits non-zero on an error reply (a timeout of
		# an overloaded cluster): the run's row is then missing, and the
		# error count at the end says so.
		{ /usr/bin/time -f '%U %S' -o "$tmp/rbtime" redis-benchmark -p "$p" -n "$n" -r 100000 -t "$t" --csv "$@" 2>/dev/null || true; } | tr -d '"' |
			awk -F, -v name="$name" 'NR > 1 {split($1, w, " "); if (w[1] == "LPUSH" && $1 ~ /needed/) w[1] = "LPUSH_FILL"; printf "%s/%s %s - %s %s\n", name, w[1], $2, $5, $7}' >"$tmp/one"
		c1=$(cpu "$d")
		s1=$(asdcpu)
		a1=$(calls "$p")
		# An LRANGE test runs its LPUSH fill first, in the same process:
		# the CPU and the calls are shared over both runs' commands.
		n=$((n * $(wc -l <"$tmp/one")))
		awk -v c0="$c0" -v c1="$c1" -v tk="$ticks" -v n="$n" -v a="$((a1 - a0))" -v rbt="$(tail -1 "$tmp/rbtime")" -v sv="$((s1 - s0))" \
			'{split(rbt, r, " "); $3 = sprintf("%.1f", (c1 - c0) / tk * 1e6 / n); print $0, sprintf("%.1f", (r[1] + r[2]) * 1e6 / n), sprintf("%.3f", a / n), (ENVIRON["asd"] == "" ? "-" : sprintf("%.1f", sv / tk * 1e6 / n))}' "$tmp/one" >>"$tmp/rows"
	done
}

# direct NAME BENCH: the Go client, rows "NAME/TEST records_per_s
# cpu_us_per_record - - - calls_per_record".
direct() {
	local name=$1 bench=$2 t out
	for t in GET SET INCR; do
		s0=$(asdcpu)
		out=$( { /usr/bin/time -f '%U %S' "$tmp/direct.test" -test.run '^$' -test.bench "^Benchmark$bench\$/^$t\$" \
			-test.benchtime "${N}x" 2>&1 >&3 || true; } 3>&1)
		s1=$(asdcpu)
		echo "$out" | awk -v name="$name" -v t="$t" -v n="$N" -v bench="$bench" -v sv="$((s1 - s0))" -v tk="$ticks" '
			/ops\/s/ {for (i = 1; i <= NF; i++) if ($(i+1) == "ops/s") rps = $i}
			NF == 2 && $1 ~ /^[0-9.]+$/ {cpu = ($1 + $2) * 1e6 / n}
			END {printf "%s/%s %s %.1f - - - %.3f %s\n", name, t, rps, cpu, bench == "DirectClient" ? 1 : 1 / 16, ENVIRON["asd"] == "" ? "-" : sprintf("%.1f", sv / tk * 1e6 / n)}' >>"$tmp/rows"
	done
}

: >"$tmp/rows"
for round in $(seq "$ROUNDS"); do
	echo "round $round of $ROUNDS" >&2
	TESTS=get,set,incr
	rb "respike-c50" -c 50
	[ -n "${BASE:-}" ] && RBPID=$bpid RBPORT=$BPORT rb "base-c50" -c 50
	direct "direct-1" DirectClient
	[ -n "${DIRECT_PROCS:-}" ] && GOMAXPROCS=$DIRECT_PROCS direct "direct-1p" DirectClient
	rb "respike-c50-P16" -c 50 -P 16
	[ -n "${BASE:-}" ] && RBPID=$bpid RBPORT=$BPORT rb "base-c50-P16" -c 50 -P 16
	direct "direct-16" DirectClientBatch
	RESPIKE_BENCH_INLINE_SSD=1 direct "direct-16i" DirectClientBatch
	rb "respike-c1" -c 1
	[ -n "${BASE:-}" ] && RBPID=$bpid RBPORT=$BPORT rb "base-c1" -c 1
	rb "respike-c1-P16" -c 1 -P 16
	[ -n "${BASE:-}" ] && RBPID=$bpid RBPORT=$BPORT rb "base-c1-P16" -c 1 -P 16
	if [ -n "$SUITE" ]; then
		TESTS=$SUITE
		# Each pass starts from empty hot keys, as redis-benchmark's
		# default run on an empty server does: its SADD, HSET and ZADD
		# grow one record by up to -r members, and passes piled on one
		# record would reach the namespace's record size (1 MiB by
		# default: ~45,000 set members), past which writes answer code 13
		# (docs/compatibility.md).
		hot() { redis-cli -p "$PPORT" del myset myhash mylist myzset >/dev/null; }
		hot
		rb "suite-c50" -c 50
		hot
		rb "suite-c50-P16" -c 50 -P 16
	fi
done

python3 - "$tmp/rows" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 8:
        continue
    r = rows.setdefault(f[0], [[], [], [], [], [], [], []])
    for i, v in enumerate(f[1:]):
        try:
            r[i].append(float(v))
        except ValueError:
            pass

def mm(vals, fmt):
    if not vals:
        return "-"
    return (fmt + " / " + fmt) % (min(vals), statistics.median(vals))

print("%-22s %22s %14s %16s %16s %14s %14s %14s" % ("run/test", "rate/s min / median", "cpu µs/cmd", "p50 ms", "p99 ms", "rb cpu µs/cmd", "calls/cmd", "asd µs/cmd"))
for k in sorted(rows):
    r = rows[k]
    print("%-22s %22s %14s %16s %16s %14s %14s %14s" % (k, mm(r[0], "%.0f"), mm(r[1], "%.1f"), mm(r[2], "%.3f"), mm(r[3], "%.3f"), mm(r[4], "%.1f"), mm(r[5], "%.3f"), mm(r[6], "%.1f")))
print("(cpu: the daemon's, or the direct client's whole process, per command or record; rb cpu: redis-benchmark's;")
print(" calls/cmd: Aerospike calls the daemon made per command, single and batch;")
print(" asd: the Aerospike server's CPU per command or record, when it runs on this machine)")

print("\nratios (min / median over rounds of the per-round ratio; targets: unpipelined >= 1.0, -P 16 >= 0.5)")
for ours, theirs in (("respike-c50", "direct-1"), ("respike-c50", "direct-1p"), ("base-c50", "direct-1"), ("base-c50", "direct-1p"), ("respike-c50-P16", "direct-16"), ("respike-c50-P16", "direct-16i"), ("respike-c50", "base-c50"), ("respike-c50-P16", "base-c50-P16")):
    for t in ("GET", "SET", "INCR"):
        a, b = rows.get(ours + "/" + t), rows.get(theirs + "/" + t)
        if not a or not b:
            continue
        q = [x / y for x, y in zip(a[0], b[0]) if y]
        print("%-18s %-5s %.2f / %.2f" % (ours + " ÷ " + theirs, t, min(q), statistics.median(q)))
PY
errs=$(redis-cli -p "$PPORT" info stats | tr -d '\r' | awk -F: '/total_error_replies/ {print $2}')
echo "error replies through respike: $errs"
if [ -n "${BASE:-}" ]; then
	errs=$(redis-cli -p "$BPORT" info stats | tr -d '\r' | awk -F: '/total_error_replies/ {print $2}')
	echo "error replies through the base build: $errs"
fi
# Each run leaves ~100,000 records per daemon; Aerospike CE scans the whole
# namespace for a set's DBSIZE, KEYS and SCAN, so records left behind slow
# those down for everyone sharing the server. FLUSHALL truncates the
# daemons' own sets (the direct client's set is left: KEEP=1 keeps all).
if [ -z "${KEEP:-}" ]; then
	redis-cli -p "$PPORT" flushall >/dev/null
	if [ -n "${BASE:-}" ]; then redis-cli -p "$BPORT" flushall >/dev/null; fi
fi
