#!/usr/bin/env bash
# Where planrun's CPU goes during the 50-connection throughput run: a perf profile (cpu-clock samples) of
# planrun running bench/plans/throughput.yaml, pinned to one core, against a target that is already up.
#
#   bench/profile.sh                                   # starts its own nginx like bench/run.sh does
#   TARGET_URL=http://127.0.0.1:18080/ bench/profile.sh   # against a target that is already up
#
# Prints the top functions by self time, the inclusive time of each stage of a request (sending, receiving,
# rendering, templates, the sink task, the JTL sink, statistics) in % and in CPU microseconds per request,
# and the JTL sink's rate measured in place: rows written divided by the CPU seconds spent in
# JtlSink::write and everything it calls (csv, itoa, the write(2) syscalls). Needs `perf` (Debian:
# linux-perf); call graphs are unwound with DWARF, so the plain release binary will do.
#
# Environment: PLANRUN (binary, default target/release/planrun), DURATION (seconds, 5; perf.data grows by
# about 12 MB a second), CLIENT_CPU (1),
# SERVER_CPU (0, for its own nginx), TOP (25), FREQ (samples per second, 499), ATTEMPTS (3), KEEP=1 (keep
# perf.data).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PLANRUN=${PLANRUN:-$ROOT/target/release/planrun}
DURATION=${DURATION:-5}
CLIENT_CPU=${CLIENT_CPU:-1}
SERVER_CPU=${SERVER_CPU:-0}
TOP=${TOP:-25}
FREQ=${FREQ:-499}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/planrun-profile.XXXXXX")
NGINX_PID=

cleanup() {
  if [[ -n $NGINX_PID ]]; then
    kill -INT "$NGINX_PID" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$NGINX_PID" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$NGINX_PID" 2>/dev/null || true
  fi
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept: $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v perf >/dev/null || { echo "perf not found (Debian: apt-get install linux-perf)" >&2; exit 3; }
[[ -x $PLANRUN ]] || (cd "$ROOT" && cargo build --release --quiet)

if [[ -z ${TARGET_URL:-} ]]; then
  PATH="$PATH:/usr/sbin"
  port=18180
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  mkdir -p "$WORK/nginx"
  cat >"$WORK/nginx/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log crit;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $WORK/nginx/body;
  proxy_temp_path $WORK/nginx/proxy;
  fastcgi_temp_path $WORK/nginx/fastcgi;
  uwsgi_temp_path $WORK/nginx/uwsgi;
  scgi_temp_path $WORK/nginx/scgi;
  server { listen 127.0.0.1:$port; location / { return 200 "ok"; } }
}
EOF
  taskset -c "$SERVER_CPU" nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log" &
  NGINX_PID=$!
  TARGET_URL="http://127.0.0.1:$port/"
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
fi

# DWARF call graphs: the release binary has no frame pointers, but its unwind tables are enough to charge
# each function with the time of everything it calls (kernel included), not only its own. Async tasks run
# on deep stacks: with less than the largest stack copy (65528 bytes) many samples stop short of the root.
# With this perf (6.1), in about half of the recordings the unwinding of most samples stops at the first
# planrun frame above a syscall (it depends on the address layout: with ASLR off it always does), so a
# recording in which fewer than 90% of the samples reach main is taken again, up to ATTEMPTS times.
record() {
  perf record -q -e cpu-clock -F "$FREQ" --call-graph dwarf,65528 -o "$WORK/perf.data" -- \
    taskset -c "$CLIENT_CPU" /usr/bin/time -o "$WORK/time" -f "%e %U %S %M" \
    "$PLANRUN" run "$ROOT/bench/plans/throughput.yaml" -D "base=${TARGET_URL%/}" -D threads=50 \
    -D "duration=${DURATION}s" -o "$WORK/out.jtl" --quiet >"$WORK/summary.txt" 2>"$WORK/stderr.txt"
  # "children% self% symbol [k]-or-[.]" for every symbol: children = samples with the symbol anywhere on the stack.
  perf report -i "$WORK/perf.data" --stdio --children --sort sym -g none --percent-limit 0 2>/dev/null |
    awk '/^ *[0-9.]+%/ { c = $1; s = $2; k = $3; sub(/%/, "", c); sub(/%/, "", s); $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print c "\t" s "\t" $0 "\t" k }' \
    >"$WORK/symbols.tsv"
  unwound=$(awk -F'\t' '$3 ~ /^(_start|planrun::main)$/ { if ($1 > v) v = $1 } END { print v + 0 }' "$WORK/symbols.tsv")
}
for ((attempt = 1; attempt <= ${ATTEMPTS:-3}; attempt++)); do
  record
  awk -v u="$unwound" 'BEGIN { exit !(u >= 90) }' && break
  echo "profile: only $unwound% of the samples unwound to main (attempt $attempt); recording again" >&2
