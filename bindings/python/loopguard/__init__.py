"""loopguard for Python: stops language models from wasting compute in loops.

A thin layer over the C ABI (``include/loopguard.h``) with ctypes:

    from loopguard import StreamGuard, Action

    with StreamGuard() as guard:                 # the balanced preset
        for token_id, piece in generated:
            if guard.push(token_id, piece) == Action.HALT:
                print(guard.describe())          # what loops, since where
                break

``StreamGuard`` (one per sequence), ``Pool`` (many sequences advanced in one call, with numpy
or any buffer), ``AgentGuard`` (tool calls, results and messages of an agent) and, in
``loopguard.llama``, an adapter for llama-cpp-python. Every handle is a context manager and is
freed when closed or collected. Handles are safe to move between threads, not for concurrent
use. Errors raise ``LoopguardError`` (``ConfigError`` for a bad configuration), with the
library's message.
"""

import ctypes
import enum
import json
import numbers
import weakref
from ctypes import POINTER, byref, c_char, c_size_t, c_uint8, c_uint32, c_uint64, c_void_p
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence, Union

from . import _ffi
from ._ffi import LibraryNotFound

__all__ = [
    "Action",
    "AgentConfig",
    "AgentGuard",
    "AgentKind",
    "AgentVerdict",
    "ConfigError",
    "Kind",
    "LibraryNotFound",
    "LoopguardError",
    "Pool",
    "StreamConfig",
    "StreamGuard",
    "Verdict",
    "version",
]

_lib = None


def lib():
    """The loaded C library (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = _ffi.load()
    return _lib


def version() -> str:
    """The library's version string, e.g. ``"0.1.0"``."""
    return lib().lg_version_string().decode()


def _enum(name: str, cname: str):
    return enum.IntEnum(name, {m: i for i, m in enumerate(_ffi.ENUMS[cname])})


Action = _enum("Action", "lg_action")
Action.__doc__ = "CONTINUE < WARN < BLOCK (agents: do not run this call) < HALT."
Kind = _enum("Kind", "lg_kind")
AgentKind = _enum("AgentKind", "lg_agent_kind")
Status = _enum("Status", "lg_status")
Unit = _enum("Unit", "lg_unit")
_PRESETS = {m.lower(): i for i, m in enumerate(_ffi.ENUMS["lg_preset"])}
_AGENT_PRESETS = {m.lower(): i for i, m in enumerate(_ffi.ENUMS["lg_agent_preset"])}
_VERBOSITY = {m.lower(): i for i, m in enumerate(_ffi.ENUMS["lg_verbosity"])}


class LoopguardError(RuntimeError):
    """A call into the library failed; ``status`` is the ``lg_status`` code."""

    def __init__(self, message: str, status: int = 0):
        super().__init__(message)
        self.status = status


class ConfigError(LoopguardError, ValueError):
    """A configuration field is out of range (the message names it and the allowed range)."""


def _status_str(status: int) -> str:
    return lib().lg_status_str(status).decode()


def _bytes_arg(data: Union[bytes, bytearray, memoryview, str, None], what: str):
    """(pointer, length) for a byte string; str is encoded as UTF-8; None is (NULL, 0)."""
    if data is None:
        return None, 0
    if isinstance(data, str):
        data = data.encode()
    elif not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"{what} must be bytes or str, not {type(data).__name__}")
    data = bytes(data)
    return ctypes.cast(ctypes.c_char_p(data), POINTER(c_uint8)), len(data)


