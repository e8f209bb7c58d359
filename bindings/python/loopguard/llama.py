"""loopguard for llama-cpp-python: a logits processor and stopping criteria pair.

    from llama_cpp import Llama
    from loopguard.llama import LlamaGuard

    llm = Llama(model_path=..., verbose=False)
    guard = LlamaGuard(llm)                        # balanced preset, or LlamaGuard(llm, config)
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": "Write a short essay about the ocean."}],
        max_tokens=512, temperature=0,
        logits_processor=guard.logits_processor,
        stopping_criteria=guard.stopping_criteria,
    )
    if guard.halted:
        print(guard.describe())                    # what looped, since where

Both halves feed every newly generated token (with its text piece) to one ``StreamGuard``.
The stopping criteria stops generation on the step after the halting token; the logits
processor, if used alone, forces the end-of-sequence token instead. A guard error stops
generation the same way and is kept in ``error``. The guard follows a new completion by
itself (the token history gets shorter), or call ``reset()``.
"""

import time
from typing import Optional

import numpy as np

from . import Action, LoopguardError, StreamConfig, StreamGuard

try:
    from llama_cpp import LogitsProcessorList, StoppingCriteriaList
except ImportError as e:  # pragma: no cover - exercised only without llama-cpp-python
    raise ImportError(
        "loopguard.llama needs llama-cpp-python: pip install llama-cpp-python "
        "(or run scripts/install-llama.sh)"
    ) from e


class LlamaGuard:
    """A loop guard for one ``llama_cpp.Llama``'s generations."""

    def __init__(self, llm, config: Optional[StreamConfig] = None):
        self.llm = llm
        self.guard = StreamGuard(config or StreamConfig())
        self.eos = llm.token_eos()
        self.error: Optional[LoopguardError] = None
        self.halted = False
        self.generated = 0
        self.guard_ns = 0
        self._fed = None  # tokens of the history already seen (prompt included)
        self._pieces = {}  # token id -> its text, detokenized once
        self.logits_processor = LogitsProcessorList([self._process])
        self.stopping_criteria = StoppingCriteriaList([self._stop])

    def reset(self) -> None:
        """Starts over for a new completion."""
        self.guard.reset()
        self.halted = False
        self.error = None
        self.generated = 0
        self.guard_ns = 0
        self._fed = None

    def _feed(self, input_ids) -> None:
        n = len(input_ids)
        if self._fed is not None and n < self._fed:
            self.reset()  # a new completion: the history restarted
        if self._fed is None:
            self._fed = n  # the prompt: not generated text
            return
        if self.halted:
            self._fed = n
            return
        start = time.perf_counter_ns()
        for token in input_ids[self._fed : n]:
            token = int(token)
            piece = self._pieces.get(token)
            if piece is None:
                piece = self._pieces[token] = self.llm.detokenize([token])
            self.generated += 1
            try:
                action = self.guard.push(token, piece)
            except LoopguardError as e:
                self.error, self.halted = e, True
                break
            # This adapter cannot force a reasoning end marker: asked for one, it stops the
            # generation as a halt would.
            if action in (Action.HALT, Action.END_REASONING):
                self.halted = True
                break
        self._fed = n
        self.guard_ns += time.perf_counter_ns() - start

    def _process(self, input_ids, scores):
        self._feed(input_ids)
        if self.halted:
            scores = np.full_like(scores, -np.inf)
            scores[self.eos] = 0.0
        return scores

    def _stop(self, input_ids, logits) -> bool:
        self._feed(input_ids)
        return self.halted

    @property
    def verdict(self):
        return self.guard.verdict

    @property
    def repeated_text(self) -> bytes:
        return self.guard.repeated_text

    def describe(self, verbosity: str = "summary") -> str:
        return self.guard.describe(verbosity)

    def close(self) -> None:
        self.guard.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
