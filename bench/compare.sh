#!/usr/bin/env bash
# compare.sh: the executor's throughput against asynq's (bench/asynq), back to back on one private
# redis-server, ROUNDS times, one line per round.
#
# Each round: (a) FLUSHALL, start `executor serve` on that Redis, wait for /readyz, run
# `executor bench --url ... -o json` through its HTTP API (TENANTS × STAGES noop stages), stop
# serve with SIGTERM; (b) FLUSHALL, run asynqbench with TENANTS × STAGES noop tasks.
#
# Environment (all optional):
#   REDIS_PORT         port of the private redis-server (default 16400; the next free one if
#                      16400 is taken and REDIS_PORT was not set)
#   API_PORT           port of executor serve (default 18480, same rule)
#   ROUNDS             rounds (default 3)
#   WORKERS            executor serve --workers (default 64)
#   TENANTS, STAGES    the executor's plan (default 10000 × 10); asynq gets TENANTS × STAGES tasks
#   ASYNQ_CONCURRENCY  asynq server concurrency (default 100)
#   EXECUTOR_BENCH_ARGS extra arguments for executor bench (word-split)
#   ASYNQ_ARGS         extra arguments for asynqbench (word-split), e.g. "--payload 64"
#   ONLY               "asynq" or "executor": run only that side
#   OUT_DIR            if set, each round's JSON is kept there
#
# It runs from anywhere: it changes to the repository root (the parent of this script's folder).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
WORKERS=${WORKERS:-64}
TENANTS=${TENANTS:-10000}
STAGES=${STAGES:-10}
ASYNQ_CONCURRENCY=${ASYNQ_CONCURRENCY:-100}
ONLY=${ONLY:-}
TASKS=$((TENANTS * STAGES))

case "$ONLY" in
"" | asynq | executor) ;;
*)
	echo "compare.sh: ONLY must be asynq, executor or empty, not '$ONLY'" >&2
	exit 2
	;;
esac
run_executor() { [[ -z $ONLY || $ONLY == executor ]]; }
run_asynq() { [[ -z $ONLY || $ONLY == asynq ]]; }

for tool in redis-server redis-cli go curl; do
	command -v "$tool" >/dev/null || {
		echo "compare.sh: $tool not found" >&2
		exit 1
	}
done

# port_in_use PORT: something listens on 127.0.0.1:PORT.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# pick_port NAME DEFAULT: the port in $NAME if set (it must be free), else DEFAULT or the next free
# one above it.
pick_port() {
	local name=$1 port=$2
	if [[ -n ${!name:-} ]]; then
		port=${!name}
		if port_in_use "$port"; then
			echo "compare.sh: $name=$port is in use" >&2
			return 1
		fi
		echo "$port"
		return
	fi
	while port_in_use "$port"; do
		port=$((port + 1))
	done
	echo "$port"
}

# jget FILE KEY: the first value of KEY found anywhere in the JSON of FILE ("" if none).
if command -v jq >/dev/null; then
	jget() {
		jq -r --arg k "$2" '[.. | objects | select(has($k)) | .[$k]][0] // empty' "$1"
	}
else
	jget() {
		python3 - "$1" "$2" <<'EOF'
import json, sys

def find(v, k):
    if isinstance(v, dict):
        if k in v:
            return v[k]
        v = list(v.values())
    if isinstance(v, list):
        for x in v:
            r = find(x, k)
            if r is not None:
                return r
    return None

r = find(json.load(open(sys.argv[1])), sys.argv[2])
print("" if r is None else r)
EOF
	}
fi

# fmt1 NUMBER: the number with one decimal ("-" if empty).
fmt1() { if [[ -n $1 ]]; then printf '%.1f' "$1"; else printf -- '-'; fi; }
# fmt0 NUMBER: the number rounded to an integer ("-" if empty).
fmt0() { if [[ -n $1 ]]; then printf '%.0f' "$1"; else printf -- '-'; fi; }

REDIS_PORT=$(pick_port REDIS_PORT 16400)
API_PORT=$(pick_port API_PORT 18480)
REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
TMP=$(mktemp -d)
REDIS_PID=""
SERVE_PID=""

