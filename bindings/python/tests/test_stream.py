import json
import subprocess
import sys
from pathlib import Path

import pytest

import loopguard as lg
from loopguard import Action, Kind

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"


def sample():
    with open(DATA / "smollm2-sample.jsonl") as f:
        return [json.loads(line) for line in f]


def test_real_generations_halt_where_the_rust_guard_does():
    """The 40 bundled SmolLM2 generations: 22 halt, at the token the CLI reports."""
    cli = {
        "SmolLM2-135M-Instruct.Q4_1.gguf:p092:greedy": (59, 20, 7),
        "SmolLM2-135M-Instruct.Q4_1.gguf:p024:greedy": (90, 11, 1),
        "SmolLM2-135M-Instruct.Q4_1.gguf:p046:greedy": (177, 18, 11),
    }
    halts = 0
    with lg.StreamGuard() as g:
        for rec in sample():
            g.reset()
            halted_at = None
            for i, (tok, piece) in enumerate(zip(rec["token_ids"], rec["pieces"])):
                if g.push(tok, piece) == Action.HALT:
                    halted_at = i
                    break
            if halted_at is None:
                continue
            halts += 1
            v = g.verdict
            assert v.action == Action.HALT and v.at == halted_at
            assert g.repeated_text and g.describe().startswith("Halted at symbol")
            if rec["id"] in cli:
                assert (halted_at, v.onset, v.period) == cli[rec["id"]]
    assert halts == 22


def test_verdict_details_clone_reset_and_stats():
    g = lg.StreamGuard(preset="strict")
    block = [(100 + i, f" word{i}") for i in range(16)]
    actions = [g.push(t, p) for t, p in block * 3]
    assert actions[-1] == Action.HALT and Action.WARN in actions
    v = g.verdict
    assert (v.kind, v.period, v.onset, v.at) == (Kind.EXACT_LOOP, 16, 0, 47)
    assert v.onset_byte == 0
    assert g.repeated_text == "".join(p for _, p in block).encode()
    assert g.push(1, "x") == Action.HALT, "a halt is sticky"
    copy = g.clone()
    g.reset()
    assert g.verdict.action == Action.CONTINUE and copy.verdict.action == Action.HALT
    assert g.stats == {"symbols": 0, "bytes": 0, "warnings": 0, "first_warn_at": None, "halted_at": None}
    assert copy.stats["halted_at"] == 47
    assert 10_000 < g.memory_usage <= 16 * 1024 + 256
    for level in ("brief", "summary", "full"):
        assert copy.describe(level)
    copy.close()
    g.close()


def test_text_alone_and_callbacks():
    seen = []
    with lg.StreamGuard() as g:
        g.set_callbacks(on_warn=lambda slot, v: seen.append(("warn", v.action)),
                        on_halt=lambda slot, v: seen.append(("halt", v.kind)))
        action = Action.CONTINUE
        for _ in range(40):
            action = g.push_text("the cat sat on the mat and looked at me. ")
            if action == Action.HALT:
                break
        assert action == Action.HALT
        assert [s for s in seen if s[0] == "halt"] == [("halt", g.verdict.kind)]
        assert any(s[0] == "warn" for s in seen)
        assert b"cat sat on the mat" in g.repeated_text


def test_normal_text_does_not_halt():
    text = (Path(lg.__file__).read_text() * 1)[:20000]
    with lg.StreamGuard() as g:
        assert g.push_text(text) != Action.HALT
        assert g.finish_text() != Action.HALT


def test_configuration():
    c = lg.StreamConfig("lenient", halt_copies=5, breakers=["</think>"], exempt=["chorus"])
    assert c.halt_copies == 5 and c.breakers_len == 1
    lg.StreamGuard(c).close()
    vllm = lg.StreamConfig(vllm=(1, 16, 4))
    assert vllm.halt_copies == 4
    with pytest.raises(lg.ConfigError, match="halt_copies = 1: allowed 2..=1000"):
        lg.StreamConfig(halt_copies=1)
    with pytest.raises(lg.ConfigError, match="unknown preset 'fast'"):
        lg.StreamConfig("fast")
    with pytest.raises(lg.ConfigError, match="unknown field 'halt_copy'"):
        lg.StreamConfig(halt_copy=3)
    with pytest.raises(lg.ConfigError, match="out of the field's range"):
        lg.StreamConfig(window=2**40)
    with pytest.raises(lg.ConfigError, match="patterns of 1..=256 bytes"):
        lg.StreamConfig(breakers=[""])
    with pytest.raises(TypeError):
        lg.StreamGuard(c, preset="strict")


