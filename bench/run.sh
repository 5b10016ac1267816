#!/usr/bin/env bash
# planrun against its peers (wrk, oha) on one machine, over loopback only.
#
#   bench/run.sh                       # everything, 3 runs of 10 s per figure (about 14 minutes)
#   RUNS=1 DURATION=5 bench/run.sh     # a quick check (about 3 minutes)
#   PEERS=0 BASE=<planrun before --cores> bench/run.sh   # the `--cores` figures alone (about 8 minutes)
#
# What it does:
#   1. installs what is missing: wrk, nginx-light, GNU time, jq (and linux-perf, if it can) from Debian
#      (apt-get), oha from crates.io (cargo install, a few minutes the first time, then kept in ~/.cargo/bin),
#      and builds planrun --release (a copy of the binary is measured, so rebuilds meanwhile do not matter);
#   2. starts the targets on core 0: nginx (one process, `return 200 "ok"`, keep-alive without limit) and
#      planrun's own stub answering every request after exactly 50 ms (bench/stubs/delay50.yaml);
#   3. runs each load generator pinned to core 1, under /usr/bin/time (user+sys CPU seconds, peak RSS), each
#      run bounded by DURATION seconds, and takes the median of RUNS runs of every figure;
#   4. prints one markdown table and the ratios of planrun to its peers (docs/performance.md explains them).
#
# planrun runs a realistic plan (bench/plans/throughput.yaml): every request renders a templated query,
# is checked by a `status: 200` assertion and becomes a row of a JTL file; bench/plans/throughput-post.yaml
# also renders a templated POST body, and bench/plans/bare.yaml (GET /, nothing rendered, nothing checked)
# shows what the templates and the assertion cost. A run with BIG (19,000) virtual users shows that that
# many connections work, and bench/profile.sh (when perf works) shows where planrun's CPU goes.
#
# Then the `--cores` figures (planrun's users spread over one runtime per core), each against the same nginx:
#   a. CPU per request with `--cores 1` against BASE, a build from before `--cores` existed (pairs of runs
#      of the GET plan on the generator core, in turns; the median of the pairs' ratios), and when valgrind
#      is there, instructions per request of both, and of `--cores` = every core (callgrind, 10 users x
#      3,000 requests, one run each);
#   b. a generator-bound run: bench/plans/json-body.yaml (a ~10 KB JSON body rendered per request), planrun
#      on every core (ALL_CPUS) and nginx still on core 0, requests/s with `--cores` = every core against
#      `--cores 1` and against one process per core (`--segment I/N --cores 1`, the ceiling of the machine
#      for the same users), each ratio the median of the rounds' ratios; planrun's and nginx's CPU in % of
#      one core;
#   c. peak RSS of 10,000 users (GET plan, keep-alive, ramp-up 2 s) with `--cores` = every core and 1;
#   d. a stalled JTL output: `-o` a FIFO read by a `cat` that is stopped (SIGSTOP) for STALL seconds mid-run,
#      with `--cores` = every core and 1: the longest gap between request starts in the JTL, and how many
#      samples waited for the writer ("Results writer fell behind").
#
# Environment: RUNS (3), DURATION (seconds, 10), GAP (seconds of rest before each run, 2), SKIP_INSTALL=1
# (use what is on PATH), PLANRUN (binary to measure, default target/release/planrun after `cargo build
# --release`), SERVER_CPU (0), CLIENT_CPU (1),
# BIG (19000: virtual users of the "many users" run, 0 skips it), PROFILE (0 skips the profile of planrun's
# 50-connection run by bench/profile.sh, which otherwise runs when perf works), KEEP=1 (keep the work
# directory with every tool's raw output), PEERS (0 skips the comparison with wrk and oha, leaving the
# `--cores` figures), CORES (0 skips the `--cores` figures), BASE (a planrun binary from before `--cores`,
# for figure a; unset skips it), ALL_CPUS (the CPUs of figures b-d, default all), CALLGRIND (0 skips the
# instruction counts), STALL (seconds, 2), PARTS (which `--cores` figures, "a b c d"; `PARTS=b` repeats the
# generator-bound one alone, about 30 s a run). Needs root for apt-get, or the tools already installed.
# Stops every process it starts, by PID, on exit. A generator that fails is reported in the table; the
# exit status is non-zero only when a target cannot start or the script itself fails.
set -euo pipefail

RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BIG=${BIG:-19000}
PEERS=${PEERS:-1}
CORES=${CORES:-1}
PARTS=" ${PARTS:-a b c d} "
ALL_CPUS=${ALL_CPUS:-0-$(($(nproc) - 1))}
STALL=${STALL:-2}
GAP=${GAP:-2}
CONNS=50
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/planrun-bench.XXXXXX")
PIDS=()

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true # a FIFO reader of the stall run may be stopped
    kill -INT "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [[ ${KEEP:-0} == 1 ]]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------- installs