def _uint(value, bits: int, name: str) -> int:
    """``value`` as an unsigned integer of ``bits`` bits, the one conversion every integer
    bound for C goes through: a ``TypeError`` for what is not an integer (``bool`` included), a
    ``ValueError`` naming ``name`` for what does not fit (C would wrap it silently)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    value = int(value)
    top = (1 << bits) - 1
    if not 0 <= value <= top:
        raise ValueError(f"{name} = {value} is out of range 0..{top}")
    return value


def _strs(items: Sequence[str], name: str):
    """An ``lg_str`` array for a list of strings, and the buffers it points into (kept alive
    by the caller while the config is used). One string is refused: iterating it would give
    one pattern per character."""
    if isinstance(items, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be a list of strings, not one {type(items).__name__}")
    keep = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            keep.append(item.encode())
        elif isinstance(item, (bytes, bytearray, memoryview)):
            keep.append(bytes(item))
        else:
            raise TypeError(f"{name}[{i}] must be str or bytes, not {type(item).__name__}")
    arr = (_ffi.LgStr * len(keep))()
    for i, b in enumerate(keep):
        arr[i].ptr = ctypes.cast(ctypes.c_char_p(b), POINTER(c_char))
        arr[i].len = len(b)
    return arr, keep


def _set_fields(struct, fields: dict, what: str):
    names = {f[0] for f in struct._fields_}
    for key, value in fields.items():
        if key not in names or key == "struct_size" or key.endswith("_len"):
            raise ConfigError(f"{what}: unknown field {key!r}", _ffi_status("ERR_CONFIG"))
        current = getattr(struct, key)
        if isinstance(current, _ffi.LgThresholds):
            warn, block, halt = value
            setattr(struct, key, _ffi.LgThresholds(warn, block, halt))
        elif isinstance(value, bool):
            setattr(struct, key, int(value))
        else:
            try:
                setattr(struct, key, value)
            except TypeError as e:
                raise ConfigError(f"{what}.{key}: {e}", _ffi_status("ERR_CONFIG")) from None
            if isinstance(value, int) and getattr(struct, key) != value:
                raise ConfigError(
                    f"{what}.{key} = {value}: out of the field's range",
                    _ffi_status("ERR_CONFIG"),
                )


def _ffi_status(name: str) -> int:
    return _ffi.ENUMS["lg_status"].index(name)


class _Config:
    """A filled C config struct, validated by the library; its fields read as attributes."""

    def _validated(self, c, validate) -> None:
        buf = ctypes.create_string_buffer(256)
        status = validate(byref(c), buf, len(buf))
        if status != 0:
            raise ConfigError(buf.value.decode(errors="replace"), status)
        self._c = c

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._c, name)


class StreamConfig(_Config):
    """Settings of stream guards: a preset (``strict``, ``balanced``, ``lenient``) or vLLM's
    ``repetition_detection`` (``vllm=(min_pattern_size, max_pattern_size, min_count)``), then
    any field of ``lg_stream_config`` by name, plus ``breakers`` and ``exempt`` pattern lists
    and the reasoning markers (``reasoning_end="</think>"``: a loop inside the reasoning
    answers ``Action.END_REASONING``, see ``StreamGuard.push``), and ``model``: a model name
    that a per-model profile matches (``"SmolLM2-135M-Instruct"``) gets its adjustments.
    Validated at construction: a bad field raises ``ConfigError`` naming it."""

    def __init__(
        self,
        preset: str = "balanced",
        *,
        vllm: Optional[Sequence[int]] = None,
        breakers: Sequence[str] = (),
        exempt: Sequence[str] = (),
        reasoning_start: str = "",
        reasoning_end: str = "",
        model: str = "",
        **fields,
    ):
        c = _ffi.LgStreamConfig()
        if vllm is not None:
            status = lib().lg_stream_config_vllm(byref(c), *vllm)
        elif preset in _PRESETS:
            status = lib().lg_stream_config_preset(byref(c), _PRESETS[preset])
        else:
            raise ConfigError(
                f"unknown preset {preset!r}: one of {', '.join(_PRESETS)}",
                _ffi_status("ERR_INVALID_ARGUMENT"),
            )
        if status != 0:
            raise ConfigError(f"stream config: {_status_str(status)}", status)
        _set_fields(c, fields, "stream config")
        self._breakers, self._keep_b = _strs(breakers, "breakers")
        self._exempt, self._keep_e = _strs(exempt, "exempt")
        c.breakers, c.breakers_len = self._breakers, len(self._keep_b)
        c.exempt, c.exempt_len = self._exempt, len(self._keep_e)
        self._markers = []
        texts = (("reasoning_start", reasoning_start), ("reasoning_end", reasoning_end), ("model", model))
        for name, marker in texts:
            if not isinstance(marker, str):
                raise TypeError(f"{name} must be a str, not {type(marker).__name__}")
            data = marker.encode()
            self._markers.append(data)
            setattr(c, name, _ffi.LgStr(ctypes.cast(ctypes.c_char_p(data), POINTER(c_char)), len(data)))
        self._validated(c, lib().lg_stream_config_validate)


class AgentConfig(_Config):
    """Settings of agent guards: a preset (``default``, ``gemini_cli``, ``openhands``,
    ``roo_code``, ``cline``), then fields of ``lg_agent_config`` by name (thresholds as
    ``(warn, block, halt)``), ``ignored_fields``, ``progress_patterns``, ``shell_tools`` (names
    of tools whose arguments are shell command lines) and ``tools``:
    ``{"read_file": {"exempt": True}, "status": {"poller": True, "repeats": (5, 0, 0)},
    "run": {"shell": True}}``."""

    _FLAGS = {
        "exempt": _ffi.LG_TOOL_EXEMPT,
        "poller": _ffi.LG_TOOL_POLLER,
        "progress": _ffi.LG_TOOL_PROGRESS,
        "failure_tolerant": _ffi.LG_TOOL_FAILURE_TOLERANT,
        "shell": _ffi.LG_TOOL_SHELL,
    }

    def __init__(
        self,
        preset: str = "default",
        *,
        ignored_fields: Optional[Sequence[str]] = None,
        progress_patterns: Optional[Sequence[str]] = None,
        shell_tools: Optional[Sequence[str]] = None,
        tools: Optional[dict] = None,
        **fields,
    ):
        c = _ffi.LgAgentConfig()
        if preset not in _AGENT_PRESETS:
            raise ConfigError(
                f"unknown agent preset {preset!r}: one of {', '.join(_AGENT_PRESETS)}",
                _ffi_status("ERR_INVALID_ARGUMENT"),
            )
        lib().lg_agent_config_preset(byref(c), _AGENT_PRESETS[preset])
        _set_fields(c, fields, "agent config")
        self._keep = []
        if ignored_fields is not None:
            arr, keep = _strs(ignored_fields, "ignored_fields")
            c.ignored_fields, c.ignored_fields_len = arr, len(keep)
            self._keep += [arr, keep]
        if progress_patterns is not None:
            arr, keep = _strs(progress_patterns, "progress_patterns")
            c.progress_patterns, c.progress_patterns_len = arr, len(keep)
            self._keep += [arr, keep]
        if shell_tools is not None:
            arr, keep = _strs(shell_tools, "shell_tools")
            c.shell_tools, c.shell_tools_len = arr, len(keep)
            self._keep += [arr, keep]
        if tools:
            policies = (_ffi.LgToolPolicy * len(tools))()
            for i, (name, policy) in enumerate(tools.items()):
                name_b = name.encode()
                self._keep.append(name_b)
                p = policies[i]
                p.name = _ffi.LgStr(ctypes.cast(ctypes.c_char_p(name_b), POINTER(c_char)), len(name_b))
                for key, value in policy.items():
                    if key in self._FLAGS:
                        p.flags |= self._FLAGS[key] if value else 0
                    elif key == "ignored_fields":
                        arr, keep = _strs(value, f"tools[{name!r}].ignored_fields")
                        p.ignored_fields, p.ignored_fields_len = arr, len(keep)
                        self._keep += [arr, keep]
                    elif key == "repeats":
                        p.flags |= _ffi.LG_TOOL_OWN_REPEATS
                        p.repeats = _ffi.LgThresholds(*value)
                    else:
                        raise ConfigError(
                            f"tools[{name!r}]: unknown policy {key!r}", _ffi_status("ERR_CONFIG")
                        )
            c.tools, c.tools_len = policies, len(tools)
            self._keep.append(policies)
        self._validated(c, lib().lg_agent_config_validate)


@dataclass(frozen=True)
class Verdict:
    """The evidence behind a stream guard's last answer."""

    action: Action
    kind: Kind
    unit: Unit
    period: int
    repeats: float
    span: int
    onset: int
    onset_byte: Optional[int]
    at: int
    confidence: float

    @classmethod
    def _from(cls, v: _ffi.LgVerdict) -> "Verdict":
        return cls(
            Action(v.action),
            Kind(v.kind),
            Unit(v.unit),
            v.period,
            v.repeats,
            v.span,
            v.onset,
            None if v.onset_byte == _ffi.LG_UNKNOWN else v.onset_byte,
            v.at,
            v.confidence,
        )


