#!/usr/bin/env bash
# planrun against its peers (wrk, oha) on one machine, over loopback only.
#
#   bench/run.sh                       # everything, 3 runs of 10 s per figure (about 9 minutes)
#   RUNS=1 DURATION=5 bench/run.sh     # a quick check (about 3 minutes)
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
# Environment: RUNS (3), DURATION (seconds, 10), SKIP_INSTALL=1 (use what is on PATH), PLANRUN (binary to
# measure, default target/release/planrun after `cargo build --release`), SERVER_CPU (0), CLIENT_CPU (1),
# BIG (19000: virtual users of the "many users" run, 0 skips it), PROFILE (0 skips the profile of planrun's
# 50-connection run by bench/profile.sh, which otherwise runs when perf works), KEEP=1 (keep the work
# directory with every tool's raw output). Needs root for apt-get, or the tools already installed.
# Stops every process it starts, by PID, on exit. A generator that fails is reported in the table; the
# exit status is non-zero only when a target cannot start or the script itself fails.
set -euo pipefail

RUNS=${RUNS:-3}
DURATION=${DURATION:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
BIG=${BIG:-19000}
CONNS=50
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/planrun-bench.XXXXXX")
PIDS=()

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
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
fmt() { # PRINTF-FORMAT VALUE: formats a number, passes "-" through
  if [[ $2 == - || -z $2 ]]; then echo "-"; else LC_ALL=C printf "$1" "$2"; fi
}

# timed NAME COMMAND...: runs COMMAND pinned to the client core under GNU time; output in $WORK/NAME.{out,time}.
# Sets WALL, CPU (user+sys seconds), RSS_KIB. Never fails: a failed run is recorded by its caller.
timed() {
  local name=$1; shift
  local rc=0
  taskset -c "$CLIENT_CPU" /usr/bin/time -o "$WORK/$name.time" -f "%e %U %S %M" "$@" \
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

run_planrun() { # NAME PLAN THREADS RAMP_UP_SECONDS BASE_URL [DURATION_SECONDS]
  local name=$1 plan=$2 threads=$3 ramp=$4 base=$5 duration=${6:-$DURATION}
  REQS=0 P50=- P99=- ERRS=0 ROWS=0 MAX_ACTIVE=0
  local rc=0
  timed "$name" "$PLANRUN" run "$plan" -D "base=$base" -D "threads=$threads" -D "ramp_up=${ramp}s" \
    -D "duration=${duration}s" -o "$WORK/$name.jtl" --quiet || rc=$?
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
PIDS+=($!)
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
TOOLS=(wrk oha planrun planrun-post planrun-bare)

# One run of TOOL against URL with N connections; records figures under PREFIX.
one() { # PREFIX TOOL N URL RAMP [wrk args]
  local prefix=$1 tool=$2 n=$3 url=$4 ramp=$5; shift 5
  local name="$prefix.$tool.$RUN" ok=1
  case $tool in
    wrk) run_wrk "$name" "$n" "$url" "$@" || ok=0 ;;
    oha) run_oha "$name" "$n" "$url" || ok=0 ;;
    planrun) run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    planrun-post) run_planrun "$name" "$POST_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    planrun-bare) run_planrun "$name" "$BARE_PLAN" "$n" "$ramp" "$url" || ok=0 ;;
    planrun-big) run_planrun "$name" "$GET_PLAN" "$n" "$ramp" "$url" $((ramp + DURATION)) || ok=0 ;;
  esac
  if ((ok == 0)) || [[ ${REQS:-0} -eq 0 ]]; then
    put "$prefix.$tool.failed" 1
    log "$prefix $tool n=$n: FAILED (see $WORK/$name.err)"
    return
  fi
  put "$prefix.$tool.rps" "$(awk -v r="$REQS" -v w="$WALL" 'BEGIN { printf "%.0f", r / w }')"
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

# ---------------------------------------------------------------------------------------------- table
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
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

if [[ ${PROFILE:-auto} != 0 ]] && command -v perf >/dev/null && perf stat -e cpu-clock true >/dev/null 2>&1; then
  log "profile of planrun's 50-connection run (bench/profile.sh)"
  TOP=${TOP:-30} PLANRUN="$PLANRUN" TARGET_URL="$NGINX_URL/" CLIENT_CPU="$CLIENT_CPU" "$BENCH/profile.sh" || log "profile failed"
fi