install_peers() {
  local apt=()
  command -v wrk >/dev/null || apt+=(wrk)
  command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || apt+=(nginx-light)
  [[ -x /usr/bin/time ]] || apt+=(time)
  command -v jq >/dev/null || apt+=(jq)
  command -v taskset >/dev/null || apt+=(util-linux)
  if ((${#apt[@]})); then
    log "apt-get install ${apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt[@]}" >/dev/null
  fi
  if [[ ${PROFILE:-auto} != 0 ]] && ! command -v perf >/dev/null; then
    log "apt-get install linux-perf (for bench/profile.sh; the benchmark goes on without it)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-perf >/dev/null 2>&1; } || log "no perf: no profile"
  fi
  if ! command -v oha >/dev/null && [[ ! -x $HOME/.cargo/bin/oha ]]; then
    log "cargo install oha --locked (a few minutes, once)"
    cargo install oha --locked --quiet
  fi
}
[[ ${SKIP_INSTALL:-0} == 1 ]] || install_peers
export PATH="$PATH:$HOME/.cargo/bin:/usr/sbin"
NGINX=$(command -v nginx)
if [[ -z ${PLANRUN:-} ]]; then
  log "cargo build --release"
  (cd "$ROOT" && cargo build --release --quiet)
  PLANRUN="$ROOT/target/release/planrun"
fi
# A copy, so that a rebuild in the work tree during the benchmark does not change what is measured.
cp "$PLANRUN" "$WORK/planrun"
PLANRUN="$WORK/planrun"
if [[ -n ${BASE:-} ]]; then cp "$BASE" "$WORK/planrun-base"; BASE="$WORK/planrun-base"; fi

# File descriptors: 10,000 and 19,000 connections need them, on both ends.
ulimit -n "$(ulimit -Hn)"
NOFILE=$(ulimit -n)

# ---------------------------------------------------------------------------------------------- helpers
# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local p
  for ((p = $1; p < $1 + 1000; p++)); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}

wait_http() { # URL: waits up to 10 s for an answer
  local i
  for i in $(seq 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/${1##*:}") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  log "nothing listens on $1"; return 1
}

median() { # numbers on stdin -> their median ("-" when none)
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-" } else if (NR % 2) { print v[(NR + 1) / 2] } else { print (v[NR / 2] + v[NR / 2 + 1]) / 2 } }'
}

# put KEY VALUE: one figure of one run; get KEY: the median of its runs.
put() { echo "$2" >>"$WORK/fig.$1"; }
get() { if [[ -s $WORK/fig.$1 ]]; then median <"$WORK/fig.$1"; else echo "-"; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
# nginx's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
nginx_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$NGINX_PID/stat" 2>/dev/null || echo 0; }
fmt() { # PRINTF-FORMAT VALUE: formats a number, passes "-" through
  if [[ $2 == - || -z $2 ]]; then echo "-"; else LC_ALL=C printf "$1" "$2"; fi
}

# timed NAME COMMAND...: runs COMMAND pinned to the client core (or to the CPUs in PIN) under GNU time; output
# in $WORK/NAME.{out,time}. Sets WALL, CPU (user+sys seconds), RSS_KIB. Never fails: a failed run is recorded
# by its caller.
timed() {
  local name=$1; shift
  local rc=0
  taskset -c "${PIN:-$CLIENT_CPU}" /usr/bin/time -o "$WORK/$name.time" -f "%e %U %S %M" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
  read -r WALL U S RSS_KIB <"$WORK/$name.time" 2>/dev/null || { WALL=0 U=0 S=0 RSS_KIB=0; }
  # GNU time writes "Command exited with non-zero status N" first when the command failed.
  if ! [[ $WALL =~ ^[0-9.]+$ ]]; then read -r WALL U S RSS_KIB < <(tail -n1 "$WORK/$name.time"); fi
  CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { print u + s }')
  return $rc
}

# Latency text of wrk ("812.00us", "50.21ms", "1.02s") -> ms.
wrk_ms() { awk -v t="$1" 'BEGIN { v = t + 0; if (t ~ /us$/) v /= 1000; else if (t ~ /ms$/) v += 0; else if (t ~ /s$/) v *= 1000; print v }'; }

# ---------------------------------------------------------------------------------------------- generators
# Each sets REQS (completed requests, as the tool counts them) and, when it has them, P50/P99 (ms) and ERRS.
run_wrk() { # NAME CONNECTIONS URL [--latency]
  local name=$1 c=$2 url=$3; shift 3
  REQS=0 P50=- P99=- ERRS=0
  timed "$name" wrk -t1 -c"$c" -d"${DURATION}s" --timeout 10s "$@" "$url" || { log "wrk $name failed: $(tail -n2 "$WORK/$name.err")"; return 1; }
  REQS=$(awk '/requests in/ { print $1 }' "$WORK/$name.out")
  ERRS=$(awk '/Socket errors|Non-2xx/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) s += $i } END { print s + 0 }' "$WORK/$name.out")
  if [[ " $* " == *" --latency "* ]]; then
    P50=$(wrk_ms "$(awk '$1 == "50%" { print $2; exit }' "$WORK/$name.out")")
    P99=$(wrk_ms "$(awk '$1 == "99%" { print $2; exit }' "$WORK/$name.out")")
  fi
}

run_oha() { # NAME CONNECTIONS URL
  local name=$1 c=$2 url=$3
  REQS=0 P50=- P99=- ERRS=0
  timed "$name" oha --no-tui --worker-threads 1 --output-format json -z "${DURATION}s" -c "$c" "$url" || { log "oha $name failed: $(tail -n2 "$WORK/$name.err")"; return 1; }
  # oha's JSON: statusCodeDistribution, errorDistribution (requests cut by the deadline are not errors) and
  # latencyPercentiles in seconds.
  read -r REQS ERRS P50 P99 < <(jq -r '[([.statusCodeDistribution[]] | add // 0),
      ([.errorDistribution | to_entries[] | select(.key | test("deadline") | not) | .value] | add // 0),
      (.latencyPercentiles.p50 * 1000), (.latencyPercentiles.p99 * 1000)] | @tsv' "$WORK/$name.out")
}

# The binary is BIN (default PLANRUN) and ARGS are added to its command line (`--cores N`).
run_planrun() { # NAME PLAN THREADS RAMP_UP_SECONDS BASE_URL [DURATION_SECONDS]
  local name=$1 plan=$2 threads=$3 ramp=$4 base=$5 duration=${6:-$DURATION}
  REQS=0 P50=- P99=- ERRS=0 ROWS=0 MAX_ACTIVE=0
  local rc=0
  timed "$name" "${BIN:-$PLANRUN}" run "$plan" -D "base=$base" -D "threads=$threads" -D "ramp_up=${ramp}s" \
    -D "duration=${duration}s" -o "$WORK/$name.jtl" --quiet ${ARGS:-} || rc=$? # ARGS: words, unquoted
  if ((rc)); then log "planrun $name exited $rc: $(tail -n2 "$WORK/$name.err")"; fi
  # Summary columns: Label Samples Mean Min Max StdDev p50 p90 p95 p99 Error% Throughput ...
  if grep -q '^TOTAL' "$WORK/$name.out"; then
    read -r REQS P50 P99 ERRS < <(awk '$1 == "TOTAL" { e = $11; sub(/%/, "", e); printf "%d %s %s %d\n", $2, $7, $10, $2 * e / 100 + 0.5 }' "$WORK/$name.out")
  fi
  ROWS=$(($(wc -l <"$WORK/$name.jtl" 2>/dev/null || echo 1) - 1))
  # allThreads (the 5th column from the end): how many virtual users were active at once, at most.
  MAX_ACTIVE=$(awk -F, 'NR > 1 && $(NF - 4) > m { m = $(NF - 4) } END { print m + 0 }' "$WORK/$name.jtl" 2>/dev/null || echo 0)
  # Virtual users that got at least one good answer (threadName of the rows with success=true), and the
  # responseCode of the failed rows, counted.
  SERVED=$(awk -F, 'NR > 1 && $8 == "true" && !seen[$6]++ { n++ } END { print n + 0 }' "$WORK/$name.jtl" 2>/dev/null || echo 0)
  FAILURES=$(awk -F, 'NR > 1 && $8 == "false" { c[$4]++ } END { for (k in c) printf "%s%d x %s", (n++ ? "; " : ""), c[k], k }' "$WORK/$name.jtl" 2>/dev/null || true)
  rm -f "$WORK/$name.jtl"
  return $rc
}

# What the in-process spread is measured against: NCPU processes at once, process I running segment I/NCPU
# of the plan with --cores 1, all on ALL_CPUS, as separate machines would. Sets run_planrun's figures for them
# together: requests, errors and CPU summed, WALL and RSS_KIB the largest (P50/P99 not merged).
run_segments() { # NAME PLAN THREADS RAMP_UP_SECONDS BASE_URL
  local name=$1 plan=$2 threads=$3 ramp=$4 base=$5 i pid rc=0 pids=() w u s m n e
  REQS=0 P50=- P99=- ERRS=0 ROWS=0 MAX_ACTIVE=0 SERVED=0 FAILURES="" WALL=0 U=0 S=0 RSS_KIB=0
  for ((i = 0; i < NCPU; i++)); do
    taskset -c "$ALL_CPUS" /usr/bin/time -o "$WORK/$name.$i.time" -f "%e %U %S %M" "$PLANRUN" run "$plan" \
      -D "base=$base" -D "threads=$threads" -D "ramp_up=${ramp}s" -D "duration=${DURATION}s" \
      --segment "$i/$NCPU" --cores 1 -o "$WORK/$name.$i.jtl" --quiet >"$WORK/$name.$i.out" 2>"$WORK/$name.$i.err" &
    pids+=("$!")
    PIDS+=("$!")
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  for ((i = 0; i < NCPU; i++)); do
    read -r w u s m < <(tail -n1 "$WORK/$name.$i.time")
    read -r n e < <(awk '$1 == "TOTAL" { e = $11; sub(/%/, "", e); printf "%d %d\n", $2, $2 * e / 100 + 0.5 }' "$WORK/$name.$i.out")
    REQS=$((REQS + ${n:-0})) ERRS=$((ERRS + ${e:-0})) ROWS=$((ROWS + $(wc -l <"$WORK/$name.$i.jtl") - 1))
    read -r WALL U S RSS_KIB < <(awk -v W="$WALL" -v U="$U" -v S="$S" -v M="$RSS_KIB" -v w="$w" -v u="$u" -v s="$s" -v m="$m" \
      'BEGIN { print (w > W ? w : W), U + u, S + s, (m > M ? m : M) }')
    rm -f "$WORK/$name.$i.jtl"
  done
  CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { print u + s }')
  ((rc == 0)) || log "planrun segments $name: a process exited $rc: $(tail -qn1 "$WORK/$name".*.err)"
  return $rc
}

# ---------------------------------------------------------------------------------------------- targets
NGINX_PORT=$(free_port 18080)
mkdir -p "$WORK/nginx"
cat >"$WORK/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile $NOFILE;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections $NOFILE; multi_accept on; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT backlog=65535;
    location / { return 200 "ok"; }
  }
}
EOF
taskset -c "$SERVER_CPU" "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" &
NGINX_PID=$!
PIDS+=("$NGINX_PID")
NGINX_URL="http://127.0.0.1:$NGINX_PORT"
wait_http "$NGINX_URL"

STUB_PORT=$(free_port $((NGINX_PORT + 1)))
taskset -c "$SERVER_CPU" "$PLANRUN" stub "$BENCH/stubs/delay50.yaml" --listen "127.0.0.1:$STUB_PORT" \
  >"$WORK/stub.log" 2>&1 &
PIDS+=($!)
STUB_URL="http://127.0.0.1:$STUB_PORT"
wait_http "$STUB_URL"

log "nginx $NGINX_URL and the 50 ms stub $STUB_URL on core $SERVER_CPU; generators on core $CLIENT_CPU"
log "RUNS=$RUNS DURATION=${DURATION}s, open files $NOFILE, work directory $WORK"

GET_PLAN="$BENCH/plans/throughput.yaml"
POST_PLAN="$BENCH/plans/throughput-post.yaml"
BARE_PLAN="$BENCH/plans/bare.yaml"
JSON_PLAN="$BENCH/plans/json-body.yaml"
NCPU=$(taskset -c "$ALL_CPUS" nproc) # the `--cores` of the spread runs: every CPU of ALL_CPUS
TOOLS=(wrk oha planrun planrun-post planrun-bare)

# One run of TOOL against URL with N connections; records figures under PREFIX.
one() { # PREFIX TOOL N URL RAMP [wrk args]
  local prefix=$1 tool=$2 n=$3 url=$4 ramp=$5; shift 5
  local name="$prefix.$tool.$RUN" ok=1 ticks
  LAST_RPS="" LAST_CPU10K=""
  # A rest first, as bench/engine.sh rests: a precaution against measuring one run with the last one's
  # aftermath (docs/performance.md, session 15, could not show that it matters).
  sleep "$GAP"
  ticks=$(nginx_ticks)
  case $tool in
    wrk) run_wrk "$name" "$n" "$url" "$@" || ok=0 ;;
    oha) run_oha "$name" "$n" "$url" || ok=0 ;;
    planrun) run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    planrun-post) run_planrun "$name" "$POST_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    planrun-bare) run_planrun "$name" "$BARE_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    planrun-big) run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" $((ramp + DURATION)) || ok=0 ;;
    # The `--cores` figures: the GET plan with --cores 1 and the same plan run by BASE, both on the
    # generator core; the JSON plan and the many-users run on ALL_CPUS with --cores 1 and --cores NCPU.
    cores1) ARGS="--cores 1" run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    base) BIN=$BASE run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    json-1) PIN=$ALL_CPUS ARGS="--cores 1" run_planrun "$name" "$JSON_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    json-all) PIN=$ALL_CPUS ARGS="--cores $NCPU" run_planrun "$name" "$JSON_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    json-seg) run_segments "$name" "$JSON_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    users-1) PIN=$ALL_CPUS ARGS="--cores 1" run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    users-all) PIN=$ALL_CPUS ARGS="--cores $NCPU" run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
  esac
  if ((ok == 0)) || [[ ${REQS:-0} -eq 0 ]]; then
    put "$prefix.$tool.failed" 1
    log "$prefix $tool n=$n: FAILED (see $WORK/$name.err)"
    return
  fi
  LAST_RPS=$(awk -v r="$REQS" -v w="$WALL" 'BEGIN { printf "%.0f", r / w }')
  LAST_CPU10K=$(awk -v c="$CPU" -v r="$REQS" 'BEGIN { printf "%.4f", c * 10000 / r }')
  put "$prefix.$tool.rps" "$LAST_RPS"
  # CPU in % of one core: the generator's (user + sys over wall time), and nginx's meanwhile.
  put "$prefix.$tool.cpu_pct" "$(awk -v c="$CPU" -v w="$WALL" 'BEGIN { printf "%.0f", 100 * c / w }')"
  put "$prefix.$tool.nginx_pct" "$(awk -v t=$(($(nginx_ticks) - ticks)) -v hz="$(getconf CLK_TCK)" -v w="$WALL" 'BEGIN { printf "%.0f", 100 * t / hz / w }')"
  put "$prefix.$tool.cpu10k" "$(awk -v c="$CPU" -v r="$REQS" 'BEGIN { printf "%.4f", c * 10000 / r }')"
  put "$prefix.$tool.user10k" "$(awk -v c="$U" -v r="$REQS" 'BEGIN { printf "%.4f", c * 10000 / r }')"
  put "$prefix.$tool.sys10k" "$(awk -v c="$S" -v r="$REQS" 'BEGIN { printf "%.4f", c * 10000 / r }')"
  put "$prefix.$tool.rss" "$(awk -v k="$RSS_KIB" 'BEGIN { printf "%.1f", k / 1024 }')"
  put "$prefix.$tool.errs" "${ERRS:-0}"
  [[ $P50 == - ]] || put "$prefix.$tool.p50" "$P50"
  [[ $P99 == - ]] || put "$prefix.$tool.p99" "$P99"
  [[ $tool != planrun* ]] || put "$prefix.$tool.rows_per_cpu_s" "$(awk -v r="$ROWS" -v c="$CPU" 'BEGIN { printf "%.0f", r / c }')"
  [[ $tool != planrun* ]] || put "$prefix.$tool.active" "$MAX_ACTIVE"
  [[ $tool != planrun* ]] || put "$prefix.$tool.served" "$SERVED"
  [[ $tool != planrun* || -z $FAILURES ]] || put "$prefix.$tool.failures" "$FAILURES"
  log "$prefix $tool n=$n: $REQS requests in ${WALL}s, cpu ${CPU}s, rss $((RSS_KIB / 1024)) MiB, p50 $P50 p99 $P99 ms, errors ${ERRS:-0}"
}