@dataclass(frozen=True)
class AgentVerdict:
    """The evidence behind an agent guard's last answer."""

    action: Action
    kind: AgentKind
    count: int
    period: int
    strikes: int
    confidence: float
    step: int
    args_invalid: bool
    evidence: tuple


def _resolve(config, cls, fields: dict):
    """The config given, or one built from its arguments (not both)."""
    if config is None:
        return cls(**fields)
    if fields:
        raise TypeError(f"give a {cls.__name__} or its arguments, not both")
    return config


def _create(fn, *args) -> c_void_p:
    """Calls an ``lg_*_new`` function whose last argument is the out-handle."""
    out = c_void_p()
    status = fn(*args, byref(out))
    if status != 0:
        raise LoopguardError(_status_str(status), status)
    return out


class _Handle:
    """An owned C handle: freed by ``close()``, the context manager or the collector.

    Callbacks run inside a push. An exception one raises is held and raised from that push
    once it returns, and ``close()`` called in one frees the handle then (the library ignores a
    free from inside its own call, so closing there at once would leak the guard)."""

    _free = ""
    _last_error = ""
    _in_callback = 0
    _close_later = False
    _raised = None

    def __init__(self, ptr: c_void_p):
        self._ptr = ptr

    @property
    def _h(self):
        if not self._ptr:
            raise LoopguardError(f"{type(self).__name__} is closed", _ffi_status("ERR_NULL"))
        return self._ptr

    def close(self) -> None:
        """Frees the handle; further calls raise. Closing twice is harmless. Called from a
        callback, it frees the handle when the push that called the callback returns."""
        if self._in_callback:
            self._close_later = True
            return
        if self._ptr:
            getattr(lib(), self._free)(self._ptr)
            self._ptr = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _check(self, status: int) -> None:
        """Raises for a failed call; after a push, does what its callbacks left to do: the
        close they asked for, then the exception one raised (it comes first: it is the cause)."""
        error = None
        if status != 0:
            msg = getattr(lib(), self._last_error)(self._ptr) if self._ptr else None
            text = msg.decode(errors="replace") if msg else _status_str(status)
            error = LoopguardError(f"{_status_str(status)}: {text}", status)
        if not self._in_callback:
            if self._close_later:
                self._close_later = False
                self.close()
            raised, self._raised = self._raised, None
            if raised is not None:
                raise raised
        if error is not None:
            raise error


