#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets) for SECONDS each, two at a time, seeded with the
# small corpora kept in fuzz/corpus (copied: a run never grows the repository's corpora). Fails
# on the first crash, leak or failed assertion, leaving the input in fuzz/artifacts/TARGET.
#
#   scripts/fuzz.sh 60                       # what CI runs
#   scripts/fuzz.sh 900 c_abi_ops            # a longer run of one target
#   RUNS=10000000 scripts/fuzz.sh 3600 ...   # stop each after 10 M executions
#   JOBS=1 scripts/fuzz.sh 900               # one target at a time (default: two)
#   KEEP=/tmp/corpora scripts/fuzz.sh 900    # keep each grown corpus (to minimise and commit)
#   SANITIZER=address scripts/fuzz.sh 60     # every target under AddressSanitizer (one build)
#   BUILD_ONLY=1 scripts/fuzz.sh 0           # build the targets and stop
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). The C ABI target is
# built with AddressSanitizer; the others hold no unsafe code and run without a sanitizer, at
# about twice the speed. Prints each target's executions.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(c_abi_ops stream_oracle text_chunks agent_events cli_records config_loader memory_import)
fi
runs=${RUNS:-0}
jobs=${JOBS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Each sanitizer builds into its own directory, so that switching never rebuilds.
flags() {
  if [ -n "${SANITIZER:-}" ]; then
    echo "--sanitizer $SANITIZER --target-dir target/${SANITIZER/address/asan}"
  elif [ "$1" = c_abi_ops ]; then
    echo "--sanitizer address --target-dir target/asan"
  else
    echo "--sanitizer none --target-dir target/plain"
  fi
}

for t in "${targets[@]}"; do
  # shellcheck disable=SC2046
  cargo +nightly fuzz build $(flags "$t") "$t" >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; exit 1; }
done
[ -n "${BUILD_ONLY:-}" ] && exit 0

run() {
  local t=$1
  mkdir -p "$work/$t" "artifacts/$t"
  [ -d "corpus/$t" ] && cp -r "corpus/$t/." "$work/$t/"
  local args=(-max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -max_len=4096)
  [ "$runs" -gt 0 ] && args+=(-runs="$runs")
  # shellcheck disable=SC2046
  if cargo +nightly fuzz run $(flags "$t") "$t" "$work/$t" -- "${args[@]}" \
      >"$work/$t.log" 2>&1; then
    echo "$t: $(grep -m1 'stat::number_of_executed_units' "$work/$t.log" | awk '{print $2}') executions, no failure"
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$work/$t" "$KEEP/"; fi
  else
    echo "$t: FAILED" >&2
    tail -40 "$work/$t.log" >&2
    return 1
  fi
}

status=0
pids=()
for t in "${targets[@]}"; do
  run "$t" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
