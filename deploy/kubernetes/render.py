#!/usr/bin/env python3
"""Render the Kubernetes manifests that run a planrun plan as N segments.

    render.py PLAN --segments N [--start-at T | --lead-seconds S] [--image IMG] [--name NAME]
              [--namespace NS] [-D name=value ...] > test.yaml

prints one multi-document YAML stream: a ConfigMap with the plan and every file it reads, a
ReadWriteMany PersistentVolumeClaim for the results, an Indexed Job whose pod I runs
`planrun run PLAN --segment I/N --start-at T`, and the merge Job. README.md beside this file says how
to apply them. Python 3 standard library only.
"""

import argparse
import base64
import datetime
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ beside the script
from plan_files import FILE_KEYS, Refusal, configmap_items, data_files  # noqa: E402
from yaml_out import Literal, emit  # noqa: E402

PLAN_DIR = "/plan"
RESULTS_DIR = "/results"
START_ENV = "PLANRUN_START_AT"
# A ConfigMap's data and binaryData together hold at most 1 MiB.
CONFIGMAP_LIMIT = 1 << 20
# Kubernetes refuses an Indexed Job with more completions than this.
MAX_SEGMENTS = 100_000
# planrun refuses a --start-at more than 24 h ahead.
MAX_LEAD_SECONDS = 24 * 3600
# The user the image runs as (the Containerfile's `planrun` user).
UID = 10001

# A segment whose own rows failed a threshold exits 1; the verdict is the merge job's, on all the rows, so
# the pod succeeds. Any other failure (2 a wrong plan, 3 an output that cannot be written, 4 a bug inside
# some samples, 143 killed) fails the pod.
SEGMENT_SCRIPT = """\
planrun "$@"
code=$?
if [ "$code" -eq 1 ]; then
  echo "planrun-segment: a threshold failed on this segment's rows; the merge job judges them on all segments" >&2
  exit 0
fi
exit "$code"
"""


def main(argv):
    args = parse_args(argv)
    try:
        text = render(args, argv)
    except Refusal as e:
        print(f"render.py: {e}", file=sys.stderr)
        return 2
    if args.output:
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="render.py",
        description="Print the Kubernetes manifests (ConfigMap, PVC, Indexed Job, merge Job) that run PLAN "
        "as N segments.",
    )
    p.add_argument("plan", metavar="PLAN", help="the plan file")
    p.add_argument("--segments", "-n", type=int, required=True, metavar="N", help="how many segments (pods)")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--start-at", metavar="T", help="the instant every segment starts: RFC 3339 or Unix ms")
    when.add_argument(
        "--lead-seconds", type=float, metavar="S", help="start S seconds after rendering (default 60)"
    )
    p.add_argument("--image", default="planrun:latest", help="the planrun image (default planrun:latest)")
    p.add_argument("--name", help="the test's name: the Jobs', and the results folder (default: the plan's file name)")
    p.add_argument("--namespace", help="the namespace of every object (default: kubectl's current one)")
    p.add_argument("-D", dest="props", action="append", default=[], metavar="NAME=VALUE",
                   help="a plan property, passed to every segment and to the merge (repeatable)")
    p.add_argument("--seed", type=int, help="the run's seed (default: the plan's; drawn once for all segments "
                   "when the plan has none)")
    p.add_argument("--pvc", default="planrun-results", help="the results claim's name (default planrun-results)")
    p.add_argument("--storage-class", help="a ReadWriteMany storage class (default: the cluster's default class)")
    p.add_argument("--storage", default="1Gi", help="the results claim's size (default 1Gi)")
    p.add_argument("--cpus", default="1", help="CPU request and limit of a segment's pod (default 1)")
    p.add_argument("--memory", default="512Mi", help="memory request and limit of a segment's pod (default 512Mi)")
    p.add_argument("--planrun", help="the planrun binary that checks the plan and the ConfigMap's layout "
                   "(default: $PLANRUN, else planrun on PATH)")
    p.add_argument("--no-check", action="store_true", help="do not run planrun validate (not recommended)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the manifests to FILE instead of stdout")
    return p.parse_args(argv)


