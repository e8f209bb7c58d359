import json
from pathlib import Path

import pytest

import loopguard as lg
from loopguard import Action, AgentKind

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"


def test_identical_calls_warn_then_block_with_recovery_text():
    with lg.AgentGuard() as a:
        actions = []
        for _ in range(4):
            actions.append(a.call("search", {"query": "weather in Paris"}))
            a.result(error="HTTP 503: service unavailable")
        assert actions[:2] == [Action.CONTINUE, Action.CONTINUE]
        assert Action.WARN in actions and actions[-1] >= Action.BLOCK
        v = a.verdict
        assert v.kind in (AgentKind.IDENTICAL_CALL, AgentKind.SAME_ERROR)
        assert v.evidence and v.evidence[-1] == v.step
        text = a.describe("full")
        assert "<loop-recovery>" in text and "search" in text
        assert a.stats["calls"] == 4
        a.user("try something else")
        assert a.call("search", {"query": "weather in Paris"}) == Action.CONTINUE


def test_real_react_runs_stuck_and_not():
    runs = [json.loads(l) for l in open(DATA / "agent-sample.jsonl")]
    warned = {True: 0, False: 0}
    for run in runs:
        with lg.AgentGuard() as a:
            worst = Action.CONTINUE
            for e in run["events"]:
                worst = max(worst, a.call(e["tool"], e["args"]))
                if e["result"] is not None or e["error"] is not None:
                    worst = max(worst, a.result(e["result"], e["error"]))
            warned[run["label"]["stuck"]] += worst >= Action.WARN
    assert warned[True] >= 37 and warned[False] == 0


def test_configuration_presets_and_tools():
    cfg = lg.AgentConfig("roo_code", tools={"status": {"poller": True}, "read": {"repeats": (9, 0, 0)}},
                         ignored_fields=["nonce"])
    with lg.AgentGuard(cfg) as a:
        for i in range(6):
            assert a.call("read", {"path": "a.txt", "nonce": i}) == Action.CONTINUE
    with pytest.raises(lg.ConfigError, match="unknown agent preset"):
        lg.AgentConfig("fast")
    with pytest.raises(lg.ConfigError, match="unknown policy"):
        lg.AgentConfig(tools={"x": {"sometimes": True}})
    with pytest.raises(lg.ConfigError):
        lg.AgentConfig(window=2)


def test_bad_input():
    with lg.AgentGuard() as a:
        assert a.call("t", "{not json") == Action.CONTINUE
        assert a.stats["invalid_args"] == 1
        assert a.call("t", b"\xff\xfe") == Action.CONTINUE
        with pytest.raises(TypeError):
            a.message(3)
        assert a.call("t", None) == Action.CONTINUE


def test_coding_agents_shell_tools_and_rejections():
    # A heredoc edit through the shell tool is progress: the same test rerun after it is not a
    # repeated call.
    with lg.AgentGuard() as a:
        for i in range(5):
            edit = {"command": f"cat <<'EOF' > app.py\nx = {i}\nEOF"}
            assert a.call("bash", edit) == Action.CONTINUE
            a.result("")
            assert a.call("bash", {"command": "python -m pytest -q"}) == Action.CONTINUE
            a.result(f"assert {i} == 9", error="returncode 1")
        # Rejected replies are counted; alone they do not warn by default.
        for _ in range(12):
            assert a.reject() == Action.CONTINUE
        assert a.stats["rejections"] == 12
    cfg = lg.AgentConfig(rejected_replies=(3, 0, 5), shell_tools=["run"], tools={"exec": {"shell": True}})
    with lg.AgentGuard(cfg) as a:
        got = [a.reject() for _ in range(5)]
        assert got[2] == Action.WARN and got[4] == Action.HALT
        assert a.verdict.kind == lg.AgentKind.REJECTED_REPLIES
        assert "exactly one tool call" in a.describe("full")
    # Questions to the user with nothing written between warn from the fifth, counted by name.
    with lg.AgentGuard() as a:
        got = []
        for i in range(5):
            got.append(a.call("ask_followup_question", {"question": f"Which environment, {i}?"}))
            a.result("<answer>staging</answer>")
        assert got == [Action.CONTINUE] * 4 + [Action.WARN]
        assert a.stats["by_kind"] == {"question_streak": 1}


def test_loop_memory_warns_a_restarted_agent_one_repeat_earlier():
    def repeats_to_warn(a, args):
        for n in range(1, 20):
            if a.call("search", args) >= Action.WARN:
                return n
            a.result("no results")
        raise AssertionError("never warned")

    first = lg.AgentGuard()
    n = repeats_to_warn(first, {"query": "config loader"})
    memory = first.export_memory()
    assert isinstance(memory, bytes) and b"config" not in memory and b"search" not in memory
    second = lg.AgentGuard()
    assert second.import_memory(memory) == 1
    assert repeats_to_warn(second, {"query": "config loader"}) == n - 1
    assert "remembered from an earlier session" in second.describe("summary")
    with pytest.raises(lg.LoopguardError, match="data: memory: checksum mismatch"):
        second.import_memory(memory[:-1] + bytes([memory[-1] ^ 1]))
    with pytest.raises(TypeError):
        second.import_memory("text")
