"""The ctypes declarations match include/loopguard.h: every function, struct and constant."""

import ctypes
import re
from pathlib import Path

from loopguard import _ffi

HEADER = Path(__file__).resolve().parents[3] / "include" / "loopguard.h"

# C type (as written in the header) -> the ctypes type it must be declared as.
SCALARS = {
    "uint8_t": ctypes.c_uint8,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "int32_t": ctypes.c_int32,
    "size_t": ctypes.c_size_t,
    "float": ctypes.c_float,
    "lg_action": ctypes.c_uint8,
    "lg_kind": ctypes.c_uint8,
    "lg_unit": ctypes.c_uint8,
    "lg_agent_kind": ctypes.c_uint8,
    "enum lg_status": ctypes.c_int32,
    "lg_status": ctypes.c_int32,
}


def source():
    text = HEADER.read_text()
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def split(decl):
    """`const struct lg_agent **out` -> ("struct lg_agent", 2, "out")."""
    words = decl.replace("*", " ").replace("const ", " ").split()
    return " ".join(words[:-1]), decl.count("*"), words[-1]


def same(ctype, base, stars):
    """Whether the ctypes type `ctype` declares the C type `base` with `stars` pointers."""
    if base in ("lg_stream", "lg_agent", "lg_pool") or base in (
        "struct lg_stream",
        "struct lg_agent",
        "struct lg_pool",
    ):
        # Opaque handles: void * by value, void ** for out-params.
        return ctype is (ctypes.c_void_p if stars == 1 else ctypes.POINTER(ctypes.c_void_p))
    if stars == 0:
        if base == "void":
            return ctype is None
        if base in ("lg_verdict_callback", "lg_agent_callback"):
            want = {"lg_verdict_callback": _ffi.VERDICT_CALLBACK, "lg_agent_callback": _ffi.AGENT_CALLBACK}
            return ctype is want[base]
        inner = SCALARS.get(base) or _ffi.STRUCTS.get(base.replace("struct ", ""))
        return inner is not None and ctype is inner
    if base == "void" and stars == 1:
        return ctype is ctypes.c_void_p
    if base == "char" and stars == 1:
        return ctype in (ctypes.c_char_p, ctypes.POINTER(ctypes.c_char))
    inner = ctypes.c_char if base == "char" else SCALARS.get(base) or _ffi.STRUCTS.get(base.replace("struct ", ""))
    if inner is None:
        return False
    for _ in range(stars):
        inner = ctypes.POINTER(inner)
    return ctype is inner


def test_every_function_is_declared_with_the_headers_types():
    protos = re.findall(r"^([a-z][\w \*]*?)\b(lg_\w+)\(([^)]*)\);", source(), flags=re.M)
    assert len(protos) >= 50
    names = {name for _, name, _ in protos}
    assert names == set(_ffi.FUNCTIONS), names ^ set(_ffi.FUNCTIONS)
    for ret, name, args in protos:
        restype, argtypes = _ffi.FUNCTIONS[name]
        base, stars, _ = split(ret.strip() + " f")
        assert same(restype, base, stars), f"{name} returns {ret}"
        args = [] if args.strip() == "void" else [a.strip() for a in args.split(",")]
        assert len(args) == len(argtypes), f"{name}: {len(args)} arguments in the header"
        for a, t in zip(args, argtypes):
            assert same(t, *split(a)[:2]), f"{name}: {a} declared as {t}"


def test_every_struct_field_matches():
    structs = re.findall(r"typedef struct (lg_\w+) \{(.*?)\} \1;", source(), flags=re.S)
    assert {s for s, _ in structs} == set(_ffi.STRUCTS)
    for name, body in structs:
        fields = []
        for decl in filter(None, (d.strip() for d in body.split(";"))):
            m = re.fullmatch(r"(.*?)\[(\d+)\]", decl)
            count = int(m.group(2)) if m else None
            base, stars, field = split(m.group(1) if m else decl)
            fields.append((field, base, stars, count))
        declared = _ffi.STRUCTS[name]._fields_
        assert [f[0] for f in fields] == [f for f, _ in declared], name
        for (field, base, stars, count), (_, t) in zip(fields, declared):
            if count:
                assert t._length_ == count and same(t._type_, base, stars), f"{name}.{field}"
            else:
                assert same(t, base, stars), f"{name}.{field}: {base} {'*' * stars} declared as {t}"


def test_constants_match():
    text = source()
    for name, value in re.findall(r"#define (LG_\w+) (\w+)", text):
        if name in ("LG_UNKNOWN",):
            assert value == "UINT64_MAX" and _ffi.LG_UNKNOWN == 2**64 - 1
            continue
        if not value.isdigit():
            continue
        assert getattr(_ffi, name) == int(value), name
    for enum_name, members in _ffi.ENUMS.items():
        prefix = "LG_" if enum_name == "lg_status" else enum_name.upper() + "_"
        for i, member in enumerate(members):
            assert re.search(rf"\b{prefix}{member} = {i},", text), f"{prefix}{member} = {i}"
    # ... and no member of the header is missing from ENUMS.
    for prefix, enum_name in [
        ("LG_ACTION_", "lg_action"), ("LG_KIND_", "lg_kind"), ("LG_AGENT_KIND_", "lg_agent_kind"),
        ("LG_PRESET_", "lg_preset"), ("LG_AGENT_PRESET_", "lg_agent_preset"), ("LG_UNIT_", "lg_unit"),
        ("LG_VERBOSITY_", "lg_verbosity"),
    ]:
        found = re.findall(rf"\b{prefix}(\w+) = (\d+),", text)
        if prefix == "LG_KIND_":
            found = [(m, v) for m, v in found if not m.startswith(("NONE_", "IDENTICAL_CALL"))]
        assert len(found) == len(_ffi.ENUMS[enum_name]), prefix


def test_struct_sizes_match_the_library():
    """The library reads `struct_size`: the verdict written back fills exactly our struct."""
    from loopguard import StreamGuard

    with StreamGuard() as g:
        g.push(1, b"x")
        assert g.verdict.at == 0
    assert ctypes.sizeof(_ffi.LgVerdict) == 56
    assert ctypes.sizeof(_ffi.LgStats) == 48
