"""loopguard for Hugging Face transformers: stop the rows of a batched ``generate()`` that loop.

One ``LoopGuard`` watches one ``generate()`` call, every row of its batch in one pool (one call
into the library per decoding step, whatever the batch size). Hand it to ``generate`` as a
stopping criterion (the row stops after its halting token), as a logits processor (the row is
forced to end-of-sequence right after its halting token, so that its output ends like any
finished answer), or both:

    from loopguard.transformers import LoopGuard

    guard = LoopGuard.for_model(model)                  # the balanced preset
    out = model.generate(**inputs, max_new_tokens=400,
                         stopping_criteria=[guard.stopping_criteria],
                         logits_processor=[guard.logits_processor])
    for row in guard.halted_rows:
        print(row, guard.describe(row))                 # why that row stopped

Why a row stopped is kept on the guard (``halted``, ``verdict(row)``, ``describe(row)``,
``halted_at[row]``) and logged once on the ``loopguard.transformers`` logger. Only generated
tokens are watched, never the prompt; a row that ends on its own (an end-of-sequence token) is
no longer pushed, so the padding after it is never taken for a loop. A guard handed to another
``generate()`` call starts afresh (it sees a different prompt or a shorter input); ``reset()``
does so explicitly.
"""

import logging
from typing import Iterable, List, Optional, Union

import torch
from transformers import LogitsProcessor, StoppingCriteria

from . import Action, LoopguardError, Pool, StreamConfig

__all__ = ["LoopGuard"]

log = logging.getLogger("loopguard.transformers")


class LoopGuard:
    """The guard of one batched ``generate()`` call.

    ``eos_token_id``: the end-of-sequence id (or ids) the logits processor forces and that
    marks a row as finished. ``config``/``preset``: the stream settings, as for
    ``loopguard.Pool``. ``capacity``: the largest batch (rows beyond it are an error).
    """

    def __init__(
        self,
        eos_token_id: Union[int, Iterable[int]],
        config: Optional[StreamConfig] = None,
        *,
        preset: Optional[str] = None,
        capacity: int = 256,
    ):
        ids = [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id or [])
        if not ids or not all(isinstance(i, int) and i >= 0 for i in ids):
            raise ValueError(f"eos_token_id must be a token id or a list of them, not {eos_token_id!r}")
        self.eos_token_ids = ids
        if config is None:
            config = StreamConfig(preset or "balanced")
        elif preset is not None:
            raise ValueError("give config or preset, not both")
        self._pool = Pool(config, capacity=capacity)
        self.capacity = capacity
        self._slots: List[int] = []
        self._prompt_len: Optional[int] = None
        self._prompt: Optional[torch.Tensor] = None
        self._seen = 0
        self.halted: List[bool] = []
        self.halted_at: List[Optional[int]] = []
        self.finished: List[bool] = []
        self.stopping_criteria = _Stop(self)
        self.logits_processor = _ForceEos(self)

    @classmethod
    def for_model(cls, model, config: Optional[StreamConfig] = None, **kw) -> "LoopGuard":
        """A guard that ends rows with the model's own end-of-sequence token."""
        eos = model.generation_config.eos_token_id
        if eos is None:
            eos = model.config.eos_token_id
        if eos is None:
            raise LoopguardError("the model has no eos_token_id: give LoopGuard(eos_token_id=...)")
        return cls(eos, config, **kw)

    # -- what the guard found ----------------------------------------------------------------

    @property
    def halted_rows(self) -> List[int]:
        """The rows that were stopped for looping."""
        return [r for r, h in enumerate(self.halted) if h]

    def verdict(self, row: int):
        """The row's last verdict (kind, period, repeats, onset in generated tokens)."""
        return self._pool.verdict(self._slot(row))

    def describe(self, row: int) -> str:
        """One line on why the row stopped, or that it did not."""
        v = self.verdict(row)
        if not self.halted[row]:
            return f"row {row}: not halted"
        return (
            f"row {row} halted at generated token {self.halted_at[row]}: {v.kind.name.lower()} "
            f"period {v.period} x{v.repeats:.1f} since token {v.onset}"
        )

    def _slot(self, row: int) -> int:
        if not 0 <= row < len(self._slots):
            raise IndexError(f"row {row} is not in the batch of {len(self._slots)}")
        return self._slots[row]

    # -- feeding -----------------------------------------------------------------------------

    def reset(self) -> None:
        """Forgets the batch, for the next ``generate()`` call."""
        for slot in self._slots:
            self._pool.remove(slot)
        self._slots = []
        self._prompt_len = None
        self._seen = 0
        self.halted, self.halted_at, self.finished = [], [], []

    def close(self) -> None:
        """Frees the pool."""
        self._pool.close()

    def _begin(self, input_ids: torch.Tensor, prompt_len: int) -> None:
        rows = input_ids.shape[0]
        if rows > self.capacity:
            raise LoopguardError(f"a batch of {rows} rows is larger than the guard's capacity {self.capacity}")
        self.reset()
        self._slots = [self._pool.add() for _ in range(rows)]
        self._prompt_len = prompt_len
        self._prompt = input_ids[:, :prompt_len].clone()
        self._seen = prompt_len
        self.halted = [False] * rows
        self.halted_at = [None] * rows
        self.finished = [False] * rows

    def _advance(self, input_ids: torch.Tensor, prompt_len_if_new: int) -> None:
        rows, length = input_ids.shape
        if (
            self._prompt_len is None
            or rows != len(self._slots)
            or length < self._seen
            or not torch.equal(input_ids[:, : self._prompt_len], self._prompt)
        ):
            # A new generate() call (the guard was not reset): start afresh.
            self._begin(input_ids, prompt_len_if_new)
        if length <= self._seen:
            return
        new = input_ids[:, self._seen : length].tolist()
        for step in range(length - self._seen):
            live = [r for r in range(rows) if not self.finished[r]]
            if not live:
                break
            tokens = [new[r][step] for r in live]
            actions = self._pool.push([self._slots[r] for r in live], tokens)
            index = self._seen + step - self._prompt_len
            for r, token, action in zip(live, tokens, actions):
                if action == Action.HALT and not self.halted[r]:
                    self.halted[r] = True
                    self.halted_at[r] = index
                    self.finished[r] = True
                    log.info("loopguard: %s", self.describe(r))
                elif token in self.eos_token_ids:
                    self.finished[r] = True
        self._seen = length


class _Stop(StoppingCriteria):
    """Stops each row whose guard halted (a per-row bool tensor, one pool call per step)."""

    def __init__(self, guard: LoopGuard):
        self.guard = guard

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor, **kwargs) -> torch.Tensor:
        # Called after each new token: the first call holds the prompt and one token.
        self.guard._advance(input_ids, input_ids.shape[1] - 1)
        return torch.tensor(self.guard.halted, dtype=torch.bool, device=input_ids.device)


class _ForceEos(LogitsProcessor):
    """Forces end-of-sequence on each row whose guard halted, on the step after the halt."""

    def __init__(self, guard: LoopGuard):
        self.guard = guard

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        # Called before each token is chosen: the first call holds the prompt alone.
        self.guard._advance(input_ids, input_ids.shape[1])
        rows = self.guard.halted_rows
        if rows:
            eos = self.guard.eos_token_ids[0]
            scores = scores.clone()
            scores[rows, :] = -float("inf")
            scores[rows, eos] = 0.0
        return scores