def _describe(fn, handle, verbosity: str) -> str:
    if verbosity not in _VERBOSITY:
        raise ValueError(f"verbosity must be one of {', '.join(_VERBOSITY)}")
    need = c_size_t()
    buf = ctypes.create_string_buffer(512)
    status = fn(handle, _VERBOSITY[verbosity], buf, len(buf), byref(need))
    if status == 0 and need.value >= len(buf):
        buf = ctypes.create_string_buffer(need.value + 1)
        status = fn(handle, _VERBOSITY[verbosity], buf, len(buf), byref(need))
    return status, buf.value.decode(errors="replace")


VerdictCallback = Callable[[int, Verdict], None]


class StreamGuard(_Handle):
    """One generated sequence's guard. ``push`` returns an ``Action``; the details of the last
    answer are in ``verdict``, ``repeated_text`` and ``describe()``."""

    _free = "lg_stream_free"
    _last_error = "lg_stream_last_error"

    def __init__(self, config: Optional[StreamConfig] = None, **preset_and_fields):
        config = _resolve(config, StreamConfig, preset_and_fields)
        super().__init__(_create(lib().lg_stream_new, byref(config._c)))
        self._action = c_uint8()
        self._callbacks = None

    @classmethod
    def _adopt(cls, ptr: c_void_p) -> "StreamGuard":
        g = cls.__new__(cls)
        _Handle.__init__(g, ptr)
        g._action = c_uint8()
        g._callbacks = None
        return g

    def push(self, token: int, piece: Union[bytes, str, None] = None) -> Action:
        """Pushes one generated token id (0..2**32-1) with its text piece when known."""
        token = _uint(token, 32, "token")
        ptr, n = _bytes_arg(piece, "piece")
        self._check(lib().lg_stream_push_token(self._h, token, ptr, n, byref(self._action)))
        return Action(self._action.value)

    def push_text(self, text: Union[bytes, str]) -> Action:
        """Pushes a chunk of text, for streams without token ids (any chunking)."""
        ptr, n = _bytes_arg(text, "text")
        self._check(lib().lg_stream_push_text(self._h, ptr, n, byref(self._action)))
        return Action(self._action.value)

    def finish_text(self) -> Action:
        """Ends a text-only stream (its last word is pushed)."""
        self._check(lib().lg_stream_finish_text(self._h, byref(self._action)))
        return Action(self._action.value)

    def reset(self) -> None:
        """Forgets the stream, as if new."""
        self._check(lib().lg_stream_reset(self._h))

    def checkpoint(self) -> None:
        """Marks the state for speculative decoding: pushes from now on can be taken back with
        ``rollback`` until ``commit``. The first checkpoint allocates what drafting needs
        (about 90 KiB); a rollback among the first ``LG_NOTED_PUSHES`` pushes costs only what
        the rolled-back pushes wrote."""
        self._check(lib().lg_stream_checkpoint(self._h))

    def rollback(self, n: int) -> Action:
        """Takes back the last ``n`` pushes since the checkpoint (the rejected drafts): the
        guard answers as one fed only the pushes before them. Returns the action then.
        ``LoopguardError`` naming ``n`` without a checkpoint, when fewer pushes were made, or
        past the drafts a checkpoint holds (``LG_MAX_DRAFTS`` pushes, ``LG_DRAFT_BYTES`` bytes)."""
        n = _uint(n, 64, "n")
        self._check(lib().lg_stream_rollback(self._h, n, byref(self._action)))
        return Action(self._action.value)

    def commit(self) -> None:
        """Ends the checkpoint and keeps every push since."""
        self._check(lib().lg_stream_commit(self._h))

    def clone(self) -> "StreamGuard":
        """A copy of the whole state (for forked or preempted sequences)."""
        out = c_void_p()
        self._check(lib().lg_stream_clone(self._h, byref(out)))
        return StreamGuard._adopt(out)

    @property
    def verdict(self) -> Verdict:
        v = _ffi.LgVerdict(struct_size=ctypes.sizeof(_ffi.LgVerdict))
        self._check(lib().lg_stream_verdict(self._h, byref(v)))
        return Verdict._from(v)

    @property
    def repeated_text(self) -> bytes:
        """The repeated block of the last warn or halt (raw bytes, at most 256)."""
        ptr, n = POINTER(c_uint8)(), c_size_t()
        self._check(lib().lg_stream_repeated_text(self._h, byref(ptr), byref(n)))
        return ctypes.string_at(ptr, n.value) if n.value else b""

    def describe(self, verbosity: str = "summary") -> str:
        """The last verdict for a log line (``brief``), a person (``summary``) or a report
        (``full``)."""
        status, text = _describe(lib().lg_stream_describe, self._h, verbosity)
        self._check(status)
        return text

    @property
    def stats(self) -> dict:
        s = _ffi.LgStats(struct_size=ctypes.sizeof(_ffi.LgStats))
        self._check(lib().lg_stream_stats(self._h, byref(s)))
        unknown = lambda v: None if v == _ffi.LG_UNKNOWN else v  # noqa: E731
        return {
            "symbols": s.symbols,
            "bytes": s.bytes,
            "warnings": s.warnings,
            "first_warn_at": unknown(s.first_warn_at),
            "halted_at": unknown(s.halted_at),
        }

    @property
    def memory_usage(self) -> int:
        n = c_size_t()
        self._check(lib().lg_stream_memory_usage(self._h, byref(n)))
        return n.value

    def set_callbacks(
        self, on_warn: Optional[VerdictCallback] = None, on_halt: Optional[VerdictCallback] = None
    ) -> None:
        """Calls ``on_warn(slot, verdict)`` / ``on_halt(slot, verdict)`` from inside the push
        that warns or halts. They must not call back into this guard (``close()`` excepted: it
        takes effect when the push returns). An exception raised in one is raised by the push
        that called it, once the push is done (the token is in the guard's state)."""
        self._callbacks = _verdict_callbacks(self, on_warn, on_halt)
        self._check(lib().lg_stream_set_callbacks(self._h, *self._callbacks, None))


