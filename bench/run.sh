#!/usr/bin/env bash
# planrun against its peers (wrk, oha), against another build, and what `--cores` does, on one machine,
# over loopback only.
#
#   bench/run.sh                                  # every part, 3 rounds of 10 s runs (about 30 minutes)
#   PARTS=peers bench/run.sh                      # planrun against wrk and oha only (about 9 minutes)
#   PARTS=cpu RUNS=12 DURATION=5 BASE=<other planrun> bench/run.sh   # CPU per request: planrun, BASE, wrk
#   RUNS=1 DURATION=2 PARTS=peers bench/run.sh    # a check that it works, not a measurement
#
# This script installs what is missing (wrk, nginx-light, jq... from Debian with apt-get; oha with cargo
# install, a few minutes once), builds planrun --release (a copy of the binary is measured, so rebuilds
# meanwhile do not matter), starts the targets pinned to SERVER_CPU: nginx (one process, `return 200 "ok"`
# on one port and a 32 KiB body on another, keep-alive without limit) and planrun's stub answering every
# request after exactly 50 ms
# (bench/stubs/delay50.yaml). bench/bench.py then runs the scenarios, takes the medians and ratios and
# prints the tables; part "profile" is bench/profile.sh. docs/performance.md explains every figure.
#
# Environment:
#   RUNS (3), DURATION (10 s), GAP (2 s of rest before each run)
#   PARTS   any of: peers big cpu cpu32k cg icache users gen stall busy profile (default: all of them)
#             peers   wrk, oha and planrun's three plans: req/s, CPU per request, RSS at 1,000 and 10,000
#                     connections, p50/p99 against the 50 ms stub
#             big     one run of 19,000 virtual users, and wrk with as many connections
#             cpu     CPU per request, user and sys apart: wrk, planrun `--cores 1` and BASE, GET plan
#             cpu32k  the same against 32 KiB responses
#             cg      callgrind instructions per request: `--cores 1`, `--cores` every CPU, BASE (valgrind);
#                     and the JSON plan of gen, `--cores 1` and BASE
#             icache  cachegrind's L1 misses and the hot lines (bench/hot_lines.py) a request: planrun,
#                     BASE, wrk (valgrind)
#             users   peak RSS of 10,000 users: `--cores 1`, every CPU, BASE; with a 2 s think time too
#             gen     a generator-bound plan (~10 KB JSON body) with `--cores 1`, every CPU, one process per CPU
#             stall   a JTL output whose reader stops for 2 s
#             busy    the plan of gen with `--cores 1` and every CPU, and the same two with a busy loop on
#                     SERVER_CPU, in rotated rounds: what `--cores` gains on a loaded machine
#             profile perf profile of planrun's 50-connection run (bench/profile.sh; needs perf)
#   PLANRUN the binary to measure (default: target/release/planrun, built by `cargo build --release`)
#   BASE    another planrun build (with `--cores`) for cpu, cpu32k, cg, icache and users
#   SERVER_CPU (0), CLIENT_CPU (1), ALL_CPUS (the CPUs of "users", "gen", "stall", "busy"; default every CPU)
#   SKIP_INSTALL=1 (use what is on PATH), KEEP=1 (keep the work directory: every tool's output, runs.json)
# Needs root for apt-get, or the tools installed. Stops every process it starts, by PID, on exit. A
# generator that fails is reported in the tables; the exit status is non-zero only when a target cannot
# start or the benchmark itself fails.
set -euo pipefail

for old in PEERS CORES BIG PROFILE CALLGRIND STALL; do
  if [[ -n ${!old:-} ]]; then
    echo "bench/run.sh: $old is gone; choose what runs with PARTS (see the head of bench/run.sh)" >&2
    exit 2
  fi
