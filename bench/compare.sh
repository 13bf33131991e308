#!/usr/bin/env bash
# compare.sh: the executor's throughput against asynq's (bench/asynq), back to back on one private
# redis-server, at each concurrency of CONCURRENCIES, ROUNDS times: one line per round and
# concurrency, then one summary line per concurrency.
#
# Each round runs, for each concurrency C of CONCURRENCIES in turn: (a) FLUSHALL, start
# `executor serve --workers C` on that Redis, wait for /readyz, run `executor bench --url ...
# --concurrency C -o json` through its HTTP API (TENANTS × STAGES noop stages, the plan's
# maxConcurrency C), stop serve with SIGTERM; (b) FLUSHALL, run `asynqbench --concurrency C`
# with TENANTS × STAGES noop tasks. The ratio is the executor's stage transitions/s over asynq's
# tasks/s (one stage transition against one asynq task). The summary gives, per concurrency, the
# median over the rounds of the executor's transitions/s, of asynq's tasks/s and of the
# per-round ratios, how many rounds reached 2×, and whether the median ratio meets the target
# of issue 38: ≥ 2 × asynq's tasks/s.
#
# Environment (all optional):
#   REDIS_PORT         port of the private redis-server (default 16400; the next free one if
#                      16400 is taken and REDIS_PORT was not set)
#   API_PORT           port of executor serve (default 18480, same rule)
#   ROUNDS             rounds (default 3)
#   CONCURRENCIES      the concurrencies, space-separated, each 1 – 1000 (default "100 500"); C
#                      is serve's --workers, bench's --concurrency and asynqbench's --concurrency
#   WORKERS            if set: executor serve --workers at every concurrency, instead of C
#   ASYNQ_CONCURRENCY  if set: asynqbench --concurrency at every concurrency, instead of C
#   TENANTS, STAGES    the executor's plan (default 10000 × 10); asynq gets TENANTS × STAGES tasks
#   EXECUTOR_BENCH_ARGS extra arguments for executor bench (word-split)
#   ASYNQ_ARGS         extra arguments for asynqbench (word-split), e.g. "--payload 64"
#   ONLY               "asynq" or "executor": run only that side (then there is no ratio)
#   OUT_DIR            if set, each round's JSON is kept there, as executor-r<round>-c<C>.json
#                      and asynq-r<round>-c<C>.json
#
# It runs from anywhere: it changes to the repository root (the parent of this script's folder).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

ROUNDS=${ROUNDS:-3}
CONCURRENCIES=${CONCURRENCIES:-100 500}
WORKERS=${WORKERS:-}
TENANTS=${TENANTS:-10000}
STAGES=${STAGES:-10}
ASYNQ_CONCURRENCY=${ASYNQ_CONCURRENCY:-}
ONLY=${ONLY:-}