if ((PEERS)); then
  # Runs alternate between tools (wrk, oha, planrun, wrk, ...) so that noise from other work on the machine
  # spreads over all of them instead of hitting one tool's runs.
  for ((RUN = 1; RUN <= RUNS; RUN++)); do
    log "run $RUN/$RUNS: throughput, $CONNS connections, nginx"
    for t in "${TOOLS[@]}"; do one tput "$t" "$CONNS" "$NGINX_URL/" 0; done
  done
  for n in 1000 10000; do
    for ((RUN = 1; RUN <= RUNS; RUN++)); do
      log "run $RUN/$RUNS: peak RSS, $n connections, nginx"
      for t in wrk oha planrun; do one "c$n" "$t" "$n" "$NGINX_URL/" 2; done
    done
  done
  for ((RUN = 1; RUN <= RUNS; RUN++)); do
    log "run $RUN/$RUNS: latency, $CONNS connections, 50 ms stub"
    for t in wrk oha planrun; do one lat "$t" "$CONNS" "$STUB_URL/" 0 --latency; done
  done
  if ((BIG > 0)); then
    RUN=1
    log "one run: planrun with $BIG virtual users (ramp-up 5 s, then ${DURATION} s with all of them), nginx"
    one big planrun-big "$BIG" "$NGINX_URL/" 5
    log "the same number of connections from wrk, to tell the target's limits from planrun's"
    one big wrk "$BIG" "$NGINX_URL/" 0
    NGINX_WARNINGS=$(grep -c "worker_connections are not enough" "$WORK/nginx/error.log" || true)
  fi
