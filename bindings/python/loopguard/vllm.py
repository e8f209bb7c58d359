"""loopguard for vLLM: a v1 logits processor that ends the requests of a batch that loop.

Load it into an engine or the OpenAI-compatible server:

    from vllm import LLM
    from loopguard.vllm import LoopguardLogitsProcessor
    llm = LLM(model=..., logits_processors=[LoopguardLogitsProcessor])

    python -m vllm.entrypoints.openai.api_server --model ... \\
        --logits-processors loopguard.vllm:LoopguardLogitsProcessor

Every request of the running batch has a guard in a pool (one pool per distinct setting).
Before each decoding step the processor pushes the tokens each request generated since the
last step (one call into the library per pool, whatever the batch size) and, for a request
that halted, leaves one token possible: end-of-sequence, or the request's own halt token.

Per-request settings travel in ``SamplingParams.extra_args`` (``vllm_xargs`` over HTTP), as
flat keys:

- ``loopguard``: ``"off"`` (the request is not watched), or a preset: ``"strict"``,
  ``"balanced"`` (the default), ``"lenient"``;
- ``loopguard_halt_token``: the token forced on a halt instead of end-of-sequence. List it in
  ``stop_token_ids`` too and the response says why it stopped: ``stop_reason`` is that id;
- ``loopguard_reasoning_end_ids``: the token ids of the model's reasoning end marker
  (``</think>``), and ``loopguard_reasoning_start_ids`` those of its start marker (without it
  the output begins inside the reasoning, as when the chat template opened it). A loop inside
  the reasoning then ends the reasoning instead of the request: the processor forces the end
  marker's ids one step after the other, the request's guard starts afresh, and the answer is
  watched as usual (the guard's ``END_REASONING`` verdict, on ids: the processor follows the
  markers itself, since it has no text);
- ``loopguard_<field>``: any field of ``lg_stream_config`` (``loopguard_halt_copies: 5``).

``validate_params`` rejects an unknown key or a bad value with a message naming it, so the
server answers HTTP 400. A halt is logged on the ``loopguard.vllm`` logger with its evidence.
A request that is preempted and resumed has its generated tokens pushed again into a fresh
guard, which then holds exactly the state it had.
"""

import logging
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch
from vllm.v1.sample.logits_processor import BatchUpdate, LogitsProcessor, MoveDirectionality

from . import Action, ConfigError, Pool, StreamConfig

__all__ = ["LoopguardLogitsProcessor", "STATS"]

log = logging.getLogger("loopguard.vllm")

_PRESETS = ("strict", "balanced", "lenient")
_PREFIX = "loopguard_"

# Time spent in the processor, steps taken, tokens pushed and requests resumed with tokens
# already generated (after a preemption), for measuring it (read by the tests).
STATS = {"seconds": 0.0, "steps": 0, "tokens": 0, "resumed": 0}


@dataclass(frozen=True)
class _Settings:
    preset: str
    fields: Tuple[Tuple[str, object], ...]
    halt_token: Optional[int]
    reasoning_start: Tuple[int, ...] = ()
    reasoning_end: Tuple[int, ...] = ()

    @property
    def key(self):
        return (self.preset, self.fields)


def _settings(extra_args) -> Optional[_Settings]:
    """The request's settings, or None when it is off. Raises ValueError naming a bad key."""
    args = extra_args or {}
    preset = args.get("loopguard", "balanced")
    if not isinstance(preset, str) or preset not in ("off",) + _PRESETS:
        raise ValueError(f"loopguard = {preset!r}: one of off, {', '.join(_PRESETS)}")
    halt_token = args.get(_PREFIX + "halt_token")
    if halt_token is not None and (not isinstance(halt_token, int) or isinstance(halt_token, bool) or halt_token < 0):
        raise ValueError(f"loopguard_halt_token = {halt_token!r}: a token id (an integer >= 0)")
    markers = {}
    for name in ("reasoning_start_ids", "reasoning_end_ids"):
        ids = args.get(_PREFIX + name, [])
        if not isinstance(ids, (list, tuple)) or len(ids) > 64 or not all(
            isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in ids
        ):
            raise ValueError(f"{_PREFIX}{name} = {ids!r}: a list of at most 64 token ids")
        markers[name] = tuple(ids)
    if markers["reasoning_start_ids"] and not markers["reasoning_end_ids"]:
        raise ValueError(f"{_PREFIX}reasoning_start_ids: needs {_PREFIX}reasoning_end_ids too")
    own = {_PREFIX + "halt_token", _PREFIX + "reasoning_start_ids", _PREFIX + "reasoning_end_ids"}
    fields = tuple(sorted((k[len(_PREFIX):], v) for k, v in args.items() if k.startswith(_PREFIX) and k not in own))
    if preset == "off":
        return None
    settings = _Settings(
        preset, fields, halt_token, markers["reasoning_start_ids"], markers["reasoning_end_ids"]
    )
    _config(settings)  # checks the fields
    return settings


def _config(settings: _Settings) -> StreamConfig:
    try:
        return StreamConfig(settings.preset, **dict(settings.fields))
    except (ConfigError, TypeError, ValueError, AttributeError) as e:
        names = ", ".join(_PREFIX + k for k, _ in settings.fields) or "loopguard"
        raise ValueError(f"{names}: {e}") from None