def render(args, argv):
    n = args.segments
    if n < 1 or n > MAX_SEGMENTS:
        raise Refusal(f"--segments must be from 1 to {MAX_SEGMENTS} (an Indexed Job's limit), not {n}")
    plan = args.plan
    if not os.path.isfile(plan):
        what = "not found" if not os.path.exists(plan) else "not a regular file"
        raise Refusal(f"the plan {plan} is {what}")
    props = parse_props(args.props)
    name = job_name(args.name, plan)
    if args.namespace is not None and not is_dns_label(args.namespace, 63):
        raise Refusal(f"--namespace {args.namespace!r} is not a DNS-1123 label (a-z, 0-9, '-', at most 63)")
    start_at = start_instant(args.start_at, args.lead_seconds)
    plan_dir = os.path.dirname(os.path.abspath(plan))
    plan_bytes = read_bytes(plan)
    plan_text = decode(plan_bytes, plan)
    seed = args.seed
    if seed is None and not has_top_level(plan_text, "seed"):
        seed = random.SystemRandom().randrange(1, 2**63)
        print(f"render.py: the plan has no seed; every segment gets --seed {seed}", file=sys.stderr)
    files = [(os.path.basename(plan), plan_bytes)]
    for rel in data_files(plan_text, plan_dir, props):
        files.append((rel, read_bytes(os.path.join(plan_dir, rel))))
    items = configmap_items([rel for rel, _ in files])
    size = sum(len(b) for _, b in files)
    if size > CONFIGMAP_LIMIT:
        raise Refusal(
            f"the plan and its files are {size} bytes; a ConfigMap holds at most {CONFIGMAP_LIMIT} (1 MiB): "
            "put large data files into the image or a volume of their own"
        )
    if not args.no_check:
        check_with_planrun(args.planrun, plan, files, items, props)
    objects = manifests(args, name, start_at, seed, props, files, items)
    header = (
        f"# planrun: {n} segment(s) of {os.path.basename(plan)}, starting at {start_at}.\n"
        f"# Rendered by: deploy/kubernetes/render.py {shlex.join(reproducible(argv, start_at, seed))}\n"
        "# Apply (deploy/kubernetes/README.md):\n"
        "#   kubectl apply -f THIS.yaml -l app.kubernetes.io/component!=merge\n"
        f"#   kubectl wait --for=condition=complete job/{name} --timeout=24h\n"
        "#   kubectl apply -f THIS.yaml -l app.kubernetes.io/component=merge\n"
    )
    return header + "".join("---\n" + emit(o, 0) for o in objects)


def parse_props(pairs):
    props = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq or not name:
            raise Refusal(f"-D {pair!r}: expected -D name=value")
        props[name] = value
    return props


def job_name(given, plan):
    if given is not None:
        if not is_dns_label(given, 50):
            raise Refusal(
                f"--name {given!r} must be a DNS-1123 label of at most 50 characters (a-z, 0-9, '-'), so that "
                "the Jobs' and their pods' names fit"
            )
        return given
    stem = os.path.splitext(os.path.basename(plan))[0].lower()
    name = re.sub(r"[^a-z0-9-]+", "-", stem).strip("-")[:50].strip("-")
    return name or "planrun"


def is_dns_label(text, limit):
    return len(text) <= limit and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", text) is not None


RFC3339 = re.compile(r"(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([Zz])|([+-])(\d\d):(\d\d))")


def start_instant(given, lead):
    """The start instant, as planrun's --start-at reads it: the given one (checked) or now + lead."""
    now = datetime.datetime.now(datetime.timezone.utc)
    if given is None:
        lead = 60.0 if lead is None else lead
        if not 0 <= lead <= MAX_LEAD_SECONDS:
            raise Refusal(f"--lead-seconds must be from 0 to {MAX_LEAD_SECONDS}, not {lead:g}")
        at = now + datetime.timedelta(seconds=lead)
        at = at.replace(microsecond=0) + datetime.timedelta(seconds=1 if at.microsecond else 0)
        return at.strftime("%Y-%m-%dT%H:%M:%SZ")
    if re.fullmatch(r"\d{1,15}", given):
        at = datetime.datetime.fromtimestamp(int(given) / 1000, datetime.timezone.utc)
    elif RFC3339.fullmatch(given):
        at = rfc3339(RFC3339.fullmatch(given), given)
    else:
        raise Refusal(f"--start-at {given!r}: expected RFC 3339 (2026-12-01T16:00:00Z) or Unix milliseconds")
    ahead = (at - now).total_seconds()
    if ahead > MAX_LEAD_SECONDS:
        raise Refusal(f"--start-at {given} is more than 24 h ahead; planrun would refuse it in every segment")
    if ahead < 0:
        print(f"render.py: warning: --start-at {given} is past; the segments will start as soon as they run",
              file=sys.stderr)
    return given