cleanup() {
	local rc=$?
	if [[ -n $SERVE_PID ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
		kill -TERM "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	if [[ -n $REDIS_PID ]] && kill -0 "$REDIS_PID" 2>/dev/null; then
		kill -TERM "$REDIS_PID" 2>/dev/null || true
		wait "$REDIS_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
	>"$TMP/redis.log" 2>&1 &
REDIS_PID=$!
for _ in $(seq 100); do
	redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
	kill -0 "$REDIS_PID" 2>/dev/null || {
		echo "compare.sh: redis-server exited:" >&2
		cat "$TMP/redis.log" >&2
		exit 1
	}
	sleep 0.1
done
redis-cli -p "$REDIS_PORT" ping >/dev/null

echo "building into $TMP ..." >&2
if run_executor; then
	go build -o "$TMP/executor" ./cmd/executor
fi
if run_asynq; then
	(cd bench/asynq && go build -o "$TMP/asynqbench" .)
fi

echo "redis-server $(redis-server --version | awk '{print $3}') on port $REDIS_PORT; $ROUNDS rounds; executor: $TENANTS tenants × $STAGES stages, $WORKERS workers; asynq: $TASKS tasks, concurrency $ASYNQ_CONCURRENCY; $(nproc) cores"
printf '%-5s | %12s %9s %9s %8s | %9s %9s %9s %8s | %6s\n' \
	round "exec trans/s" "execCPUµs" "redisCPUµs" "redisCmd" "asynq t/s" "asynqCPUµs" "redisCPUµs" "redisCmd" ratio
printf '%-5s | %12s %9s %9s %8s | %9s %9s %9s %8s | %6s\n' \
	"" "" "/trans" "/trans" "/trans" "" "/task" "/task" "/task" "ex/aq"

for i in $(seq "$ROUNDS"); do
	ex_tps="" ex_cpu="" ex_rcpu="" ex_cmd=""
	aq_tps="" aq_cpu="" aq_rcpu="" aq_cmd=""

	if run_executor; then
		redis-cli -p "$REDIS_PORT" flushall >/dev/null
		"$TMP/executor" serve --redis "$REDIS_URL" --addr "127.0.0.1:$API_PORT" --workers "$WORKERS" \
			>"$TMP/serve-$i.log" 2>&1 &
		SERVE_PID=$!
		ready=""
		for _ in $(seq 300); do
			if curl -fs "http://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1; then
				ready=1
				break
			fi
			kill -0 "$SERVE_PID" 2>/dev/null || break
			sleep 0.1
		done
		if [[ -z $ready ]]; then
			echo "compare.sh: executor serve did not become ready; its log:" >&2
			tail -n 50 "$TMP/serve-$i.log" >&2
			exit 1
		fi
		# shellcheck disable=SC2086 # EXECUTOR_BENCH_ARGS is word-split on purpose
		if ! "$TMP/executor" bench --url "http://127.0.0.1:$API_PORT" --redis "$REDIS_URL" \
			--tenants "$TENANTS" --stages "$STAGES" ${EXECUTOR_BENCH_ARGS:-} -o json \
			>"$TMP/executor-$i.json" 2>"$TMP/executor-$i.err"; then
			echo "compare.sh: executor bench failed:" >&2
			cat "$TMP/executor-$i.err" >&2
			exit 1
		fi
		kill -TERM "$SERVE_PID"
		wait "$SERVE_PID" || true
		SERVE_PID=""
		ex_tps=$(jget "$TMP/executor-$i.json" transitionsPerSec)
		ex_cpu=$(jget "$TMP/executor-$i.json" executorCpuUsPerTransition)
		ex_rcpu=$(jget "$TMP/executor-$i.json" redisCpuUsPerTransition)
		ex_cmd=$(jget "$TMP/executor-$i.json" redisCommandsPerTransition)
	fi

	if run_asynq; then
		redis-cli -p "$REDIS_PORT" flushall >/dev/null
		# shellcheck disable=SC2086 # ASYNQ_ARGS is word-split on purpose
		if ! "$TMP/asynqbench" --redis "$REDIS_URL" --tasks "$TASKS" --concurrency "$ASYNQ_CONCURRENCY" \
			${ASYNQ_ARGS:-} -o json >"$TMP/asynq-$i.json" 2>"$TMP/asynq-$i.err"; then
			echo "compare.sh: asynqbench failed:" >&2
			cat "$TMP/asynq-$i.err" >&2
			exit 1
		fi
		aq_tps=$(jget "$TMP/asynq-$i.json" tasksPerSec)
		aq_cpu=$(jget "$TMP/asynq-$i.json" asynqCpuUsPerTask)
		aq_rcpu=$(jget "$TMP/asynq-$i.json" redisCpuUsPerTask)
		aq_cmd=$(jget "$TMP/asynq-$i.json" redisCommandsPerTask)
	fi

	ratio="-"
	if [[ -n $ex_tps && -n $aq_tps ]]; then
		ratio=$(awk -v a="$ex_tps" -v b="$aq_tps" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
	fi
	printf '%-5s | %12s %9s %9s %8s | %9s %9s %9s %8s | %6s\n' "$i" \
		"$(fmt0 "$ex_tps")" "$(fmt1 "$ex_cpu")" "$(fmt1 "$ex_rcpu")" "$(fmt1 "$ex_cmd")" \
		"$(fmt0 "$aq_tps")" "$(fmt1 "$aq_cpu")" "$(fmt1 "$aq_rcpu")" "$(fmt1 "$aq_cmd")" "$ratio"

	if [[ -n ${OUT_DIR:-} ]]; then
		mkdir -p "$OUT_DIR"
		for f in "$TMP/executor-$i.json" "$TMP/asynq-$i.json"; do
			if [[ -f $f ]]; then cp "$f" "$OUT_DIR/"; fi
		done
	fi
done