def test_bad_input_raises_clear_errors():
    g = lg.StreamGuard()
    with pytest.raises(ValueError, match="out of range"):
        g.push(-1)
    with pytest.raises(ValueError, match="out of range"):
        g.push(2**32)
    with pytest.raises(TypeError, match="piece must be bytes or str"):
        g.push(1, 42)
    assert g.push(2**32 - 1, b"\xff\xfe") == Action.CONTINUE, "invalid UTF-8 is fine"
    assert g.push(7, b"") == Action.CONTINUE
    g.close()
    g.close()
    with pytest.raises(lg.LoopguardError, match="StreamGuard is closed"):
        g.push(1)
    with pytest.raises(ValueError, match="verbosity"):
        lg.StreamGuard().describe("loud")


def test_reentry_from_a_callback_is_refused_not_a_crash():
    errors = []
    with lg.StreamGuard() as g:
        def on_warn(slot, v):
            try:
                g.reset()
            except lg.LoopguardError as e:
                errors.append(e.status)

        g.set_callbacks(on_warn=on_warn)
        for _ in range(10):
            g.push_text("again and again and again. ")
        assert errors and errors[0] == lg.Status.ERR_REENTRANT


def test_a_missing_library_says_how_to_build_it():
    code = "import loopguard; loopguard.version()"
    env = {"LOOPGUARD_LIB": "/nonexistent/libloopguard.so", "PYTHONPATH": str(Path(lg.__file__).parents[1])}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "cargo build --release" in r.stderr and "LOOPGUARD_LIB" in r.stderr


def test_one_string_is_not_a_list_of_breakers():
    """`breakers='abc'` would be three one-character breakers that reset every loop."""
    with pytest.raises(TypeError, match="breakers must be a list of strings"):
        lg.StreamGuard(breakers="</think>")
    with pytest.raises(TypeError, match="exempt must be a list"):
        lg.StreamConfig(exempt=b"abc")
    with pytest.raises(TypeError, match=r"breakers\[1\] must be str or bytes"):
        lg.StreamConfig(breakers=["ok", 5])
    with pytest.raises(TypeError, match="shell_tools must be a list"):
        lg.AgentConfig(shell_tools="bash")


def test_integers_that_do_not_fit_are_refused_not_wrapped():
    g = lg.StreamGuard()
    for bad in (-1, 2**32):
        with pytest.raises(ValueError, match=f"token = {bad} is out of range"):
            g.push(bad)
    with pytest.raises(TypeError, match="token must be an integer"):
        g.push(1.5)
    with pytest.raises(TypeError, match="token must be an integer, not bool"):
        g.push(True)
    a = lg.AgentGuard()
    with pytest.raises(ValueError, match="fingerprint = 18446744073709551616"):
        a.state(2**64)
    with pytest.raises(ValueError, match="now_ms = -5"):
        a.tick(-5)
    assert a.state(2**64 - 1) == Action.CONTINUE


def test_a_callback_that_raises_raises_from_the_push():
    with lg.StreamGuard() as g:
        def on_halt(slot, v):
            raise KeyError("from the callback")

        g.set_callbacks(on_halt=on_halt)
        with pytest.raises(KeyError, match="from the callback"):
            for _ in range(200):
                g.push_text("again and again and again. ")
        # The push completed: the guard halted and says so.
        assert g.verdict.action == Action.HALT
        assert g.push_text("more") == Action.HALT  # raised once, not again


def test_close_inside_a_callback_frees_the_guard_after_the_push():
    g = lg.StreamGuard()
    g.set_callbacks(on_halt=lambda slot, v: g.close())
    for _ in range(200):
        if not g._ptr:
            break
        g.push_text("again and again and again. ")
    assert not g._ptr, "closed when the halting push returned"
    with pytest.raises(lg.LoopguardError, match="closed"):
        g.push_text("x")