@dataclass
class _Row:
    pool: Pool
    slot: int
    output: List[int]  # the request's running list of generated tokens (vLLM's own)
    seen: int
    halt_token: int
    halted: bool = False
    start_ids: Tuple[int, ...] = ()
    end_ids: Tuple[int, ...] = ()
    inside: bool = False  # in a reasoning section
    forcing: int = -1  # the next end marker id to force, or -1
    ends: int = 0  # reasoning sections ended

    def read(self, at: int) -> None:
        """Follows the markers through output token ``at``."""
        token = self.output[at]
        if self.forcing >= 0 and token == self.end_ids[self.forcing]:
            self.forcing += 1
            if self.forcing == len(self.end_ids):
                self.forcing = -1
        for ids, inside in ((self.start_ids, True), (self.end_ids, False)):
            if ids and at + 1 >= len(ids) and tuple(self.output[at + 1 - len(ids) : at + 1]) == ids:
                self.inside = inside


class LoopguardLogitsProcessor(LogitsProcessor):
    """Ends the requests that loop; see the module's documentation."""

    def __init__(self, vllm_config, device: torch.device, is_pin_memory: bool):
        self.capacity = max(1, int(vllm_config.scheduler_config.max_num_seqs))
        self.eos_token_id = _eos(vllm_config)
        self.pools: Dict[tuple, Pool] = {}
        self.rows: Dict[int, _Row] = {}

    @classmethod
    def validate_params(cls, sampling_params) -> None:
        _settings(sampling_params.extra_args)

    def is_argmax_invariant(self) -> bool:
        # It changes what greedy decoding picks (end-of-sequence after a halt).
        return False

    def update_state(self, batch_update: Optional[BatchUpdate]) -> None:
        if batch_update is None:
            return
        start = time.perf_counter()
        for index in batch_update.removed:
            self._drop(index)
        for index, params, _prompt, output in batch_update.added:
            self._drop(index)
            settings = _settings(params.extra_args if params is not None else None)
            if settings is None:
                continue
            pool = self.pools.get(settings.key)
            if pool is None:
                pool = self.pools[settings.key] = Pool(_config(settings), capacity=self.capacity)
            halt_token = self.eos_token_id if settings.halt_token is None else settings.halt_token
            # A resumed request's tokens so far are pushed again at the next step.
            STATS["resumed"] += bool(output)
            self.rows[index] = _Row(
                pool, pool.add(), output, 0, halt_token, start_ids=settings.reasoning_start,
                end_ids=settings.reasoning_end, inside=bool(settings.reasoning_end) and not settings.reasoning_start,
            )
        for a, b, direction in batch_update.moved:
            if direction == MoveDirectionality.SWAP:
                ra, rb = self.rows.pop(a, None), self.rows.pop(b, None)
                if ra is not None:
                    self.rows[b] = ra
                if rb is not None:
                    self.rows[a] = rb
            else:
                row = self.rows.pop(a, None)
                self._drop(b)
                if row is not None:
                    self.rows[b] = row
        STATS["seconds"] += time.perf_counter() - start

    def apply(self, logits: torch.Tensor) -> torch.Tensor:
        start = time.perf_counter()
        pushes: Dict[int, Tuple[Pool, List[int], List[int], List[Tuple[int, _Row]]]] = {}
        for index, row in self.rows.items():
            if row.halted or row.seen >= len(row.output):
                continue
            batch = pushes.setdefault(id(row.pool), (row.pool, [], [], []))
            for at in range(row.seen, len(row.output)):
                batch[1].append(row.slot)
                batch[2].append(row.output[at])
                batch[3].append((index, row, at))
            row.seen = len(row.output)
        for pool, slots, tokens, rows in pushes.values():
            actions = pool.push(np.asarray(slots, dtype=np.uint64), np.asarray(tokens, dtype=np.uint32))
            STATS["tokens"] += len(tokens)
            for (index, row, at), action in zip(rows, actions):
                inside = row.inside
                row.read(at)
                if action != Action.HALT or row.halted or row.forcing >= 0:
                    continue
                v = pool.verdict(row.slot)
                if inside and row.end_ids:
                    # A loop in the reasoning: end the reasoning, not the request. The guard
                    # forgets the thinking (a fresh one: ids carry no text to find the marker).
                    row.forcing, row.inside = 0, False
                    row.ends += 1
                    pool.reset(row.slot)
                    what = "ended the reasoning of"
                else:
                    row.halted = True
                    what = "halted"
                log.info(
                    "loopguard: %s the request in batch row %d after %d generated tokens: "
                    "%s period %d x%.1f since token %d",
                    what, index, at + 1, v.kind.name.lower(), v.period, v.repeats, v.onset,
                )
        # One token left possible: the halt token of a halted request, the next marker id of
        # one whose reasoning is being ended.
        forced = [
            (i, r.halt_token if r.halted else r.end_ids[r.forcing])
            for i, r in self.rows.items()
            if (r.halted or r.forcing >= 0) and i < logits.shape[0]
        ]
        if forced:
            rows = torch.tensor([i for i, _ in forced], device=logits.device)
            tokens = torch.tensor([t for _, t in forced], device=logits.device)
            kept = logits[rows, tokens]
            logits[rows] = -float("inf")
            logits[rows, tokens] = torch.where(torch.isfinite(kept), kept, torch.zeros_like(kept))
        STATS["steps"] += 1
        STATS["seconds"] += time.perf_counter() - start
        return logits

    def _drop(self, index: int) -> None:
        row = self.rows.pop(index, None)
        if row is not None:
            row.pool.remove(row.slot)


def _eos(vllm_config) -> int:
    """The model's end-of-sequence id (the first, when it has several)."""
    for source in (
        getattr(vllm_config.model_config, "hf_text_config", None),
        getattr(vllm_config.model_config, "hf_config", None),
    ):
        eos = getattr(source, "eos_token_id", None)
        if isinstance(eos, (list, tuple)):
            eos = eos[0] if eos else None
        if isinstance(eos, int):
            return eos
    raise ValueError("loopguard: the model's config has no eos_token_id to end a halted request with")
