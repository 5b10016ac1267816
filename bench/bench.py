#!/usr/bin/env python3
"""planrun against wrk and oha, and what `--cores` does: the scenarios, their rounds, medians and ratios.

bench/run.sh installs the tools, builds planrun and starts the targets (nginx, the 50 ms stub), then runs
this script, which runs every load generator itself (pinned to a CPU, its CPU time and peak RSS taken from
wait4(2)) and prints markdown tables. Standard library only.

    bench/bench.py --planrun BIN --nginx URL --stub URL [--nginx-pid PID] [--nginx-log FILE] [--work DIR]

Settings come from the environment (bench/run.sh passes its own through):

    RUNS (3)        rounds of every scenario; figures are medians of the rounds
    DURATION (10)   seconds of each run
    GAP (2)         seconds of rest before each run
    PARTS           which parts, default "peers big cpu cpu32k cg icache users gen stall busy" (see PARTS below)
    BASE            another planrun build to compare with, in parts cpu, cpu32k, cg, icache and users
    CLIENT_CPU (1)  the CPU of the generators (wrk, oha, planrun with `--cores 1`)
    ALL_CPUS        the CPUs of planrun in "users", "gen", "stall", "busy" (default: every CPU)

Within a round the generators run one after the other, in the next order of a balanced Latin square:
over a full cycle of rounds each generator runs in each place, and right after each of the others, equally
often. A ratio (planrun / wrk, `--cores 2` / `--cores 1`) is the median over the rounds of the ratio within
one round, so that the host's slow drifts cancel.
"""
import argparse
import csv
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

import hot_lines

CONNS = 50
BIG_USERS = 19000
MANY_USERS = 10000
STALL_SECONDS = 2
HANG_GUARD = 120  # seconds a run may overrun its DURATION before it is killed
ALL_PARTS = "peers big cpu cpu32k cg icache users gen stall busy"
THINK = "2s"
JSON_LOOPS = (2, 22)  # the JSON plan's loops per user in part cg's two runs

# What each part runs: the tools of one round, the users (connections), the target, the ramp-up in seconds.
SCENARIOS = {
    "tput": (["wrk", "oha", "planrun", "planrun-post", "planrun-bare"], CONNS, "nginx", 0),
    "c1000": (["wrk", "oha", "planrun"], 1000, "nginx", 2),
    "c10000": (["wrk", "oha", "planrun"], MANY_USERS, "nginx", 2),
    "lat": (["wrk", "oha", "planrun"], CONNS, "stub", 0),
    "cpu": (["wrk", "cores1", "base"], CONNS, "nginx", 0),
    "cpu32k": (["wrk", "cores1", "base"], CONNS, "nginx32k", 0),
    "users": (["users-1", "users-all", "users-base"], MANY_USERS, "nginx", 2),
    "think": (["think-1", "think-base"], MANY_USERS, "nginx", 2),
    "gen": (["json-1", "json-all", "json-seg"], CONNS, "nginx", 0),
    "busy": (["json-1", "json-all", "json-1-busy", "json-all-busy"], CONNS, "nginx", 0),
}
# The parts (PARTS) and the scenarios each runs in rounds; big, cg, icache and stall run their own way.
PART_SCENARIOS = {"peers": ["tput", "c1000", "c10000", "lat"], "cpu": ["cpu"], "cpu32k": ["cpu32k"],
                  "users": ["users", "think"], "gen": ["gen"], "busy": ["busy"]}
BASE_TOOLS = {"base", "users-base", "think-base"}
LABELS = {
    "planrun": "planrun (GET, templated query, assertion, JTL)",
    "planrun-post": "planrun (POST, templated query + body, assertion, JTL)",
    "planrun-bare": "planrun (GET /, no template, no assertion, JTL)",
}


