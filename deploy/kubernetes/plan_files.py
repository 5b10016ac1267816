"""The files a plan reads, found by a line-based scan of the plan, and their ConfigMap keys.

Python's standard library has no YAML parser and planrun prints no list of the files a plan reads, so this
is a line-based scan for the keys of FILE_KEYS (block `file: x` and flow `{ file: x }` alike) whose values
name a file relative to the plan. Its limits: a value written over several lines, with an anchor or alias,
or a template other than `{{ props.NAME }}` is not followed; a key of the same name that is not a file path
(a query parameter called `file`) is taken only if a file of that name exists. planrun itself then checks
the result: render.py validates the plan from a copy of the ConfigMap's layout, so a file the scan missed
is an error when rendering, not in the pods.
"""

import os
import re
import sys

# The keys under which a plan names a file it reads, relative to the plan (docs/plan.md): a stub, a data
# set's CSV, a multipart part, the TLS files.
FILE_KEYS = ("file", "stub", "ca", "client_cert", "client_key")


class Refusal(Exception):
    """Bad input: the message is printed and render.py exits 2."""


KEY_RE = re.compile(r"(?:^|[\s{,])(?:-\s+)?(" + "|".join(FILE_KEYS) + r")\s*:[ \t]+")


def data_files(text, plan_dir, props):
    """The files the plan names, as normalized paths relative to its directory, in the order written."""
    found = []
    properties = scan_properties(text)
    for number, line in enumerate(text.splitlines(), 1):
        line = strip_comment(line)
        for m in KEY_RE.finditer(line):
            value = scalar(line[m.end():])
            if value is None:
                continue
            path = resolve(value, props, properties)
            if path is None:
                print(f"render.py: note: line {number}: cannot tell which file `{value}` names; "
                      "planrun validate will say if the ConfigMap lacks it", file=sys.stderr)
                continue
            rel = inside(path, plan_dir, number)
            if rel is not None and rel not in found:
                found.append(rel)
    return found


def strip_comment(line):
    """The line without its `# comment` (a `#` after a space, outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i]
    return line


def scalar(text):
    """The value at the start of `text`: quoted, or plain up to a flow `,` or `}`; None for none."""
    text = text.strip()
    if not text:
        return None
    if text[0] == '"':
        m = re.match(r'"((?:[^"\\]|\\.)*)"', text)
        return re.sub(r"\\(.)", lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), m.group(1)) if m else None
    if text[0] == "'":
        m = re.match(r"'((?:[^']|'')*)'", text)
        return m.group(1).replace("''", "'") if m else None
    if text[0] in "[{|>&*!":
        return None
    value = re.split(r",\s|\}", text, maxsplit=1)[0].strip()
    return value or None


def scan_properties(text):
    """The plan's `properties:` as written (one line each), for `{{ props.NAME }}` in file paths."""
    props, inside_block, indent = {}, False, None
    for line in text.splitlines():
        if re.match(r"properties\s*:\s*(#.*)?$", line):
            inside_block = True
            continue
        if not inside_block or not line.strip() or line.lstrip().startswith("#"):
            continue
        depth = len(line) - len(line.lstrip(" "))
        if depth == 0:
            break
        indent = depth if indent is None else indent
        m = re.match(r"\s*([A-Za-z_][\w-]*)\s*:[ \t]+(.*)$", strip_comment(line))
        if depth == indent and m:
            value = scalar(m.group(2))
            if value is not None:
                props[m.group(1)] = value
    return props


PROP_RE = re.compile(r"\{\{-?\s*props(?:\.([A-Za-z_]\w*)|\[\s*['\"]([^'\"]+)['\"]\s*\])\s*-?\}\}")


def resolve(value, props, properties, depth=0):
    """The value with its `{{ props.NAME }}` replaced (-D first, then the plan's properties); None when
    another template remains."""
    def one(m):
        key = m.group(1) or m.group(2)
        if key in props:
            return props[key]
        if key in properties and depth < 8:
            inner = resolve(properties[key], props, properties, depth + 1)
            if inner is not None:
                return inner
        raise KeyError(key)

    try:
        out = PROP_RE.sub(one, value)
    except KeyError:
        return None
    return None if "{{" in out or "{%" in out else out


def inside(path, plan_dir, number):
    """`path` relative to the plan's directory when it names a file there; None when it names no file;
    a refusal when it names one elsewhere."""
    full = os.path.normpath(os.path.join(plan_dir, path))
    rel = os.path.relpath(full, plan_dir)
    if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
        if os.path.isfile(full):
            raise Refusal(
                f"line {number}: {path} is outside the plan's directory {plan_dir}; the ConfigMap holds only "
                "files at or below it: move the file next to the plan"
            )
        return None
    if not os.path.isfile(full):
        return None
    if any(part.startswith("..") for part in rel.split("/")):
        raise Refusal(f"line {number}: {path}: Kubernetes refuses a file path with a part starting with `..`")
    return rel.replace(os.sep, "/")


def configmap_items(paths):
    """The ConfigMap key of each path: keys are [-._a-zA-Z0-9]+ with no `/`, so `data/users.csv` becomes
    `data_users.csv` (a `-2`, `-3`... suffix when two paths map to one key); the volume's items put each key
    back at its path."""
    items, used = [], set()
    for path in paths:
        key = re.sub(r"[^-._a-zA-Z0-9]", "_", path.replace("/", "_"))
        if key in (".", "..") or key.startswith(".."):
            key = "_" + key
        base, suffix = key[:240], 1
        while key in used:
            suffix += 1
            key = f"{base}-{suffix}"
        used.add(key)
        items.append((key, path))
    return items
