"""ctypes declarations of ``include/loopguard.h``: the structs, constants and every function.

``tests/test_header.py`` parses the header and checks these against it (names, order and C
types of every struct field and function argument, and every constant), so the two cannot
drift apart.
"""

import ctypes
import ctypes.util
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char,
    c_char_p,
    c_float,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path

# ---- constants (`#define`s and enums) ------------------------------------------------------

LG_MAX_PERIOD = 4096
LG_MAX_WINDOW = 65536
LG_MAX_NGRAM = 16
LG_MAX_RUN = 16384
LG_VERSION_MAJOR = 0
LG_VERSION_MINOR = 1
LG_VERSION_PATCH = 0
LG_UNKNOWN = 2**64 - 1
LG_TOOL_EXEMPT = 1
LG_TOOL_POLLER = 2
LG_TOOL_PROGRESS = 4
LG_TOOL_FAILURE_TOLERANT = 8
LG_TOOL_OWN_REPEATS = 16
LG_TOOL_SHELL = 32
LG_EVIDENCE_BYTES = 256
LG_MAX_DRAFTS = 64
LG_MAX_MEMORY = 256
LG_MAX_MEMORY_BYTES = 3344
LG_DRAFT_BYTES = 4096
LG_NOTED_PUSHES = 16

ENUMS = {
    "lg_action": ["CONTINUE", "WARN", "BLOCK", "HALT", "END_REASONING"],
    "lg_agent_kind": [
        "NONE", "IDENTICAL_CALL", "CYCLE", "NO_PROGRESS", "SAME_ERROR", "WHACK_A_MOLE",
        "NEAR_DUPLICATE", "SAME_RESULT", "SEMANTIC_REPEAT", "IDENTICAL_MESSAGES", "MONOLOGUE",
        "OSCILLATION", "TEXT_DEGENERATION", "CONTENT_CHANTING", "RUNAWAY_TEXT",
        "REJECTED_REPLIES", "FAILURE_STREAK", "QUESTION_STREAK",
    ],
    "lg_agent_preset": ["DEFAULT", "GEMINI_CLI", "OPENHANDS", "ROO_CODE", "CLINE"],
    "lg_kind": [
        "NONE", "EXACT_LOOP", "LONG_REPEAT", "NEAR_LOOP", "CHAR_RUN", "WORD_STUTTER",
        "REPEATED_LINES", "COUNTER_LADDER", "GROWING_REPEAT",
        "TEMPLATE_RUNAWAY",
    ],
    "lg_preset": ["STRICT", "BALANCED", "LENIENT"],
    "lg_status": [
        "OK", "ERR_NULL", "ERR_INVALID_ARGUMENT", "ERR_CONFIG", "ERR_PANIC", "ERR_POISONED",
        "ERR_REENTRANT", "ERR_NO_SLOT", "ERR_POOL_FULL",
    ],
    "lg_unit": ["SYMBOL", "BYTE", "LINE"],
    "lg_verbosity": ["BRIEF", "SUMMARY", "FULL"],
}
"""Each C enum's members in value order (0, 1, 2, ...), without the ``LG_<ENUM>_`` prefix."""

# ---- structs -------------------------------------------------------------------------------


class LgStr(Structure):
    _fields_ = [("ptr", POINTER(c_char)), ("len", c_size_t)]


class LgStreamConfig(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("min_period", c_uint32),
        ("max_period", c_uint32),
        ("dense_periods", c_uint32),
        ("halt_copies", c_uint32),
        ("halt_span", c_uint32),
        ("warn_copies", c_uint32),
        ("warn_span", c_uint32),
        ("window", c_uint32),
        ("ngram", c_uint32),
        ("long_warn_run", c_uint32),
        ("long_halt_run", c_uint32),
        ("near_window", c_uint32),
        ("near_warn", c_float),
        ("near_halt", c_float),
        ("near_patience", c_uint32),
        ("char_run_warn", c_uint32),
        ("char_run_halt", c_uint32),
        ("separator_run_halt", c_uint32),
        ("line_warn_copies", c_uint32),
        ("line_halt_copies", c_uint32),
        ("line_min_letters", c_uint32),
        ("structure_slack", c_float),
        ("escalate_after", c_uint32),
        ("breakers", POINTER(LgStr)),
        ("breakers_len", c_size_t),
        ("exempt", POINTER(LgStr)),
        ("exempt_len", c_size_t),
        ("template_warn", c_uint32),
        ("template_budget", c_uint32),
        ("reasoning_start", LgStr),
        ("reasoning_end", LgStr),
        ("model", LgStr),
    ]