# positive_int NAME VALUE [MAX]: VALUE is a whole number ≥ 1 (and ≤ MAX), or the script exits.
positive_int() {
	if [[ ! $2 =~ ^[1-9][0-9]{0,8}$ ]] || { [[ -n ${3:-} ]] && (($2 > $3)); }; then
		local want="of at least 1"
		if [[ -n ${3:-} ]]; then want="from 1 to $3"; fi
		echo "compare.sh: $1 must be a whole number $want, not '$2'" >&2
		exit 2
	fi
}
positive_int ROUNDS "$ROUNDS"
positive_int TENANTS "$TENANTS"
positive_int STAGES "$STAGES"
read -r -a CONCS <<<"$CONCURRENCIES"
if ((${#CONCS[@]} == 0)); then
	echo "compare.sh: CONCURRENCIES is empty" >&2
	exit 2
fi
for c in "${CONCS[@]}"; do
	positive_int "each of CONCURRENCIES" "$c" 1000 # executor bench takes --concurrency up to 1000
done
if [[ -n $WORKERS ]]; then positive_int WORKERS "$WORKERS"; fi
if [[ -n $ASYNQ_CONCURRENCY ]]; then positive_int ASYNQ_CONCURRENCY "$ASYNQ_CONCURRENCY"; fi
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
# fmtx NUMBER: the number with two decimals and an x ("-" if empty).
fmtx() { if [[ -n $1 ]]; then printf '%.2fx' "$1"; else printf -- '-'; fi; }
# median NUMBER...: the median of the numbers ("" if none; the mean of the middle two if even).
median() {
	(($# > 0)) || return 0
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { if (NR % 2) m = v[(NR + 1) / 2]; else m = (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.6f\n", m }'
}

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

# The rows' format: round, concurrency | executor | asynq | ratio.
ROW='%-5s %5s | %12s %9s %9s %8s | %9s %9s %9s %8s | %6s\n'
echo "redis-server $(redis-server --version | awk '{print $3}') on port $REDIS_PORT; $ROUNDS rounds at concurrency ${CONCS[*]}; executor: $TENANTS tenants × $STAGES stages, serve --workers ${WORKERS:-C}, bench --concurrency C; asynq: $TASKS tasks, --concurrency ${ASYNQ_CONCURRENCY:-C}; $(nproc) cores"
# shellcheck disable=SC2059 # ROW is the format
printf "$ROW" round conc "exec trans/s" "execCPUµs" "redisCPUµs" "redisCmd" "asynq t/s" "asynqCPUµs" "redisCPUµs" "redisCmd" ratio
# shellcheck disable=SC2059
printf "$ROW" "" "" "" "/trans" "/trans" "/trans" "" "/task" "/task" "/task" "ex/aq"

# Per concurrency, the rounds' values, space-separated, for the summary.
declare -A EX_TPS=() AQ_TPS=() RATIOS=()

for i in $(seq "$ROUNDS"); do
	for c in "${CONCS[@]}"; do
		run="r$i-c$c"
		workers=${WORKERS:-$c}
		asynq_conc=${ASYNQ_CONCURRENCY:-$c}
		ex_tps="" ex_cpu="" ex_rcpu="" ex_cmd=""
		aq_tps="" aq_cpu="" aq_rcpu="" aq_cmd=""

		if run_executor; then
			redis-cli -p "$REDIS_PORT" flushall >/dev/null
			"$TMP/executor" serve --redis "$REDIS_URL" --addr "127.0.0.1:$API_PORT" --workers "$workers" \
				>"$TMP/serve-$run.log" 2>&1 &
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
				echo "compare.sh: executor serve did not become ready (round $i, concurrency $c); its log:" >&2
				tail -n 50 "$TMP/serve-$run.log" >&2
				exit 1
			fi
			# shellcheck disable=SC2086 # EXECUTOR_BENCH_ARGS is word-split on purpose
			if ! "$TMP/executor" bench --url "http://127.0.0.1:$API_PORT" --redis "$REDIS_URL" \
				--tenants "$TENANTS" --stages "$STAGES" --concurrency "$c" ${EXECUTOR_BENCH_ARGS:-} -o json \
				>"$TMP/executor-$run.json" 2>"$TMP/executor-$run.err"; then
				echo "compare.sh: executor bench failed (round $i, concurrency $c):" >&2
				cat "$TMP/executor-$run.err" >&2
				exit 1
			fi
			kill -TERM "$SERVE_PID"
			wait "$SERVE_PID" || true
			SERVE_PID=""
			ex_tps=$(jget "$TMP/executor-$run.json" transitionsPerSec)
			ex_cpu=$(jget "$TMP/executor-$run.json" executorCpuUsPerTransition)
			ex_rcpu=$(jget "$TMP/executor-$run.json" redisCpuUsPerTransition)
			ex_cmd=$(jget "$TMP/executor-$run.json" redisCommandsPerTransition)
			if [[ -n $ex_tps ]]; then EX_TPS[$c]+=" $ex_tps"; fi
		fi

		if run_asynq; then
			redis-cli -p "$REDIS_PORT" flushall >/dev/null
			# shellcheck disable=SC2086 # ASYNQ_ARGS is word-split on purpose
			if ! "$TMP/asynqbench" --redis "$REDIS_URL" --tasks "$TASKS" --concurrency "$asynq_conc" \
				${ASYNQ_ARGS:-} -o json >"$TMP/asynq-$run.json" 2>"$TMP/asynq-$run.err"; then
				echo "compare.sh: asynqbench failed (round $i, concurrency $c):" >&2
				cat "$TMP/asynq-$run.err" >&2
				exit 1
			fi
			aq_tps=$(jget "$TMP/asynq-$run.json" tasksPerSec)
			aq_cpu=$(jget "$TMP/asynq-$run.json" asynqCpuUsPerTask)
			aq_rcpu=$(jget "$TMP/asynq-$run.json" redisCpuUsPerTask)
			aq_cmd=$(jget "$TMP/asynq-$run.json" redisCommandsPerTask)
			if [[ -n $aq_tps ]]; then AQ_TPS[$c]+=" $aq_tps"; fi
		fi

		ratio=""
		if [[ -n $ex_tps && -n $aq_tps ]]; then
			ratio=$(awk -v a="$ex_tps" -v b="$aq_tps" 'BEGIN { if (b > 0) printf "%.6f", a / b }')
			if [[ -n $ratio ]]; then RATIOS[$c]+=" $ratio"; fi
		fi
		# shellcheck disable=SC2059 # ROW is the format
		printf "$ROW" "$i" "$c" \
			"$(fmt0 "$ex_tps")" "$(fmt1 "$ex_cpu")" "$(fmt1 "$ex_rcpu")" "$(fmt1 "$ex_cmd")" \
			"$(fmt0 "$aq_tps")" "$(fmt1 "$aq_cpu")" "$(fmt1 "$aq_rcpu")" "$(fmt1 "$aq_cmd")" "$(fmtx "$ratio")"

		if [[ -n ${OUT_DIR:-} ]]; then
			mkdir -p "$OUT_DIR"
			for f in "$TMP/executor-$run.json" "$TMP/asynq-$run.json"; do
				if [[ -f $f ]]; then cp "$f" "$OUT_DIR/"; fi
			done
		fi
	done
done

# The summary: per concurrency, the medians over the rounds and the target of issue 38.
echo
echo "median of $ROUNDS rounds; ratio: the median of the rounds' ratios; target (issue 38): ratio ≥ 2×"
SUM='%5s | %12s | %9s | %6s | %10s | %s\n'
# shellcheck disable=SC2059 # SUM is the format
printf "$SUM" conc "exec trans/s" "asynq t/s" ratio "rounds ≥2×" "meets ≥ 2×"
all_met=1
for c in "${CONCS[@]}"; do
	read -r -a ex <<<"${EX_TPS[$c]:-}"
	read -r -a aq <<<"${AQ_TPS[$c]:-}"
	read -r -a rs <<<"${RATIOS[$c]:-}"
	m_ratio=$(median "${rs[@]}")
	met="-" verdict="-"
	if [[ -n $m_ratio ]]; then
		met="$(printf '%s\n' "${rs[@]}" | awk '$1 >= 2 { n++ } END { print n + 0 }')/${#rs[@]}"
		if awk -v r="$m_ratio" 'BEGIN { exit !(r >= 2) }'; then verdict=yes; else verdict=no; fi
	fi
	[[ $verdict == yes ]] || all_met=""
	# shellcheck disable=SC2059 # SUM is the format
	printf "$SUM" "$c" "$(fmt0 "$(median "${ex[@]}")")" "$(fmt0 "$(median "${aq[@]}")")" \
		"$(fmtx "$m_ratio")" "$met" "$verdict"
done
if [[ -z $ONLY ]]; then
	echo "target ≥ 2× at every concurrency (${CONCS[*]}): $([[ -n $all_met ]] && echo met || echo not met)"
fi
