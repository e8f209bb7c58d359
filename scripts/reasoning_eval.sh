#!/usr/bin/env bash
# Reasoning loops on a real model: every prompt of scripts/reasoning_prompts.txt is run
# greedily through bindings/llama.cpp/generate with a reasoning section opened after the chat
# template ("<think>\n") and the guard ending the reasoning ("</think>" as its end marker: the
# sampler forces it). A prompt whose thinking looped is run again without a guard and with a
# plain (halting) guard. Prints one line per prompt and the totals: the README's *Reasoning
# loops* numbers. (A prompt whose thinking did not loop generates the same text either way.)
#
#   scripts/reasoning_eval.sh [MODEL.gguf] [BUDGET]
#
# Needs what tests/llama.rs needs (scripts/install-llama.sh): llama-cpp-python and SmolLM2.
set -euo pipefail
cd "$(dirname "$0")/.."
INC=$(python3 bindings/llama.cpp/find_llama.py include)
LIB=$(python3 bindings/llama.cpp/find_llama.py lib)
model=${1:-$(python3 bindings/llama.cpp/find_llama.py model)}
budget=${2:-300}
cargo build --release --quiet --lib
exe=$(mktemp)
trap 'rm -f "$exe"' EXIT
gcc -std=c11 -O2 -Wall -Wextra -Werror -Iinclude -I"$INC" bindings/llama.cpp/generate.c \
  bindings/llama.cpp/loopguard_sampler.c -o "$exe" -L"$LIB" -Wl,-rpath,"$LIB" \
  -lllama -lggml -lggml-base target/release/libloopguard.a -lm -lpthread -ldl

field() { tail -1 <<<"$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
printf '%-6s %-6s %-6s %-8s %-6s  %s\n' none halt think answer stop prompt
looped=0 answered=0 halted_answer=0 limit=0 tok_none=0 tok_halt=0 tok_end=0 answer_tokens=0
while IFS= read -r prompt; do
  [ -z "$prompt" ] && continue
  end=$("$exe" -m "$model" -n "$budget" --quiet --think --end-reasoning -p "$prompt")
  n_end=$(field "$end" generated) think=$(field "$end" think_tokens) stop=$(field "$end" stop)
  n_none=- n_halt=- answer=-
  if [ "$(field "$end" reasoning_ends)" -gt 0 ]; then
    none=$("$exe" -m "$model" -n "$budget" --quiet --think --no-guard -p "$prompt")
    halt=$("$exe" -m "$model" -n "$budget" --quiet --think -p "$prompt")
    n_none=$(field "$none" generated) n_halt=$(field "$halt" generated)
    looped=$((looped + 1))
    answer=$((n_end - think))
    tok_none=$((tok_none + n_none)) tok_halt=$((tok_halt + n_halt)) tok_end=$((tok_end + n_end))
    answer_tokens=$((answer_tokens + answer))
    case $stop in
      eog) answered=$((answered + 1)) ;;
      halt) halted_answer=$((halted_answer + 1)) ;;
      *) limit=$((limit + 1)) ;;
    esac
  fi
  printf '%-6s %-6s %-6s %-8s %-6s  %s\n' "$n_none" "$n_halt" "$think" "$answer" "$stop" "$prompt"
done < scripts/reasoning_prompts.txt
echo
echo "prompts whose thinking looped: $looped of $(grep -c . scripts/reasoning_prompts.txt)"
echo "  after the forced </think>: the answer ended by itself $answered, halted in a loop" \
  "$halted_answer, ran to the limit $limit; $answer_tokens answer tokens in all"
echo "  tokens generated: $tok_none without a guard, $tok_halt with halts (no answer)," \
  "$tok_end ending the reasoning (budget $budget)"