done
rows=$(($(wc -l <"$WORK/out.jtl") - 1))
read -r wall user sys rss <"$WORK/time"
cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')

echo
echo "### planrun profile: $rows requests in ${wall}s, ${cpu} CPU s (user $user, sys $sys), peak RSS $((rss / 1024)) MiB"
echo
echo "Top $TOP functions by self time (% of planrun's samples):"
echo
echo '```'
awk -F'\t' '{ self[$3] += $2 } END { for (f in self) print self[f] "\t" f }' "$WORK/symbols.tsv" | sort -t$'\t' -k1,1 -gr |
  awk -F'\t' -v top="$TOP" 'NR <= top { s = $2; if (length(s) > 110) s = substr(s, 1, 107) "..."; printf "%6.2f%%  %s\n", $1, s }'
echo '```'
echo
echo "Inclusive time of the stages of a request (% of samples with the function on the stack; nested rows"
echo "are part of the row above them; us = microseconds of CPU per request):"
echo
# label <TAB> a pattern of the symbol (awk regex); the row is the symbol's largest inclusive share, or for
# "(self time)" rows the sum of the self shares of every match. An async fn's body is its `{{closure}}`, so
# those patterns are not anchored at the end.
stages=$'virtual user task: VirtualUser::iterate\tVirtualUser>?::iterate
  request rendering: wire::render(_reusing)\t^planrun::run::wire::render(_reusing)?$
    templates: Templates::render*, Fast::render\t^planrun::template::(Templates::render(_form)?(_into)?|fast::Fast::render)$
  the exchange: Client::exchange\t^planrun::http::client::Client::exchange
    on the connection: Conn::exchange\t^planrun::http::conn::Conn::exchange
      request head: encode\t^planrun::http::encode::encode$
      response head: HeadReader::take\tHeadReader::take$
      socket send: sendto(2), loopback delivery included\t^__x64_sys_sendto$
      socket receive: recv(2)\t^__x64_sys_recvfrom$
sample sink task: sink::drain\t^planrun::sink::drain::drain
  statistics: Stats::record\t^planrun::sink::stats::Stats::record$
JTL writer thread: JtlSink::write\tJtlSink<W> as planrun::sink::Sink>::write$
  of which write(2) syscalls\t^__GI___libc_write$
runtime park: epoll_wait(2)\t^__x64_sys_epoll_wait$
malloc + free (self time)\t^(_int_malloc|_int_free|malloc|cfree@GLIBC_2.2.5|malloc_consolidate|__libc_malloc|free|realloc|_int_realloc)$
memcpy (self time)\t^__mem(move|cpy)_
kernel, all of it (self time)\t\\[k\\]'
echo '```'
while IFS=$'\t' read -r label pattern; do
  awk -F'\t' -v l="$label" -v p="$pattern" -v cpu="$cpu" -v rows="$rows" '
    (l ~ /^kernel/ ? $4 : $3) ~ p { if (l ~ /self time/) v += $2; else if ($1 > v) v = $1 }
    END { printf "%6.2f%%  %6.2f us  %s\n", v, cpu * v / 100 * 1e6 / rows, l }' "$WORK/symbols.tsv"
done <<<"$stages"
echo '```'
echo "($unwound% of the samples were unwound to main's frame; the rest count only in the rows they reached.)"
sink=$(awk -F'\t' '$3 ~ /JtlSink<W> as planrun::sink::Sink>::write$/ { if ($1 > v) v = $1 } END { print v + 0 }' "$WORK/symbols.tsv")
echo
awk -v r="$rows" -v c="$cpu" -v s="$sink" 'BEGIN {
  sc = c * s / 100
  printf "JTL sink measured in place (JtlSink::write and all it calls, write(2) included): %.1f%% of %.2f CPU s = %.3f s for %d rows", s, c, sc, r
  if (sc > 0) printf " -> %.0f rows per CPU second (%.2f us per row)\n", r / sc, sc * 1e6 / r; else print ""
  printf "Whole process: %.0f requests per CPU second (%.1f us per request)\n", r / c, c * 1e6 / r
}'
if [[ ${KEEP:-0} == 1 ]]; then echo "perf data: $WORK/perf.data (perf report -i $WORK/perf.data --children)"; fi
