#!/usr/bin/env bash
# Profiles a host/module benchmark with perf, guest code included: wazero's
# perfmap build tag names the JIT-compiled code by wasm function (Go
# function names of the module), so the report shows where a command's time
# goes on both sides of the ABI. Needs Linux perf (Debian: linux-perf).
#
#   scripts/profile-guest.sh 'ExecStrings/GET$'      # default
#   N=4000000 scripts/profile-guest.sh 'ExecStrings/SET$'
#
# Prints the share of samples per function, guest functions marked G:, and
# the guest's total. The compilation cache is bypassed (a cache hit emits no
# perf map) and the first 25 s, spent compiling, are not recorded.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${1:-ExecStrings/GET\$}
N=${N:-6000000}
command -v perf >/dev/null || { echo "profile-guest: perf missing: apt-get install linux-perf" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -tags perfmap -c -o "$tmp/bench" ./host/module
(cd host/module && XDG_CACHE_HOME="$tmp/cache" perf record -q -D 25000 -o "$tmp/perf.data" \
	"$tmp/bench" -test.run '^$' -test.bench "$BENCH" -test.benchtime "${N}x" | grep '^Benchmark')
perf report -i "$tmp/perf.data" --no-children --sort sym --comm bench 2>/dev/null | awk '
	/^#/ || !/%/ { next }
	{
		pct = $1; sub(/%/, "", pct)
		name = $0; sub(/^[^]]*\] +/, "", name)       # drop "pct [.] "
		guest = name ~ /^\[[0-9]+\/[0-9]+\]/          # perf map entries of wasm functions
		sub(/^\[[0-9]+\/[0-9]+\]\.?/, "", name); sub(/:::::.*/, "", name)
		if (guest) { name = "G:" name; g += pct } else h += pct
		sum[name] += pct
	}
	END {
		printf "guest %.1f%%  host %.1f%%\n", g, h
		for (n in sum) printf "%6.2f %s\n", sum[n], n | "sort -rn | head -40"
	}'