def test_a_template_budget_halts_sibling_code():
    siblings = "".join(
        f"    def test_{n}(self):\n        result = {n}({i}, 2)\n        self.assertEqual(result, {i + 2})\n\n"
        for i, n in enumerate(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta"])
    )
    text = "class TestOps(unittest.TestCase):\n" + siblings
    with lg.StreamGuard(template_budget=3) as g:
        assert g.push_text(text) == Action.HALT
        v = g.verdict
        assert v.kind == Kind.TEMPLATE_RUNAWAY and v.period == 3 and v.repeats == 4.0
    with lg.StreamGuard() as g:
        assert g.push_text(text) != Action.HALT
    with pytest.raises(lg.ConfigError, match="template_budget = 1: allowed 0 \\(off\\) or 2..=1000"):
        lg.StreamConfig(template_budget=1)


def test_speculative_drafts_roll_back_to_the_accepted_tokens():
    """Each step drafts four tokens, two right and two wrong, and takes the wrong ones back:
    on every real generation the guard halts on the same accepted token, with the same
    evidence, as a guard fed only the accepted tokens."""
    halts = 0
    for rec in sample():
        truth = list(zip(rec["token_ids"], rec["pieces"]))
        g, plain = lg.StreamGuard(), lg.StreamGuard()
        at = 0
        while at < len(truth) and g.verdict.action != Action.HALT:
            g.checkpoint()
            right = truth[at : at + 2]
            for tok, piece in right + [(7, " wrong")] * 2:
                g.push(tok, piece)
            action = g.rollback(2)
            g.commit()
            for tok, piece in right:
                plain.push(tok, piece)
            at += len(right)
            assert action == plain.verdict.action
            assert g.describe("full") == plain.describe("full")
        halts += g.verdict.action == Action.HALT
    assert halts == 22


def test_long_drafts_roll_back_past_the_noted_pushes():
    """Steps of 24 drafts, more than the ``LG_NOTED_PUSHES`` whose writes a rollback undoes
    one by one: rolling back into the noted ones and past them both leave the guard as one fed
    only the accepted tokens."""
    assert lg._ffi.LG_NOTED_PUSHES == 16
    rec = next(r for r in sample() if len(r["token_ids"]) > 400)
    truth = list(zip(rec["token_ids"], rec["pieces"]))
    g, plain = lg.StreamGuard(), lg.StreamGuard()
    at, step = 0, 0
    while at + 24 <= len(truth) and g.verdict.action != Action.HALT:
        keep = [3, 20, 0, 16, 23][step % 5]
        step += 1
        g.checkpoint()
        for tok, piece in truth[at : at + keep] + [(7, " wrong")] * (24 - keep):
            g.push(tok, piece)
        action = g.rollback(24 - keep)
        g.commit()
        for tok, piece in truth[at : at + keep]:
            plain.push(tok, piece)
        at += keep
        assert action == plain.verdict.action
        assert g.describe("full") == plain.describe("full")
        assert g.stats == plain.stats
    assert step > 10


def test_rollback_errors_name_n():
    g = lg.StreamGuard()
    with pytest.raises(lg.LoopguardError, match="n: no checkpoint"):
        g.rollback(1)
    g.checkpoint()
    g.push(1, " a")
    with pytest.raises(lg.LoopguardError, match="n: 2 pushes asked back, 1 made"):
        g.rollback(2)
    with pytest.raises(ValueError, match="n = -1"):
        g.rollback(-1)
    assert g.rollback(1) == Action.CONTINUE
    assert g.stats["symbols"] == 0
    pool = lg.Pool(capacity=2)
    slot = pool.add()
    pool.checkpoint(slot)
    pool.push([slot] * 3, [5, 6, 7])
    assert pool.rollback(slot, 3) == Action.CONTINUE
    pool.commit(slot)
    with pytest.raises(lg.LoopguardError, match="n: no checkpoint"):
        pool.rollback(slot, 0)


def test_a_loop_in_the_thinking_ends_the_thinking():
    """With ``reasoning_end`` set, a loop inside the reasoning answers END_REASONING (at the
    token where a plain guard halts) until the host forces the marker; then the answer is
    watched as usual."""
    plain = lg.StreamGuard()
    g = lg.StreamGuard(lg.StreamConfig(reasoning_end="</think>"))
    thought = [(100 + i, w) for i, w in enumerate([" Wait", ",", " let", " me", " check", " again", "."])]
    for i in range(300):
        tok, piece = thought[i % len(thought)]
        a, b = plain.push(tok, piece), g.push(tok, piece)
        if a == Action.HALT:
            break
    assert (a, b) == (Action.HALT, Action.END_REASONING)
    assert g.verdict.at == plain.verdict.at and g.stats["halted_at"] is None
    assert g.push(7, " Wait") == Action.END_REASONING
    assert g.push(8, "</think>") == Action.CONTINUE
    assert g.push(9, " The answer is 42.") == Action.CONTINUE
    with pytest.raises(lg.ConfigError, match="reasoning_end"):
        lg.StreamConfig(reasoning_start="<think>")
    with pytest.raises(lg.ConfigError, match="reasoning_end"):
        lg.StreamConfig(reasoning_end="x" * 65)


def test_a_model_name_selects_its_profile():
    """SmolLM2's profile halts an exact loop a copy sooner; an unknown model changes nothing."""
    def halt_at(config):
        g = lg.StreamGuard(config)
        block = [(100 + i, f" w{i}") for i in range(8)]
        for i, (t, p) in enumerate(block * 20):
            if g.push(t, p) == Action.HALT:
                return i
    plain = halt_at(lg.StreamConfig())
    assert halt_at(lg.StreamConfig(model="SmolLM2-135M-Instruct")) < plain
    assert halt_at(lg.StreamConfig(model="unknown-model")) == plain
    with pytest.raises(lg.ConfigError, match="model"):
        lg.StreamConfig(model="x" * 300)
