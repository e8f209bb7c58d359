#!/usr/bin/env python3
"""How often three candidate signals of a code loop occur in human code and in model code.

    python3 scripts/code_signals.py [--labels scripts/data/code_labels.jsonl] FILE.jsonl...

Each record (token ids with pieces, or text) is read whole. Records of a file under
target/corpus/ are model streams and take their label from --labels; all others are human
code ("human"). For each label it prints how many records show each signal:

- saturated: some 16 consecutive lines with six letters or more (indentation aside) were
  every one seen before in the record: lines that come back out of order;
- redefined: a definition line (`def`, `class`, `function`, `fn`, `func`, `struct`, `impl`,
  `interface`, `CREATE TABLE`) standing twice or more, verbatim but for indentation;
- doubled: identifiers in which a word of four letters or more follows itself (`AllAll`,
  `_str_str`), counted per record as 0, 1, 2 or 3 and more.

The README's *Model code* section quotes these counts for the 13 languages
(target/quality/code.jsonl) and the first prompt set (target/corpus/code-*.jsonl).
"""
import argparse
import json
import re
from collections import Counter, defaultdict

WINDOW = 16
MIN_LETTERS = 6
HEAD = re.compile(
    r"^\s*(?:async\s+)?(?:def|class|function|fn|func|CREATE TABLE|interface|struct|impl)\s+[A-Za-z_]"
)
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,}")
WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def text_of(rec):
    pieces = rec.get("pieces")
    return "".join(pieces) if pieces else rec.get("text", "")


def saturated(text):
    lines = [l.strip() for l in text.split("\n")]
    lines = [l for l in lines if sum(c.isalpha() for c in l) >= MIN_LETTERS]
    for end in range(WINDOW, len(lines) + 1):
        seen = set(lines[: end - WINDOW])
        fresh = False
        for line in lines[end - WINDOW : end]:
            if line not in seen:
                fresh = True
                break
        if not fresh:
            return True
    return False


def redefined(text):
    heads = Counter(l.strip() for l in text.split("\n") if HEAD.match(l))
    return max(heads.values(), default=0) >= 2


def doubled(text):
    def stutters(name):
        words = [w.lower() for part in name.split("_") for w in WORD.findall(part)]
        return any(len(a) >= 4 and a.isalpha() and a == b for a, b in zip(words, words[1:]))

    return min(3, len({n for n in IDENT.findall(text) if stutters(n)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--labels", default="scripts/data/code_labels.jsonl")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    labels = {}
    with open(args.labels) as f:
        for line in f:
            rec = json.loads(line)
            labels[rec["id"]] = rec["label"]
    counts = defaultdict(Counter)
    for path in args.files:
        model = "target/corpus/" in path
        with open(path) as f:
            for line in f:
                rec = json.loads(line)
                label = labels.get(rec["id"], "unlabelled") if model else "human"
                text = text_of(rec)
                c = counts[label]
                c["records"] += 1
                c["saturated"] += saturated(text)
                c["redefined"] += redefined(text)
                c[f"doubled {doubled(text)}"] += 1
    print(f"{'label':<11} {'records':>8} {'saturated':>10} {'redefined':>10}  doubled 1 / 2 / 3+")
    for label, c in sorted(counts.items()):
        print(
            f"{label:<11} {c['records']:>8} {c['saturated']:>10} {c['redefined']:>10}  "
            f"{c['doubled 1']} / {c['doubled 2']} / {c['doubled 3']}"
        )


if __name__ == "__main__":
    main()