def _verdict_callbacks(owner: _Handle, on_warn, on_halt):
    """C callbacks calling ``on_warn`` / ``on_halt``. An exception cannot cross the C
    boundary: the first one raised is held on ``owner`` and raised by its push."""
    ref = weakref.ref(owner)  # the owner holds the callbacks: no cycle through them

    def wrap(fn):
        if fn is None:
            return _ffi.VERDICT_CALLBACK()

        def call(_user, slot, v):
            g = ref()
            if g is None:
                return
            g._in_callback += 1
            try:
                fn(slot, Verdict._from(v.contents))
            except BaseException as e:  # noqa: B902 - held and raised by the push
                if g._raised is None:
                    g._raised = e
            finally:
                g._in_callback -= 1

        return _ffi.VERDICT_CALLBACK(call)

    return wrap(on_warn), wrap(on_halt)


def _array(data, ctype, name: str):
    """A C array view of ``data`` (numpy array, buffer or sequence of ints) with no copy when
    it already has the right layout; returns (pointer, length, keep-alive)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is optional
        np = None
    bits = 8 * ctypes.sizeof(ctype)
    if np is not None and isinstance(data, np.ndarray):
        dtype = {c_uint64: np.uint64, c_uint32: np.uint32, c_uint8: np.uint8}[ctype]
        if data.dtype != dtype:
            if data.dtype.kind not in "iu":
                raise TypeError(f"{name} must be an integer array, not {data.dtype}")
            if data.size and (int(data.min()) < 0 or int(data.max()) >> bits):
                bad = int(data.min()) if int(data.min()) < 0 else int(data.max())
                raise ValueError(f"{name} holds {bad}: out of range 0..{(1 << bits) - 1}")
            data = data.astype(dtype)
        data = np.ascontiguousarray(data)
        return data.ctypes.data_as(POINTER(ctype)), data.size, data
    try:
        view = memoryview(data)
        if view.itemsize == ctypes.sizeof(ctype) and view.format in "BHILQ" and view.c_contiguous:
            arr = (ctype * len(view)).from_buffer(view) if not view.readonly else (ctype * len(view)).from_buffer_copy(view)
            return arr, len(view), (arr, view)
    except TypeError:
        pass
    items = [_uint(x, bits, f"{name}[{i}]") for i, x in enumerate(data)]
    arr = (ctype * len(items))(*items)
    return arr, len(items), arr


class Pool(_Handle):
    """Many sequences' guards in one handle: ``push(slots, tokens)`` advances them all in one
    call and returns one ``Action`` code per token (``numpy.uint8`` array when given numpy
    arrays, else ``bytearray``)."""

    _free = "lg_pool_free"
    _last_error = "lg_pool_last_error"

    def __init__(self, config: Optional[StreamConfig] = None, capacity: int = 256):
        config = config or StreamConfig()
        if _uint(capacity, 64, "capacity") == 0:
            raise ValueError("capacity = 0: a pool needs at least one slot")
        super().__init__(_create(lib().lg_pool_new, byref(config._c), capacity))
        self._callbacks = None

    def add(self) -> int:
        """A new slot (a fresh guard); raises when the pool is full."""
        slot = c_uint64()
        self._check(lib().lg_pool_add(self._h, byref(slot)))
        return slot.value

    def remove(self, slot: int) -> None:
        self._check(lib().lg_pool_remove(self._h, _uint(slot, 64, "slot")))

    def reset(self, slot: int) -> None:
        self._check(lib().lg_pool_reset(self._h, _uint(slot, 64, "slot")))

    def checkpoint(self, slot: int) -> None:
        """``StreamGuard.checkpoint`` for one slot."""
        self._check(lib().lg_pool_checkpoint(self._h, _uint(slot, 64, "slot")))

    def rollback(self, slot: int, n: int) -> Action:
        """``StreamGuard.rollback`` for one slot: takes back its last ``n`` pushes."""
        action = c_uint8()
        slot, n = _uint(slot, 64, "slot"), _uint(n, 64, "n")
        self._check(lib().lg_pool_rollback(self._h, slot, n, byref(action)))
        return Action(action.value)

    def commit(self, slot: int) -> None:
        """``StreamGuard.commit`` for one slot."""
        self._check(lib().lg_pool_commit(self._h, _uint(slot, 64, "slot")))

    def push(self, slots, tokens, out=None):
        """Pushes ``tokens[i]`` into ``slots[i]`` for every i; writes the actions into ``out``
        (a writable uint8 buffer) or a new array. Nothing is pushed if a slot is unknown."""
        sp, n, keep_s = _array(slots, c_uint64, "slots")
        tp, m, keep_t = _array(tokens, c_uint32, "tokens")
        if n != m:
            raise ValueError(f"{n} slots but {m} tokens")
        if out is None:
            try:
                import numpy as np

                as_numpy = any(isinstance(x, np.ndarray) for x in (slots, tokens))
            except ImportError:  # pragma: no cover
                as_numpy = False
            out = np.zeros(n, dtype=np.uint8) if as_numpy else bytearray(n)
        op, k, keep_o = _array(out, c_uint8, "out")
        if k < n:
            raise ValueError(f"out holds {k} actions, {n} needed")
        self._check(lib().lg_pool_push(self._h, sp, tp, n, ctypes.cast(op, POINTER(c_uint8))))
        del keep_s, keep_t, keep_o
        return out

    def verdict(self, slot: int) -> Verdict:
        v = _ffi.LgVerdict(struct_size=ctypes.sizeof(_ffi.LgVerdict))
        self._check(lib().lg_pool_verdict(self._h, _uint(slot, 64, "slot"), byref(v)))
        return Verdict._from(v)

    def set_callbacks(
        self, on_warn: Optional[VerdictCallback] = None, on_halt: Optional[VerdictCallback] = None
    ) -> None:
        """As ``StreamGuard.set_callbacks``, with the pool slot as first argument."""
        self._callbacks = _verdict_callbacks(self, on_warn, on_halt)
        self._check(lib().lg_pool_set_callbacks(self._h, *self._callbacks, None))


class AgentGuard(_Handle):
    """An agent session's guard: feed it tool calls, their results and messages; each answers
    an ``Action`` (``BLOCK``: do not run this call). ``describe()`` is recovery text for the
    model."""

    _free = "lg_agent_free"
    _last_error = "lg_agent_last_error"

    def __init__(self, config: Optional[AgentConfig] = None, **preset_and_fields):
        config = _resolve(config, AgentConfig, preset_and_fields)
        super().__init__(_create(lib().lg_agent_new, byref(config._c)))
        self._action = c_uint8()

    def _act(self, status: int) -> Action:
        self._check(status)
        return Action(self._action.value)

    def call(self, tool: str, args: Union[dict, list, str, bytes, None] = None) -> Action:
        """A tool call: ``args`` as JSON text (str or bytes, compared canonically) or any
        JSON-serialisable value."""
        if args is None:
            args = b"{}"
        elif not isinstance(args, (str, bytes, bytearray)):
            args = json.dumps(args)
        tp, tn = _bytes_arg(tool, "tool")
        ap, an = _bytes_arg(args, "args")
        return self._act(lib().lg_agent_call(self._h, tp, tn, ap, an, byref(self._action)))

    def result(self, output: Union[str, bytes, None] = None, error: Union[str, bytes, None] = None) -> Action:
        """The last call's output, or its error (one of them, or neither)."""
        op, on = _bytes_arg(output, "output")
        ep, en = _bytes_arg(error, "error")
        return self._act(lib().lg_agent_result(self._h, op, on, ep, en, byref(self._action)))

    def message(self, text: Union[str, bytes]) -> Action:
        """A whole assistant message (text, not a tool call)."""
        p, n = _bytes_arg(text, "text")
        return self._act(lib().lg_agent_message(self._h, p, n, byref(self._action)))

    def message_chunk(self, text: Union[str, bytes]) -> Action:
        """Part of a streamed assistant message; end it with ``end_message()``."""
        p, n = _bytes_arg(text, "text")
        return self._act(lib().lg_agent_message_chunk(self._h, p, n, byref(self._action)))

    def end_message(self) -> Action:
        return self._act(lib().lg_agent_end_message(self._h, byref(self._action)))

    def thought(self, text: Union[str, bytes]) -> Action:
        p, n = _bytes_arg(text, "text")
        return self._act(lib().lg_agent_thought(self._h, p, n, byref(self._action)))

    def user(self, text: Union[str, bytes] = "") -> Action:
        """A user turn (by default a new scope: detection starts afresh)."""
        p, n = _bytes_arg(text, "text")
        return self._act(lib().lg_agent_user(self._h, p, n, byref(self._action)))

    def reject(self) -> Action:
        """A reply the agent's harness rejected (no tool call, or several): nothing ran."""
        return self._act(lib().lg_agent_reject(self._h, byref(self._action)))

    def state(self, fingerprint: int) -> Action:
        """A fingerprint of the environment's state (any 64-bit value), for oscillations."""
        fingerprint = _uint(fingerprint, 64, "fingerprint")
        return self._act(lib().lg_agent_state(self._h, fingerprint, byref(self._action)))

    def tick(self, now_ms: int) -> Action:
        """The caller's clock, in milliseconds (for the runaway-text rule)."""
        now_ms = _uint(now_ms, 64, "now_ms")
        return self._act(lib().lg_agent_tick(self._h, now_ms, byref(self._action)))

    def set_enabled(self, enabled: bool) -> None:
        self._check(lib().lg_agent_set_enabled(self._h, int(bool(enabled))))

    def reset(self) -> None:
        self._check(lib().lg_agent_reset(self._h))

    @property
    def verdict(self) -> AgentVerdict:
        v = _ffi.LgAgentVerdict(struct_size=ctypes.sizeof(_ffi.LgAgentVerdict))
        self._check(lib().lg_agent_get_verdict(self._h, byref(v)))
        steps = (c_uint64 * max(1, v.evidence_len))()
        n = c_size_t()
        self._check(lib().lg_agent_evidence(self._h, steps, len(steps), byref(n)))
        return AgentVerdict(
            Action(v.action),
            AgentKind(v.kind),
            v.count,
            v.period,
            v.strikes,
            v.confidence,
            v.step,
            bool(v.args_invalid),
            tuple(steps[: n.value]),
        )

    def describe(self, verbosity: str = "summary") -> str:
        """Recovery text: ``brief`` for a log line, ``summary`` for the model, ``full`` with
        the evidence in a ``<loop-recovery>`` block."""
        status, text = _describe(lib().lg_agent_describe, self._h, verbosity)
        self._check(status)
        return text

    @property
    def stats(self) -> dict:
        s = _ffi.LgAgentStats(struct_size=ctypes.sizeof(_ffi.LgAgentStats))
        self._check(lib().lg_agent_get_stats(self._h, byref(s)))
        out = {
            name: getattr(s, name)
            for name, _ in s._fields_
            if name not in ("struct_size", "by_kind", "by_kind_late")
        }
        # Kinds from 17 on are counted in a second array, laid out after the first.
        counts = list(s.by_kind) + list(s.by_kind_late)[: len(AgentKind) - len(s.by_kind)]
        out["by_kind"] = {AgentKind(i).name.lower(): n for i, n in enumerate(counts) if n}
        return out

    @property
    def memory_usage(self) -> int:
        n = c_size_t()
        self._check(lib().lg_agent_memory_usage(self._h, byref(n)))
        return n.value

    def export_memory(self) -> bytes:
        """The loops this guard reported (and imported), as bytes for the guard of a later
        session: fingerprints only (kinds, hashes of the calls, counts), never text."""
        buf = ctypes.create_string_buffer(_ffi.LG_MAX_MEMORY_BYTES)
        n = c_size_t()
        self._check(
            lib().lg_agent_memory_export(
                self._h, ctypes.cast(buf, POINTER(c_uint8)), len(buf), byref(n)
            )
        )
        return buf.raw[: n.value]

    def import_memory(self, data: Union[bytes, bytearray, memoryview]) -> int:
        """Merges a memory from ``export_memory``: a call that looped before warns one repeat
        earlier. Returns the loops it held; a malformed memory raises ``LoopguardError``
        naming ``data`` and what is wrong, and nothing is merged."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes, not {type(data).__name__}")
        ptr, n = _bytes_arg(data, "data")
        loops = c_size_t()
        self._check(lib().lg_agent_memory_import(self._h, ptr, n, byref(loops)))
        return loops.value