def rfc3339(m, given):
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micros = int((m.group(7) or "0")[:6].ljust(6, "0"))
    offset = datetime.timedelta(0)
    if m.group(9):
        offset = datetime.timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        offset = -offset if m.group(9) == "-" else offset
    try:
        return datetime.datetime(year, month, day, hour, minute, second, micros, datetime.timezone(offset))
    except ValueError as e:
        raise Refusal(f"--start-at {given!r}: {e}") from None


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise Refusal(f"cannot read {path}: {e.strerror}") from None


def decode(data, path):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Refusal(f"the plan {path} is not UTF-8") from None


def has_top_level(text, key):
    return re.search(rf"^{key}\s*:", text, re.MULTILINE) is not None


# --- planrun's own check ------------------------------------------------------------------------------------


def check_with_planrun(binary, plan, files, items, props):
    """Validates the plan as given, then from a copy of the ConfigMap volume as a pod sees it (the plan and
    each item at its path, through the `..data` symlinks Kubernetes makes), with the same -D."""
    planrun = binary or os.environ.get("PLANRUN") or shutil.which("planrun")
    if not planrun:
        raise Refusal("planrun is not on PATH: pass --planrun BINARY (or --no-check to skip planrun validate)")
    defines = [x for k, v in props.items() for x in ("-D", f"{k}={v}")]
    validate(planrun, [plan] + defines, f"the plan {plan} does not validate")
    with tempfile.TemporaryDirectory(prefix="planrun-render-") as tmp:
        volume = os.path.join(tmp, "plan")
        stamp = os.path.join(volume, "..2026_01_01_00_00_00.000000000")
        os.makedirs(stamp)
        for (key, path), (_, data) in zip(items, files):
            target = os.path.join(stamp, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(data)
        os.symlink(os.path.basename(stamp), os.path.join(volume, "..data"))
        for top in sorted({path.split("/")[0] for _, path in items}):
            os.symlink(os.path.join("..data", top), os.path.join(volume, top))
        staged = os.path.join(volume, items[0][1])
        validate(planrun, [staged] + defines,
                 "the plan does not validate from the ConfigMap (a file it reads was not found by the scan of "
                 f"{', '.join(FILE_KEYS)} keys; move it next to the plan or write its path plainly)")


def validate(planrun, args, why):
    try:
        out = subprocess.run([planrun, "validate"] + args, capture_output=True, text=True, timeout=120)
    except OSError as e:
        raise Refusal(f"cannot run {planrun}: {e.strerror}") from None
    if out.returncode != 0:
        raise Refusal(f"{why}:\n{out.stderr.strip() or out.stdout.strip()}")


# --- The manifests ------------------------------------------------------------------------------------------


def manifests(args, name, start_at, seed, props, files, items):
    n = args.segments
    plan_path = f"{PLAN_DIR}/{items[0][1]}"
    results = f"{RESULTS_DIR}/{name}"
    defines = [x for k, v in props.items() for x in ("-D", escape(f"{k}={v}"))]
    seeded = ["--seed", str(seed)] if seed is not None else []
    segment_args = ["run", escape(plan_path), "--segment", f"$(JOB_COMPLETION_INDEX)/{n}",
                    "--start-at", f"$({START_ENV})", "-o", escape(results) + "/segment-$(JOB_COMPLETION_INDEX).jtl"]
    segment_args += seeded + defines
    merge_args = ["merge"] + [escape(f"{results}/segment-{i}.jtl") for i in range(n)]
    merge_args += ["-o", escape(f"{results}/all.jtl"), "--summary-json", escape(f"{results}/summary.json"),
                   "--report", escape(f"{results}/report"), "--plan", escape(plan_path)] + defines
    cm_name = f"{name}-plan"

    def meta(obj_name, component, instance=True):
        m = {"name": obj_name}
        if args.namespace:
            m["namespace"] = args.namespace
        m["labels"] = labels(name if instance else None, component)
        return m

    data, binary = {}, {}
    for (key, _), (_, content) in zip(items, files):
        try:
            text = content.decode("utf-8")
            data[key] = Literal(text)
        except UnicodeDecodeError:
            binary[key] = base64.b64encode(content).decode("ascii")
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(cm_name, "plan")}
    if data:
        configmap["data"] = data
    if binary:
        configmap["binaryData"] = binary

    pvc_spec = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": args.storage}}}
    if args.storage_class:
        pvc_spec["storageClassName"] = args.storage_class
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(args.pvc, "results", False),
           "spec": pvc_spec}

    volumes = [
        {"name": "plan", "configMap": {"name": cm_name, "items": [{"key": k, "path": p} for k, p in items]}},
        {"name": "results", "persistentVolumeClaim": {"claimName": args.pvc}},
    ]
    mounts = [{"name": "plan", "mountPath": PLAN_DIR, "readOnly": True},
              {"name": "results", "mountPath": RESULTS_DIR}]
    resources = {"requests": {"cpu": args.cpus, "memory": args.memory},
                 "limits": {"cpu": args.cpus, "memory": args.memory}}

    segment_pod = pod_spec(args.image, "segment", ["/bin/sh", "-c", Literal(SEGMENT_SCRIPT), "planrun-segment"],
                           segment_args, segment_env(start_at), resources, mounts, volumes)
    segment_pod["topologySpreadConstraints"] = [{
        "maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": labels(name, "segments")},
    }]
    job = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta(name, "segments"),
        "spec": {
            "completionMode": "Indexed", "completions": n, "parallelism": n,
            "backoffLimitPerIndex": 0,
            "template": {"metadata": {"labels": labels(name, "segments")}, "spec": segment_pod},
        },
    }
    merge_pod = pod_spec(args.image, "merge", ["planrun"], merge_args, [], None, mounts, volumes)
    merge = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": meta(f"{name}-merge", "merge"),
        "spec": {
            "backoffLimit": 0,
            "template": {"metadata": {"labels": labels(name, "merge")}, "spec": merge_pod},
        },
    }
    return [configmap, pvc, job, merge]