fi

# ---------------------------------------------------------------------------------------------- --cores
# instructions NAME BINARY [ARGS...]: user-space instructions per request of the GET plan under callgrind,
# 10 users x 3,000 loops against nginx (the method of docs/performance.md); records cg.NAME.
instructions() {
  local name=$1 bin=$2; shift 2
  local ins reqs
  sed -e 's/duration: "{{ props.duration }}"/loops: 3000/' "$GET_PLAN" >"$WORK/loops.yaml"
  if ! taskset -c "$CLIENT_CPU" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$name.out" "$bin" run \
    "$WORK/loops.yaml" -D "base=$NGINX_URL" -D threads=10 -o "$WORK/cg.$name.jtl" --quiet "$@" \
    >"$WORK/cg.$name.out.txt" 2>"$WORK/cg.$name.err"; then
    log "callgrind $name failed: $(tail -n2 "$WORK/cg.$name.err")"
    return
  fi
  ins=$(awk '/Collected :/ { print $NF }' "$WORK/cg.$name.err")
  reqs=$(awk '$1 == "TOTAL" { print $2 }' "$WORK/cg.$name.out.txt")
  put "cg.$name" "$(awk -v i="$ins" -v r="$reqs" 'BEGIN { printf "%.0f", i / r }')"
  log "callgrind $name: $ins instructions for $reqs requests"
  rm -f "$WORK/cg.$name.out" "$WORK/cg.$name.jtl"
}

