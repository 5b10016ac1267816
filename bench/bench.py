#!/usr/bin/env python3
"""planrun against wrk and oha and against the tools users pick, and what `--cores` does: the scenarios, their
rounds, medians and ratios.

bench/run.sh installs the tools, builds planrun and starts the targets (nginx, the 50 ms stub), then runs
this script, which runs every load generator itself (pinned to a CPU, its CPU time and peak RSS taken from
wait4(2)) and prints markdown tables. Standard library only.

    bench/bench.py --planrun BIN --nginx URL --stub URL [--nginx-pid PID] [--nginx-log FILE] [--work DIR]

Settings come from the environment (bench/run.sh passes its own through):

    RUNS (3)        rounds of every scenario; figures are medians of the rounds
    DURATION (10)   seconds of each run
    GAP (2)         seconds of rest before each run
    PARTS           which parts, default "peers big cpu cpu32k cg icache users gen stall close tls busy" (see
                    PARTS below); "tools" and "crowd" (the tools users pick, bench/peers/) run only when named
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
import random
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
ALL_PARTS = "peers big cpu cpu32k cg icache users gen stall close tls busy"
# Parts that run only when named: the load-test tools users pick, on planrun's own workload.
TOOL_PARTS = "tools crowd"
THINK = "2s"
JSON_LOOPS = (2, 22)  # the JSON plan's loops per user in part cg's two runs

# The tools of parts "tools" and "crowd" (bench/peers/ has each one's script of bench/plans/peers.yaml).
PEER_TOOLS = ["planrun-peers", "drill", "locust", "k6", "artillery", "jmeter"]
PEER_USERS = 200
CROWD_USERS = 5000
CROWD_THINK = 1  # seconds after each request (drill's `delay` takes whole seconds)
CROWD_RAMP = 5
DRILL_ROWS = 20  # rows of bench/peers/drill.yml's CSV: requests of one step in one iteration
# Requests a second each count-bounded tool is first assumed to make, until a run of it measures its rate.
FIRST_RATE = {"drill": 3000, "artillery": 200}

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
    "tools": (PEER_TOOLS, PEER_USERS, "counted", 0),
    "crowd": (PEER_TOOLS, CROWD_USERS, "counted", CROWD_RAMP),
    # A new connection per request (`Connection: close`), plain and over TLS; keep-alive over TLS; the peak RSS
    # of 10,000 keep-alive users over TLS and, in the same rounds, over plain HTTP.
    "close": (["wrk-close", "close-1", "close-base"], CONNS, "nginx", 0),
    "tlsclose": (["wrk-close", "close-1", "close-base"], CONNS, "nginxtls", 0),
    "tls": (["wrk", "cores1", "base"], CONNS, "nginxtls", 0),
    "tlsusers": (["users-1", "users-base", "users-plain"], MANY_USERS, "nginxtls", 10),
    "busy": (["json-1", "json-all", "json-1-busy", "json-all-busy"], CONNS, "nginx", 0),
}
# The parts (PARTS) and the scenarios each runs in rounds; big, cg, icache and stall run their own way.
PART_SCENARIOS = {"peers": ["tput", "c1000", "c10000", "lat"], "cpu": ["cpu"], "cpu32k": ["cpu32k"],
                  "users": ["users", "think"], "gen": ["gen"], "tools": ["tools"], "crowd": ["crowd"],
                  "close": ["close", "tlsclose"], "tls": ["tls", "tlsusers"], "busy": ["busy"]}
BASE_TOOLS = {"base", "users-base", "think-base", "close-base"}
LABELS = {
    "planrun": "planrun (GET, templated query, assertion, JTL)",
    "planrun-post": "planrun (POST, templated query + body, assertion, JTL)",
    "planrun-bare": "planrun (GET /, no template, no assertion, JTL)",
    "planrun-peers": "planrun",
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

    def start(self, argv, cpus, out, err, stdin=subprocess.DEVNULL, env=None):
        def pin():
            os.sched_setaffinity(0, cpus)

        proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, preexec_fn=pin,
                                env=None if env is None else {**os.environ, **env})
        self.live[proc.pid] = proc
        return proc

    def wait(self, proc, limit, poll=None):
        """Waits for proc (killing it after `limit` seconds), calling poll(pid) meanwhile; returns (exit code,
        user s, sys s, peak RSS KiB)."""
        deadline = time.monotonic() + limit
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if poll:
                poll(proc.pid)
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
        with open(os.path.join(bench, "plans", "peers.yaml")) as f:
            peers = f.read()
        self.plans["peers"] = os.path.join(bench, "plans", "peers.yaml")
        self.plans["peers-think"] = self.derived(
            "peers-think.yaml", peers.replace("    steps:", f"    think_time: {CROWD_THINK}s\n    steps:"))
        self.peers_dir = os.path.join(bench, "peers")
        self.rates = dict(FIRST_RATE)  # the last measured req/s of each count-bounded tool
        self.startup = False  # whether timed() notes each run's start-up CPU
        self.tools = {"planrun-peers", *(args.tools or " ".join(PEER_TOOLS)).split()}
        for loops in (600, 3000):
            self.plans[f"loops{loops}"] = self.derived(
                f"loops{loops}.yaml", get.replace('duration: "{{ props.duration }}"', f"loops: {loops}"))
        # The same over TLS (nginx's self-signed certificate) and with a new connection per request: the header
        # that `keep_alive: false` sends, written out so that a BASE build without that key runs the same plan.
        close, tls = "  headers: { Connection: close }\n", "  tls: { insecure: true }\n"
        for name, extra in (("close", close), ("tls", tls), ("tlsclose", close + tls)):
            text = get.replace("  timeout: 10s\n", "  timeout: 10s\n" + extra)
            self.plans[name] = self.derived(f"{name}.yaml", text)
            self.plans[f"{name}-loops"] = self.derived(
                f"{name}-loops.yaml", text.replace('duration: "{{ props.duration }}"', "loops: 600"))
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

    def timed(self, name, argv, cpus, limit, env=None, startup=False):
        """Runs argv pinned to cpus; its output in WORK/NAME.out and .err. Returns a Run with wall, user, sys, rss;
        with startup, also the CPU s its process tree had spent when its first connection to the counted server
        was established (its start-up)."""
        marks = {}
        port = (self.a.counted or "").rpartition(":")[2].strip("/")

        def first_request(pid):
            if "startup" not in marks and connected(port):
                marks["startup"] = tree_cpu(pid)

        with open(self.path(f"{name}.out"), "wb") as out, open(self.path(f"{name}.err"), "wb") as err:
            ticks = self.nginx_ticks()
            start = time.monotonic()
            proc = self.procs.start(argv, cpus, out, err, env=env)
            watch = (startup or self.startup) and port.isdigit()
            rc, user, sys_, rss = self.procs.wait(proc, limit, first_request if watch else None)
            wall = time.monotonic() - start
        run = Run(name=name, rc=rc, wall=wall, user=user, sys=sys_, rss_kib=rss, **marks)
        if ticks is not None:
            run["nginx_pct"] = 100 * (self.nginx_ticks() - ticks) / os.sysconf("SC_CLK_TCK") / wall
        return run

    def tls_log_size(self):
        try:
            return os.path.getsize(self.a.nginx_tls_log) if self.a.nginx_tls_log else None
        except OSError:
            return 0

    def resumptions(self, offset):
        """Requests nginx logged since `offset` on a resumed TLS session, and on a full handshake."""
        try:
            with open(self.a.nginx_tls_log, "rb") as f:
                f.seek(offset)
                data = f.read()
        except (OSError, TypeError):
            return None, None
        return data.count(b"r"), data.count(b".")

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
    def wrk(self, name, conns, url, latency, extra=()):
        argv = ["wrk", "-t1", f"-c{conns}", f"-d{self.a.duration}s", "--timeout", "10s", *extra]
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

    # -------------------------------------------------------------------------------------- the tools users pick
    def peer(self, part, tool, name, users, url, ramp):
        """One run of a tool on the peers workload (bench/plans/peers.yaml, bench/peers/): 200 users at full
        speed (part tools), or CROWD_USERS with CROWD_THINK s after each request (part crowd). Every tool runs
        for ramp + DURATION s, or, where it counts iterations instead (drill, Artillery), as many as that
        time holds at its last measured rate. The server's access log gives the requests it saw."""
        think = CROWD_THINK if part == "crowd" else 0
        seconds = ramp + self.a.duration
        offset = self.access_size()
        runner = {"planrun-peers": self.peer_planrun, "drill": self.peer_drill, "locust": self.peer_locust,
                  "k6": self.peer_k6, "artillery": self.peer_artillery, "jmeter": self.peer_jmeter}[tool]
        self.startup = True
        try:
            run = runner(name, users, url, ramp, think, seconds)
        finally:
            self.startup = False
        if run.get("rc"):
            log(f"{tool} {name} exited {run['rc']}: {self.text(name, 'err').strip()[-300:]}")
        if self.a.access_log:
            time.sleep(1.5)  # nginx writes its access log buffer every second
            # With a ramp-up every user is active from `ramp` s on, until the last one's DURATION ends (drill
            # and Artillery count loops, whose users stop DURATION s after they start).
            window = (ramp + 1, self.a.duration - 1) if ramp else (0, None)
            run.update(access_figures(self.access_read(offset), *window))
            # Per request of the server's count, so that a tool that did less than it says is not flattered.
            run["tool_reqs"], run["reqs"] = run.get("reqs", 0), run.get("served", 0) if run.get("reqs") else 0
            if abs(run["served"] - run["tool_reqs"]) > users:
                log(f"{tool} {name}: the server answered {run['served']} requests, the tool counted {run['tool_reqs']}")
        if tool in self.rates and run.get("server_rps"):
            self.rates[tool] = run["server_rps"]
        return run

    def access_size(self):
        try:
            return os.path.getsize(self.a.access_log) if self.a.access_log else 0
        except OSError:
            return 0

    def access_read(self, offset):
        with open(self.a.access_log, errors="replace") as f:
            f.seek(offset)
            return f.read()

    def peer_planrun(self, name, users, url, ramp, think, seconds):
        return self.planrun(name, self.plans["peers-think" if think else "peers"], users, ramp, url, duration=seconds)

    def peer_drill(self, name, users, url, ramp, think, seconds):
        with open(os.path.join(self.peers_dir, "drill-think.yml" if think else "drill.yml")) as f:
            text = f.read()
        data = f"{name}.drill-data.csv"
        rng = random.Random()
        with open(self.path(data), "w") as f:
            f.write("q,n,name,qty\n")
            for _ in range(DRILL_ROWS):
                f.write(f"{random_string(rng, 16)},{rng.randint(1, 1000000)},{random_string(rng, 12)},{rng.randint(1, 100)}\n")
        if think:
            iterations = max(users, int(users * self.a.duration / (2 * think)))
        else:
            iterations = max(users, int(self.rates["drill"] * seconds / (2 * DRILL_ROWS)))
        text = re.sub(r"(?m)^concurrency: \d+", f"concurrency: {users}", text)
        text = re.sub(r"(?m)^iterations: \d+", f"iterations: {iterations}", text)
        text = re.sub(r"(?m)^base: .*", f"base: '{url}'", text).replace("./drill-data.csv", f"./{data}")
        plan = self.derived(f"{name}.drill.yml", text)
        run = self.timed(name, ["drill", "--benchmark", plan, "--stats", "--quiet", "--timeout", "10"],
                         self.client, seconds * 3 + HANG_GUARD, env={"NO_COLOR": "1"})
        run.update(drill_stats(self.text(name)))
        return run

    def peer_locust(self, name, users, url, ramp, think, seconds):
        results = self.path(f"{name}.locust.csv")
        argv = ["locust", "-f", os.path.join(self.peers_dir, "locustfile.py"), "--headless", "-u", str(users),
                "-r", str(users if not ramp else max(1, users // ramp)), "-t", f"{seconds}s", "-H", url,
                "--only-summary", "--loglevel", "WARNING"]
        run = self.timed(name, argv, self.client, seconds + HANG_GUARD, env={"RESULTS": results, "THINK": str(think)})
        run.update(locust_rows(results))
        remove(results)
        return run

    def peer_k6(self, name, users, url, ramp, think, seconds):
        results, summary_file = self.path(f"{name}.k6.csv"), self.path(f"{name}.k6.json")
        load = ["--stage", f"{ramp}s:{users},{self.a.duration}s:{users}"] if ramp else \
            ["--vus", str(users), "--duration", f"{seconds}s"]
        argv = ["k6", "run", "--quiet", "--no-usage-report", *load, "--out", f"csv={results}", "-e", f"BASE={url}",
                "-e", f"SUMMARY={summary_file}", "-e", f"THINK={think}", os.path.join(self.peers_dir, "k6.js")]
        run = self.timed(name, argv, self.client, seconds + HANG_GUARD)
        try:
            with open(summary_file) as f:
                run.update(k6_summary(f.read()))
        except OSError:
            pass
        remove(results, summary_file)
        return run

    def peer_artillery(self, name, users, url, ramp, think, seconds):
        with open(os.path.join(self.peers_dir, "artillery.yml")) as f:
            text = f.read()
        if think:
            loops = max(1, int(self.a.duration / (2 * think)))
        else:
            loops = max(1, int(self.rates["artillery"] * seconds / (2 * users)))
        text = text.replace('target: "http://127.0.0.1:8080"', f'target: "{url}"')
        text = text.replace("- duration: 1\n", f"- duration: {max(1, ramp)}\n")
        text = text.replace("arrivalCount: 200", f"arrivalCount: {users}").replace("count: 100", f"count: {loops}")
        text = text.replace("think: 0", f"think: {think}")
        plan = self.derived(f"{name}.artillery.yml", text)
        report = self.path(f"{name}.artillery.json")
        run = self.timed(name, ["artillery", "run", "--output", report, plan], self.client, seconds * 3 + HANG_GUARD,
                         env={"ARTILLERY_DISABLE_TELEMETRY": "true"})
        try:
            with open(report) as f:
                run.update(artillery_report(f.read()))
        except OSError:
            pass
        remove(report)
        return run

    def jmeter_argv(self):
        """java running Debian's JMeter 2.13 through tests/fixtures/jmeter/JMeterLauncher.java, which lets its
        XStream load the plan (Debian's newer XStream refuses JMeter's classes otherwise), compiled once."""
        home = "/usr/share/jmeter"
        classes = self.path("jmeter-launcher")
        if not os.path.isdir(classes):
            root = os.path.dirname(self.peers_dir.rstrip("/"))
            subprocess.run(["javac", "-d", classes, os.path.join(root, "..", "tests", "fixtures", "jmeter",
                                                                  "JMeterLauncher.java")], check=True)
        jars = [os.path.join(home, "bin", "ApacheJMeter.jar")]
        for sub in ("lib", os.path.join("lib", "ext")):
            d = os.path.join(home, sub)
            jars += sorted(os.path.join(d, j) for j in os.listdir(d) if j.endswith(".jar")) if os.path.isdir(d) else []
        # -Xmx512m: the heap the 2.13 distribution's own `jmeter` script gives.
        return ["java", "-Djava.awt.headless=true", "-Xmx512m", f"-Djmeter.home={home}", "-cp",
                ":".join([classes] + jars), "JMeterLauncher"]

    def peer_jmeter(self, name, users, url, ramp, think, seconds):
        host, _, port = url.split("//", 1)[1].rstrip("/").partition(":")
        jtl = self.path(f"{name}.jtl")
        argv = self.jmeter_argv() + [
            "-n", "-t", os.path.join(self.peers_dir, "peers.jmx"), "-l", jtl, "-j", self.path(f"{name}.jmeter.log"),
            "-Jjmeterengine.nongui.port=0", "-Jjmeter.save.saveservice.output_format=csv",
            "-Jjmeter.save.saveservice.print_field_names=true", f"-Jhost={host}", f"-Jport={port or 80}",
            f"-Jthreads={users}", f"-Jramp={ramp}", f"-Jduration={seconds}", f"-Jthink={int(think * 1000)}"]
        run = self.timed(name, argv, self.client, seconds + HANG_GUARD)
        figures = jtl_figures(jtl)
        run["reqs"] = figures.get("rows", 0)
        run["errs"] = sum(figures.get("failures", {}).values())
        remove(jtl)
        return run

    def one(self, part, tool, round_no, users, url, ramp):
        """One run of tool; its figures are recorded under (part, tool)."""
        name = f"{part}.{tool}.{round_no}"
        time.sleep(self.a.gap)  # a rest first, so that no run is measured in the last one's aftermath
        plans = self.plans
        n = self.ncpu
        tls = url == self.a.nginx_tls
        get = plans["tls" if tls else "throughput"]
        # 10,000 TLS handshakes take nginx, on one busy core, longer than the 2 s ramp-up of part users: with 2 s
        # the listen queue overflows and late users time out. Part tlsusers ramps up over 10 s, then runs DURATION.
        dur = ramp + self.a.duration if part == "tlsusers" else None
        runners = {
            "wrk": lambda: self.wrk(name, users, url, latency=part == "lat"),
            "oha": lambda: self.oha(name, users, url),
            "planrun": lambda: self.planrun(name, plans["throughput"], users, ramp, url),
            "planrun-post": lambda: self.planrun(name, plans["throughput-post"], users, ramp, url),
            "planrun-bare": lambda: self.planrun(name, plans["bare"], users, ramp, url),
            "planrun-big": lambda: self.planrun(name, plans["throughput"], users, ramp, url,
                                                duration=ramp + self.a.duration),
            # The two builds, each with `--cores 1` on the generator core; the rest on ALL_CPUS.
            "cores1": lambda: self.planrun(name, get, users, ramp, url, extra=["--cores", "1"]),
            "base": lambda: self.planrun(name, get, users, ramp, url, binary=self.a.base, extra=["--cores", "1"]),
            "wrk-close": lambda: self.wrk(name, users, url, latency=False, extra=["-H", "Connection: close"]),
            "close-1": lambda: self.planrun(name, plans["tlsclose" if tls else "close"], users, ramp, url,
                                            extra=["--cores", "1"]),
            "close-base": lambda: self.planrun(name, plans["tlsclose" if tls else "close"], users, ramp, url,
                                               binary=self.a.base, extra=["--cores", "1"]),
            "users-plain": lambda: self.planrun(name, plans["throughput"], users, ramp, self.a.nginx,
                                                extra=["--cores", "1"], cpus=self.all, duration=dur),
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
            "users-1": lambda: self.planrun(name, get, users, ramp, url, extra=["--cores", "1"], cpus=self.all,
                                            duration=dur),
            "users-all": lambda: self.planrun(name, plans["throughput"], users, ramp, url,
                                              extra=["--cores", str(n)], cpus=self.all),
            "users-base": lambda: self.planrun(name, get, users, ramp, url, binary=self.a.base,
                                               extra=["--cores", "1"], cpus=self.all, duration=dur),
            "think-1": lambda: self.planrun(name, plans["think"], users, ramp, url, extra=["--cores", "1"],
                                            cpus=self.all),
            "think-base": lambda: self.planrun(name, plans["think"], users, ramp, url, binary=self.a.base,
                                               extra=["--cores", "1"], cpus=self.all),
        }
        log_at = self.tls_log_size() if tls else None
        run = self.peer(part, tool, name, users, url, ramp) if part in TOOL_PARTS.split() else runners[tool]()
        run.update(part=part, tool=tool, round=round_no, users=users)
        if log_at is not None:
            run["resumed"], run["handshakes"] = self.resumptions(log_at)
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
            if run.get("server_rps"):
                run["rps"] = run["server_rps"]
            if run.get("startup") is not None:
                run["startup10k"] = run["startup"] * 1e4 / run["reqs"]
                run["steady10k"] = (cpu - run["startup"]) * 1e4 / run["reqs"]
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
        tools = [t for t in tools if (t not in ("wrk", "oha") or shutil.which(t)) and (t not in BASE_TOOLS or self.a.base)
                 and (t not in PEER_TOOLS or (peer_missing(t) is None and t in self.tools))]
        url = {"nginx": self.a.nginx, "nginx32k": self.a.nginx_32k, "stub": self.a.stub,
               "counted": self.a.counted or self.a.nginx, "nginxtls": self.a.nginx_tls}[target]
        for r in range(1, self.a.runs + 1):
            log(f"round {r}/{self.a.runs}: {part}, {users} users, {target}")
            for tool in order(tools, r):
                self.one(part, tool, r, users, url, ramp)

    def instructions(self, name, binary, extra=(), plan="loops3000", url=None, part="cg"):
        """User-space instructions per request under callgrind: the GET plan, 10 users x 3,000 loops (or
        `plan`, against `url`)."""
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={self.path('cg.' + name + '.cg')}",
                binary, "run", self.plans[plan], "-D", f"base={url or self.a.nginx}", "-D", "threads=10",
                "-o", self.path(f"cg.{name}.jtl"), "--quiet", *extra]
        run = self.timed(f"cg.{name}", argv, self.client, 1800)
        collected = re.search(r"Collected : (\d+)", self.text(f"cg.{name}", "err"))
        reqs = summary(self.text(f"cg.{name}")).get("reqs")
        remove(self.path(f"cg.{name}.cg"), self.path(f"cg.{name}.jtl"))
        run.update(part=part, tool=name, round=1)
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


# ------------------------------------------------------------------------------------------ the tools users pick
LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
JMETER_HOME = "/usr/share/jmeter"


def random_string(rng, n):
    return "".join(rng.choice(LETTERS) for _ in range(n))


def connected(port, table="/proc/net/tcp"):
    """Whether a TCP connection to 127.0.0.1:port is established (state 01 in /proc/net/tcp)."""
    local = f"0100007F:{int(port):04X}"
    try:
        with open(table) as f:
            return any(cells[1] == local and cells[3] == "01" for cells in (line.split() for line in f) if len(cells) > 3)
    except OSError:
        return False


def tree_cpu(pid):
    """User + sys CPU s of pid's threads, its waited-for children and its live descendants (/proc)."""
    ticks, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def peer_missing(tool):
    """Why tool cannot run here (None when it can)."""
    if tool == "planrun-peers":
        return None
    if tool == "jmeter":
        for need in ("java", "javac"):
            if not shutil.which(need):
                return f"no {need} on PATH"
        if not os.path.isfile(os.path.join(JMETER_HOME, "lib", "ext", "ApacheJMeter_http.jar")):
            return f"no JMeter with its HTTP sampler in {JMETER_HOME} (Debian: jmeter, jmeter-http)"
        return None
    return None if shutil.which(tool) else f"no {tool} on PATH"


def drill_stats(text):
    """Requests and failed ones (not 2xx) from the global lines of `drill --stats`."""
    figures = {}
    for line in ANSI.sub("", text).splitlines():
        m = re.match(r"^(Total|Failed) requests\s+(\d+)\s*$", line)
        if m:
            figures["reqs" if m.group(1) == "Total" else "errs"] = int(m.group(2))
    return figures


def locust_rows(path):
    """Requests and failed ones from the results file of bench/peers/locustfile.py (a row per request:
    time, name, ms, status, error)."""
    reqs = errs = 0
    try:
        with open(path, newline="") as f:
            for row in csv.reader(f):
                reqs += 1
                errs += len(row) < 5 or row[3] != "200" or row[4] != ""
    except OSError:
        return {}
    return {"reqs": reqs, "errs": errs}


def k6_summary(text):
    """Requests and failed checks from the JSON that bench/peers/k6.js's handleSummary writes."""
    try:
        metrics = json.loads(text)["metrics"]
        return {"reqs": int(metrics["http_reqs"]["values"]["count"]),
                "errs": int(metrics.get("checks", {}).get("values", {}).get("fails", 0))}
    except (ValueError, KeyError, TypeError):
        return {}


def artillery_report(text):
    """Requests and failed ones (not 200, or an error) from `artillery run --output`'s aggregate counters."""
    try:
        counters = json.loads(text)["aggregate"]["counters"]
    except (ValueError, KeyError, TypeError):
        return {}
    reqs = counters.get("http.requests", 0)
    return {"reqs": reqs, "errs": reqs - counters.get("http.codes.200", 0)}


def access_figures(text, skip=0.0, until=None):
    """The server's side of a run, from nginx's access log (`$msec $request_method $status` a line): requests
    it answered, of them GET, POST and not 200; req/s between the first and the last; and req/s in the window
    from `skip` s after the first request to `until` s after it (to the last second when None), where every
    user of a run with a ramp-up is active."""
    stamps, get, post, bad = [], 0, 0, 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        try:
            stamps.append(float(parts[0]))
        except ValueError:
            continue
        get += parts[1] == "GET"
        post += parts[1] == "POST"
        bad += parts[2] != "200"
    figures = {"served": len(stamps), "served_get": get, "served_post": post, "served_bad": bad}
    if len(stamps) < 2:
        return figures
    first, last = min(stamps), max(stamps)
    figures["served_s"] = last - first
    if last > first:
        figures["server_rps"] = len(stamps) / (last - first)
    low = first + skip
    high = last - 1 if until is None else min(first + until, last - 1)
    if high > low:
        figures["steady_rps"] = sum(1 for t in stamps if low <= t < high) / (high - low)
    return figures


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


def connection_tables(b, parts):
    """Parts close and tls: CPU per request with a new connection per request and over TLS, against wrk (and
    BASE); instructions per request; peak RSS of 10,000 users over TLS against plain HTTP."""
    a = b.a
    base = bool(a.base)
    out = ["", "## New connections and TLS", "", host_line(b),
           f"nginx on core(s) {a.server_cpu}, generators on CPU {a.client_cpu}; {versions(b)}; median of {a.runs} "
           f"round(s) of {a.duration} s runs, {CONNS} connections; a ratio is the median over the rounds of the ratio "
           "within one round (in brackets, the rounds' range). Both tools resume TLS sessions: the lines under the "
           "table count, from nginx's log, the requests on a resumed session and after a full handshake.", "",
           "| scenario | wrk CPU s / 10k | planrun CPU s / 10k | planrun / wrk | BASE / wrk | planrun / BASE | "
           "instructions / req, planrun | ... BASE |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    rows = []
    if "close" in parts:
        rows += [("new connection per request, http", "close", "wrk-close", "close-1", "close-base", "close"),
                 ("new connection per request, https", "tlsclose", "wrk-close", "close-1", "close-base", "tlsclose")]
    if "tls" in parts:
        rows += [("keep-alive, https", "tls", "wrk", "cores1", "base", "tls")]
    for label, part, wrk, new, old, cg in rows:
        cg_part = "cg-close" if part in ("close", "tlsclose") else "cg-tls"
        out.append(f"| {label} | {fmt(b.get(part, wrk, 'cpu10k'), '.3f')} | {fmt(b.get(part, new, 'cpu10k'), '.3f')} | "
                   f"{b.ratio_cell(part, new, wrk)} | {b.ratio_cell(part, old, wrk) if base else '-'} | "
                   f"{b.ratio_cell(part, new, old) if base else '-'} | "
                   f"{fmt(b.get(cg_part, f'{cg}.planrun', 'per_request'))} | {fmt(b.get(cg_part, f'{cg}.base', 'per_request'))} |")
    resumed = [(label, part, tool) for label, part, _, tool, _, _ in rows if part == "tlsclose"]
    for label, part, tool in resumed:
        for who, t in (("planrun", tool), ("wrk", "wrk-close")):
            r, full = sum(v or 0 for v in b.values(part, t, "resumed")), sum(v or 0 for v in b.values(part, t, "handshakes"))
            out.append(f"\n{label}, {who}: nginx logged {r:,} requests on a resumed TLS session and {full:,} after a "
                       "full handshake (all rounds).")
    if "tls" in parts:
        def rss(tool):
            v = b.get("tlsusers", tool, "rss")
            return "-" if v is None else f"{v:.0f} MiB"

        out += ["", f"Peak RSS of {MANY_USERS:,} keep-alive users (GET plan, ramp-up 10 s, `--cores 1`):", "",
                "| | https | http | https / http |", "| --- | ---: | ---: | ---: |",
                f"| planrun | {rss('users-1')} | {rss('users-plain')} | {b.ratio_cell('tlsusers', 'users-1', 'users-plain', 'rss')} |"]
        if base:
            out.append(f"| BASE | {rss('users-base')} | | {b.ratio_cell('tlsusers', 'users-base', 'users-plain', 'rss')} |")
        out.append(f"| failed samples, https | {fmt(b.get('tlsusers', 'users-1', 'errs'))} | "
                   f"{fmt(b.get('tlsusers', 'users-plain', 'errs'))} | |")
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


def tool_versions(b):
    """Each tool of parts tools and crowd with its version, as the tool itself says it."""
    def words(argv, n=2):
        return " ".join(version_of(argv).split()[:n])

    names = {"planrun-peers": version_of([b.a.planrun, "--version"])}
    if shutil.which("drill"):
        names["drill"] = words(["drill", "--version"])
    if shutil.which("locust"):
        names["locust"] = words(["locust", "--version"]) + " (FastHttpUser)"
    if shutil.which("k6"):
        names["k6"] = words(["k6", "version"])
    if shutil.which("artillery"):
        package = os.path.join(os.path.dirname(os.path.realpath(shutil.which("artillery"))), "..", "package.json")
        try:
            with open(package) as f:
                names["artillery"] = f"artillery {json.load(f)['version']} on node {version_of(['node', '--version'])}"
        except (OSError, ValueError, KeyError):
            names["artillery"] = "artillery ?"
    if peer_missing("jmeter") is None:
        names["jmeter"] = (f"JMeter {version_of(['dpkg-query', '-W', '-f', '${Version}', 'jmeter'])} (Debian), "
                           f"{version_of(['java', '-version'])}")
    return names


def count_cell(b, part, tool, users):
    """The tool's own count of requests against the server's: their ratio's median over the rounds, and the
    largest gap of a round; MISMATCH when a round's gap is more than the users (requests in flight at the end)."""
    runs = [r for r in b.runs if r["part"] == part and r["tool"] == tool and not r.get("failed")]
    pairs = [(r.get("tool_reqs"), r.get("served")) for r in runs if r.get("served")]
    if not pairs:
        return "-"
    gaps = [s - (t or 0) for t, s in pairs]
    worst = max(gaps, key=abs)
    cell = f"{median([(t or 0) / s for t, s in pairs]):.3f} (gap {worst:+d})"
    return cell + (" MISMATCH" if any(abs(g) > users for g in gaps) else "")


def tools_tables(b, part):
    a = b.a
    tools, users, _, ramp = SCENARIOS[part]
    tools = [t for t in tools if any(r["part"] == part and r["tool"] == t for r in b.runs)]
    names = tool_versions(b)
    if part == "tools":
        title = (f"## planrun and the tools users pick: {users} users, GET with a random query + form POST with "
                 "random fields, status assertions, results file")
        what = f"{a.duration} s runs (drill and Artillery: as many loops as that holds)"
    else:
        title = (f"## {users:,} users with {CROWD_THINK} s of think time after each request "
                 f"(ramp-up {ramp} s): did each tool hold its schedule?")
        what = f"{ramp} + {a.duration} s runs (drill and Artillery: {a.duration} s of loops a user)"
    out = ["", title, "", host_line(b),
           f"nginx (its access log counts the requests) on core(s) {a.server_cpu}, each tool on CPU {a.client_cpu}; "
           f"median of {a.runs} round(s) of {what}, the tools in balanced orders; a ratio is the median over the "
           "rounds of the ratio within one round (in brackets, the rounds' range). Requests are the server's count.",
           "", "Versions: " + "; ".join(names.get(t, t) for t in tools) + ".", ""]
    if part == "tools":
        out += ["| tool | req/s | CPU s / 10k req (user + sys) | CPU per request / planrun's | start-up CPU | "
                "CPU s / 10k req after start-up | the same / planrun's | peak RSS | failed (tool's count) | "
                "requests, tool's count / server's |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    else:
        expected = users / CROWD_THINK
        out += [f"The schedule: {users:,} users / {CROWD_THINK} s = {expected:,.0f} req/s once all are active.", "",
                "| tool | req/s, all users active | of the schedule | CPU s / 10k req (user + sys) | "
                "CPU per request / planrun's | start-up CPU | CPU s / 10k req after start-up | the same / planrun's | "
                "peak RSS | failed (tool's count) | requests, tool's count / server's |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in tools:
        f = b.failed(part, t)
        label = LABELS.get(t, t) + (f" ({f}/{a.runs} runs failed)" if f else "")
        cpu = b.get(part, t, "cpu10k")
        cells = [label]
        if part == "tools":
            cells.append(fmt(b.get(part, t, "rps")))
        else:
            steady = b.get(part, t, "steady_rps")
            cells += [fmt(steady), fmt(steady and 100 * steady / (users / CROWD_THINK), ".0f", "%")]
        cells += [f"{fmt(cpu, '.3f')} ({fmt(b.get(part, t, 'user10k'), '.3f')} + {fmt(b.get(part, t, 'sys10k'), '.3f')})",
                  "1" if t == "planrun-peers" else b.ratio_cell(part, t, "planrun-peers"),
                  fmt(b.get(part, t, "startup"), ".2f", " s"), fmt(b.get(part, t, "steady10k"), ".3f"),
                  "1" if t == "planrun-peers" else b.ratio_cell(part, t, "planrun-peers", "steady10k"),
                  fmt(b.get(part, t, "rss"), ".0f", " MiB"), fmt(b.get(part, t, "errs")),
                  count_cell(b, part, t, users)]
        out.append("| " + " | ".join(cells) + " |")
    return out


# ------------------------------------------------------------------------------------------ main
def main(argv=None):
    env = os.environ.get
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--planrun", required=True, help="the planrun binary to measure")
    p.add_argument("--nginx", required=True, help="URL of nginx answering `return 200 \"ok\"`")
    p.add_argument("--stub", help="URL of the 50 ms stub (bench/stubs/delay50.yaml)")
    p.add_argument("--nginx-32k", help="URL of nginx answering a 32 KiB body, for part cpu32k")
    p.add_argument("--nginx-tls", help="URL (https) of nginx answering `return 200 \"ok\"`, for parts close and tls")
    p.add_argument("--nginx-tls-log", help="its access log, one `$ssl_session_reused` a line (r or .)")
    p.add_argument("--nginx-pid", type=int, help="nginx's PID, for its CPU share")
    p.add_argument("--nginx-log", help="nginx's error log, for the many-users run")
    p.add_argument("--counted", help="URL of nginx answering `return 200 \"ok\"` that logs each request to "
                                     "--access-log as `$msec $request_method $status` (parts tools, crowd)")
    p.add_argument("--access-log", help="that nginx's access log, to count what each tool sent")
    p.add_argument("--tools", default=env("TOOLS"), help="which of the tools of parts tools and crowd run "
                   f"(default all: {' '.join(PEER_TOOLS[1:])}); planrun always does")
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
    unknown = set(parts) - set(ALL_PARTS.split()) - set(TOOL_PARTS.split())
    if unknown:
        p.error(f"unknown part(s) {' '.join(sorted(unknown))}; the parts are: {ALL_PARTS} {TOOL_PARTS}")
    if set(parts) & set(TOOL_PARTS.split()):
        unknown = set((a.tools or "").split()) - set(PEER_TOOLS)
        if unknown:
            p.error(f"unknown tool(s) {' '.join(sorted(unknown))}; the tools are: {' '.join(PEER_TOOLS[1:])}")
        for tool in PEER_TOOLS:
            if peer_missing(tool):
                log(f"{tool} is left out: {peer_missing(tool)}")
        if not a.access_log:
            log("no --access-log: the requests each tool sent are not checked against the server's count")
    for part in ("cg", "icache"):
        if part in parts and not shutil.which("valgrind"):
            log(f"no valgrind: part {part} skipped")
            parts.remove(part)
    if "cpu32k" in parts and not a.nginx_32k:
        log("no --nginx-32k: part cpu32k skipped")
        parts.remove("cpu32k")
    for part in ("close", "tls"):
        if part in parts and not a.nginx_tls:
            log(f"no --nginx-tls: part {part} skipped")
            parts.remove(part)
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
            if part in ("close", "tls") and shutil.which("valgrind"):
                log(f"callgrind: instructions per request, part {part} (a few minutes)")
                cases = ([("close", "close-loops", a.nginx), ("tlsclose", "tlsclose-loops", a.nginx_tls)]
                         if part == "close" else [("tls", "tls-loops", a.nginx_tls)])
                for label, plan, url in cases:
                    for tool, binary in [("planrun", a.planrun)] + ([("base", a.base)] if a.base else []):
                        b.instructions(f"{label}.{tool}", binary, ["--cores", "1"], plan, url, part=f"cg-{part}")
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
    for part in ("tools", "crowd"):
        if part in parts:
            lines += tools_tables(b, part)
    if set(parts) & {"close", "tls"}:
        lines += connection_tables(b, parts)
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(a.work, "tables.md"), "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