class LgThresholds(Structure):
    _fields_ = [("warn", c_uint32), ("block", c_uint32), ("halt", c_uint32)]


class LgToolPolicy(Structure):
    _fields_ = [
        ("name", LgStr),
        ("flags", c_uint32),
        ("ignored_fields", POINTER(LgStr)),
        ("ignored_fields_len", c_size_t),
        ("repeats", LgThresholds),
    ]


class LgAgentConfig(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("preset", c_int32),
        ("window", c_uint32),
        ("canonical_args", c_uint8),
        ("results_are_progress", c_uint8),
        ("reset_after_block", c_uint8),
        ("user_resets_scope", c_uint8),
        ("identical", LgThresholds),
        ("interleaved", LgThresholds),
        ("interleaved_window", c_uint32),
        ("cycle_min", c_uint32),
        ("cycle_max", c_uint32),
        ("cycle", LgThresholds),
        ("cycle_tail", c_uint32),
        ("same_error", LgThresholds),
        ("error_window", c_uint32),
        ("whack_a_mole", LgThresholds),
        ("no_progress", LgThresholds),
        ("failing_repeats", LgThresholds),
        ("near_duplicate", LgThresholds),
        ("near_similarity", c_float),
        ("near_window", c_uint32),
        ("same_result", LgThresholds),
        ("same_result_min_len", c_uint32),
        ("semantic_repeat", LgThresholds),
        ("semantic_similarity", c_float),
        ("semantic_window", c_uint32),
        ("identical_messages", LgThresholds),
        ("monologue", LgThresholds),
        ("oscillation", LgThresholds),
        ("message_text_span", c_uint32),
        ("message_text_action", c_uint8),
        ("args_only_cap", c_uint8),
        ("runaway_action", c_uint8),
        ("chant", c_uint8),
        ("chant_chunk", c_uint32),
        ("chant_threshold", c_uint32),
        ("chant_spread", c_uint32),
        ("chant_history", c_uint32),
        ("runaway_chars", c_uint32),
        ("runaway_ms", c_uint32),
        ("halt_after_strikes", c_uint32),
        ("halt_after_blocks", c_uint32),
        ("ignored_fields", POINTER(LgStr)),
        ("ignored_fields_len", c_size_t),
        ("progress_patterns", POINTER(LgStr)),
        ("progress_patterns_len", c_size_t),
        ("tools", POINTER(LgToolPolicy)),
        ("tools_len", c_size_t),
        ("rejected_replies", LgThresholds),
        ("shell_tools", POINTER(LgStr)),
        ("shell_tools_len", c_size_t),
        ("failure_streak", LgThresholds),
        ("question_streak", LgThresholds),
    ]


class LgAgentVerdict(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("action", c_uint8),
        ("kind", c_uint8),
        ("reason", c_uint8),
        ("recommendation", c_uint8),
        ("args_invalid", c_uint8),
        ("count", c_uint32),
        ("period", c_uint32),
        ("strikes", c_uint32),
        ("confidence", c_float),
        ("step", c_uint64),
        ("evidence_len", c_uint64),
    ]


class LgAgentStats(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("checks", c_uint64),
        ("calls", c_uint64),
        ("detections", c_uint64),
        ("warnings", c_uint64),
        ("blocks", c_uint64),
        ("halts", c_uint64),
        ("invalid_args", c_uint64),
        ("highest_strike", c_uint32),
        ("by_kind", c_uint64 * 17),
        ("rejections", c_uint64),
        ("by_kind_late", c_uint64 * 15),
    ]


class LgVerdict(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("action", c_uint8),
        ("kind", c_uint8),
        ("unit", c_uint8),
        ("period", c_uint32),
        ("repeats", c_float),
        ("span", c_uint32),
        ("onset", c_uint64),
        ("onset_byte", c_uint64),
        ("at", c_uint64),
        ("confidence", c_float),
    ]


