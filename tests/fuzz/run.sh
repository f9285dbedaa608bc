#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for SECONDS each, starting from the
# committed seed corpus (tests/fuzz/corpus/<name>/), which is only read: new
# inputs go to a scratch folder. Fails on the first crash, leak or timeout.
#   tests/fuzz/run.sh BUILD_DIR SECONDS
set -euo pipefail
build=$1; secs=$2
here=$(cd "$(dirname "$0")" && pwd)
found=0
for bin in "$build"/tests/fuzz/fuzz_*; do
  [ -x "$bin" ] || continue
  found=1
  name=$(basename "$bin"); name=${name#fuzz_}
  seeds="$here/corpus/$name"; mkdir -p "$seeds"
  scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
  dict=(); [ -f "$here/$name.dict" ] && dict=(-dict="$here/$name.dict")
  echo "fuzz: $name for ${secs}s"
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
      -artifact_prefix="$build/fuzz-$name-" "${dict[@]}" "$scratch" "$seeds" \
      >"$build/fuzz-$name.log" 2>&1 ||
    { tail -50 "$build/fuzz-$name.log"; echo "fuzz: $name FAILED (log: $build/fuzz-$name.log)"; exit 1; }
  grep -E '^#[0-9]+.*DONE|Done [0-9]+ runs' "$build/fuzz-$name.log" | tail -1 || true
  rm -rf "$scratch"; trap - EXIT
done
[ $found -eq 1 ] || { echo "fuzz: no targets in $build"; exit 1; }
