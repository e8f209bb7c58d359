#!/usr/bin/env python3
"""How often people say one part of a name again and again: the check behind `src/stutter.rs`.

Reads source files under the directories given (or the `text`/`pieces` of JSON-lines corpora)
and counts, per file, the longest run of one unit of a name (a joint and a part: `_yaml`,
`.util`, `Type`) back to back, with the units and words of `src/stutter.rs` (a part is a word
of two letters that differ; a joint is a run of `_ . - / :`, or none before a capital after a
small letter). The guard halts a loop whose copy is such a unit at 10 copies; this says how
many people write. Prints the files with a run of at least --show copies and a histogram of
the longest run per file.

  python3 scripts/name_stutters.py --ext .py,.rs,.go,.js /usr/lib/python3 ~/.cargo/registry/src
  python3 scripts/name_stutters.py target/quality/code.jsonl
"""
import argparse
import collections
import json
import os
import re
import sys

BREAK, LOWER, UPPER, OTHER, JOINT = range(5)


def klass(b):
    if 97 <= b <= 122:
        return LOWER
    if 65 <= b <= 90:
        return UPPER
    if 48 <= b <= 57 or b >= 0x80:
        return OTHER
    if b in b"_.-/:":
        return JOINT
    return BREAK


def longest(data):
    """The longest run of one unit back to back in `data` (bytes), and the name it is in."""
    best, where = 0, b""
    unit, first, in_part, after_lower = bytearray(), 0, False, False
    mixed = no_word = caps = small = False
    prev, copies, name_from = None, 0, 0
    for i, b in enumerate(data + b" "):
        c = klass(b)
        if (c in (JOINT, BREAK) or (c == UPPER and after_lower)) and in_part:
            says = mixed and not no_word and not (caps and small)
            key = bytes(unit).lower()
            again = says and key == prev
            copies = max(copies + 1, 2) if again else 1
            prev = key if says else None
            if again and copies > best:
                best, where = copies, data[name_from:i + 40]
            unit, first, in_part = bytearray(), 0, False
            mixed = no_word = caps = small = after_lower = False
        if c == BREAK:
            prev, copies, unit, first, in_part = None, 0, bytearray(), 0, False
            mixed = no_word = caps = small = after_lower = False
            name_from = i + 1
            continue
        if c == JOINT:
            after_lower = False
        else:
            if c == LOWER:
                small = True
            elif c == UPPER and first:
                caps = True
            elif c == OTHER:
                no_word = True
            in_part = True
            after_lower = c == LOWER
            if c in (LOWER, UPPER):
                f = b | 0x20
                if not first:
                    first = f
                elif f != first:
                    mixed = True
        unit.append(b)
    return best, where


# The names of a text (runs of part and joint bytes): the reader's state starts afresh at any
# other byte, so reading them one by one gives what reading the whole text does. Names shorter
# than two copies of a two-letter unit hold no run.
NAME = re.compile(rb"[A-Za-z0-9_.\-/:\x80-\xff]{4,}")


def longest_in_text(data):
    best, where = 0, b""
    for m in NAME.finditer(data):
        k, w = longest(m.group())
        if k > best:
            best, where = k, w
    return best, where


def texts(paths, exts):
    for path in paths:
        if path.endswith(".jsonl"):
            for line in open(path, encoding="utf-8"):
                r = json.loads(line)
                text = r.get("text") or "".join(r.get("pieces") or [])
                yield f"{path}:{r.get('id')}", text.encode("utf-8", "surrogatepass")
            continue
        for root, _, files in os.walk(path):
            for f in sorted(files):
                if f.endswith(exts):
                    p = os.path.join(root, f)
                    try:
                        with open(p, "rb") as fh:
                            yield p, fh.read()
                    except OSError:
                        continue


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--ext", default=".py,.rs,.go,.js,.ts,.json,.toml,.sh,.sql,.yaml,.yml,.html,.css")
    ap.add_argument("--show", type=int, default=5, help="print files with a run this long")
    a = ap.parse_args()
    hist, n, size = collections.Counter(), 0, 0
    for name, data in texts(a.paths, tuple(a.ext.split(","))):
        n += 1
        size += len(data)
        k, where = longest_in_text(data)
        hist[min(k, 10)] += 1
        if k >= a.show:
            print(k, name, where.split(b"\n")[0][:100].decode("utf-8", "replace"))
    runs = ", ".join(f"{k if k < 10 else '10+'}: {v}" for k, v in sorted(hist.items()))
    print(f"{n} texts, {size / 1e6:.1f} MB; longest run per text (0: none) {runs}")


if __name__ == "__main__":
    sys.exit(main())
