#!/usr/bin/env python3
"""Every Markdown file on this machine outside the main corpora, whole, as text records.

The 13-language corpus (scripts/code_corpus.py) samples Markdown from the cargo registry and
site-packages; this takes every other `.md`, `.md.gz` and `.markdown` file the machine holds
(Debian's /usr/share/doc, the Python and Ruby installations, Racket, Go, pyenv, the Rust
toolchain's), whole, cut at line ends into records of about --chunk bytes:
{"id": "md:<path>:<chunk index>", "source", "text"}, for examples/quality --mode text.

Never read: the Markdown shipped inside Node/npm and JDK installations (kept aside to judge
whether the stream guard's rules generalise; see issue #18), the cargo registry (in the main
corpus), this repository and /tmp.

    python3 scripts/markdown_wide.py target/quality/markdown-wide.jsonl [--chunk 4000]
"""
import argparse
import gzip
import json
import os
import sys

SKIP_DIRS = {"node_modules", "proc", "sys"}


def skipped(path):
    low = path.lower()
    parts = low.split(os.sep)
    return (
        any(p in SKIP_DIRS for p in parts)
        or any(p.startswith(("node", "npm")) for p in parts)
        or "jdk" in low
        or "/jvm" in low
        or low.startswith(("/proc", "/sys", "/tmp", "/work", "/dev", "/run"))
        or "/.cargo/registry" in low
    )


def markdown_files(roots):
    seen = set()
    for root in roots:
        for d, dirs, files in os.walk(root):
            dirs[:] = sorted(x for x in dirs if not skipped(os.path.join(d, x)))
            if skipped(d):
                continue
            for name in sorted(files):
                if name.endswith((".md", ".md.gz", ".markdown")):
                    real = os.path.realpath(os.path.join(d, name))
                    if real not in seen and not skipped(real) and os.path.isfile(real):
                        seen.add(real)
                        yield real


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--chunk", type=int, default=4000, help="bytes a record, cut at line ends")
    ap.add_argument("--roots", default="/usr,/root,/opt,/etc", help="comma-separated trees")
    args = ap.parse_args()
    files = chunks = size = 0
    with open(args.out, "w") as out:
        for path in markdown_files(args.roots.split(",")):
            try:
                raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
                text = raw.decode("utf-8")
            except (OSError, UnicodeDecodeError, EOFError):
                continue
            files += 1
            buf, n, k = [], 0, 0
            for line in text.split("\n"):
                buf.append(line)
                n += len(line) + 1
                if n >= args.chunk:
                    rec = {"id": f"md:{path}:{k}", "source": path, "text": "\n".join(buf) + "\n"}
                    out.write(json.dumps(rec) + "\n")
                    chunks, size, k = chunks + 1, size + n, k + 1
                    buf, n = [], 0
            if n > 0 and "".join(buf).strip():
                rec = {"id": f"md:{path}:{k}", "source": path, "text": "\n".join(buf)}
                out.write(json.dumps(rec) + "\n")
                chunks, size = chunks + 1, size + n
    print(f"{args.out}: {files} files, {chunks} chunks, {size} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
