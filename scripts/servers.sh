# Sourced by the benchmark scripts (bench.sh, bench-guest.sh): runs
# redis-server and a respike daemon side by side on free loopback ports.
#
#   servers_init NAME          # checks the tools, makes $tmp, stops all on exit
#   servers_start CONFIG       # starts both; sets RPORT (redis) and PPORT (respike)
#   "${LOAD[@]}" CMD ARGS...   # runs the load generator CMD on its own CPUs
#
# PIN=1 (the default on a machine of 2 CPUs or more) gives both servers the same
# one CPU (SERVER_CPUS, default the last) and the load generator the others
# (LOAD_CPUS), with taskset: redis-server's event loop uses one CPU, and respike
# runs as many threads as CPUs it may use (Go's default honours the affinity), so
# both are compared per CPU, and neither competes with redis-benchmark for its
# CPU. PIN=0 lets the kernel place all three, as a shared machine does.

servers_init() {
	name=$1
	for tool in redis-server redis-benchmark redis-cli; do
		command -v "$tool" >/dev/null || { echo "$name: $tool missing: apt-get install redis-server redis-tools" >&2; exit 1; }
	done
	[ -x bin/respike ] || { echo "$name: bin/respike missing: make build commands" >&2; exit 1; }
	tmp=$(mktemp -d)
	trap servers_stop EXIT
	SERVER_PIN=() LOAD=()
	local n
	n=$(nproc)
	if [ "${PIN:-$([ "$n" -ge 2 ] && echo 1 || echo 0)}" = 1 ]; then
		command -v taskset >/dev/null || { echo "$name: taskset missing (util-linux), or PIN=0" >&2; exit 1; }
		SERVER_CPUS=${SERVER_CPUS:-$((n - 1))}
		LOAD_CPUS=${LOAD_CPUS:-0-$((n - 2))}
		SERVER_PIN=(taskset -c "$SERVER_CPUS")
		LOAD=(taskset -c "$LOAD_CPUS")
		echo "$name: servers on CPU $SERVER_CPUS, the load generator on $LOAD_CPUS (PIN=0 to share)" >&2
	fi
}

servers_stop() {
	kill "${rpid:-}" "${ppid_:-}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

servers_start() {
	RPORT=$(free_port)
	PPORT=$(free_port)
	"${SERVER_PIN[@]}" redis-server --port "$RPORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
	rpid=$!
	"${SERVER_PIN[@]}" ./bin/respike -config "$1" -listen "127.0.0.1:$PPORT" >"$tmp/respike.log" 2>&1 &
	ppid_=$!
	for port in "$RPORT" "$PPORT"; do
		for _ in $(seq 1200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
		redis-cli -p "$port" ping >/dev/null || { echo "$name: server on $port did not start"; cat "$tmp"/*.log; exit 1; }
	done
	# Modules load after the listener opens: ready when GET answers.
	for _ in $(seq 600); do
		r=$(redis-cli -p "$PPORT" get servers-probe 2>&1 || true)
		[ "${r#ERR}" = "$r" ] && return
		sleep 0.1
	done
	echo "$name: respike's modules did not load"; cat "$tmp/respike.log"; exit 1
}