# stall NAME CORES SECONDS: the GET plan, 50 users for STALL + 6 seconds on ALL_CPUS with --cores CORES, its
# JTL written to a FIFO that a `cat` started here copies to a file; SECONDS > 0 stops that reader (SIGSTOP)
# 3 s into the run for SECONDS. Records the longest gap between request starts (timeStamp) in the JTL, when it
# began (s into the run), the samples that waited for the writer, and the samples missing from the file.
stall() {
  local name=$1 cores=$2 pause=$3 reader runner rc=0
  local gap at rows reqs waited
  rm -f "$WORK/$name.fifo"
  mkfifo "$WORK/$name.fifo"
  cat "$WORK/$name.fifo" >"$WORK/$name.jtl" &
  reader=$!
  PIDS+=("$reader")
  taskset -c "$ALL_CPUS" /usr/bin/time -o "$WORK/$name.time" -f "%e %U %S %M" "$PLANRUN" run "$GET_PLAN" \
    -D "base=$NGINX_URL" -D "threads=$CONNS" -D ramp_up=0s -D "duration=$((STALL + 6))s" -o "$WORK/$name.fifo" \
    --cores "$cores" --quiet >"$WORK/$name.out" 2>"$WORK/$name.err" &
  runner=$!
  PIDS+=("$runner")
  if ((pause > 0)); then
    sleep 3
    kill -STOP "$reader"
    sleep "$pause"
    kill -CONT "$reader"
  fi
  wait "$runner" || rc=$?
  wait "$reader" || true
  if ((rc)); then
    log "stall $name exited $rc: $(tail -n2 "$WORK/$name.err")"
    put "stall.failed" 1
    return
  fi
  read -r gap at rows < <(awk -F, 'NR > 1 { print $1 }' "$WORK/$name.jtl" | sort -n |
    awk 'NR == 1 { f = $1 } NR > 1 && $1 - p > m { m = $1 - p; at = p } { p = $1 } END { printf "%d %.1f %d\n", m, (at - f) / 1000, NR }')
  reqs=$(awk '$1 == "TOTAL" { print $2 }' "$WORK/$name.out")
  waited=$(awk '/Results writer fell behind/ { print $5 }' "$WORK/$name.out")
  local key=stall.free.c$cores
  ((pause == 0)) || key=stall.paused.c$cores
  put "$key.gap" "$gap"
  put "$key.at" "$at"
  put "$key.waited" "${waited:-0}"
  put "$key.lost" "$((reqs - rows))"
  put "$key.rps" "$(awk -v r="$reqs" -v w="$(cut -d' ' -f1 "$WORK/$name.time")" 'BEGIN { printf "%.0f", r / w }')"
  log "stall $name: $reqs requests, $rows rows, longest gap ${gap} ms at ${at} s, ${waited:-0} samples waited"
  rm -f "$WORK/$name.jtl" "$WORK/$name.fifo"
}