done
PARTS=" ${PARTS:-peers big cpu cpu32k cg icache users gen stall busy profile} "
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/bench"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/planrun-bench.XXXXXX")
PIDS=()

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [[ ${KEEP:-0} == 1 ]]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------- installs
install_tools() {
  local apt=()
  command -v python3 >/dev/null || apt+=(python3)
  command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || apt+=(nginx-light)
  command -v wrk >/dev/null || apt+=(wrk)
  if [[ $PARTS == *" cg "* || $PARTS == *" icache "* ]]; then command -v valgrind >/dev/null || apt+=(valgrind); fi
  if [[ $PARTS == *" profile "* ]]; then command -v perf >/dev/null || apt+=(linux-perf); fi
  if ((${#apt[@]})); then
    log "apt-get install ${apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt[@]}" >/dev/null
  fi
  if [[ $PARTS == *" peers "* ]] && ! command -v oha >/dev/null && [[ ! -x $HOME/.cargo/bin/oha ]]; then
    log "cargo install oha --locked (a few minutes, once)"
    cargo install oha --locked --quiet
  fi
}
[[ ${SKIP_INSTALL:-0} == 1 ]] || install_tools
export PATH="$PATH:$HOME/.cargo/bin:/usr/sbin"
if [[ -z ${PLANRUN:-} ]]; then
  log "cargo build --release"
  (cd "$ROOT" && cargo build --release --quiet)
  PLANRUN="$ROOT/target/release/planrun"
fi
# Copies, so that a rebuild in the work tree during the benchmark does not change what is measured.
cp "$PLANRUN" "$WORK/planrun"
PLANRUN="$WORK/planrun"
if [[ -n ${BASE:-} ]]; then cp "$BASE" "$WORK/planrun-base"; export BASE="$WORK/planrun-base"; fi

# File descriptors: 10,000 and 19,000 connections need them, on both ends.
ulimit -n "$(ulimit -Hn)"
NOFILE=$(ulimit -n)

# ---------------------------------------------------------------------------------------------- targets
free_port() { # a TCP port on 127.0.0.1 at or above $1 that nothing listens on
  local p
  for ((p = $1; p < $1 + 1000; p++)); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}
wait_port() { # waits up to 10 s for something to listen on port $1
  local i
  for i in $(seq 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.2
  done
  log "nothing listens on 127.0.0.1:$1"
  return 1
}

NGINX_PORT=$(free_port 18080)
NGINX_32K_PORT=$(free_port $((NGINX_PORT + 1)))
mkdir -p "$WORK/nginx"
head -c 32768 /dev/zero | tr '\0' 'x' >"$WORK/nginx/32k.txt"
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
  server {
    listen 127.0.0.1:$NGINX_32K_PORT backlog=65535;
    location / { root $WORK/nginx; try_files /32k.txt =404; }
  }
}
EOF
taskset -c "$SERVER_CPU" "$(command -v nginx)" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" \
  -e "$WORK/nginx/error.log" &
NGINX_PID=$!
PIDS+=("$NGINX_PID")
wait_port "$NGINX_PORT"

STUB_PORT=$(free_port $((NGINX_32K_PORT + 1)))
taskset -c "$SERVER_CPU" "$PLANRUN" stub "$BENCH/stubs/delay50.yaml" --listen "127.0.0.1:$STUB_PORT" \
  >"$WORK/stub.log" 2>&1 &
PIDS+=($!)
wait_port "$STUB_PORT"
log "nginx on 127.0.0.1:$NGINX_PORT (32 KiB: $NGINX_32K_PORT), the 50 ms stub on 127.0.0.1:$STUB_PORT, both on CPU $SERVER_CPU;" \
  "open files $NOFILE; work directory $WORK"

# ---------------------------------------------------------------------------------------------- the bench
parts=${PARTS// profile / }
parts=$(echo $parts) # words, trimmed
if [[ -n $parts ]]; then
  python3 "$BENCH/bench.py" --planrun "$PLANRUN" --nginx "http://127.0.0.1:$NGINX_PORT" \
    --stub "http://127.0.0.1:$STUB_PORT" --nginx-32k "http://127.0.0.1:$NGINX_32K_PORT" \
    --nginx-pid "$NGINX_PID" --nginx-log "$WORK/nginx/error.log" \
    --work "$WORK" --parts "$parts" --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU"
fi

if [[ $PARTS == *" profile "* ]]; then
  if command -v perf >/dev/null && perf stat -e cpu-clock true >/dev/null 2>&1; then
    log "profile of planrun's 50-connection run (bench/profile.sh)"
    TOP=${TOP:-30} PLANRUN="$PLANRUN" TARGET_URL="http://127.0.0.1:$NGINX_PORT/" CLIENT_CPU="$CLIENT_CPU" \
      "$BENCH/profile.sh" || log "profile failed"
  else
    log "no working perf: no profile"
  fi
fi
