#!/usr/bin/env python3
"""Print one agent trajectory event by event, for reading and labelling it by hand.

    python3 scripts/show_run.py ID [--file ../shared/corpus/coding_agents.jsonl] [--width 700]

Each event shows its index, the command (or tool and arguments), the error, the first and last
part of the result, and the thought, cut to --width characters each.
"""
import argparse
import json
import os


def cut(text, width):
    if text is None:
        return None
    text = str(text)
    if len(text) <= width:
        return text
    half = width // 2
    return f"{text[:half]}\n    [... {len(text) - width} chars ...]\n{text[-half:]}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("id")
    ap.add_argument("--file", default=os.path.join(here, "..", "..", "shared", "corpus", "coding_agents.jsonl"))
    ap.add_argument("--width", type=int, default=700)
    a = ap.parse_args()
    for line in open(a.file):
        run = json.loads(line)
        if run["id"] != a.id:
            continue
        task = run.get("task") or {}
        print(f"# {run['id']}  agent={run.get('agent')}  model={run.get('model')}")
        print(f"# outcome: {json.dumps(run.get('outcome'))}")
        if isinstance(task, dict):
            print(f"# task: {cut(task.get('problem_statement'), a.width)}")
        for i, e in enumerate(run["events"]):
            args = e.get("args")
            cmd = args.get("command") if isinstance(args, dict) and "command" in args else json.dumps(args)
            print(f"\n--- event {i}  tool={e.get('tool')}")
            if e.get("thought"):
                print(f"thought: {cut(e['thought'].strip(), a.width)}")
            print(f"command: {cut(cmd, a.width)}")
            if e.get("error"):
                print(f"error: {cut(e['error'], 200)}")
            print(f"result: {cut(e.get('result'), a.width)}")
        return
    raise SystemExit(f"no run {a.id} in {a.file}")


if __name__ == "__main__":
    main()
