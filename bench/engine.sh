#!/usr/bin/env bash
# A planrun build (NEW) against another (BASE) and wrk, in balanced rounds: CPU per request, memory per user,
# instructions and cache misses per request.
#
#   NEW=target/release/planrun BASE=/path/to/planrun-before bench/engine.sh
#
# nginx on core SERVER_CPU (0) answers `return 200 "ok"` on one port and a 32 KiB file on another; every
# generator runs pinned to CLIENT_CPU (1) under GNU time. PARTS selects what runs (default "cpu big users cg icache"):
#   cpu    CPU per request, the GET plan of bench/run.sh (templated query, assertion, JTL row), 50 users:
#          ROUNDS rounds of wrk, NEW and BASE (in each of the six orders in turn, GAP seconds apart),
#          DURATION seconds each; the median of the rounds' ratios,
#          and each generator's median user and sys time per request;
#   big    the same against 32 KiB responses;
#   users  peak RSS of USERS (10,000) keep-alive users of the GET plan, ramp-up 2 s, --cores 1, NEW and BASE;
#          with THINK (2 s) think time too;
#   cg     callgrind instructions per request of the GET plan, 10 users x 3,000 loops, NEW and BASE;
#   icache cachegrind's simulated caches (this CPU's sizes), per request: instructions, L1 instruction-cache and
#          data-cache misses, and the hot lines of bench/hot_lines.py (the code one request runs, in cache
#          lines), of the GET plan (50 users x 600 loops, NEW and BASE) and of wrk (5 s): where the CPU ratio
#          against wrk comes from when instruction counts alone do not explain it.
# Prints one markdown table per part. Stops what it starts, by PID.
set -euo pipefail

NEW=${NEW:?the planrun binary to measure}
BASE=${BASE:?the planrun binary to compare with}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-5}
GAP=${GAP:-2}
USERS=${USERS:-10000}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
PARTS=" ${PARTS:-cpu big users cg icache} "
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/planrun-engine.XXXXXX")
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)"
log() { printf '[engine %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
cp "$NEW" "$WORK/new"
cp "$BASE" "$WORK/base"

head -c 32768 /dev/zero | tr '\0' 'x' >"$WORK/big.bin"
cat >"$WORK/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile $(ulimit -n);
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections $(ulimit -n); multi_accept on; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 300s;
  client_body_temp_path $WORK/body;
  proxy_temp_path $WORK/proxy;
  fastcgi_temp_path $WORK/fastcgi;
  uwsgi_temp_path $WORK/uwsgi;
  scgi_temp_path $WORK/scgi;
  server { listen 127.0.0.1:18180 backlog=65535; location / { return 200 "ok"; } }
  server { listen 127.0.0.1:18181 backlog=65535; location / { root $WORK; try_files /big.bin =404; } }
}
EOF
taskset -c "$SERVER_CPU" /usr/sbin/nginx -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" &
PIDS+=($!)
sleep 1
SMALL=http://127.0.0.1:18180
BIG=http://127.0.0.1:18181
PLAN="$ROOT/bench/plans/throughput.yaml"

