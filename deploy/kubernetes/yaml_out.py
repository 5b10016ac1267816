"""A YAML writer for the manifests render.py prints: block mappings and sequences, scalars quoted so that
YAML 1.1 readers (kubectl's, PyYAML) and YAML 1.2 readers read back exactly the value written, and file
contents as literal blocks where that keeps them byte for byte."""

import re


class Literal(str):
    """A string printed as a YAML literal block (`|`), when it can be, byte for byte."""


YAML11_WORDS = {"y", "yes", "n", "no", "true", "false", "on", "off", "null", "~"}


def emit(value, indent):
    """`value` (a dict) as a block mapping at `indent` spaces, each line ending in a newline."""
    out = []
    for key, v in value.items():
        out.append(entry(" " * indent + quote(key) + ":", v, indent))
    return "".join(out)


def entry(head, v, indent):
    if isinstance(v, dict):
        return head + (" {}\n" if not v else "\n" + emit(v, indent + 2))
    if isinstance(v, list):
        if not v:
            return head + " []\n"
        lines = [head + "\n"]
        for item in v:
            lead = " " * (indent + 2) + "-"
            if isinstance(item, dict):
                inner = emit(item, indent + 4)
                lines.append(lead + " " + inner[indent + 4:])
            else:
                lines.append(entry(lead, item, indent + 2))
        return "".join(lines)
    if isinstance(v, Literal) and literal_ok(v):
        return head + " " + literal(v, indent + 2)
    return head + " " + quote(v) + "\n"


def quote(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if re.fullmatch(r"[A-Za-z_/][A-Za-z0-9._/-]*", v) and v.lower() not in YAML11_WORDS:
        return v
    return double_quoted(v)


def double_quoted(text):
    """A YAML double-quoted scalar that any YAML 1.1 or 1.2 reader turns back into exactly `text`."""
    out = ['"']
    for c in text:
        o = ord(c)
        if c == '"' or c == "\\":
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif c == "\r":
            out.append("\\r")
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            out.append(f"\\x{o:02x}")
        elif o in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF):
            out.append(f"\\u{o:04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def literal_ok(text):
    """Whether a literal block keeps `text` byte for byte: only printable characters other than line breaks
    YAML 1.1 also knows (CR, NEL, LS, PS) and the BOM, no tabs, no space at a line's end, some content."""
    if not text.strip("\n"):
        return False
    for c in text:
        o = ord(c)
        if c == "\n":
            continue
        if o < 0x20 or 0x7F <= o <= 0x9F or o in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF):
            return False
    return not any(line != line.rstrip(" ") for line in text.split("\n"))


def literal(text, indent):
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else "" if trailing == 1 else "+"
    first = next(line for line in text.split("\n") if line)
    header = "|" + ("2" if first.startswith(" ") else "") + chomp
    pad = " " * indent
    lines = [pad + line if line else "" for line in body.split("\n")]
    return header + "\n" + "\n".join(lines) + "\n" + "\n" * (trailing - 1 if trailing > 1 else 0)