def segment_env(start_at):
    # The Job controller sets JOB_COMPLETION_INDEX itself; declaring it too says where $(JOB_COMPLETION_INDEX)
    # in the args comes from (the controller leaves a declared one alone).
    index = {"fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
    return [{"name": "JOB_COMPLETION_INDEX", "valueFrom": index}, {"name": START_ENV, "value": start_at}]


def labels(instance, component):
    out = {"app.kubernetes.io/name": "planrun"}
    if instance:
        out["app.kubernetes.io/instance"] = instance
    out["app.kubernetes.io/component"] = component
    return out


def pod_spec(image, container, command, args, env, resources, mounts, volumes):
    c = {"name": container, "image": image, "imagePullPolicy": "IfNotPresent", "command": command, "args": args}
    if env:
        c["env"] = env
    if resources:
        c["resources"] = resources
    c["securityContext"] = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}}
    c["volumeMounts"] = mounts
    return {
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": UID, "runAsGroup": UID, "fsGroup": UID,
                            "fsGroupChangePolicy": "OnRootMismatch", "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [c],
        "volumes": volumes,
    }


def escape(text):
    """Kubernetes expands `$(VAR)` in command and args; `$$` is a literal `$`."""
    return text.replace("$", "$$")


def reproducible(argv, start_at, seed):
    """The command line that renders this output again: --lead-seconds replaced by the instant it gave, the
    drawn seed added, -o dropped."""
    out, skip = [], False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a in ("--lead-seconds", "--start-at", "-o", "--output", "--planrun"):
            skip = True
            continue
        if a.split("=")[0] in ("--lead-seconds", "--start-at", "--output", "--planrun") or a == "--no-check":
            continue
        out.append(a)
    out += ["--start-at", start_at]
    if seed is not None and "--seed" not in " ".join(argv):
        out += ["--seed", str(seed)]
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