class LgStats(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("symbols", c_uint64),
        ("bytes", c_uint64),
        ("warnings", c_uint64),
        ("first_warn_at", c_uint64),
        ("halted_at", c_uint64),
    ]


STRUCTS = {
    "lg_str": LgStr,
    "lg_stream_config": LgStreamConfig,
    "lg_thresholds": LgThresholds,
    "lg_tool_policy": LgToolPolicy,
    "lg_agent_config": LgAgentConfig,
    "lg_agent_verdict": LgAgentVerdict,
    "lg_agent_stats": LgAgentStats,
    "lg_verdict": LgVerdict,
    "lg_stats": LgStats,
}

# ---- functions -----------------------------------------------------------------------------

AGENT_CALLBACK = CFUNCTYPE(None, c_void_p, POINTER(LgAgentVerdict))
VERDICT_CALLBACK = CFUNCTYPE(None, c_void_p, c_uint64, POINTER(LgVerdict))

_bytes = POINTER(c_uint8)
_action = POINTER(c_uint8)
_handle = c_void_p  # opaque lg_stream / lg_agent / lg_pool pointers
_out_handle = POINTER(c_void_p)
_status = c_int32

FUNCTIONS = {
    "lg_version_number": (c_uint32, []),
    "lg_version_string": (c_char_p, []),
    "lg_status_str": (c_char_p, [c_int32]),
    "lg_stream_config_init": (_status, [POINTER(LgStreamConfig)]),
    "lg_stream_config_preset": (_status, [POINTER(LgStreamConfig), c_int32]),
    "lg_stream_config_vllm": (_status, [POINTER(LgStreamConfig), c_uint32, c_uint32, c_uint32]),
    "lg_stream_config_validate": (_status, [POINTER(LgStreamConfig), POINTER(c_char), c_size_t]),
    "lg_agent_config_init": (_status, [POINTER(LgAgentConfig)]),
    "lg_agent_config_preset": (_status, [POINTER(LgAgentConfig), c_int32]),
    "lg_agent_config_validate": (_status, [POINTER(LgAgentConfig), POINTER(c_char), c_size_t]),
    "lg_agent_new": (_status, [POINTER(LgAgentConfig), _out_handle]),
    "lg_agent_free": (None, [_handle]),
    "lg_agent_call": (_status, [_handle, _bytes, c_size_t, _bytes, c_size_t, _action]),
    "lg_agent_result": (_status, [_handle, _bytes, c_size_t, _bytes, c_size_t, _action]),
    "lg_agent_message": (_status, [_handle, _bytes, c_size_t, _action]),
    "lg_agent_message_chunk": (_status, [_handle, _bytes, c_size_t, _action]),
    "lg_agent_end_message": (_status, [_handle, _action]),
    "lg_agent_thought": (_status, [_handle, _bytes, c_size_t, _action]),
    "lg_agent_user": (_status, [_handle, _bytes, c_size_t, _action]),
    "lg_agent_reject": (_status, [_handle, _action]),
    "lg_agent_state": (_status, [_handle, c_uint64, _action]),
    "lg_agent_tick": (_status, [_handle, c_uint64, _action]),
    "lg_agent_set_enabled": (_status, [_handle, c_uint8]),
    "lg_agent_reset": (_status, [_handle]),
    "lg_agent_memory_export": (_status, [_handle, _bytes, c_size_t, POINTER(c_size_t)]),
    "lg_agent_memory_import": (_status, [_handle, _bytes, c_size_t, POINTER(c_size_t)]),
    "lg_agent_get_verdict": (_status, [_handle, POINTER(LgAgentVerdict)]),
    "lg_agent_evidence": (_status, [_handle, POINTER(c_uint64), c_size_t, POINTER(c_size_t)]),
    "lg_agent_describe": (_status, [_handle, c_int32, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "lg_agent_get_stats": (_status, [_handle, POINTER(LgAgentStats)]),
    "lg_agent_memory_usage": (_status, [_handle, POINTER(c_size_t)]),
    "lg_agent_set_callbacks": (_status, [_handle, AGENT_CALLBACK, AGENT_CALLBACK, c_void_p]),
    "lg_agent_last_error": (c_char_p, [_handle]),
    "lg_pool_new": (_status, [POINTER(LgStreamConfig), c_size_t, _out_handle]),
    "lg_pool_free": (None, [_handle]),
    "lg_pool_add": (_status, [_handle, POINTER(c_uint64)]),
    "lg_pool_remove": (_status, [_handle, c_uint64]),
    "lg_pool_reset": (_status, [_handle, c_uint64]),
    "lg_pool_checkpoint": (_status, [_handle, c_uint64]),
    "lg_pool_rollback": (_status, [_handle, c_uint64, c_size_t, _action]),
    "lg_pool_commit": (_status, [_handle, c_uint64]),
    "lg_pool_push": (_status, [_handle, POINTER(c_uint64), POINTER(c_uint32), c_size_t, _bytes]),
    "lg_pool_verdict": (_status, [_handle, c_uint64, POINTER(LgVerdict)]),
    "lg_pool_set_callbacks": (_status, [_handle, VERDICT_CALLBACK, VERDICT_CALLBACK, c_void_p]),
    "lg_pool_last_error": (c_char_p, [_handle]),
    "lg_stream_new": (_status, [POINTER(LgStreamConfig), _out_handle]),
    "lg_stream_free": (None, [_handle]),
    "lg_stream_push_token": (_status, [_handle, c_uint32, _bytes, c_size_t, _action]),
    "lg_stream_push_text": (_status, [_handle, _bytes, c_size_t, _action]),
    "lg_stream_finish_text": (_status, [_handle, _action]),
    "lg_stream_reset": (_status, [_handle]),
    "lg_stream_checkpoint": (_status, [_handle]),
    "lg_stream_rollback": (_status, [_handle, c_size_t, _action]),
    "lg_stream_commit": (_status, [_handle]),
    "lg_stream_clone": (_status, [_handle, _out_handle]),
    "lg_stream_verdict": (_status, [_handle, POINTER(LgVerdict)]),
    "lg_stream_repeated_text": (_status, [_handle, POINTER(_bytes), POINTER(c_size_t)]),
    "lg_stream_describe": (_status, [_handle, c_int32, POINTER(c_char), c_size_t, POINTER(c_size_t)]),
    "lg_stream_memory_usage": (_status, [_handle, POINTER(c_size_t)]),
    "lg_stream_stats": (_status, [_handle, POINTER(LgStats)]),
    "lg_stream_set_callbacks": (_status, [_handle, VERDICT_CALLBACK, VERDICT_CALLBACK, c_void_p]),
    "lg_stream_last_error": (c_char_p, [_handle]),
}


class LibraryNotFound(OSError):
    """The shared library could not be found or loaded."""


def _candidates():
    env = os.environ.get("LOOPGUARD_LIB")
    if env:
        yield Path(env)
        return
    names = ["libloopguard.so", "libloopguard.dylib", "loopguard.dll"]
    here = Path(__file__).resolve()
    # An installed wheel carries the library inside the package (built by setuptools-rust).
    for pattern in ("_libloopguard*.so", "_libloopguard*.dylib", "_libloopguard*.pyd"):
        for path in sorted(here.parent.glob(pattern)):
            yield path
    # A checkout: bindings/python/loopguard/_ffi.py -> the repository's target/.
    for root in here.parents:
        for profile in ("release", "debug"):
            for name in names:
                yield root / "target" / profile / name
    found = ctypes.util.find_library("loopguard")
    if found:
        yield Path(found)


def load():
    """Loads the library and declares every function; raises LibraryNotFound saying how to
    build it."""
    tried = []
    for path in _candidates():
        tried.append(str(path))
        if path.is_absolute() and not path.exists():
            continue
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:
            raise LibraryNotFound(f"cannot load {path}: {e}") from e
        for name, (restype, argtypes) in FUNCTIONS.items():
            f = getattr(lib, name)
            f.restype = restype
            f.argtypes = argtypes
        return lib
    raise LibraryNotFound(
        "libloopguard not found (looked for "
        + ", ".join(tried[:3])
        + ", ...): build it with `cargo build --release` in the loopguard repository, "
        "or set LOOPGUARD_LIB=/path/to/libloopguard.so"
    )
