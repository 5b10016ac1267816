#!/usr/bin/env python3
"""Part h2 of bench/run.sh: CPU per request over HTTP/2, planrun against h2load, on keep-alive GETs to nginx
(cleartext HTTP/2 with prior knowledge). Each round runs every tool on the same pinned CPU, in the next
order of a balanced Latin square (bench.py's rotation): h2load -c USERS -m 1 -n REQUESTS (one connection per
client, one request in flight), planrun's bench/plans/throughput-h2.yaml with USERS users looping
REQUESTS/USERS times (templated query, status assertion, JTL row), and the same plan with BASE (another
planrun build) when given. CPU is user + sys of the process (getrusage of the child); the figures are the
medians over rounds of each planrun's CPU per request divided by h2load's (and by BASE's) in the same round.

    python3 bench/h2.py --planrun target/release/planrun --url http://127.0.0.1:8443 [--rounds 5] [--base B]
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from bench import order

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_of(argv, cpu):
    """Runs argv pinned to `cpu`; returns (user + sys seconds, wall seconds, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.run(["taskset", "-c", str(cpu), *argv], capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{argv[0]} exited {out.returncode}: {out.stderr[-500:]}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu_s, wall, out.stdout


def rows_of(jtl):
    with open(jtl, encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    ok = sum(1 for l in lines if ",true," in l)
    return len(lines), ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--planrun", required=True)
    p.add_argument("--url", required=True, help="nginx's h2c URL, http://127.0.0.1:PORT")
    p.add_argument("--users", type=int, default=int(os.environ.get("H2_USERS", 50)))
    p.add_argument("--requests", type=int, default=int(os.environ.get("H2_REQUESTS", 200_000)))
    p.add_argument("--rounds", type=int, default=int(os.environ.get("RUNS", 3)))
    p.add_argument("--cpu", default=os.environ.get("CLIENT_CPU", "1"))
    p.add_argument("--base", default=os.environ.get("BASE") or None, help="another planrun build to compare")
    a = p.parse_args()
    loops = a.requests // a.users
    n = loops * a.users
    plan = os.path.join(HERE, "plans", "throughput-h2.yaml")
    work = tempfile.mkdtemp(prefix="planrun-bench-h2.")
    binaries = {"planrun": a.planrun, **({"base": a.base} if a.base else {})}
    per = {tool: [] for tool in ("h2load", *binaries)}
    ratios = {pair: [] for pair in (("planrun", "h2load"), ("base", "h2load"), ("planrun", "base")) if
              all(t in per for t in pair)}
    for r in range(a.rounds):
        got = {}
        for tool in order(list(per), r + 1):
            if tool == "h2load":
                cpu_s, wall, out = cpu_of(["h2load", "-c", str(a.users), "-m", "1", "-n", str(n), a.url + "/"], a.cpu)
                done = next((l for l in out.splitlines() if l.startswith("requests:")), "")
                if f"{n} succeeded" not in done:
                    sys.exit(f"h2load did not succeed on every request: {done}")
            else:
                jtl = os.path.join(work, "h2.jtl")
                cpu_s, wall, _ = cpu_of([binaries[tool], "run", plan, "-D", f"base={a.url}", "-D",
                                         f"threads={a.users}", "-D", f"loops={loops}", "-o", jtl, "--quiet"], a.cpu)
                rows, ok = rows_of(jtl)
                os.remove(jtl)
                if rows != n or ok != n:
                    sys.exit(f"{tool} wrote {rows} rows, {ok} successful, of {n}")
            got[tool] = cpu_s / n * 1e6
            per[tool].append(got[tool])
            print(f"[h2] round {r + 1} {tool}: {got[tool]:.2f} µs CPU/request, {n / wall:,.0f} req/s", file=sys.stderr)
        for (x, y), seen in ratios.items():
            seen.append(got[x] / got[y])
    names = {"h2load": "h2load", "planrun": "planrun", "base": "BASE"}
    print(f"HTTP/2 (h2c) keep-alive GETs to nginx, {a.users} connections, one request in flight each, {n:,} "
          f"requests a run, {a.rounds} rounds, CPU {a.cpu}")
    print("| tool | CPU µs/request (median) |")
    print("| --- | ---: |")
    for tool, seen in per.items():
        print(f"| {names[tool]} | {statistics.median(seen):.2f} |")
    for (x, y), seen in ratios.items():
        print(f"| {names[x]} / {names[y]}, median of the rounds' ratios ({min(seen):.2f} to {max(seen):.2f}) | "
              f"**{statistics.median(seen):.2f}** |")


if __name__ == "__main__":
    main()