def log(message):
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------ arithmetic
def median(values):
    """The median of the numbers given, None when there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fmt(value, spec=".0f", unit=""):
    return "-" if value is None else f"{value:{spec}}{unit}"


def balanced_orders(k):
    """The rows of a balanced Latin square (Williams) for k items: k rows for an even k, 2k for an odd one."""
    first, low, high = [0], 1, k - 1
    while low <= high:
        first.append(low)
        low += 1
        if low <= high:
            first.append(high)
            high -= 1
    rows = [[(x + i) % k for x in first] for i in range(k)]
    if k % 2:
        rows += [row[::-1] for row in rows]
    return rows


def order(tools, round_no):
    rows = balanced_orders(len(tools))
    return [tools[i] for i in rows[(round_no - 1) % len(rows)]]


# ------------------------------------------------------------------------------------------ processes
class Processes:
    """Every process this script starts, so that an interrupted benchmark stops them (by PID)."""

    def __init__(self):
        self.live = {}

    def start(self, argv, cpus, out, err, stdin=subprocess.DEVNULL):
        def pin():
            os.sched_setaffinity(0, cpus)

        proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, preexec_fn=pin)
        self.live[proc.pid] = proc
        return proc

    def wait(self, proc, limit):
        """Waits for proc (killing it after `limit` seconds); returns (exit code, user s, sys s, peak RSS KiB)."""
        deadline = time.monotonic() + limit
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                log(f"{proc.args[0]} (pid {proc.pid}) overran its time: killed")
                proc.kill()
                deadline = float("inf")
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        del self.live[proc.pid]
        return proc.returncode, usage.ru_utime, usage.ru_stime, usage.ru_maxrss

    def stop_all(self):
        for proc in self.live.values():
            for sig in (signal.SIGCONT, signal.SIGINT):
                try:
                    os.kill(proc.pid, sig)
                except ProcessLookupError:
                    pass
        for proc in list(self.live.values()):
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Run(dict):
    """The figures of one run of one generator."""


def cpus_of(spec):
    """`0-1,3` -> {0, 1, 3}."""
    cpus = set()
    for part in spec.split(","):
        low, _, high = part.partition("-")
        cpus.update(range(int(low), int(high or low) + 1))
    return cpus


# ------------------------------------------------------------------------------------------ the bench
class Bench:
    def __init__(self, args):
        self.a = args
        self.procs = Processes()
        self.runs = []  # every Run, with its part, tool and round
        self.client = cpus_of(args.client_cpu)
        self.all = cpus_of(args.all_cpus)
        self.ncpu = len(self.all)
        bench = os.path.dirname(os.path.abspath(__file__))
        self.plans = {name: os.path.join(bench, "plans", f"{name}.yaml")
                      for name in ("throughput", "throughput-post", "bare", "json-body")}
        # The GET plan with a think time after each request, and with loops instead of a duration.
        with open(self.plans["throughput"]) as f:
            get = f.read()
        self.plans["think"] = self.derived("think.yaml", get.replace("    steps:", f"    think_time: {THINK}\n    steps:"))
        for loops in (600, 3000):
            self.plans[f"loops{loops}"] = self.derived(
                f"loops{loops}.yaml", get.replace('duration: "{{ props.duration }}"', f"loops: {loops}"))
        # The JSON plan with loops, for callgrind: 10 users x 2 and x 22 requests (see json_instructions).
        with open(self.plans["json-body"]) as f:
            json_plan = f.read()
        for loops in JSON_LOOPS:
            self.plans[f"json-loops{loops}"] = self.derived(
                f"json-loops{loops}.yaml", json_plan.replace('duration: "{{ props.duration }}"', f"loops: {loops}"))

    def derived(self, name, text):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def path(self, name):
        return os.path.join(self.a.work, name)

    def timed(self, name, argv, cpus, limit):
        """Runs argv pinned to cpus; its output in WORK/NAME.out and .err. Returns a Run with wall, user, sys, rss."""
        with open(self.path(f"{name}.out"), "wb") as out, open(self.path(f"{name}.err"), "wb") as err:
            ticks = self.nginx_ticks()
            start = time.monotonic()
            proc = self.procs.start(argv, cpus, out, err)
            rc, user, sys_, rss = self.procs.wait(proc, limit)
            wall = time.monotonic() - start
        run = Run(name=name, rc=rc, wall=wall, user=user, sys=sys_, rss_kib=rss)
        if ticks is not None:
            run["nginx_pct"] = 100 * (self.nginx_ticks() - ticks) / os.sysconf("SC_CLK_TCK") / wall
        return run

    def nginx_ticks(self):
        """nginx's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat)."""
        if not self.a.nginx_pid:
            return None
        try:
            with open(f"/proc/{self.a.nginx_pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])
        except OSError:
            return None

    def text(self, name, suffix="out"):
        try:
            with open(self.path(f"{name}.{suffix}"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    # -------------------------------------------------------------------------------------- generators
    def wrk(self, name, conns, url, latency):
        argv = ["wrk", "-t1", f"-c{conns}", f"-d{self.a.duration}s", "--timeout", "10s"]
        run = self.timed(name, argv + (["--latency"] if latency else []) + [url + "/"], self.client,
                         self.a.duration + HANG_GUARD)
        out = self.text(name)
        m = re.search(r"^\s*(\d+) requests in", out, re.M)
        run["reqs"] = int(m.group(1)) if m else 0
        run["errs"] = sum(int(n) for line in re.findall(r"^\s*(?:Socket errors|Non-2xx).*$", out, re.M)
                          for n in re.findall(r"\b(\d+)\b", line))
        for p in ("50", "99"):
            m = re.search(rf"^\s*{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
            if latency and m:
                run[f"p{p}"] = float(m.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[m.group(2)]
        return run

    def oha(self, name, conns, url):
        argv = ["oha", "--no-tui", "--worker-threads", "1", "--output-format", "json", "-z",
                f"{self.a.duration}s", "-c", str(conns), url + "/"]
        run = self.timed(name, argv, self.client, self.a.duration + HANG_GUARD)
        try:
            report = json.loads(self.text(name))
        except ValueError:
            run["reqs"] = 0
            return run
        run["reqs"] = sum(report.get("statusCodeDistribution", {}).values())
        # Requests cut off by the deadline are not errors.
        run["errs"] = sum(v for k, v in report.get("errorDistribution", {}).items() if "deadline" not in k)
        pct = report.get("latencyPercentiles", {})
        for p in ("p50", "p99"):
            if pct.get(p) is not None:
                run[p] = pct[p] * 1000
        return run

    def planrun_argv(self, binary, plan, users, ramp, url, duration, jtl, extra=()):
        return [binary, "run", plan, "-D", f"base={url}", "-D", f"threads={users}", "-D", f"ramp_up={ramp}s",
                "-D", f"duration={duration}s", "-o", jtl, "--quiet", *extra]

    def planrun(self, name, plan, users, ramp, url, binary=None, extra=(), cpus=None, duration=None):
        duration = duration or self.a.duration
        jtl = self.path(f"{name}.jtl")
        argv = self.planrun_argv(binary or self.a.planrun, plan, users, ramp, url, duration, jtl, extra)
        run = self.timed(name, argv, cpus or self.client, ramp + duration + HANG_GUARD)
        if run["rc"]:
            log(f"planrun {name} exited {run['rc']}: {self.text(name, 'err').strip()[-300:]}")
        run.update(summary(self.text(name)))
        run.update(jtl_figures(jtl))
        remove(jtl)
        return run

    def segments(self, name, plan, users, ramp, url):
        """NCPU processes at once, process I running `--segment I/NCPU --cores 1` on ALL_CPUS, as separate
        machines would: requests, errors and CPU summed, wall and RSS the largest."""
        procs = []
        start = time.monotonic()
        for i in range(self.ncpu):
            jtl = self.path(f"{name}.{i}.jtl")
            argv = self.planrun_argv(self.a.planrun, plan, users, ramp, url, self.a.duration, jtl,
                                     ["--segment", f"{i}/{self.ncpu}", "--cores", "1"])
            out = open(self.path(f"{name}.{i}.out"), "wb")
            err = open(self.path(f"{name}.{i}.err"), "wb")
            procs.append((self.procs.start(argv, self.all, out, err), out, err, jtl))
        run = Run(name=name, rc=0, user=0.0, sys=0.0, rss_kib=0, reqs=0, errs=0, rows=0)
        for i, (proc, out, err, jtl) in enumerate(procs):
            rc, user, sys_, rss = self.procs.wait(proc, ramp + self.a.duration + HANG_GUARD)
            out.close()
            err.close()
            part = summary(self.text(f"{name}.{i}"))
            run["rc"] = run["rc"] or rc
            run["user"] += user
            run["sys"] += sys_
            run["rss_kib"] = max(run["rss_kib"], rss)
            run["reqs"] += part.get("reqs", 0)
            run["errs"] += part.get("errs", 0)
            run["rows"] += jtl_figures(jtl).get("rows", 0)
            remove(jtl)
        run["wall"] = time.monotonic() - start
        return run

    def one(self, part, tool, round_no, users, url, ramp):
        """One run of tool; its figures are recorded under (part, tool)."""
        name = f"{part}.{tool}.{round_no}"
        time.sleep(self.a.gap)  # a rest first, so that no run is measured in the last one's aftermath
        plans = self.plans
        n = self.ncpu
        runners = {
            "wrk": lambda: self.wrk(name, users, url, latency=part == "lat"),
            "oha": lambda: self.oha(name, users, url),
            "planrun": lambda: self.planrun(name, plans["throughput"], users, ramp, url),
            "planrun-post": lambda: self.planrun(name, plans["throughput-post"], users, ramp, url),
            "planrun-bare": lambda: self.planrun(name, plans["bare"], users, ramp, url),
            "planrun-big": lambda: self.planrun(name, plans["throughput"], users, ramp, url,
                                                duration=ramp + self.a.duration),
            # The two builds, each with `--cores 1` on the generator core; the rest on ALL_CPUS.
            "cores1": lambda: self.planrun(name, plans["throughput"], users, ramp, url, extra=["--cores", "1"]),
            "base": lambda: self.planrun(name, plans["throughput"], users, ramp, url, binary=self.a.base,
                                         extra=["--cores", "1"]),
            "json-1": lambda: self.planrun(name, plans["json-body"], users, ramp, url, extra=["--cores", "1"],
                                           cpus=self.all),
            "json-all": lambda: self.planrun(name, plans["json-body"], users, ramp, url,
                                             extra=["--cores", str(n)], cpus=self.all),
            "json-seg": lambda: self.segments(name, plans["json-body"], users, ramp, url),
            # The same two with a busy loop on SERVER_CPU (beside nginx) for the length of the run.
            "json-1-busy": lambda: self.busy(lambda: self.planrun(name, plans["json-body"], users, ramp, url,
                                                                  extra=["--cores", "1"], cpus=self.all)),
            "json-all-busy": lambda: self.busy(lambda: self.planrun(name, plans["json-body"], users, ramp, url,
                                                                    extra=["--cores", str(n)], cpus=self.all)),
            "users-1": lambda: self.planrun(name, plans["throughput"], users, ramp, url, extra=["--cores", "1"],
                                            cpus=self.all),
            "users-all": lambda: self.planrun(name, plans["throughput"], users, ramp, url,
                                              extra=["--cores", str(n)], cpus=self.all),
            "users-base": lambda: self.planrun(name, plans["throughput"], users, ramp, url, binary=self.a.base,
                                               extra=["--cores", "1"], cpus=self.all),
            "think-1": lambda: self.planrun(name, plans["think"], users, ramp, url, extra=["--cores", "1"],
                                            cpus=self.all),
            "think-base": lambda: self.planrun(name, plans["think"], users, ramp, url, binary=self.a.base,
                                               extra=["--cores", "1"], cpus=self.all),
        }
        run = runners[tool]()
        run.update(part=part, tool=tool, round=round_no, users=users)
        if run.get("reqs", 0) == 0:
            run["failed"] = True
            log(f"{part} {tool} n={users}: FAILED (see {self.path(name)}.err)")
        else:
            cpu = run["user"] + run["sys"]
            run.update(rps=run["reqs"] / run["wall"], cpu_pct=100 * cpu / run["wall"],
                       cpu10k=cpu * 1e4 / run["reqs"], user10k=run["user"] * 1e4 / run["reqs"],
                       sys10k=run["sys"] * 1e4 / run["reqs"], rss=run["rss_kib"] / 1024)
            if "rows" in run:
                run["rows_per_cpu_s"] = run["rows"] / cpu if cpu else None
            log(f"{part} {tool} n={users}: {run['reqs']} requests in {run['wall']:.1f} s, CPU {cpu:.2f} s, "
                f"RSS {run['rss']:.0f} MiB, p50 {fmt(run.get('p50'), '.2f')} p99 {fmt(run.get('p99'), '.2f')} ms, "
                f"errors {run.get('errs', 0)}")
        self.runs.append(run)
        return run

    def busy(self, run):
        """Runs `run()` while a shell loops without rest on SERVER_CPU, started before and stopped (by its PID)
        after: the other work of a loaded machine, on the core the generator shares with nginx."""
        loop = self.procs.start(["sh", "-c", "while :; do :; done"], cpus_of(self.a.server_cpu),
                                subprocess.DEVNULL, subprocess.DEVNULL)
        try:
            return run()
        finally:
            loop.kill()
            self.procs.wait(loop, 10)

    def rounds(self, part):
        tools, users, target, ramp = SCENARIOS[part]
        tools = [t for t in tools if (t not in ("wrk", "oha") or shutil.which(t)) and (t not in BASE_TOOLS or self.a.base)]
        url = {"nginx": self.a.nginx, "nginx32k": self.a.nginx_32k, "stub": self.a.stub}[target]
        for r in range(1, self.a.runs + 1):
            log(f"round {r}/{self.a.runs}: {part}, {users} users, {target}")
            for tool in order(tools, r):
                self.one(part, tool, r, users, url, ramp)

    def instructions(self, name, binary, extra=(), plan="loops3000"):
        """User-space instructions per request under callgrind: the GET plan, 10 users x 3,000 loops (or
        `plan`, 10 users)."""
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.path('cg.' + name + '.cg')}",
                binary, "run", self.plans[plan], "-D", f"base={self.a.nginx}", "-D", "threads=10",
                "-o", self.path(f"cg.{name}.jtl"), "--quiet", *extra]
        run = self.timed(f"cg.{name}", argv, self.client, 1800)
        collected = re.search(r"Collected : (\d+)", self.text(f"cg.{name}", "err"))
        reqs = summary(self.text(f"cg.{name}")).get("reqs")
        remove(self.path(f"cg.{name}.cg"), self.path(f"cg.{name}.jtl"))
        run.update(part="cg", tool=name, round=1)
        if collected and reqs:
            run.update(per_request=int(collected.group(1)) / reqs, collected=int(collected.group(1)), reqs=reqs)
            log(f"callgrind {name}: {collected.group(1)} instructions for {reqs} requests")
        else:
            run["failed"] = True
            log(f"callgrind {name} failed: {self.text(f'cg.{name}', 'err').strip()[-300:]}")
        self.runs.append(run)
        return run

    def caches(self, name, argv, requests_of):
        """argv under cachegrind (its simulated caches: instructions, L1i and L1d misses a request) and under
        callgrind with --dump-instr (the hot lines of bench/hot_lines.py), on the client CPU, one run each."""
        run = Run(part="icache", tool=name, round=1)
        cg_out, hl_out = self.path(f"ic.{name}.cg"), self.path(f"hl.{name}.cg")
        self.timed(f"ic.{name}", ["valgrind", "--tool=cachegrind", "--cache-sim=yes",
                                  f"--cachegrind-out-file={cg_out}", *argv], self.client, 1800)
        self.timed(f"hl.{name}", ["valgrind", "--tool=callgrind", "--dump-instr=yes",
                                  f"--callgrind-out-file={hl_out}", *argv], self.client, 1800)
        reqs, hl_reqs = requests_of(self.text(f"ic.{name}")), requests_of(self.text(f"hl.{name}"))
        summary_text = self.text(f"ic.{name}", "err").replace(",", "")
        counts = {k: re.search(rf"{k}\s+(?:refs|misses):\s+(\d+)", summary_text) for k in ("I", "I1", "D1")}
        if not reqs or not hl_reqs or not all(counts.values()):
            run["failed"] = True
            log(f"icache {name} failed: {self.text(f'ic.{name}', 'err').strip()[-300:]}")
        else:
            run.update({f"{k}_per_request": int(m.group(1)) / reqs for k, m in counts.items()})
            try:
                run["hot_lines"] = hot_lines.hot(hl_out, hl_reqs, 0.9, os.path.basename(argv[0]))[1]
            except (LookupError, OSError) as e:
                log(f"hot lines of {name}: {e}")
            log(f"icache {name}: {run['I_per_request']:.0f} instructions, {run['I1_per_request']:.1f} L1i and "
                f"{run['D1_per_request']:.1f} L1d misses a request, {run.get('hot_lines')} hot lines")
        remove(cg_out, hl_out)
        self.runs.append(run)

    def json_instructions(self, name, binary):
        """Instructions per request of the JSON plan under callgrind, at the margin: its runs of 10 users x
        JSON_LOOPS requests, the difference of their instructions over the difference of their requests, so that
        loading the plan (434 templates compiled) is not counted. Its requests cost up to 4 M instructions each
        in older builds: few of them keep callgrind to minutes."""
        runs = [self.instructions(f"{name}.{loops}", binary, ["--cores", "1"], plan=f"json-loops{loops}")
                for loops in JSON_LOOPS]
        run = Run(part="cg", tool=name, round=1)
        if all(r.get("collected") for r in runs) and runs[1]["reqs"] > runs[0]["reqs"]:
            run["per_request"] = (runs[1]["collected"] - runs[0]["collected"]) / (runs[1]["reqs"] - runs[0]["reqs"])
            log(f"callgrind {name}: {run['per_request']:.0f} instructions a request at the margin")
        else:
            run["failed"] = True
        self.runs.append(run)

    def icache(self):
        def planrun_reqs(text):
            return summary(text).get("reqs")

        def wrk_reqs(text):
            m = re.search(r"^\s*(\d+) requests in", text, re.M)
            return int(m.group(1)) if m else None

        builds = [("planrun", self.a.planrun)] + ([("base", self.a.base)] if self.a.base else [])
        for name, binary in builds:
            jtl = self.path(f"ic.{name}.jtl")
            self.caches(name, [binary, "run", self.plans["loops600"], "-D", f"base={self.a.nginx}", "-D",
                               f"threads={CONNS}", "-o", jtl, "--quiet", "--cores", "1"], planrun_reqs)
            remove(jtl)
        if shutil.which("wrk"):
            self.caches("wrk", ["wrk", "-t1", f"-c{CONNS}", "-d5s", self.a.nginx + "/"], wrk_reqs)

    def stall(self, round_no, cores, pause):
        """The GET plan, 50 users for STALL + 6 s on ALL_CPUS, its JTL written to a FIFO that a `cat` copies to
        a file; with pause, that reader is stopped (SIGSTOP) 3 s into the run for STALL_SECONDS."""
        name = f"stall.{'paused' if pause else 'free'}.c{cores}.{round_no}"
        fifo, copy = self.path(f"{name}.fifo"), self.path(f"{name}.jtl")
        os.mkfifo(fifo)
        with open(copy, "wb") as sink, open(self.path(f"{name}.cat.err"), "wb") as err:
            reader = self.procs.start(["cat", fifo], self.all, sink, err)
        argv = self.planrun_argv(self.a.planrun, self.plans["throughput"], CONNS, 0, self.a.nginx,
                                 STALL_SECONDS + 6, fifo, ["--cores", str(cores)])
        with open(self.path(f"{name}.out"), "wb") as out, open(self.path(f"{name}.err"), "wb") as err:
            start = time.monotonic()
            runner = self.procs.start(argv, self.all, out, err)
            if pause:
                time.sleep(3)
                os.kill(reader.pid, signal.SIGSTOP)
                time.sleep(STALL_SECONDS)
                os.kill(reader.pid, signal.SIGCONT)
            rc = self.procs.wait(runner, STALL_SECONDS + 6 + HANG_GUARD)[0]
            wall = time.monotonic() - start
        self.procs.wait(reader, HANG_GUARD)
        run = Run(part="stall", tool=f"{'paused' if pause else 'free'}.c{cores}", round=round_no, rc=rc)
        stamps = sorted(jtl_column(copy, "timeStamp", int))
        reqs = summary(self.text(name)).get("reqs", 0)
        if rc or not stamps:
            run["failed"] = True
            log(f"stall {name} exited {rc}: {self.text(name, 'err').strip()[-300:]}")
        else:
            gap, at = max((b - a, a) for a, b in zip(stamps, stamps[1:])) if len(stamps) > 1 else (0, stamps[0])
            waited = re.search(r"Results writer fell behind: (\d+) samples", self.text(name))
            run.update(gap=gap, at=(at - stamps[0]) / 1000, waited=int(waited.group(1)) if waited else 0,
                       lost=reqs - len(stamps), rps=reqs / wall)
            log(f"stall {name}: {reqs} requests, {len(stamps)} rows, longest gap {gap} ms at {run['at']:.1f} s, "
                f"{run['waited']} samples waited")
        remove(fifo, copy)
        self.runs.append(run)

    # -------------------------------------------------------------------------------------- figures
    def values(self, part, tool, key):
        return [r.get(key) for r in self.runs if r["part"] == part and r["tool"] == tool and not r.get("failed")]

    def get(self, part, tool, key):
        return median(self.values(part, tool, key))

    def round_ratios(self, part, tool, against, key):
        """tool's figure divided by against's, in each round that has both."""
        by_round = {}
        for r in self.runs:
            if r["part"] == part and r["tool"] in (tool, against) and not r.get("failed"):
                by_round.setdefault(r["round"], {})[r["tool"]] = r.get(key)
        return [x for x in (ratio(v.get(tool), v.get(against)) for v in by_round.values()) if x is not None]

    def round_ratio(self, part, tool, against, key):
        """The median over the rounds of tool's figure divided by against's in the same round."""
        return median(self.round_ratios(part, tool, against, key))

    def ratio_cell(self, part, tool, against, key="cpu10k"):
        """The median of the rounds' ratios, with their range."""
        values = self.round_ratios(part, tool, against, key)
        if not values:
            return "-"
        spread = f" ({min(values):.2f} to {max(values):.2f})" if len(values) > 1 else ""
        return f"{median(values):.2f}{spread}"

    def failed(self, part, tool):
        return sum(1 for r in self.runs if r["part"] == part and r["tool"] == tool and r.get("failed"))


def remove(*paths):
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)


def summary(text):
    """Requests, p50, p99 (ms) and failed samples from the TOTAL line of planrun's summary table."""
    header = None
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] == "Label":
            header = cells
        elif header and cells and cells[0] == "TOTAL" and len(cells) == len(header):
            row = dict(zip(header, cells))
            reqs = int(row["Samples"])
            return {"reqs": reqs, "p50": float(row["p50"]), "p99": float(row["p99"]),
                    "errs": round(reqs * float(row["Error %"].rstrip("%")) / 100)}
    return {}


def jtl_column(path, column, kind=str):
    try:
        with open(path, newline="") as f:
            return [kind(row[column]) for row in csv.DictReader(f)]
    except (OSError, KeyError, ValueError):
        return []


def jtl_figures(path):
    """Rows; the most users active at once (allThreads); users with a good answer; failed rows by code."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return {}
    failures = {}
    for row in rows:
        if row.get("success") == "false":
            failures[row.get("responseCode")] = failures.get(row.get("responseCode"), 0) + 1
    return {"rows": len(rows),
            "active": max((int(r["allThreads"]) for r in rows if r.get("allThreads")), default=0),
            "served": len({r.get("threadName") for r in rows if r.get("success") == "true"}),
            "failures": failures}


# ------------------------------------------------------------------------------------------ tables
def peers_tables(b, parts, nginx_warnings):
    a = b.a
    out = ["", "## planrun vs wrk and oha", "", host_line(b),
           f"target and stub on core(s) {a.server_cpu}, generator on CPU {a.client_cpu}; median of {a.runs} "
           f"round(s) of {a.duration} s runs; {versions(b)}.", "",
           "| tool | req/s, 50 conns | CPU s / 10k req (user + sys) | peak RSS, 1,000 conns | "
           "peak RSS, 10,000 conns | p50, 50 ms server | p99, 50 ms server |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    tools = [t for t in SCENARIOS["tput"][0] if t not in ("wrk", "oha") or shutil.which(t)]

    def rss(part, tool):
        f = b.failed(part, tool)
        value = b.get(part, tool, "rss")
        if value is None:
            return f"failed ({f}/{a.runs} runs)" if f else "-"
        errs = b.get(part, tool, "errs")
        note = f", {f}/{a.runs} runs failed" if f else (f" ({errs:.0f} errors)" if errs else "")
        return f"{value:.0f} MiB{note}"

    for t in tools:
        cpu = b.get("tput", t, "cpu10k")
        cells = [LABELS.get(t, t), fmt(b.get("tput", t, "rps")),
                 f"{fmt(cpu, '.3f')} ({fmt(b.get('tput', t, 'user10k'), '.3f')} + {fmt(b.get('tput', t, 'sys10k'), '.3f')})"]
        if t in ("planrun-post", "planrun-bare"):
            cells += ["-"] * 4
        else:
            cells += [rss("c1000", t), rss("c10000", t)]
            for p in ("p50", "p99"):
                v = b.get("lat", t, p)
                cells.append("-" if v is None else f"{v:.2f} ms ({v - 50:+.2f})")
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "Ratios, planrun / peer: the median over the rounds of the ratio within a round.", "",
            "| figure | planrun / wrk | planrun / oha |", "| --- | ---: | ---: |"]
    rows = [("CPU s per 10k requests, GET plan", "tput", "planrun", "cpu10k"),
            ("CPU s per 10k requests, POST plan", "tput", "planrun-post", "cpu10k"),
            ("CPU s per 10k requests, bare plan", "tput", "planrun-bare", "cpu10k"),
            ("user CPU per request, GET plan", "tput", "planrun", "user10k"),
            ("sys CPU per request, GET plan", "tput", "planrun", "sys10k"),
            ("requests/s, 50 connections", "tput", "planrun", "rps"),
            ("peak RSS, 10,000 connections", "c10000", "planrun", "rss")]
    for label, part, tool, key in rows:
        out.append(f"| {label} | {fmt(b.round_ratio(part, tool, 'wrk', key), '.2f')} | "
                   f"{fmt(b.round_ratio(part, tool, 'oha', key), '.2f')} |")
    p50 = median(ratio_free(b, "lat", "p50"))
    out += ["", f"p50 against the 50 ms server, planrun - wrk: {fmt(p50, '+.2f', ' ms')} (median of the rounds)."]
    if "big" in parts:
        out.append(big_line(b, nginx_warnings))
    out.append(f"JTL sink, lower bound: {fmt(b.get('tput', 'planrun', 'rows_per_cpu_s'))} rows per CPU second of "
               "the whole planrun process (requests, templates, assertion and JTL together).")
    return out


def ratio_free(b, part, key):
    """planrun's figure minus wrk's, per round."""
    by_round = {}
    for r in b.runs:
        if r["part"] == part and r["tool"] in ("planrun", "wrk") and not r.get("failed"):
            by_round.setdefault(r["round"], {})[r["tool"]] = r.get(key)
    return [v["planrun"] - v["wrk"] for v in by_round.values()
            if v.get("planrun") is not None and v.get("wrk") is not None]


def big_line(b, nginx_warnings):
    a = b.a
    if b.failed("big", "planrun-big") or not b.values("big", "planrun-big", "reqs"):
        line = f"planrun with {BIG_USERS} virtual users: FAILED (see the log above)."
    else:
        run = next(r for r in b.runs if r["part"] == "big" and r["tool"] == "planrun-big")
        failures = "; ".join(f"{n} x {code}" for code, n in sorted(run.get("failures", {}).items()))
        line = (f"planrun with {BIG_USERS} virtual users (ramp-up 5 s, then {a.duration} s): completed; at most "
                f"{run.get('active')} active at once, {run.get('served')} of them served at least once, "
                f"{run['rps']:.0f} req/s, {run.get('errs', 0)} failed samples"
                f"{f' ({failures})' if failures else ''}, peak RSS {run['rss']:.0f} MiB.")
    wrk = b.get("big", "wrk", "rps")
    if wrk is not None:
        line += (f"\nwrk with {BIG_USERS} connections ({a.duration} s), same target: {wrk:.0f} req/s, "
                 f"{fmt(b.get('big', 'wrk', 'errs'))} socket errors, peak RSS {fmt(b.get('big', 'wrk', 'rss'))} MiB; "
                 f"nginx logged \"worker_connections are not enough\" {nginx_warnings} time(s).")
    return line


def builds_tables(b, parts):
    """Parts cpu, cpu32k, cg, icache, users: planrun (and BASE) against wrk, per request; memory per user."""
    a, n = b.a, b.ncpu
    base = f"BASE ({version_of([a.base, '--version'])})" if a.base else None
    out = ["", "## planrun per request" + (", against BASE" if base else ""), "", host_line(b),
           f"nginx on core(s) {a.server_cpu}, generators on CPU {a.client_cpu}; {versions(b)}; median of {a.runs} "
           f"round(s) of {a.duration} s runs; a ratio is the median over the rounds of the ratio within one "
           "round (in brackets, the rounds' range)."]
    rows = [("wrk", "wrk", "wrk"), ("planrun --cores 1", "cores1", "planrun")] + ([(base, "base", "base")] if base else [])
    if set(parts) & {"cpu", "cg", "icache"}:
        out += ["", f"GET plan (templated query, assertion, JTL row), {CONNS} users, 2-byte responses; callgrind: "
                    "10 users x 3,000 requests; cachegrind and hot lines: 50 users x 600 requests (wrk: 5 s):", "",
                "| generator | CPU s / 10k req | user us / req | sys us / req | req/s | instructions / req (callgrind) | "
                "cachegrind instructions / L1i / L1d misses a request | hot lines |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for label, tool, ic in rows:
            cache = "-"
            if b.values("icache", ic, "I_per_request"):
                cache = (f"{b.get('icache', ic, 'I_per_request'):.0f} / {b.get('icache', ic, 'I1_per_request'):.1f} / "
                         f"{b.get('icache', ic, 'D1_per_request'):.1f}")
            user, sys_ = b.get("cpu", tool, "user10k"), b.get("cpu", tool, "sys10k")
            out.append(f"| {label} | {fmt(b.get('cpu', tool, 'cpu10k'), '.4f')} | {fmt(user and user * 100, '.2f')} | "
                       f"{fmt(sys_ and sys_ * 100, '.2f')} | {fmt(b.get('cpu', tool, 'rps'))} | "
                       f"{fmt(b.get('cg', tool if tool != 'wrk' else None, 'per_request'))} | {cache} | "
                       f"{fmt(b.get('icache', ic, 'hot_lines'))} |")
        if "cg" in parts:
            out.append(f"| planrun --cores {n} | | | | | {fmt(b.get('cg', f'cores{n}', 'per_request'))} | | |")
            out.append(f"| planrun --cores 1, JSON plan (~10 KB body; at the margin of 10 users x {JSON_LOOPS}) | | | | | "
                       f"{fmt(b.get('cg', 'json-cores1', 'per_request'))} | | |")
            if base:
                out.append(f"| {base}, JSON plan | | | | | {fmt(b.get('cg', 'json-base', 'per_request'))} | | |")
    ratios = [("CPU per request, planrun / wrk", "cores1", "wrk"), ("CPU per request, BASE / wrk", "base", "wrk"),
              ("CPU per request, planrun / BASE", "cores1", "base")]
    if "cpu" in parts or "cpu32k" in parts:
        out += ["", "| figure | 2-byte responses | 32 KiB responses |", "| --- | ---: | ---: |"]
        for label, tool, against in ratios if base else ratios[:1]:
            out.append(f"| {label} | {b.ratio_cell('cpu', tool, against)} | {b.ratio_cell('cpu32k', tool, against)} |")
        if base and "cg" in parts:
            out.append(f"| instructions per request, planrun / BASE | "
                       f"{fmt(ratio(b.get('cg', 'cores1', 'per_request'), b.get('cg', 'base', 'per_request')), '.3f')} | |")
    if "users" in parts:
        out += ["", f"Peak RSS of {MANY_USERS:,} keep-alive users (GET plan, ramp-up 2 s, planrun on CPUs {a.all_cpus}):",
                "", "| | planrun --cores 1 | planrun --cores " + str(n) + (f" | {base}" if base else "") + " |",
                "| --- | ---: | ---: |" + (" ---: |" if base else "")]

        def rss(tool):
            v = b.get("users", tool, "rss")
            return "-" if v is None else f"{v:.0f} MiB ({v * 1024 / MANY_USERS:.1f} KiB a user)"

        def think_rss(tool):
            v = b.get("think", tool, "rss")
            return "-" if v is None else f"{v:.0f} MiB ({v * 1024 / MANY_USERS:.1f} KiB a user)"

        out.append(f"| full load | {rss('users-1')} | {rss('users-all')} |" + (f" {rss('users-base')} |" if base else ""))
        out.append(f"| think time {THINK} | {think_rss('think-1')} | |" + (f" {think_rss('think-base')} |" if base else ""))
        out.append(f"| failed samples, full load | {fmt(b.get('users', 'users-1', 'errs'))} | "
                   f"{fmt(b.get('users', 'users-all', 'errs'))} |" + (f" {fmt(b.get('users', 'users-base', 'errs'))} |" if base else ""))
    return out


def cores_tables(b, parts):
    a, n = b.a, b.ncpu
    out = ["", "## planrun --cores", "", host_line(b),
           f"nginx on core(s) {a.server_cpu}; {versions(b, peers=False)}; median of {a.runs} round(s) of "
           f"{a.duration} s runs; a ratio is the median over the rounds of the ratio within one round."]
    if "gen" in parts or "users" in parts or "busy" in parts:
        out += ["", f"| figure (planrun on CPUs {a.all_cpus}) | --cores 1 | --cores {n} | ratio |",
                "| --- | ---: | ---: | ---: |"]

    def row(label, part, one, many, key, spec, unit="", with_ratio=True):
        r = fmt(b.round_ratio(part, many, one, key), ".2f") if with_ratio else ""
        out.append(f"| {label} | {fmt(b.get(part, one, key), spec, unit)} | {fmt(b.get(part, many, key), spec, unit)} | {r} |")

    if "gen" in parts:
        row(f"requests/s, JSON plan (~10 KB body), {CONNS} users", "gen", "json-1", "json-all", "rps", ".0f")
        row(f"requests/s, JSON plan: `--cores 1`, and {n} processes (`--segment I/{n} --cores 1`)",
            "gen", "json-1", "json-seg", "rps", ".0f")
        row("CPU s / 10k requests, JSON plan", "gen", "json-1", "json-all", "cpu10k", ".2f")
        row("planrun CPU, % of one core, JSON plan", "gen", "json-1", "json-all", "cpu_pct", ".0f", "%", False)
        row("nginx CPU, % of one core, JSON plan", "gen", "json-1", "json-all", "nginx_pct", ".0f", "%", False)
    if "busy" in parts:
        busy = f"a busy loop on core(s) {a.server_cpu}"
        row(f"requests/s, JSON plan, {CONNS} users (rounds with {busy} rotated in)", "busy", "json-1", "json-all",
            "rps", ".0f")
        row(f"requests/s, JSON plan, with {busy}", "busy", "json-1-busy", "json-all-busy", "rps", ".0f")
        row("CPU s / 10k requests, JSON plan", "busy", "json-1", "json-all", "cpu10k", ".2f")
        row(f"CPU s / 10k requests, JSON plan, with {busy}", "busy", "json-1-busy", "json-all-busy", "cpu10k", ".2f")
        row("planrun CPU, % of one core, JSON plan", "busy", "json-1", "json-all", "cpu_pct", ".0f", "%", False)
        row(f"planrun CPU, % of one core, JSON plan, with {busy}", "busy", "json-1-busy", "json-all-busy", "cpu_pct",
            ".0f", "%", False)
        row("nginx CPU, % of one core, JSON plan", "busy", "json-1", "json-all", "nginx_pct", ".0f", "%", False)
        row(f"nginx CPU, % of one core, JSON plan, with {busy}", "busy", "json-1-busy", "json-all-busy", "nginx_pct",
            ".0f", "%", False)
        out.append(f"| spread of the requests/s ratio over the rounds: idle; with {busy} | | | "
                   f"{b.ratio_cell('busy', 'json-all', 'json-1', 'rps')}; "
                   f"{b.ratio_cell('busy', 'json-all-busy', 'json-1-busy', 'rps')} |")
    if "users" in parts:
        row(f"requests/s, {MANY_USERS:,} users (GET plan, ramp-up 2 s)", "users", "users-1", "users-all", "rps", ".0f")
    if "stall" in parts:
        cols = ["paused.c1", f"paused.c{n}", "free.c1", f"free.c{n}"]
        out += ["", f"JTL to a FIFO whose reader (a `cat`) is stopped for {STALL_SECONDS} s, 3 s into a "
                    f"{STALL_SECONDS + 6} s run of the GET plan ({CONNS} users), and the same run without a stop:", "",
                f"| figure | stopped, --cores 1 | stopped, --cores {n} | not stopped, --cores 1 | not stopped, --cores {n} |",
                "| --- | ---: | ---: | ---: | ---: |"]
        for label, key, spec, unit in (("longest gap between request starts", "gap", ".0f", " ms"),
                                       ("... beginning (s into the run)", "at", ".1f", " s"),
                                       ("samples that waited for the writer", "waited", ".0f", ""),
                                       ("samples missing from the JTL", "lost", ".0f", ""),
                                       ("requests/s over the run", "rps", ".0f", "")):
            out.append(f"| {label} | " + " | ".join(fmt(b.get("stall", c, key), spec, unit) for c in cols) + " |")
        failed = sum(b.failed("stall", c) for c in cols)
        if failed:
            out.append(f"({failed} stall run(s) failed: see the log.)")
    return out


def host_line(b):
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model}), kernel {os.uname().release}, load average " \
           f"{' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end;"


def version_of(argv):
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
        return (done.stdout or done.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return f"{argv[0]} ?"


def versions(b, peers=True):
    names = [version_of([b.a.planrun, "--version"])]
    if peers:
        names += [" ".join(version_of(["wrk", "-v"]).split()[:2]) if shutil.which("wrk") else "no wrk",
                  version_of(["oha", "--version"]) if shutil.which("oha") else "no oha"]
    return ", ".join(names)


# ------------------------------------------------------------------------------------------ main
def main(argv=None):
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--planrun", required=True, help="the planrun binary to measure")
    p.add_argument("--nginx", required=True, help="URL of nginx answering `return 200 \"ok\"`")
    p.add_argument("--stub", help="URL of the 50 ms stub (bench/stubs/delay50.yaml)")
    p.add_argument("--nginx-32k", help="URL of nginx answering a 32 KiB body, for part cpu32k")
    p.add_argument("--nginx-pid", type=int, help="nginx's PID, for its CPU share")
    p.add_argument("--nginx-log", help="nginx's error log, for the many-users run")
    p.add_argument("--work", default=".", help="where runs leave their output")
    p.add_argument("--runs", type=int, default=int(env("RUNS", 3)))
    p.add_argument("--duration", type=int, default=int(env("DURATION", 10)))
    p.add_argument("--gap", type=float, default=float(env("GAP", 2)))
    p.add_argument("--parts", default=env("PARTS", ALL_PARTS))
    p.add_argument("--base", default=env("BASE") or None)
    p.add_argument("--server-cpu", default=env("SERVER_CPU", "0"))
    p.add_argument("--client-cpu", default=env("CLIENT_CPU", "1"))
    p.add_argument("--all-cpus", default=env("ALL_CPUS") or f"0-{os.cpu_count() - 1}")
    a = p.parse_args(argv)
    parts = a.parts.split()
    unknown = set(parts) - set(ALL_PARTS.split())
    if unknown:
        p.error(f"unknown part(s) {' '.join(sorted(unknown))}; the parts are: {ALL_PARTS}")
    for part in ("cg", "icache"):
        if part in parts and not shutil.which("valgrind"):
            log(f"no valgrind: part {part} skipped")
            parts.remove(part)
    if "cpu32k" in parts and not a.nginx_32k:
        log("no --nginx-32k: part cpu32k skipped")
        parts.remove("cpu32k")
    if "peers" in parts and not a.stub:
        p.error("part peers needs --stub")
    for tool in ("wrk", "oha"):
        if "peers" in parts and not shutil.which(tool):
            log(f"no {tool} on PATH: it is left out")

    b = Bench(a)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        for part in parts:
            for scenario in PART_SCENARIOS.get(part, []):
                b.rounds(scenario)
            if part == "big":
                log(f"one run: planrun with {BIG_USERS} virtual users (ramp-up 5 s), then wrk with as many connections")
                b.one("big", "planrun-big", 1, BIG_USERS, a.nginx, 5)
                if shutil.which("wrk"):
                    b.one("big", "wrk", 1, BIG_USERS, a.nginx, 0)
            if part == "cg":
                log("callgrind: instructions per request (a minute or two each)")
                if a.base:
                    b.instructions("base", a.base)
                b.instructions("cores1", a.planrun, ["--cores", "1"])
                b.instructions(f"cores{b.ncpu}", a.planrun, ["--cores", str(b.ncpu)])
                if a.base:
                    b.json_instructions("json-base", a.base)
                b.json_instructions("json-cores1", a.planrun)
            if part == "icache":
                log("cachegrind and callgrind --dump-instr: caches and hot lines per request (a few minutes)")
                b.icache()
            if part == "stall":
                for r in range(1, a.runs + 1):
                    log(f"round {r}/{a.runs}: JTL to a FIFO whose reader stops for {STALL_SECONDS} s")
                    for cores in (1, b.ncpu):
                        b.stall(r, cores, pause=True)
                        b.stall(r, cores, pause=False)
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        b.procs.stop_all()
        with open(os.path.join(a.work, "runs.json"), "w") as f:
            json.dump(b.runs, f, indent=1, default=str)

    warnings = 0
    if a.nginx_log and os.path.exists(a.nginx_log):
        with open(a.nginx_log, errors="replace") as f:
            warnings = f.read().count("worker_connections are not enough")
    lines = []
    if "peers" in parts:
        lines += peers_tables(b, parts, warnings)
    elif "big" in parts:
        lines += ["", big_line(b, warnings)]
    if set(parts) & {"cpu", "cpu32k", "cg", "icache", "users"}:
        lines += builds_tables(b, parts)
    if set(parts) & {"users", "gen", "stall", "busy"}:
        lines += cores_tables(b, parts)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(a.work, "tables.md"), "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