# round PREFIX N URL RAMP FIRST OTHER...: one run of each tool, in an order that turns with RUN (so that no
# tool always runs first), and each other tool's ratio to FIRST in this round: requests/s
# (PREFIX.ratio.TOOL.rps) and CPU per request (PREFIX.ratio.TOOL.cpu).
round() {
  local prefix=$1 n=$2 url=$3 ramp=$4; shift 4
  local tools=("$@") k i t
  declare -A rps=() cpu=()
  k=${#tools[@]}
  for ((i = 0; i < k; i++)); do
    t=${tools[(i + RUN - 1) % k]}
    one "$prefix" "$t" "$n" "$url" "$ramp"
    rps[$t]=$LAST_RPS cpu[$t]=$LAST_CPU10K
  done
  for t in "${tools[@]:1}"; do
    [[ -n ${rps[$1]} && -n ${rps[$t]} ]] || continue
    put "$prefix.ratio.$t.rps" "$(ratio "${rps[$t]}" "${rps[$1]}")"
    put "$prefix.ratio.$t.cpu" "$(ratio "${cpu[$t]}" "${cpu[$1]}")"
  done
}

if ((CORES)); then
  if [[ -n ${BASE:-} && $PARTS == *" a "* ]]; then
    for ((RUN = 1; RUN <= RUNS; RUN++)); do
      log "run $RUN/$RUNS: CPU per request, --cores 1 against BASE, $CONNS users, GET plan, core $CLIENT_CPU"
      round cost "$CONNS" "$NGINX_URL/" 0 base cores1
    done
    if [[ ${CALLGRIND:-1} != 0 ]] && command -v valgrind >/dev/null; then
      log "callgrind: instructions per request, BASE, --cores 1 and --cores $NCPU (about 2 minutes)"
      instructions base "$BASE"
      instructions cores1 "$PLANRUN" --cores 1
      instructions "cores$NCPU" "$PLANRUN" --cores "$NCPU"
    fi
  fi
  for ((RUN = 1; RUN <= RUNS; RUN++)); do
    [[ $PARTS == *" b "* ]] || break
    log "run $RUN/$RUNS: generator-bound JSON plan, $CONNS users on CPUs $ALL_CPUS, --cores 1 and $NCPU"
    round gen "$CONNS" "$NGINX_URL" 0 json-1 json-all json-seg
  done
  for ((RUN = 1; RUN <= RUNS; RUN++)); do
    [[ $PARTS == *" c "* ]] || break
    log "run $RUN/$RUNS: 10,000 users on CPUs $ALL_CPUS, --cores 1 and $NCPU"
    round u10k 10000 "$NGINX_URL/" 2 users-1 users-all
  done
  for ((RUN = 1; RUN <= RUNS; RUN++)); do
    [[ $PARTS == *" d "* ]] || break
    log "run $RUN/$RUNS: JTL to a FIFO whose reader stops for ${STALL} s, --cores 1 and $NCPU, and without a stop"
    for c in 1 "$NCPU"; do
      stall "stall.paused.c$c.$RUN" "$c" "$STALL"
      stall "stall.free.c$c.$RUN" "$c" 0
    done
  done
fi

# ---------------------------------------------------------------------------------------------- table
dev() { [[ $1 == - ]] && echo "-" || awk -v v="$1" 'BEGIN { printf "%+.2f", v - 50 }'; }
cell_rss() { # PREFIX TOOL
  if [[ -s $WORK/fig.$1.$2.failed ]]; then
    local f; f=$(wc -l <"$WORK/fig.$1.$2.failed")
    if [[ $(get "$1.$2.rss") == - ]]; then echo "failed ($f/$RUNS runs)"; else echo "$(fmt %.0f "$(get "$1.$2.rss")") MiB, $f/$RUNS runs failed"; fi
  else
    local e; e=$(get "$1.$2.errs")
    echo "$(fmt %.0f "$(get "$1.$2.rss")") MiB$([[ $e == - || $e == 0 ]] || echo " ($e errors)")"
  fi
}

if ((PEERS)); then
  {
    echo
    echo "## planrun vs wrk and oha — $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "$(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r); target and stub on core $SERVER_CPU, generator on core $CLIENT_CPU;"
    echo "median of $RUNS run(s) of ${DURATION} s each; planrun $("$PLANRUN" --version | awk '{ print $2 }'), $(wrk -v 2>&1 | awk 'NR == 1 { print $1, $2 }'), $(oha --version)."
    echo
    echo "| tool | req/s, 50 conns | CPU s / 10k req (user + sys) | peak RSS, 1,000 conns | peak RSS, 10,000 conns | p50, 50 ms server | p99, 50 ms server |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    for t in "${TOOLS[@]}"; do
      label=$t
      [[ $t == planrun ]] && label="planrun (GET, templated query, assertion, JTL)"
      [[ $t == planrun-post ]] && label="planrun (POST, templated query + body, assertion, JTL)"
      [[ $t == planrun-bare ]] && label="planrun (GET /, no template, no assertion, JTL)"
      if [[ $t == planrun-post || $t == planrun-bare ]]; then r1=- r10=- l50=- l99=-; else
        r1=$(cell_rss c1000 "$t"); r10=$(cell_rss c10000 "$t")
        l50="$(fmt %.2f "$(get "lat.$t.p50")") ms ($(dev "$(get "lat.$t.p50")"))"
        l99="$(fmt %.2f "$(get "lat.$t.p99")") ms ($(dev "$(get "lat.$t.p99")"))"
      fi
      echo "| $label | $(fmt %.0f "$(get "tput.$t.rps")") | $(fmt %.3f "$(get "tput.$t.cpu10k")") ($(fmt %.3f "$(get "tput.$t.user10k")") + $(fmt %.3f "$(get "tput.$t.sys10k")")) | $r1 | $r10 | $l50 | $l99 |"
    done
    echo
    c_w=$(get tput.wrk.cpu10k) c_o=$(get tput.oha.cpu10k) c_p=$(get tput.planrun.cpu10k) c_pp=$(get tput.planrun-post.cpu10k)
    echo "Ratios (planrun / peer, from the medians above):"
    echo
    echo "| figure | planrun / wrk | planrun / oha | target |"
    echo "| --- | ---: | ---: | --- |"
    echo "| CPU s per 10k requests (GET plan) | $(ratio "$c_p" "$c_w") | $(ratio "$c_p" "$c_o") | <= 1.5 (wrk), <= 1.0 (oha) |"
    echo "| CPU s per 10k requests (POST plan) | $(ratio "$c_pp" "$c_w") | $(ratio "$c_pp" "$c_o") | <= 1.5 (wrk), <= 1.0 (oha) |"
    echo "| CPU s per 10k requests (bare plan) | $(ratio "$(get tput.planrun-bare.cpu10k)" "$c_w") | $(ratio "$(get tput.planrun-bare.cpu10k)" "$c_o") | |"
    echo "| user CPU s per 10k requests (GET plan) | $(ratio "$(get tput.planrun.user10k)" "$(get tput.wrk.user10k)") | $(ratio "$(get tput.planrun.user10k)" "$(get tput.oha.user10k)") | |"
    echo "| sys CPU s per 10k requests (GET plan) | $(ratio "$(get tput.planrun.sys10k)" "$(get tput.wrk.sys10k)") | $(ratio "$(get tput.planrun.sys10k)" "$(get tput.oha.sys10k)") | |"
    echo "| requests/s, 50 connections | $(ratio "$(get tput.planrun.rps)" "$(get tput.wrk.rps)") | $(ratio "$(get tput.planrun.rps)" "$(get tput.oha.rps)") | |"
    echo "| peak RSS, 10,000 connections | $(ratio "$(get c10000.planrun.rss)" "$(get c10000.wrk.rss)") | $(ratio "$(get c10000.planrun.rss)" "$(get c10000.oha.rss)") | <= 300 MiB absolute |"
    p50p=$(get lat.planrun.p50) p50w=$(get lat.wrk.p50)
    echo
    echo "p50 against the 50 ms server: planrun - wrk = $(awk -v a="$p50p" -v b="$p50w" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%+.2f ms", a - b }') (target: within 0.2 ms)."
    if ((BIG > 0)); then
      if [[ -s $WORK/fig.big.planrun-big.failed ]]; then
        echo "planrun with $BIG virtual users: FAILED (see the log above)."
      else
        echo "planrun with $BIG virtual users (ramp-up 5 s, then ${DURATION} s): completed; at most $(get big.planrun-big.active) active at once, $(get big.planrun-big.served) of them served at least once, $(get big.planrun-big.rps) req/s, $(get big.planrun-big.errs) failed samples$([[ ! -s $WORK/fig.big.planrun-big.failures ]] || echo " ($(cat "$WORK/fig.big.planrun-big.failures"))"), peak RSS $(fmt %.0f "$(get big.planrun-big.rss)") MiB."
      fi
      echo "wrk with $BIG connections (${DURATION} s), same target: $(get big.wrk.rps) req/s, $(get big.wrk.errs) socket errors, peak RSS $(fmt %.0f "$(get big.wrk.rss)") MiB; nginx logged \"worker_connections are not enough\" ${NGINX_WARNINGS:-0} time(s) in the whole benchmark."
    fi
    echo "JTL sink, lower bound from the 50-connection run: $(get tput.planrun.rows_per_cpu_s) rows per CPU second of the whole planrun process (requests, templates, assertion and JTL together)."
  } | tee "$WORK/table.md"