# timed NAME CMD...: CPU seconds (user+sys) and peak RSS (KiB) of CMD on the client core.
timed() {
  local name=$1; shift
  taskset -c "$CLIENT_CPU" /usr/bin/time -o "$WORK/$name.time" -f "%e %U %S %M" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || true
  read -r WALL U S RSS <"$WORK/$name.time"
  CPU=$(awk -v u="$U" -v s="$S" 'BEGIN { print u + s }')
}
reqs_planrun() { awk '$1 == "TOTAL" { print $2 }' "$WORK/$1.out"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
per10k() { awk -v c="$1" -v r="$2" 'BEGIN { printf "%.4f", c * 10000 / r }'; }

# cpu_part NAME URL: ROUNDS rounds of wrk, NEW and BASE, each round in the next of the six orders, with GAP
# seconds of rest before each run. A run is measured differently by what ran just before it: the same binary
# as NEW and BASE in fixed turns (wrk, NEW, BASE) measured 1.02 and 0.96 against wrk in one run, and merely
# rotating the turns still left BASE after NEW twice as often as after wrk. Over six rounds each generator
# takes each place, after each of the others, as often (docs/performance.md, "Method").
cpu_part() {
  local part=$1 url=$2 r g
  : >"$WORK/$part.rows"
  local -a orders=("wrk new base" "new base wrk" "base wrk new" "wrk base new" "base new wrk" "new wrk base")
  for ((r = 1; r <= ROUNDS; r++)); do
    local wreq wcpu ncpu breq bcpu nreq
    for g in ${orders[$(((r - 1) % 6))]}; do
      sleep "$GAP"
      if [[ $g == wrk ]]; then
        timed "$part.wrk.$r" wrk -t1 -c50 -d"${DURATION}s" "$url/"
        wreq=$(awk '/requests in/ { print $1 }' "$WORK/$part.wrk.$r.out")
        wcpu=$(per10k "$CPU" "$wreq")
        split_us wrk "$wreq"
        continue
      fi
      timed "$part.$g.$r" "$WORK/$g" run "$PLAN" -D "base=$url" -D threads=50 -D "duration=${DURATION}s" \
        -o "$WORK/$part.$g.$r.jtl" --quiet --cores 1
      local n; n=$(reqs_planrun "$part.$g.$r")
      local c; c=$(per10k "$CPU" "$n")
      split_us "$g" "$n"
      if [[ $g == new ]]; then ncpu=$c nreq=$n; else bcpu=$c breq=$n; fi
      rm -f "$WORK/$part.$g.$r.jtl"
    done
    echo "$r $wcpu $ncpu $bcpu $wreq $nreq $breq" >>"$WORK/$part.rows"
    log "$part round $r: CPU s/10k req wrk $wcpu new $ncpu base $bcpu (requests $wreq $nreq $breq)"
  done
  echo
  echo "### $part ($url, 50 connections, ${DURATION} s runs, $(uptime | sed 's/.*load/load/'))"
  echo
  echo "| round | wrk CPU s/10k | new | base | new/wrk | base/wrk | new/base |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  awk '{ printf "| %d | %s | %s | %s | %.2f | %.2f | %.2f |\n", $1, $2, $3, $4, $3 / $2, $4 / $2, $3 / $4 }' "$WORK/$part.rows"
  local m1 m2 m3
  m1=$(awk '{ print $3 / $2 }' "$WORK/$part.rows" | median)
  m2=$(awk '{ print $4 / $2 }' "$WORK/$part.rows" | median)
  m3=$(awk '{ print $3 / $4 }' "$WORK/$part.rows" | median)
  printf '| median of the ratios | | | | %.2f | %.2f | %.2f |\n' "$m1" "$m2" "$m3"
  # The kernel's share moves with the host's noise far more than the user-space share, which is the code's.
  echo
  echo "| generator | median user us / request | median sys us / request |"
  echo "| --- | --- | --- |"
  local g
  for g in wrk new base; do
    printf '| %s | %.2f | %.2f |\n' "$g" "$(awk '{ print $2 }' "$WORK/split.$g" | median)" \
      "$(awk '{ print $3 }' "$WORK/split.$g" | median)"
    rm -f "$WORK/split.$g"
  done
}

# split_us NAME REQUESTS: appends the last timed run's user and sys microseconds per request to $WORK/split.NAME.
split_us() {
  awk -v n="$2" -v u="$U" -v s="$S" -v name="$1" 'BEGIN { printf "%s %.3f %.3f\n", name, u * 1e6 / n, s * 1e6 / n }' \
    >>"$WORK/split.$1"
}

users_part() {
  local think=$1 plan="$PLAN"
  if [[ $think != 0 ]]; then
    sed -e 's/^    steps:/    think_time: '"$think"'\n    steps:/' "$PLAN" >"$WORK/think.yaml"
    plan="$WORK/think.yaml"
  fi
  echo
  echo "### $USERS users, think time $think ($(uptime | sed 's/.*load/load/'))"
  echo
  echo "| binary | requests | peak RSS MiB | KiB per user |"
  echo "| --- | --- | --- | --- |"
  for bin in new base; do
    timed "users.$bin" "$WORK/$bin" run "$plan" -D "base=$SMALL" -D "threads=$USERS" -D ramp_up=2s -D duration=8s \
      -o "$WORK/users.$bin.jtl" --quiet --cores 1
    local n; n=$(reqs_planrun "users.$bin")
    rm -f "$WORK/users.$bin.jtl"
    awk -v b="$bin" -v n="$n" -v r="$RSS" -v u="$USERS" 'BEGIN { printf "| %s | %s | %.0f | %.1f |\n", b, n, r / 1024, r / u }'
  done
}

cg_part() {
  sed -e 's/duration: "{{ props.duration }}"/loops: 3000/' "$PLAN" >"$WORK/loops.yaml"
  echo
  echo "### callgrind, GET plan, 10 users x 3,000 requests"
  echo
  echo "| binary | instructions | requests | instructions / request |"
  echo "| --- | --- | --- | --- |"
  for bin in new base; do
    taskset -c "$CLIENT_CPU" valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$bin" "$WORK/$bin" run \
      "$WORK/loops.yaml" -D "base=$SMALL" -D threads=10 -o "$WORK/cg.$bin.jtl" --quiet >"$WORK/cg.$bin.out" 2>"$WORK/cg.$bin.err" || true
    local ins reqs
    ins=$(awk '/Collected :/ { print $NF }' "$WORK/cg.$bin.err")
    reqs=$(awk '$1 == "TOTAL" { print $2 }' "$WORK/cg.$bin.out")
    awk -v b="$bin" -v i="$ins" -v r="$reqs" 'BEGIN { printf "| %s | %s | %s | %.0f |\n", b, i, r, i / r }'
  done
}

# misses NAME REQUESTS HL_REQUESTS OBJECT: one table row, from cachegrind's summary in $WORK/ic.NAME.err (a run
# of REQUESTS) and the hot lines (bench/hot_lines.py) of OBJECT in the callgrind profile $WORK/hl.NAME.out (a
# run of HL_REQUESTS).
misses() {
  local lines
  lines=$(python3 "$ROOT/bench/hot_lines.py" "$WORK/hl.$1.out" "$3" 0.9 "$4" | awk 'NR == 1 { print $4 }')
  awk -v name="$1" -v n="$2" -v lines="$lines" '
    { gsub(",", "") }
    /I +refs:/ { ir = $4 } /I1 +misses:/ { i1 = $4 } /D1 +misses:/ { d1 = $4 }
    END { printf "| %s | %s | %.0f | %.1f | %.1f | %s |\n", name, n, ir / n, i1 / n, d1 / n, lines }' "$WORK/ic.$1.err"
}

# profiled NAME TOOL CMD...: CMD under valgrind's TOOL (cachegrind with its cache simulation, or callgrind
# recording each instruction), on the client core; output in $WORK/ic.NAME.* or $WORK/hl.NAME.*.
profiled() {
  local name=$1 tool=$2; shift 2
  if [[ $tool == cachegrind ]]; then
    taskset -c "$CLIENT_CPU" valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$WORK/ic.$name.out" \
      "$@" >"$WORK/ic.$name.txt" 2>"$WORK/ic.$name.err" || true
  else
    taskset -c "$CLIENT_CPU" valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$WORK/hl.$name.out" \
      "$@" >"$WORK/hl.$name.txt" 2>"$WORK/hl.$name.err" || true
  fi
}

icache_part() {
  sed -e 's/duration: "{{ props.duration }}"/loops: 600/' "$PLAN" >"$WORK/loops600.yaml"
  echo
  echo "### cache misses (cachegrind) and hot lines, GET plan 50 users x 600 requests, wrk -c50 5 s"
  echo
  echo "| generator | requests | instructions / request | L1i misses / request | L1d misses / request | hot lines |"
  echo "| --- | --- | --- | --- | --- | --- |"
  local bin tool
  for bin in new base; do
    for tool in cachegrind callgrind; do
      profiled "$bin" "$tool" "$WORK/$bin" run "$WORK/loops600.yaml" -D "base=$SMALL" -D threads=50 \
        -o "$WORK/ic.$bin.jtl" --quiet
    done
    local n
    n=$(awk '$1 == "TOTAL" { print $2 }' "$WORK/ic.$bin.txt")
    misses "$bin" "$n" "$(awk '$1 == "TOTAL" { print $2 }' "$WORK/hl.$bin.txt")" "/$bin"
  done
  profiled wrk cachegrind wrk -t1 -c50 -d5s "$SMALL/"
  profiled wrk callgrind wrk -t1 -c50 -d5s "$SMALL/"
  misses wrk "$(awk '/requests in/ { print $1 }' "$WORK/ic.wrk.txt")" "$(awk '/requests in/ { print $1 }' "$WORK/hl.wrk.txt")" wrk
}

[[ $PARTS == *" cpu "* ]] && cpu_part cpu "$SMALL"
[[ $PARTS == *" big "* ]] && cpu_part big "$BIG"
[[ $PARTS == *" users "* ]] && { users_part 0; users_part "${THINK:-2s}"; }
[[ $PARTS == *" cg "* ]] && cg_part
[[ $PARTS == *" icache "* ]] && icache_part
exit 0
