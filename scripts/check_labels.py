#!/usr/bin/env python3
"""Checks that the model streams on disk are the ones the hand labels judged.

The labels name streams by id only (`scripts/data/code_labels*.jsonl`). Each also records
`labeller`, what `../shared/tools/label.py` said of the stream that was read. A stream
generated again by another build of llama.cpp can differ (other CPU kernels round
differently, and greedy decoding then parts), and the hand label would then score text nobody
read. This runs label.py on the corpora and names every stream whose verdict is not the one
recorded: a changed verdict proves a changed stream (the converse does not hold).

    python3 scripts/check_labels.py LABELS CORPUS.jsonl...

Exit status 1 when a stream differs; 2 on bad usage, a bad label line, label.py missing or
failing, or no labelled stream found in the corpora.
"""
import json
import os
import subprocess
import sys


def fail(message):
    print(f"check_labels: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) < 3:
        fail("usage: check_labels.py LABELS CORPUS.jsonl...")
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.environ.get("SHARED", os.path.join(here, "..", "..", "shared"))
    label_py = os.path.join(shared, "tools", "label.py")
    if not os.path.isfile(label_py):
        fail(f"skipped, no {label_py}")
    recorded = {}
    with open(sys.argv[1]) as f:
        for n, line in enumerate(f, 1):
            try:
                d = json.loads(line)
                recorded[d["id"]] = d["labeller"]
            except (ValueError, KeyError, TypeError) as e:
                fail(f"{sys.argv[1]} line {n}: not a label ({e})")
    checked, differ = 0, []
    for corpus in sys.argv[2:]:
        run = subprocess.run([sys.executable, label_py, corpus], capture_output=True, text=True)
        if run.returncode != 0:
            fail(f"label.py failed on {corpus}: {run.stderr.strip()[-500:]}")
        for line in run.stdout.splitlines():
            d = json.loads(line)
            want = recorded.get(d["id"])
            if want is None:
                continue
            checked += 1
            if d["label"] != want:
                differ.append(f"{d['id']}: label.py says {d['label']}, the labelled stream {want}")
    if checked == 0:
        fail(f"no stream of {sys.argv[1]} in {' '.join(sys.argv[2:])}")
    print(f"check_labels: {checked} labelled streams found, {len(differ)} not the stream labelled")
    for line in differ:
        print("  " + line)
    if differ:
        print("  (regenerate with llama-cpp-python built by scripts/install-llama.sh, whose CPU")
        print("   kernels are pinned; these streams' hand labels do not apply)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