fi

# The `--cores` figures: medians of RUNS runs; a ratio is the median of the ratios within the runs' rounds.
cores_row() { # LABEL PREFIX TOOL-1 TOOL-N METRIC FORMAT UNIT RATIO-KEY TARGET
  local one all
  one=$(fmt "$6" "$(get "$2.$3.$5")") all=$(fmt "$6" "$(get "$2.$4.$5")")
  local r=""
  [[ -z $8 ]] || r=$(fmt %.2f "$(get "$8")")
  echo "| $1 | $one$7 | $all$7 | $r | $9 |"
}
stall_row() { # LABEL KEY-SUFFIX FORMAT UNIT
  echo "| $1 | $(fmt "$3" "$(get "stall.paused.c1.$2")")$4 | $(fmt "$3" "$(get "stall.paused.c$NCPU.$2")")$4 | $(fmt "$3" "$(get "stall.free.c1.$2")")$4 | $(fmt "$3" "$(get "stall.free.c$NCPU.$2")")$4 |"
}
if ((CORES)); then
  {
    echo
    echo "## planrun --cores — $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "$(nproc) CPUs, kernel $(uname -r); nginx on core $SERVER_CPU; planrun $("$PLANRUN" --version | awk '{ print $2 }'); median of $RUNS run(s) of ${DURATION} s;"
    echo "a ratio is the median over the runs of the ratio within one round (the tools of a round run one after the other, in turns)."
    if [[ -n ${BASE:-} && $PARTS == *" a "* ]]; then
      echo
      echo "CPU per request, GET plan (bench/plans/throughput.yaml), $CONNS users, planrun on core $CLIENT_CPU:"
      echo
      echo "| binary | CPU s / 10k req | req/s | instructions / req (callgrind) |"
      echo "| --- | ---: | ---: | ---: |"
      echo "| BASE ($("$BASE" --version | awk '{ print $2 }'), before --cores) | $(fmt %.3f "$(get cost.base.cpu10k)") | $(fmt %.0f "$(get cost.base.rps)") | $(get cg.base) |"
      echo "| PLANRUN --cores 1 | $(fmt %.3f "$(get cost.cores1.cpu10k)") | $(fmt %.0f "$(get cost.cores1.rps)") | $(get cg.cores1) |"
      echo "| PLANRUN --cores $NCPU (callgrind only) | - | - | $(get "cg.cores$NCPU") |"
      echo
      echo "--cores 1 / BASE: CPU per request $(get cost.ratio.cores1.cpu) (median of $RUNS pairs; target <= 1.00), instructions per request $(ratio "$(get cg.cores1)" "$(get cg.base)")."
    fi
    if [[ $PARTS == *" b "* || $PARTS == *" c "* ]]; then
      echo
      echo "| figure (planrun on CPUs $ALL_CPUS) | --cores 1 | --cores $NCPU | ratio | target |"
      echo "| --- | ---: | ---: | ---: | --- |"
    fi
    if [[ $PARTS == *" b "* ]]; then
      cores_row "requests/s, JSON plan (~10 KB body), $CONNS users" gen json-1 json-all rps %.0f "" gen.ratio.json-all.rps ">= 1.6"
      cores_row "CPU s / 10k requests, JSON plan" gen json-1 json-all cpu10k %.2f "" gen.ratio.json-all.cpu ""
      cores_row "planrun CPU, % of one core, JSON plan" gen json-1 json-all cpu_pct %.0f % "" ""
      echo "| requests/s, JSON plan, $NCPU processes (\`--segment I/$NCPU --cores 1\`), the same users | | $(fmt %.0f "$(get gen.json-seg.rps)") | $(fmt %.2f "$(get gen.ratio.json-seg.rps)") | |"
      echo "| CPU s / 10k requests, JSON plan, $NCPU processes | | $(fmt %.2f "$(get gen.json-seg.cpu10k)") | $(fmt %.2f "$(get gen.ratio.json-seg.cpu)") | |"
      echo "| CPU, % of one core, JSON plan, $NCPU processes | | $(fmt %.0f "$(get gen.json-seg.cpu_pct)")% | | |"
      cores_row "nginx CPU, % of one core, JSON plan" gen json-1 json-all nginx_pct %.0f % "" ""
    fi
    if [[ $PARTS == *" c "* ]]; then
      cores_row "peak RSS, 10,000 users (GET plan, ramp-up 2 s)" u10k users-1 users-all rss %.0f " MiB" "" "<= 300 MiB"
      cores_row "requests/s, 10,000 users" u10k users-1 users-all rps %.0f "" u10k.ratio.users-all.rps ""
      cores_row "failed samples, 10,000 users" u10k users-1 users-all errs %.0f "" "" ""
    fi
    if [[ $PARTS == *" d "* ]]; then
      echo
      echo "JTL to a FIFO whose reader (a \`cat\`) is stopped for ${STALL} s, 3 s into a $((STALL + 6)) s run of the GET plan ($CONNS users), and the same run without a stop:"
      echo
      echo "| figure | stopped, --cores 1 | stopped, --cores $NCPU | not stopped, --cores 1 | not stopped, --cores $NCPU |"
      echo "| --- | ---: | ---: | ---: | ---: |"
      stall_row "longest gap between request starts" gap %.0f " ms"
      stall_row "... beginning (s into the run)" at %.1f " s"
      stall_row "samples that waited for the writer" waited %.0f ""
      stall_row "samples missing from the JTL" lost %.0f ""
      stall_row "requests/s over the run" rps %.0f ""
      [[ ! -s $WORK/fig.stall.failed ]] || echo "($(wc -l <"$WORK/fig.stall.failed") stall run(s) failed: see the log.)"
    fi
  } | tee -a "$WORK/table.md"
fi

if ((PEERS)) && [[ ${PROFILE:-auto} != 0 ]] && command -v perf >/dev/null && perf stat -e cpu-clock true >/dev/null 2>&1; then
  log "profile of planrun's 50-connection run (bench/profile.sh)"
  TOP=${TOP:-30} PLANRUN="$PLANRUN" TARGET_URL="$NGINX_URL/" CLIENT_CPU="$CLIENT_CPU" "$BENCH/profile.sh" || log "profile failed"
fi
