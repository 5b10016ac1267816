#!/usr/bin/env python3
"""The code footprint of one request: how many 64-byte cache lines hold the instructions a run executes at
least SHARE times per request (default 0.9), from a callgrind file written with `--dump-instr=yes`.

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out planrun run ... -o x.jtl --quiet
    bench/hot_lines.py cg.out REQUESTS [SHARE] [OBJECT]

Prints, for the object whose path ends in OBJECT (default: the profiled binary), the hot instructions, the
lines they occupy and their bytes (an instruction's length taken as the distance to the next executed
address, at most 15), then the functions with the most hot lines. Unlike a simulated cache's miss count,
which also moves with where the linker happens to place code, this depends only on what runs.
"""
import collections
import re
import sys

LINE = 64
NAMED = re.compile(r"^(c?)(ob|fn)=\((\d+)\)(?: (.*))?$")
COST = re.compile(r"^(0x[0-9a-fA-F]+|[+-]\d+|\*)\s+\S+\s+(\d+)")


def read(path):
    """Self cost per (object, address) and the function of each address."""
    names = {"ob": {}, "fn": {}}
    current = {"ob": None, "fn": None}
    cost = collections.Counter()
    function = {}
    address = 0
    after_call = False
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = NAMED.match(line)
            if m:
                called, kind, key, name = m.groups()
                if name:
                    names[kind][key] = name
                if not called:
                    current[kind] = names[kind].get(key)
                continue
            if line.startswith("calls="):
                after_call = True
                continue
            m = COST.match(line)
            if not m:
                continue
            where, count = m.groups()
            if where.startswith("0x"):
                address = int(where, 16)
            elif where != "*":
                address += int(where)
            if after_call:
                # The line after `calls=` is the call's inclusive cost, not this address's own.
                after_call = False
                continue
            cost[(current["ob"], address)] += int(count)
            function[(current["ob"], address)] = current["fn"]
    return cost, function


def hot(path, requests, share=0.9, wanted=None):
    """(hot instructions, hot lines, bytes of hot instructions, {function: its hot lines}) of the object whose
    path ends in `wanted` (default: the profiled command)."""
    cost, function = read(path)
    objects = {ob for ob, _ in cost if ob}
    if wanted is None:
        with open(path) as f:
            cmd = next((l.split(None, 2)[1] for l in f if l.startswith("cmd:")), "")
        wanted = cmd.rsplit("/", 1)[-1]
    ob = next((o for o in objects if o.endswith(wanted)), None)
    if ob is None:
        raise LookupError(f"no object ending in {wanted!r} in {path}")
    executed = sorted(a for o, a in cost if o == ob)
    hot_ones = [a for a in executed if cost[(ob, a)] >= share * requests]
    following = dict(zip(executed, executed[1:] + [None]))
    size = sum(min(15, max(1, (following[a] or a + 4) - a)) for a in hot_ones)
    per_function = collections.defaultdict(set)
    for a in hot_ones:
        per_function[function[(ob, a)]].add(a // LINE)
    return len(hot_ones), len({a // LINE for a in hot_ones}), size, per_function


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, requests = sys.argv[1], int(sys.argv[2])
    share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.9
    try:
        n, lines, size, per_function = hot(path, requests, share, sys.argv[4] if len(sys.argv) > 4 else None)
    except LookupError as e:
        sys.exit(str(e))
    print(f"{n} hot instructions, {lines} lines ({lines * LINE / 1024:.1f} KiB), {size / 1024:.1f} KiB of instructions")
    for name, held in sorted(per_function.items(), key=lambda kv: -len(kv[1]))[:12]:
        print(f"  {len(held):4d} lines  {(name or '?')[:110]}")


if __name__ == "__main__":
    main()
